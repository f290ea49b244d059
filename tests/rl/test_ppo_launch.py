"""The PPO example under ``reactorfed launch`` (RTI + one process per federate) ends with
the weights a single-process run computes, and it learns CartPole."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import Environment
from reactorfed.rl import PPOConfig, RunConfig, SyncPlan
from reactorfed.rl.algos.ppo.learner import PPOLearner

from .conftest import EXAMPLES, load_example

PARAMS = {"ppo.total_timesteps": 768, "seed": 5}  # 3 rounds of 2 samplers x 4 copies x 32 rows


@pytest.mark.slow
def test_ppo_example_launched_matches_single_process(tmp_path: Path) -> None:
    ckpt = tmp_path / "fed.pt"
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'ppo_cartpole.py'}:Main", "--fast",
           "--no-progress"]
    for k, v in {**PARAMS, "checkpoint": ckpt, "progress": False}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.findall(r"^\[learner\] reactorfed: result of Main\.learner: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1, proc.stdout[-3000:]
    fed = json.loads(found[0])
    assert fed["iterations"] == 3 and PPOLearner.load(ckpt).digest() == fed["weights_sha256"]

    ppo = load_example("ppo_cartpole")
    main = ppo.Main(ppo.Args(ppo=PPOConfig(total_timesteps=768), seed=5, checkpoint=str(tmp_path / "single.pt"),
                             progress=False))
    single = Environment(fast=True).run(main).results["Main.learner"]
    assert single["env_steps"] == fed["env_steps"]
    assert single["weights_sha256"] == fed["weights_sha256"]


@pytest.mark.slow
def test_ppo_learns_cartpole() -> None:
    """A short run of rl-zoo's settings (at most 160 updates, 41k steps) lifts the mean return
    of the last 100 training episodes from about 22 (random actions) past 200."""
    run = RunConfig(iterations=160, target_return=200.0)
    main = SyncPlan(PPOConfig(), "CartPole-v1", num_samplers=2, num_envs=4, fragment_len=32, run=run, seed=2)
    Environment(fast=True).run(main)
    r = main.learner.result
    assert r["reached"], r
    assert r["mean_return_100"] >= 200 and r["iterations"] < 160


@pytest.mark.slow
def test_ppo_example_reaches_475(tmp_path: Path) -> None:
    """The example as shipped (rl-zoo's settings, seed 1) reaches a mean return of 475 over
    the last 100 training episodes within its 100k steps (about 60k steps, 10-15 s here),
    and its checkpoint holds the weights it ended with."""
    ppo = load_example("ppo_cartpole")
    main = ppo.Main(ppo.Args(checkpoint=str(tmp_path / "ppo.pt"), progress=False))
    Environment(fast=True).run(main)
    r = main.learner.result
    assert r["reached"] and r["mean_return_100"] >= 475 and r["env_steps"] < 100_000, r
    assert PPOLearner.load(tmp_path / "ppo.pt").digest() == r["weights_sha256"]
