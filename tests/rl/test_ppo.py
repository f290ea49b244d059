"""PPO's learner on real rollouts: an update moves the weights, one seed gives one result,
the schedules anneal, a checkpoint restores the learner bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reactorfed.rl import PolicyRunner, PPOConfig, SpaceInfo
from reactorfed.rl.algos.ppo.learner import PPOLearner, make_batch

SPACE = SpaceInfo((4,), 2)


def _rollouts(learner: PPOLearner, seed: int = 0) -> list:  # type: ignore[type-arg]
    cfg = learner.config
    out = []
    for i in range(2):
        actor = cfg.make_actor(SPACE, seed + 10 + i)
        actor.load(learner.payload())
        out.append(PolicyRunner("CartPole-v1", 4, seed=seed + i).rollout(32, actor))
    return out


def test_an_update_moves_the_weights_and_counts_transitions() -> None:
    learner = PPOLearner(SPACE, PPOConfig(), seed=1)
    before = learner.digest()
    rollouts = _rollouts(learner)
    stats = learner.learn(rollouts)
    assert learner.digest() != before
    assert learner.env_steps == sum(r.transitions for r in rollouts) == stats["transitions"]
    assert learner.updates == 20 == stats["gradient_steps"]  # 20 epochs of one minibatch of <= 256
    assert stats["learning_rate"] == pytest.approx(1e-3 * (1 - learner.env_steps / 100_000))
    assert stats["clip_range"] == pytest.approx(0.2 * (1 - learner.env_steps / 100_000))
    assert 0.0 <= stats["clipfrac"] <= 1.0 and stats["entropy"] > 0.5


def test_one_seed_one_result() -> None:
    digests = []
    for seed in (3, 3, 4):
        learner = PPOLearner(SPACE, PPOConfig(minibatch_size=64, update_epochs=2), seed=seed)
        for _ in range(2):
            learner.learn(_rollouts(learner))
        digests.append(learner.digest())
    assert digests[0] == digests[1] != digests[2]


def test_batch_leaves_reset_rows_out() -> None:
    learner = PPOLearner(SPACE, PPOConfig(), seed=0)
    rollouts = _rollouts(learner)
    values = [np.zeros(r.obs.shape[:2], dtype=np.float32) for r in rollouts]
    batch = make_batch(rollouts, values, 0.98, 0.8)
    assert len(batch) == sum(r.transitions for r in rollouts) < 2 * 4 * 32
    np.testing.assert_array_equal(batch.actions[: rollouts[0].transitions], rollouts[0].actions[~rollouts[0].resets])


def test_checkpoint_restores_the_learner(tmp_path: Path) -> None:
    learner = PPOLearner(SPACE, PPOConfig(hidden=(32,)), seed=2)
    learner.learn(_rollouts(learner))
    path = learner.save(tmp_path / "ppo.pt", extra={"iteration": 1})
    restored = PPOLearner.load(path)
    assert restored.digest() == learner.digest() and restored.config.hidden == (32,)
    assert (restored.env_steps, restored.updates) == (learner.env_steps, learner.updates)
    # and it goes on exactly as the original would
    rollouts = _rollouts(learner, seed=7)
    learner.learn(rollouts)
    restored.learn(rollouts)
    assert restored.digest() == learner.digest()


def test_config_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="minibatch_size"):
        PPOConfig(minibatch_size=0)
    with pytest.raises(ValueError, match="gae_lambda"):
        PPOConfig(gae_lambda=1.5)


def test_target_kl_stops_the_epochs_before_a_step_too_far() -> None:
    learner = PPOLearner(SPACE, PPOConfig(target_kl=1e-9), seed=0)
    stats = learner.learn(_rollouts(learner))
    # the first step starts at the acting policy (KL ~ 0); after it the policy has moved
    assert stats["gradient_steps"] == 1 == learner.updates
