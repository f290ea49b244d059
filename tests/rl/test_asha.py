"""ASHA and the plain searches (examples/rl/asha_cartpole.py) on the tuner's controller:
rungs and promotions decided in logical time, so one seed gives the same decisions and
the same weights in one process and launched, whichever slot is slower; a stopped
trial's slot takes the next configuration."""

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

from .conftest import EXAMPLES, load_example, make_args, untagged_decisions

# 2 slots, 5 configurations, 4 iterations each (rungs at 1 and 2) of 1 sampler x 2 copies x 32 rows
PARAMS: dict[str, Any] = {"search.slots": 2, "search.num_samples": 5, "search.iterations": 4,
                          "asha.grace_period": 1, "asha.reduction_factor": 2, "num_samplers": 1, "num_envs": 2,
                          "ppo.update_epochs": 2, "ppo.minibatch_size": 32, "seed": 3, "progress": False}


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    asha = load_example("asha_cartpole")
    main = asha.Main(make_args(asha.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def trials_of(results: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted((t for k, r in results.items() if k != "Main.controller" for t in r["trials"]),
                  key=lambda t: t["trial"])


def test_asha_stops_at_a_rung_refills_the_slot_and_is_deterministic(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=1, slow_ms=20)
    b = run_single(tmp_path / "b")
    rows = [json.loads(line) for line in (tmp_path / "a" / "decisions.jsonl").read_text().splitlines()]
    assert [r["trial"] for r in rows if r["kind"] == "start"] == [0, 1, 2, 3, 4]
    assert {r["kind"] for r in rows} >= {"start", "promote", "complete", "stop"}
    assert all(r["rung"] in (1, 2) for r in rows if r["kind"] in ("promote", "stop"))
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (tmp_path / "b" / "decisions.jsonl").read_text()
    assert a["Main.controller"]["trials"] == 5 and a["Main.controller"]["best_iteration"] == 4
    ta, tb = trials_of(a), trials_of(b)
    assert [t["trial"] for t in ta] == [0, 1, 2, 3, 4]
    assert [t["weights_sha256"] for t in ta] == [t["weights_sha256"] for t in tb]
    stopped = {r["trial"]: r["iteration"] for r in rows if r["kind"] == "stop"}
    assert all(t["iterations"] == stopped.get(t["trial"], 4) for t in ta)


def test_grid_search_runs_every_point_to_the_budget(tmp_path: Path) -> None:
    res = run_single(tmp_path / "grid", scheduler="fifo", **{
        "search.kind": "grid", "search.grid_points": 2, "search.iterations": 2, "space.clip_coef": (),
        "space.gae_lambda": ()})
    ctl = res["Main.controller"]
    assert ctl["scheduler"] == "search" and ctl["trials"] == 2 and ctl["complete"] == 2
    trials = trials_of(res)
    assert [t["hparams"] for t in trials] == [{"learning_rate": 1e-4}, {"learning_rate": 3e-3}]
    assert all(t["iterations"] == 2 for t in trials)


@pytest.mark.slow
def test_asha_launched_with_a_slow_slot_matches_one_process(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'asha_cartpole.py'}:Main", "--fast",
           "--no-progress"]
    for k, v in {**PARAMS, "checkpoint": tmp_path / "fed", "slow_trial": 0, "slow_ms": 60}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {k: json.loads(v) for k, v in
             re.findall(r"^\[\S+\] reactorfed: result of (Main\.[^:]+): (\{.*\})$", proc.stdout, re.MULTILINE)}
    assert len(found) == 3, proc.stdout[-3000:]
    single = run_single(tmp_path / "one")
    assert found["Main.controller"]["decisions_sha256"] == single["Main.controller"]["decisions_sha256"]
    assert [t["weights_sha256"] for t in trials_of(found)] == [t["weights_sha256"] for t in trials_of(single)]
    assert (tmp_path / "fed" / "decisions.jsonl").read_text() == (tmp_path / "one" / "decisions.jsonl").read_text()


def test_asha_paused_resumes_the_same_way_every_time(tmp_path: Path) -> None:
    first = run_single(tmp_path / "run", pause_after=3)["Main.controller"]
    assert first["paused"]
    head = (tmp_path / "run" / "decisions.jsonl").read_text()
    shutil.copytree(tmp_path / "run", tmp_path / "again")
    a, b = run_single(tmp_path / "run", resume=True), run_single(tmp_path / "again", resume=True)
    assert a["Main.controller"]["resumed"] and a["Main.controller"]["trials"] == 5
    assert [t["trial"] for t in trials_of(a)] == [0, 1, 2, 3, 4]
    assert (tmp_path / "run" / "decisions.jsonl").read_text().startswith(head)
    assert (tmp_path / "run" / "decisions.jsonl").read_text() == (tmp_path / "again" / "decisions.jsonl").read_text()
    assert [t["weights_sha256"] for t in trials_of(a)] == [t["weights_sha256"] for t in trials_of(b)]
    # and the run that was not paused (the slots' checkpoints hold their samplers' states):
    # the same decisions but for their tags (a resumed run's logical time starts again at 0)
    whole = run_single(tmp_path / "whole")
    assert untagged_decisions(tmp_path / "run") == untagged_decisions(tmp_path / "whole")
    assert [t["weights_sha256"] for t in trials_of(a)] == [t["weights_sha256"] for t in trials_of(whole)]

