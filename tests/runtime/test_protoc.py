"""compile_proto: a .proto compiled once per content into a cache shared by processes,
and a user's mistake (a missing or invalid file) refused naming the file.

Each test uses .proto file names of its own: protobuf registers every loaded file by name
in one pool per process, and a second file of the same name is refused."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import ValidationError, compile_proto
from reactorfed.model.protoc import default_proto_cache

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _proto(message: str, field: str = "string name = 1;") -> str:
    return f'syntax = "proto3";\nmessage {message} {{\n  {field}\n}}\n'


def _generated(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*_pb2.py"))


def test_same_content_compiled_once(tmp_path: Path) -> None:
    """Two copies of one .proto (other directories, same content) share one generated
    module: in this process the same module object, on disk the same file, which another
    process reuses without running protoc again (the file is not replaced)."""
    cache = tmp_path / "cache"
    a = _write(tmp_path / "a" / "CacheOnce.proto", _proto("CacheOnce"))
    b = _write(tmp_path / "b" / "CacheOnce.proto", _proto("CacheOnce"))
    mod = compile_proto(a, cache_dir=cache)
    assert mod.__name__ == "CacheOnce_pb2"
    msg = mod.CacheOnce(name="x")
    assert mod.CacheOnce.FromString(msg.SerializeToString()).name == "x"
    assert compile_proto(b, cache_dir=cache) is mod
    assert pickle.loads(pickle.dumps(msg)) == msg  # its classes are importable by name
    [gen] = _generated(cache)
    before = gen.stat()
    code = f"from reactorfed import compile_proto; print(compile_proto({str(b)!r}, cache_dir={str(cache)!r}).__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "runtime"), "PATH": ""},
        cwd=tmp_path,
    )
    assert Path(out.stdout.strip()) == gen
    after = gen.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [p.name for p in cache.iterdir()] == [gen.parent.name]  # no temporary left behind


def test_changed_content_compiles_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    one = compile_proto(
        _write(tmp_path / "v1" / "CacheV1.proto", _proto("CacheV1")), cache_dir=cache
    )
    two = compile_proto(
        _write(tmp_path / "v2" / "CacheV1b.proto", _proto("CacheV1b")), cache_dir=cache
    )
    assert one is not two and len(_generated(cache)) == 2


def test_processes_racing_on_a_fresh_cache(tmp_path: Path) -> None:
    """Federates starting together compile into one cache: each loads a whole module."""
    cache = tmp_path / "cache"
    src = _write(tmp_path / "CacheRace.proto", _proto("CacheRace", "int32 number = 2;"))
    code = (
        "from reactorfed import compile_proto; "
        f"m = compile_proto({str(src)!r}, cache_dir={str(cache)!r}); print(m.CacheRace(number=7).number)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={"PYTHONPATH": str(ROOT / "runtime"), "PATH": ""},
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=60) for p in procs]
    assert [(p.returncode, out.strip()) for p, (out, _) in zip(procs, results, strict=True)] == [
        (0, "7")
    ] * 4, results
    assert len(_generated(cache)) == 1
    assert not [p for p in cache.rglob(".protoc-*")]


def test_invalid_proto_names_the_file_and_protoc_message(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    bad = _write(tmp_path / "CacheBad.proto", _proto("CacheBad", "strin name = 1;"))
    with pytest.raises(ValidationError) as info:
        compile_proto(bad, cache_dir=cache)
    text = str(info.value)
    assert text.startswith(f"{bad}: protoc could not compile it")
    assert f'{bad}:3:3: "strin" is not defined' in text
    assert _generated(cache) == [] and not [p for p in cache.rglob(".protoc-*")]


def test_missing_file_and_wrong_suffix(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"CacheMissing\.proto: cannot read the \.proto file"):
        compile_proto(tmp_path / "CacheMissing.proto", cache_dir=tmp_path)
    with pytest.raises(ValidationError, match=r"notes\.txt: compile_proto takes a \.proto file"):
        compile_proto(_write(tmp_path / "notes.txt", "x"), cache_dir=tmp_path)
    with pytest.raises(ValidationError, match="must be a Python identifier"):
        compile_proto(_write(tmp_path / "my-msgs.proto", _proto("M")), cache_dir=tmp_path)


def test_a_second_file_of_the_same_name_is_refused(tmp_path: Path) -> None:
    """protobuf's pool keeps one file per name in a process: a different CacheTwin.proto
    is refused naming it, not loaded as a second, unrelated set of classes."""
    compile_proto(
        _write(tmp_path / "x" / "CacheTwin.proto", _proto("CacheTwin")), cache_dir=tmp_path / "c"
    )
    other = _write(tmp_path / "y" / "CacheTwin.proto", _proto("CacheTwin", "int32 id = 1;"))
    with pytest.raises(
        ValidationError, match=r"CacheTwin\.proto: its generated module does not load: .*duplicate"
    ):
        compile_proto(other, cache_dir=tmp_path / "c")


def test_without_grpcio_tools_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "grpc_tools", None)  # what an environment without it imports
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'reactorfed\[protobuf\]'"):
        compile_proto(
            _write(tmp_path / "CacheNoTools.proto", _proto("CacheNoTools")), cache_dir=tmp_path
        )


def test_the_cache_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REACTORFED_PROTO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_proto_cache() == tmp_path / "xdg" / "reactorfed" / "protobuf"
    monkeypatch.setenv("REACTORFED_PROTO_CACHE", str(tmp_path / "mine"))
    assert default_proto_cache() == tmp_path / "mine"
    mod = compile_proto(_write(tmp_path / "CacheEnv.proto", _proto("CacheEnv")))
    assert Path(mod.__file__ or "").parent.parent == tmp_path / "mine"
