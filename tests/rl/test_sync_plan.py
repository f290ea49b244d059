"""The synchronous plan as a reactor program: rounds, results, checkpoints and resume, and
one seed giving bit-identical weights in one process and federated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import PPOConfig, RunConfig, SyncPlan
from reactorfed.rl.algos.ppo.learner import PPOLearner

from .conftest import load_example

SMALL = PPOConfig(minibatch_size=32, update_epochs=2, total_timesteps=2_000)


def _plan(iterations: int, seed: int = 0, checkpoint: str = "", resume: bool = False) -> SyncPlan:
    run = RunConfig(iterations=iterations, checkpoint=checkpoint, resume=resume)
    return SyncPlan(SMALL, "CartPole-v1", num_samplers=2, num_envs=2, fragment_len=16, run=run, seed=seed)


def _single(**kw: Any) -> dict[str, Any]:
    summary = Environment(fast=True).run(_plan(**kw))
    return dict(summary.results["SyncPlan.learner"])


def test_rounds_results_and_checkpoint(tmp_path: Path) -> None:
    ckpt = tmp_path / "ppo.pt"
    r = _single(iterations=4, checkpoint=str(ckpt))
    assert r["iterations"] == 4 and r["resumed_from_iteration"] == 0
    # 4 rounds of 2 samplers x 2 copies x 16 rows, less the reset rows
    assert 4 * 2 * 2 * 16 * 0.8 < r["env_steps"] < 4 * 2 * 2 * 16
    assert r["updates"] == 4 * 2 * 2  # per round: 2 epochs of 2 minibatches (33 to 64 transitions, 32 a minibatch)
    assert r["episodes"] > 0 and 8 < r["mean_return_100"] < 100
    assert PPOLearner.load(ckpt).digest() == r["weights_sha256"]


def test_resume_carries_on_where_the_checkpoint_stopped(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ppo.pt")
    first = _single(iterations=3, checkpoint=ckpt, resume=True)  # nothing to resume from yet
    second = _single(iterations=5, checkpoint=ckpt, resume=True)
    assert second["resumed_from_iteration"] == 3 and second["iterations"] == 5
    assert second["env_steps"] > first["env_steps"] and second["episodes"] > first["episodes"]
    assert second["weights_sha256"] != first["weights_sha256"]
    third = _single(iterations=5, checkpoint=ckpt, resume=True)  # finished already: nothing more to do
    assert (third["iterations"], third["env_steps"], third["weights_sha256"]) == (
        5, second["env_steps"], second["weights_sha256"])


def test_one_seed_same_weights_in_one_process_and_federated() -> None:
    single = [_single(iterations=3, seed=7) for _ in range(2)]
    run = run_threads(lambda: _plan(iterations=3, seed=7))
    run.raise_errors()
    assert sorted(run.summaries) == ["learner", "samplers[0]", "samplers[1]"]
    fed = run.summaries["learner"].results["SyncPlan.learner"]
    assert fed["iterations"] == 3 and fed["env_steps"] == single[0]["env_steps"]
    assert single[0]["weights_sha256"] == single[1]["weights_sha256"] == fed["weights_sha256"]
    assert _single(iterations=3, seed=8)["weights_sha256"] != fed["weights_sha256"]


def test_layout_mistakes_are_named() -> None:
    with pytest.raises(ValidationError, match="num_envs must be an int >= 1"):
        SyncPlan(SMALL, "CartPole-v1", num_envs=0)


def test_example_short_run_shows_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ppo = load_example("ppo_cartpole")
    main = ppo.Main(ppo.Args(ppo=PPOConfig(total_timesteps=1024), checkpoint=str(tmp_path / "p.pt"), progress_every=2))
    Environment(fast=True).run(main)
    assert main.learner.result["iterations"] == 4
    err = capsys.readouterr().err
    assert "iter     2/4" in err and "iter     4/4" in err and "return(100)" in err
    assert "result: not solved: the last 100 training episodes average" in err and "< 475" in err


def test_a_sampler_never_imports_torch() -> None:
    """Building the program (every federate builds all of it) and a sampler's work (its
    environments, its numpy actor, a packed fragment) leave torch unimported: the learner
    builds its network in its own startup reaction."""
    import subprocess
    import sys

    from .conftest import EXAMPLES

    code = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
import numpy as np
import ppo_cartpole
from reactorfed.rl.rollout import PolicyRunner, pack_rollout
main = ppo_cartpole.Main(ppo_cartpole.Args(checkpoint=""))
s = main.samplers[0]
actor = s.algo.make_actor(s.space, 1)
actor.load(np.zeros(actor.size, dtype=np.float32))
assert pack_rollout(PolicyRunner(s.env, s.num_envs, seed=s.seed).rollout(8, actor)).shape == (9, 4)
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
