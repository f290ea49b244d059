"""Policy lag, exactly: each fragment carries the tag its weights reached its sampler at;
the learner tells from it which of its weights acted, and how many updates and how much
logical time ago it sent them."""

from __future__ import annotations

import numpy as np

from reactorfed import Environment
from reactorfed.rl import PPOConfig, RunConfig, SyncPlan
from reactorfed.rl.rollout import Rollout, pack_rollout, unpack_rollout
from reactorfed.rl.training import PolicyLag

from .async_programs import SlowAPPO


def _rollout(tag: tuple[int, int] | None) -> Rollout:
    T, k = 3, 2
    z = np.zeros((T, k), dtype=np.bool_)
    return Rollout(obs=np.ones((T + 1, k, 4), np.float32), actions=np.ones((T, k), np.int64),
                   logp=np.zeros((T, k), np.float32), rewards=np.ones((T, k), np.float32), terminated=z,
                   truncated=z, resets=z, policy_tag=tag)


def test_the_policy_tag_travels_in_the_fragment_at_no_extra_byte() -> None:
    for tag in [(0, 0), (5_000_000, 3), (2**62, 2**32 - 1), None]:
        packed = pack_rollout(_rollout(tag))
        assert packed.nbytes == pack_rollout(_rollout(None)).nbytes
        back = unpack_rollout(packed)
        assert back.policy_tag == tag
        assert back.rewards.sum() == 6 and back.actions.sum() == 6  # the transitions untouched


def test_the_lag_counts_the_updates_since_the_weights_that_acted() -> None:
    lag = PolicyLag()
    lag.sent((0, 0), 0)
    lag.sent((0, 5), 1)
    lag.sent((10, 0), 2)
    assert lag.observe((0, 1), (0, 6), 2) == 2  # the weights of iteration 0 reached it at (0, 1)
    assert lag.observe((0, 5), (12, 0), 3) == 2  # sent at (0, 5), zero delay: iteration 1's
    assert lag.observe(None, (12, 0), 3) is None
    assert lag.result() == {"policy_lag_iterations": {"2": 2}, "policy_lag_ns": {"min": 0, "median": 12, "max": 12,
                                                                              "fragments": 2}}


def test_the_synchronous_plan_trains_on_the_newest_weights_only() -> None:
    plan = SyncPlan(PPOConfig(minibatch_size=32, update_epochs=1, total_timesteps=2_000), "CartPole-v1",
                    num_samplers=2, num_envs=2, fragment_len=16, run=RunConfig(iterations=4), seed=1)
    r = Environment(fast=True).run(plan).results[f"{plan.fqn}.learner"]
    assert r["policy_lag_iterations"] == {"0": 8} and r["policy_lag_ns"]["max"] == 0


def test_asynchronous_samplers_are_behind_by_the_weights_delay() -> None:
    plan = SlowAPPO(iterations=12)
    r = Environment(fast=True).run(plan).results[f"{plan.fqn}.learner"]
    assert sum(r["policy_lag_iterations"].values()) == r["policy_lag_ns"]["fragments"] >= 12
    assert r["policy_lag_ns"]["min"] >= 6_000_000  # never fresher than the weights' 6 ms delay
