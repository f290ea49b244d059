"""The asynchronous plan (APPO): samplers that never wait for a round, a learner that
learns from each fragment as it comes, and still one result per seed: in one process and
federated, with one sampler slowed down on purpose (issue 20)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import Environment, ms
from reactorfed.rl.plans.async_ import policy_lag_bound

from .async_programs import SlowAPPO

ROOT = Path(__file__).resolve().parents[2]


def test_the_lag_bound_counts_the_updates_within_the_weights_delay() -> None:
    assert policy_lag_bound(ms(10), ms(10), 2) == 2  # an update every 5 ms, weights 10 ms late
    assert policy_lag_bound(ms(6), ms(4), 2) == 3
    assert policy_lag_bound(ms(1), ms(10), 1) == 1


def _single(iterations: int, slow_ms: int = 0) -> dict[str, object]:
    main = SlowAPPO(iterations=iterations, slow_ms=slow_ms)
    Environment(fast=True).run(main)
    return main.learner.result


def test_one_process_gives_one_result_per_seed_and_learns_each_fragment_as_it_comes() -> None:
    a, b = _single(8), _single(8, slow_ms=20)
    assert a["iterations"] == 8 and a["weights_sha256"] == b["weights_sha256"]
    # staggered samplers: one fragment of 2 copies x 16 rows an update (reset rows aside)
    assert a["env_steps"] <= 8 * 32 and a["updates"] == 8 * 2  # 2 epochs of one minibatch of 32


@pytest.mark.slow
def test_federated_with_a_slowed_sampler_equals_one_process() -> None:
    """Sampler 0 sleeps 60 ms before each fragment (its peer runs on, up to the weights'
    delay ahead); the learner ends with the weights of the one-process run."""
    cmd = [sys.executable, "-m", "reactorfed", "launch", "tests/rl/async_programs.py:SlowAPPO", "--fast",
           "--no-progress", "-p", "iterations=12", "-p", "slow_ms=60"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.findall(r"^\[learner\] reactorfed: result of SlowAPPO\.learner: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1, proc.stdout[-3000:]
    fed = json.loads(found[0])
    single = _single(12)
    assert fed["iterations"] == single["iterations"] == 12
    assert fed["weights_sha256"] == single["weights_sha256"]
    # the policy lag of every fragment, exactly the same whichever sampler ran slower
    assert fed["policy_lag_iterations"] == single["policy_lag_iterations"]
    assert fed["policy_lag_ns"] == single["policy_lag_ns"]
    assert sum(fed["policy_lag_iterations"].values()) == fed["policy_lag_ns"]["fragments"] > 0


def test_the_example_runs_and_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    from .conftest import load_example

    appo = load_example("appo_cartpole")
    ckpt = str(tmp_path / "appo.pt")
    first = appo.Main(appo.Args(total_timesteps=3 * 128, checkpoint=ckpt, progress=False))
    Environment(fast=True).run(first)
    assert first.learner.result["iterations"] == 3 and Path(ckpt).exists()
    more = appo.Main(appo.Args(total_timesteps=5 * 128, checkpoint=ckpt, resume=True, progress=False))
    Environment(fast=True).run(more)
    r = more.learner.result
    assert r["resumed_from_iteration"] == 3 and r["iterations"] == 5
