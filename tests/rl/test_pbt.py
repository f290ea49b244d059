"""Population-based training of PPO (examples/rl/pbt_cartpole.py): one seed gives the same
population history (the decisions' record) and bit-identical final weights in one process
and launched (a federate per trial), with one trial slowed on purpose; a run paused at a
round resumes from its checkpoints, the same way every time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment
from reactorfed.rl.algos.ppo.learner import PPOLearner
from reactorfed.rl.tune import report_path

from .conftest import EXAMPLES, load_example, make_args

# 3 trials of 1 sampler x 2 copies x 32 rows, 2 iterations of 2 epochs; a round after each
PARAMS: dict[str, Any] = {"pbt.population": 3, "pbt.perturbation_interval": 1, "pbt.iterations": 2,
                          "num_samplers": 1, "num_envs": 2, "ppo.update_epochs": 2, "ppo.minibatch_size": 32,
                          "seed": 3, "progress": False}


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    pbt = load_example("pbt_cartpole")
    main = pbt.Main(make_args(pbt.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def test_pbt_one_process_exploits_and_is_deterministic(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=0, slow_ms=20)
    b = run_single(tmp_path / "b")
    ctl = a["Main.controller"]
    assert ctl["rounds"] == 2 and ctl["decisions"] == 3 + 4 + 4  # starts; rank + 3 each round
    rows = [json.loads(line) for line in (tmp_path / "a" / "decisions.jsonl").read_text().splitlines()]
    exploits = [r for r in rows if r["kind"] == "exploit"]
    assert len(exploits) == 1 and exploits[0]["iteration"] == 1 and exploits[0]["donor"] != exploits[0]["trial"]
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (tmp_path / "b" / "decisions.jsonl").read_text()
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        assert a[key]["trials"][0]["iterations"] == 2
        # the last report's checkpoint holds the final weights
        assert PPOLearner.load(report_path(tmp_path / "a", s, 2)).digest() == a[key]["weights_sha256"]


@pytest.mark.slow
def test_pbt_launched_with_a_slow_trial_matches_one_process(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'pbt_cartpole.py'}:Main", "--fast",
           "--no-progress"]
    for k, v in {**PARAMS, "checkpoint": tmp_path / "fed", "slow_trial": 1, "slow_ms": 60}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = dict(re.findall(r"^\[\S+\] reactorfed: result of (Main\.[^:]+): (\{.*\})$", proc.stdout, re.MULTILINE))
    assert len(found) == 4, proc.stdout[-3000:]
    single = run_single(tmp_path / "one")
    for name, value in found.items():
        fed = json.loads(value)
        if name == "Main.controller":
            assert fed["decisions_sha256"] == single[name]["decisions_sha256"]
            assert fed["best_trial"] == single[name]["best_trial"]
        else:
            assert fed["weights_sha256"] == single[name]["weights_sha256"], name
            assert fed["hparams"] == single[name]["hparams"], name
    assert (tmp_path / "fed" / "decisions.jsonl").read_text() == (tmp_path / "one" / "decisions.jsonl").read_text()


def test_pbt_paused_at_a_round_resumes_from_its_checkpoints(tmp_path: Path) -> None:
    first = run_single(tmp_path / "run", pause_after=1)["Main.controller"]
    assert first["paused"] and first["rounds"] == 1 and first["decisions"] == 7
    head = (tmp_path / "run" / "decisions.jsonl").read_text()
    shutil.copytree(tmp_path / "run", tmp_path / "again")
    a = run_single(tmp_path / "run", resume=True)
    b = run_single(tmp_path / "again", resume=True)
    ctl = a["Main.controller"]
    assert ctl["resumed"] and ctl["rounds"] == 2 and ctl["decisions"] == 11
    assert (tmp_path / "run" / "decisions.jsonl").read_text().startswith(head)
    assert ctl["decisions_sha256"] == b["Main.controller"]["decisions_sha256"]
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["trials"][-1]["iterations"] == 2
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
