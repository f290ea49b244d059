"""Federations of an example under ``reactorfed launch``, one interpreter per federate so
that a test can find one federate's process and kill it (a pod deleted, in processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import EXAMPLES


def launch(checkpoint: Path, params: dict[str, Any], program: str) -> subprocess.Popen[str]:
    """``reactorfed launch`` of ``program`` (an example's ``file:Class``) with ``params`` and
    ``checkpoint``, each federate its own interpreter (its command line names it)."""
    cmd = [
        sys.executable,
        "-m",
        "reactorfed.cli",
        "launch",
        f"{EXAMPLES / program}",
        "--fast",
        "--no-progress",
        "--no-fork-server",
    ]
    for k, v in {**params, "checkpoint": checkpoint}.items():
        cmd += ["--param", f"{k}={v}"]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def pid_of(federate: str, checkpoint: Path) -> int:
    """The process of ``federate`` in the federation that writes ``checkpoint``."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"--federate" in argv
            and argv[argv.index(b"--federate") + 1] == federate.encode()
            and any(str(checkpoint).encode() in a for a in argv)
        ):
            return int(d.name)
    raise AssertionError(f"no process of federate {federate} writing {checkpoint}")
