"""The DQN example under ``reactorfed launch`` (RTI + one process per federate)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import Environment

from .conftest import EXAMPLES, load_example

PARAMS = {"iterations": 3, "fragment_len": 64, "updates_per_iteration": 8, "eval_episodes": 3, "seed": 5}


@pytest.mark.slow
def test_dqn_example_launched_matches_single_process(tmp_path: Path) -> None:
    ckpt = tmp_path / "fed.pt"
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'dqn_cartpole.py'}:Main", "--fast",
           "--no-progress"]
    for k, v in {**PARAMS, "checkpoint": ckpt, "progress": False}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the launcher prefixes each federate's output; the learner's result follows its summary
    found = re.findall(r"^\[learner\] reactorfed: result of Main\.learner: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1, proc.stdout[-3000:]
    fed = json.loads(found[0])
    assert ckpt.exists() and fed["iterations"] == 3

    dqn = load_example("dqn_cartpole")
    single = Environment(fast=True).run(dqn.Main(dqn.Args(**PARAMS, checkpoint=str(tmp_path / "single.pt"),
                                                          progress=False)))
    assert single.results["Main.learner"]["weights_sha256"] == fed["weights_sha256"]
