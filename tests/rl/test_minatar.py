"""MinAtar under the synchronous plan with the convolutional network: the environments'
shapes and seeding, the numpy actor computing the torch network's policy, one seed giving
the same weights in one process and federated, the example's checkpoint and resume, and
a sampler acting without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from reactorfed import Environment
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import PolicyRunner, RunConfig, SpaceInfo, SyncPlan, make_env
from reactorfed.rl.algos.ppo.conv_actor import ConvActor, conv_shapes
from reactorfed.rl.algos.ppo.conv_actor_critic import ConvActorCritic
from reactorfed.rl.algos.ppo.conv_config import ConvPPOConfig
from reactorfed.rl.algos.ppo.conv_learner import ConvPPOLearner

from .conftest import EXAMPLES, load_example

pytest.importorskip("minatar", reason="MinAtar is not installed (pip install 'reactorfed[minatar]')")

ENV = "MinAtar/Breakout-v1"
SMALL = ConvPPOConfig(minibatch_size=32, update_epochs=2, total_timesteps=2_000)


def test_breakout_frames_actions_and_seeding() -> None:
    space = SpaceInfo.of_env(ENV)
    assert space == SpaceInfo((10, 10, 4), 3)  # paddle, ball, trail, bricks; no-op, left, right
    env = make_env(ENV, seed=3)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (10, 10, 4) and obs.dtype == np.bool_
    env.close()

    def frames(seed: int) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
        runner = PolicyRunner(ENV, 3, seed=seed)
        actor = ConvActor(space.obs_shape, space.num_actions, 16, (128,), seed=seed)  # zero weights: uniform
        r = runner.rollout(200, actor)
        runner.close()
        return r.obs, r.actions, r.episode_returns

    a, b, c = frames(5), frames(5), frames(6)
    assert a[0].shape == (201, 3, 10, 10, 4) and a[0].dtype == np.bool_
    assert all(np.array_equal(x, y) for x, y in zip(a[:2], b[:2], strict=True)) and a[2] == b[2]
    assert not np.array_equal(a[0], c[0])
    assert len(a[2]) > 0  # random play loses the ball within 200 steps


def _randomized(model: ConvActorCritic, seed: int) -> None:
    """Weights of a normal scale everywhere (the policy head's initial 0.01 gain would make
    every logit nearly 0, and any two networks nearly agree)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)


@pytest.mark.parametrize(("obs_shape", "hidden"), [((10, 10, 4), (128,)), ((7, 9, 2), (32, 16)), ((5, 5, 3), ())])
def test_numpy_actor_computes_the_torch_policy(obs_shape: tuple[int, int, int], hidden: tuple[int, ...]) -> None:
    model = ConvActorCritic(obs_shape, 5, channels=8, hidden=hidden, seed=1)
    _randomized(model, 2)
    actor = ConvActor(obs_shape, 5, 8, hidden, seed=0)
    payload = model.actor_payload()
    assert payload.shape == (actor.size,) == (sum(int(np.prod(s)) for s in conv_shapes(obs_shape, 8, hidden, 5)),)
    actor.load(payload)
    obs = np.random.default_rng(3).random((6, *obs_shape)) < 0.3
    with torch.no_grad():
        expected = model.logits(torch.from_numpy(obs)).numpy()
    assert np.abs(expected).max() > 1.0  # logits that tell a wrong permutation apart
    np.testing.assert_allclose(actor.logits(obs), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(actor.logits(obs.reshape(6, -1)), expected, rtol=1e-5, atol=1e-5)
    # the log-probabilities the actor reports are the torch policy's for its actions
    actions, logp = actor.act(obs)
    with torch.no_grad():
        want, _, _ = model.evaluate(torch.from_numpy(obs), torch.from_numpy(actions))
    np.testing.assert_allclose(logp, want.numpy(), rtol=1e-4, atol=1e-5)


def test_network_checks_and_unloaded_actor() -> None:
    with pytest.raises(ValueError, match=r"\(H, W, C\) observations"):
        ConvActorCritic((400,), 3)
    with pytest.raises(ValueError, match="smaller than the 3x3 kernel"):
        conv_shapes((2, 10, 4), 16, (128,), 3)
    actor = ConvActor((10, 10, 4), 3, 16, (128,), seed=0)
    with pytest.raises(ValueError, match="expected"):
        actor.load(np.zeros(10, dtype=np.float32))
    actions, logp = actor.act(np.zeros((64, 10, 10, 4), dtype=np.bool_))
    np.testing.assert_allclose(logp, np.log(1 / 3), rtol=1e-6)  # no weights yet: uniform
    assert set(actions.tolist()) == {0, 1, 2}
    # two learners of one seed start the same; the model is the convolutional one
    a, b = (ConvPPOLearner(SpaceInfo((10, 10, 4), 3), SMALL, seed=4) for _ in range(2))
    assert isinstance(a.model, ConvActorCritic) and a.digest() == b.digest()
    assert a.optimizer.param_groups[0]["params"][0] is next(a.model.parameters())


def _plan(iterations: int, seed: int = 0, checkpoint: str = "", resume: bool = False) -> SyncPlan:
    run = RunConfig(iterations=iterations, checkpoint=checkpoint, resume=resume)
    return SyncPlan(SMALL, ENV, num_samplers=2, num_envs=2, fragment_len=16, run=run, seed=seed)


def _single(**kw: Any) -> dict[str, Any]:
    return dict(Environment(fast=True).run(_plan(**kw)).results["SyncPlan.learner"])


def test_one_seed_same_weights_in_one_process_and_federated() -> None:
    single = _single(iterations=3, seed=7)
    run = run_threads(lambda: _plan(iterations=3, seed=7))
    run.raise_errors()
    assert sorted(run.summaries) == ["learner", "samplers[0]", "samplers[1]"]
    fed = run.summaries["learner"].results["SyncPlan.learner"]
    assert fed["iterations"] == 3 and fed["env_steps"] == single["env_steps"] > 0
    assert single["weights_sha256"] == fed["weights_sha256"]
    assert _single(iterations=3, seed=8)["weights_sha256"] != fed["weights_sha256"]


def test_example_checkpoint_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = load_example("ppo_minatar")
    ckpt = str(tmp_path / "m.pt")
    small = {"num_envs": 2, "num_steps": 16, "checkpoint": ckpt, "progress_every": 1}
    first = ex.Main(ex.Args(ppo=ConvPPOConfig(total_timesteps=2 * 2 * 2 * 16, minibatch_size=32), **small))  # 2 rounds
    Environment(fast=True).run(first)
    r1 = first.learner.result
    assert r1["iterations"] == 2 and ConvPPOLearner.load(ckpt).digest() == r1["weights_sha256"]
    second = ex.Main(ex.Args(ppo=ConvPPOConfig(total_timesteps=3 * 2 * 2 * 16, minibatch_size=32), resume=True, **small))
    Environment(fast=True).run(second)
    r2 = second.learner.result
    assert r2["resumed_from_iteration"] == 2 and r2["iterations"] == 3 and r2["env_steps"] > r1["env_steps"]
    err = capsys.readouterr().err
    assert "iter     3/3" in err and "return(100)" in err and f"resumed from {ckpt} at iteration 2" in err


def test_a_sampler_acts_without_torch() -> None:
    code = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
import numpy as np
import ppo_minatar
from reactorfed.rl.rollout import PolicyRunner, pack_rollout
main = ppo_minatar.Main(ppo_minatar.Args(checkpoint=""))
s = main.samplers[0]
actor = s.algo.make_actor(s.space, 1)
actor.load(np.zeros(actor.size, dtype=np.float32))
assert pack_rollout(PolicyRunner(s.env, s.num_envs, seed=s.seed).rollout(8, actor)).shape == (9, 8)
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
