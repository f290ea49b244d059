"""Protocol buffer definitions compiled when a program loads (LF's ``protobufs:`` target
property): ``Person = compile_proto(Path(__file__).with_name("Person.proto"))`` runs protoc
on the file and returns the generated module (``Person_pb2``), so the program writes
``Person.Person()`` as LF's does.

protoc is the one bundled with ``grpcio-tools`` (the ``protobuf`` extra), imported only
here and only when a program asks. The generated module is cached on disk by the content
of the .proto (and the protoc version): a program run again, or its federates started
together, compile it once; a file is written whole, by rename, so a process never reads
another's half-written module. In one process a .proto is loaded once: two copies of its
module would be two unrelated classes for each message.

A .proto may import Google's well-known types (``google/protobuf/*.proto``) but not other
.proto files of the program: their generated modules would have to be importable by name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from ..errors import ValidationError

__all__ = ["compile_proto", "default_proto_cache"]

_EXTRA = "pip install 'reactorfed[protobuf]'"
_lock = threading.Lock()
_loaded: dict[str, ModuleType] = {}  # cache key -> the module this process loaded


def default_proto_cache() -> Path:
    """Where generated modules are kept: ``$REACTORFED_PROTO_CACHE``, else
    ``$XDG_CACHE_HOME/reactorfed/protobuf`` (``~/.cache`` without it)."""
    explicit = os.environ.get("REACTORFED_PROTO_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reactorfed" / "protobuf"


def _protoc_version() -> str:
    """grpcio-tools' version (its protoc's), or a clear error naming the extra."""
    try:
        import google.protobuf  # noqa: F401
        import grpc_tools  # noqa: F401
    except ImportError as e:
        raise ModuleNotFoundError(
            f"compiling .proto files needs grpcio-tools and protobuf ({e}): {_EXTRA}", name=e.name
        ) from e
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("grpcio-tools")
    except (
        PackageNotFoundError
    ):  # importable without metadata (a vendored copy): the content alone keys the cache
        return "unknown"


def compile_proto(
    path: str | os.PathLike[str], *, cache_dir: str | os.PathLike[str] | None = None
) -> ModuleType:
    """The Python module protoc generates from the .proto file at ``path``
    (``<stem>_pb2``), compiled on first use and cached by content (``cache_dir``:
    :func:`default_proto_cache` when None). A missing or invalid file raises a
    :class:`ValidationError` naming it, with protoc's message."""
    src = Path(path)
    if src.suffix != ".proto":
        raise ValidationError(f"{src}: compile_proto takes a .proto file")
    try:
        text = src.read_bytes()
    except OSError as e:
        raise ValidationError(f"{src}: cannot read the .proto file: {e.strerror or e}") from e
    stem = src.stem
    if not stem.isidentifier():
        # protoc names the module after the file; an import needs that name to be one
        raise ValidationError(
            f"{src}: the file's name must be a Python identifier (its module is {stem}_pb2)"
        )
    protoc = _protoc_version()
    key = hashlib.sha256(b"\0".join([src.name.encode(), protoc.encode(), text])).hexdigest()[:24]
    with _lock:
        module = _loaded.get(key)
        if module is None:
            target = Path(cache_dir) if cache_dir is not None else default_proto_cache()
            generated = target / key / f"{stem}_pb2.py"
            if not generated.exists():
                _generate(src, text, generated)
            module = _load(src, generated)
            _loaded[key] = module
    return module


def _generate(src: Path, text: bytes, generated: Path) -> None:
    """Run protoc on a private copy of ``src`` (the content hashed, not whatever the file
    holds by now) and move its output to ``generated`` in one rename."""
    try:
        generated.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValidationError(
            f"{src}: cannot create the protobuf cache {generated.parent}: {e.strerror or e}"
        ) from e
    with tempfile.TemporaryDirectory(dir=generated.parent, prefix=".protoc-") as tmp:
        work = Path(tmp)
        (work / "in").mkdir()
        (work / "in" / src.name).write_bytes(text)
        (work / "out").mkdir()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"--proto_path={work / 'in'}",
                f"--python_out={work / 'out'}",
                str(work / "in" / src.name),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        out = work / "out" / generated.name
        if done.returncode != 0 or not out.exists():
            # protoc names the private copy; the user knows the file by its own path
            message = (
                (done.stderr or done.stdout).strip().replace(str(work / "in" / src.name), str(src))
            )
            message = message.replace(str(work / "in") + os.sep, "")
            raise ValidationError(
                f"{src}: protoc could not compile it: {message or f'exit status {done.returncode}'}"
            )
        os.replace(out, generated)


def _load(src: Path, generated: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(generated.stem, generated)
    if spec is None or spec.loader is None:  # (a .py file always has one)
        raise ValidationError(f"{src}: cannot load its generated module {generated}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        # e.g. the protobuf runtime refusing a second, different file of the same name, or
        # a protobuf older than the generated code
        raise ValidationError(f"{src}: its generated module does not load: {e}") from e
    # importable by its name, as protoc's output on the path would be: pickle (and so
    # --trusted-pickle and multiprocessing) finds a message's class through it
    sys.modules.setdefault(generated.stem, module)
    return module
