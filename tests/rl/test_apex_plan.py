"""The asynchronous-replay plan (Ape-X DQN): samplers push prioritized n-step transitions
into replay shards, the learner samples from the shards and sends priorities back, and
still one result per seed: in one process and federated, with one sampler slowed down on
purpose (issue 20)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import Environment, ValidationError, ms
from reactorfed.rl import ReplayConfig
from reactorfed.rl.algos.apex.config import ApexDQNConfig
from reactorfed.rl.plans.apex import ApexPlan, priority_lag_bound, weights_lag_bound

from .apex_programs import SlowApex

ROOT = Path(__file__).resolve().parents[2]


def test_the_lag_bounds_count_updates() -> None:
    # broadcasts every 4 updates, an update every 1 ms, weights 16 ms late: 3 + 16
    assert weights_lag_bound(ms(16), ms(1), 4) == 19
    assert weights_lag_bound(ms(5), ms(2), 1) == 3
    assert priority_lag_bound(1) == 0 and priority_lag_bound(3) == 2


def _single(iterations: int, slow_ms: int = 0, num_shards: int = 2) -> dict[str, dict[str, object]]:
    main = SlowApex(iterations=iterations, slow_ms=slow_ms, num_shards=num_shards)
    return Environment(fast=True).run(main).results


def test_one_process_gives_one_result_per_seed() -> None:
    a, b = _single(30), _single(30, slow_ms=5)
    la, lb = a["SlowApex.learner"], b["SlowApex.learner"]
    assert la["iterations"] == la["updates"] == 30
    assert la["weights_sha256"] == lb["weights_sha256"] and la["env_steps"] == lb["env_steps"]
    # both shards were fed and drawn from, the ring wrapped, and priorities came back
    for s in (0, 1):
        shard = a[f"SlowApex.shards[{s}]"]
        assert shard["added"] > shard["held"] == 50 and shard["served"] > 0
    one_shard = _single(30, num_shards=1)["SlowApex.learner"]
    assert one_shard["iterations"] == 30 and one_shard["weights_sha256"] != la["weights_sha256"]


def test_sampler_i_feeds_shard_i_mod_s() -> None:
    main = ApexPlan(ApexDQNConfig(hidden=(8,)), "CartPole-v1", num_samplers=5, num_shards=2)
    assert [s.num_inputs for s in main.shards] == [3, 2]
    with pytest.raises(ValidationError, match="each shard needs a sampler"):
        ApexPlan(ApexDQNConfig(), "CartPole-v1", num_samplers=1, num_shards=2)
    with pytest.raises(ValidationError, match="prefetch"):
        ApexPlan(ApexDQNConfig(), "CartPole-v1", prefetch=0)


@pytest.mark.slow
def test_federated_with_a_slowed_sampler_equals_one_process() -> None:
    """Sampler 0 sleeps 30 ms before each fragment (its peer runs on, up to the weights'
    delay ahead; the shards and the learner wait); the learner ends with the weights of
    the one-process run."""
    cmd = [sys.executable, "-m", "reactorfed", "launch", "tests/rl/apex_programs.py:SlowApex", "--fast",
           "--no-progress", "-p", "iterations=40", "-p", "slow_ms=30"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.findall(r"^\[learner\] reactorfed: result of SlowApex\.learner: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1, proc.stdout[-3000:]
    fed = json.loads(found[0])
    single = _single(40)["SlowApex.learner"]
    assert fed["iterations"] == single["iterations"] == 40
    assert fed["env_steps"] == single["env_steps"] and fed["episodes"] == single["episodes"]
    assert fed["weights_sha256"] == single["weights_sha256"]


def test_the_example_runs_and_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    from reactorfed.rl.algos.apex.learner import ApexDQNLearner

    from .conftest import load_example

    apex = load_example("apex_dqn_cartpole")
    ckpt = str(tmp_path / "apex.pt")
    small = {"dqn": ApexDQNConfig(hidden=(16,)), "replay": ReplayConfig(learning_starts=100), "checkpoint": ckpt,
             "progress": False}
    # 8 env steps an update (2 samplers x 4 copies x 16 rows every 16 ms, an update a ms)
    first = apex.Main(apex.Args(total_timesteps=100 + 3 * 8, **small))
    Environment(fast=True).run(first)
    assert first.learner.result["iterations"] == 3
    assert ApexDQNLearner.load(ckpt).digest() == first.learner.result["weights_sha256"]
    more = apex.Main(apex.Args(total_timesteps=100 + 5 * 8, resume=True, **small))
    Environment(fast=True).run(more)
    r = more.learner.result
    assert r["resumed_from_iteration"] == 3 and r["iterations"] == r["updates"] == 5


def test_a_sampler_acts_and_prioritises_without_torch() -> None:
    """The program builds, and a sampler's whole fragment (acting, n-step transitions,
    initial priorities) runs, in a process that never imports torch."""
    code = (
        "import sys\n"
        "from reactorfed.cli.loader import load_program\n"
        "main = load_program('examples/rl/apex_dqn_cartpole.py:Main', {})\n"
        "from reactorfed.rl import PolicyRunner, SpaceInfo; from reactorfed.rl.replay import NStepBuilder\n"
        "cfg = main.learner.algo\n"
        "actor = cfg.make_actor(SpaceInfo((4,), 2), 1, range(4), 8)\n"
        "b = NStepBuilder(4, cfg.n_step, cfg.gamma)\n"
        "t = b.add(PolicyRunner('CartPole-v1', 4, seed=0).rollout(16, actor))\n"
        "assert len(t) > 0 and (actor.priorities(t) >= 0).all()\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
