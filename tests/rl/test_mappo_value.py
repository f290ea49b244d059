"""MAPPO's value normalization and Huber loss (MAPPOConfig.value): the running statistics,
the critic trained in normalized units with GAE on denormalized values, the statistics
carried by checkpoints, and the settings that turn each off (the plain PPO loss again)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from reactorfed.rl import MAPPOConfig
from reactorfed.rl.algos.mappo import MAPPOLearner
from reactorfed.rl.algos.mappo.config import ValueConfig
from reactorfed.rl.algos.mappo.value_norm import RunningValueNorm
from reactorfed.rl.algos.ppo.learner import value_loss

from .test_multi_agent import MAPPO, _single


def test_running_statistics_are_the_debiased_moments() -> None:
    norm = RunningValueNorm(beta=0.5)
    assert norm.stats() == (0.0, 1.0)
    a, b = np.array([1.0, 3.0]), np.array([10.0, 10.0])
    norm.update(a)
    assert norm.stats() == pytest.approx((2.0, 1.0))
    norm.update(b)
    # weights 0.25 and 0.5 for a and b, debiased by 0.75
    mean = (0.25 * 2.0 + 0.5 * 10.0) / 0.75
    sq = (0.25 * 5.0 + 0.5 * 100.0) / 0.75
    assert norm.stats() == pytest.approx((mean, np.sqrt(sq - mean * mean)))
    x = np.array([-4.0, 0.5, 12.0], np.float32)
    assert norm.denormalize(norm.normalize(x)) == pytest.approx(x, rel=1e-5)
    copy = RunningValueNorm(beta=0.5)
    copy.load_state(norm.state())
    assert copy.stats() == norm.stats()


def test_equal_returns_keep_a_floor_under_the_deviation() -> None:
    norm = RunningValueNorm()
    norm.update(np.full(8, 7.0))
    assert norm.stats() == pytest.approx((7.0, 0.1))


def test_bad_value_settings_are_named() -> None:
    with pytest.raises(ValueError, match=r"value\.norm_beta"):
        ValueConfig(norm_beta=1.0)
    with pytest.raises(ValueError, match=r"value\.huber_delta"):
        ValueConfig(huber_delta=-1.0)


def test_huber_loss_matches_the_squared_error_within_delta_and_clips_like_it() -> None:
    from reactorfed.rl.contracts import SpaceInfo

    learner = MAPPOLearner(SpaceInfo((4,), 5, state_dim=6), MAPPOConfig(value=ValueConfig(huber_delta=1.0)))
    v, r, old = torch.tensor([0.0, 0.0]), torch.tensor([0.5, 3.0]), torch.tensor([0.0, 0.0])
    # 0.5 * 0.5^2 within delta; 1 * (3 - 0.5) beyond it
    assert float(learner.critic_loss(v, r, old)) == pytest.approx((0.125 + 2.5) / 2)
    plain = MAPPOLearner(SpaceInfo((4,), 5, state_dim=6), MAPPOConfig(value=ValueConfig(huber_delta=0.0)))
    assert float(plain.critic_loss(v, r, old)) == pytest.approx(float(value_loss(v, r, old, None)))


def test_the_critic_learns_normalized_values_and_checkpoints_carry_the_statistics(tmp_path: Path) -> None:
    r = _single(algo=MAPPO, iterations=2, checkpoint=str(tmp_path))
    learner = MAPPOLearner.load(tmp_path / "shared.pt")
    assert learner.value_norm is not None and learner.value_norm.debias > 0
    mean, std = learner.value_norm.stats()
    assert mean < 0 and std > 0.1  # simple_spread's returns: negative distances
    assert learner.digest() == r["policies[0]"]["weights_sha256"]
    off = _single(algo=MAPPOConfig(minibatch_size=40, update_epochs=2, value=ValueConfig(norm=False)), iterations=2)
    assert off["policies[0]"]["weights_sha256"] != r["policies[0]"]["weights_sha256"]
