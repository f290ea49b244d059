"""Ape-X's plan with the replay shards in the learner's federate (what the Kubernetes
operator runs): the same weights as ApexPlan's for a seed, in one process and federated,
with the samplers and the learner as the only federates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from reactorfed import Environment, ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import ApexDQNConfig, ApexPlan, ReplayConfig, RunConfig
from reactorfed.rl.plans.apex_colocated import ColocatedApexPlan

from .conftest import load_example

ALGO = ApexDQNConfig(hidden=(32,), target_update_interval=20)
REPLAY = ReplayConfig(capacity=2_000, batch_size=32, learning_starts=200)


def _kw(iterations: int, seed: int = 3) -> dict[str, Any]:
    return dict(num_samplers=3, num_shards=2, num_envs=2, fragment_len=8, replay=REPLAY,
                run=RunConfig(iterations=iterations), seed=seed)


def _digest(results: Mapping[str, Any], key: str) -> str:
    return str(results[key]["weights_sha256"])


def test_same_weights_as_apex_plan_in_one_process_and_federated() -> None:
    plan = Environment(fast=True).run(ApexPlan(ALGO, "CartPole-v1", **_kw(80))).results
    colo = Environment(fast=True).run(ColocatedApexPlan(ALGO, "CartPole-v1", **_kw(80))).results
    learned = colo["ColocatedApexPlan.learner.learner"]
    assert learned["iterations"] == 80 and learned["updates"] > 0  # (learning starts after 200 transitions)
    assert _digest(plan, "ApexPlan.learner") == _digest(colo, "ColocatedApexPlan.learner.learner")
    assert {k for k in colo if ".shards[" in k} == {"ColocatedApexPlan.learner.shards[0]",
                                                     "ColocatedApexPlan.learner.shards[1]"}
    run = run_threads(lambda: ColocatedApexPlan(ALGO, "CartPole-v1", **_kw(80)))
    run.raise_errors()
    assert sorted(run.summaries) == ["learner", "samplers[0]", "samplers[1]", "samplers[2]"]
    fed = run.summaries["learner"].results
    assert _digest(fed, "ColocatedApexPlan.learner.learner") == _digest(plan, "ApexPlan.learner")
    other = Environment(fast=True).run(ColocatedApexPlan(ALGO, "CartPole-v1", **_kw(80, seed=4))).results
    assert _digest(other, "ColocatedApexPlan.learner.learner") != _digest(plan, "ApexPlan.learner")


def test_layout_mistakes_are_named() -> None:
    with pytest.raises(ValidationError, match="each shard needs a sampler"):
        ColocatedApexPlan(ALGO, "CartPole-v1", num_samplers=1, num_shards=2)
    with pytest.raises(ValidationError, match="prefetch must be an int >= 1"):
        ColocatedApexPlan(ALGO, "CartPole-v1", prefetch=0)


def test_example_one_pod_program_has_the_operators_federates() -> None:
    apex = load_example("apex_dqn_cartpole")
    one = apex.OnePod(apex.Args(num_samplers=3, num_shards=1, checkpoint=""))
    assert [c.name for c in one._children] == ["samplers[0]", "samplers[1]", "samplers[2]", "learner"]
    main = apex.Main(apex.Args(num_samplers=3, num_shards=1, checkpoint=""))
    assert [c.name for c in main._children] == ["samplers[0]", "samplers[1]", "samplers[2]", "shards[0]", "learner"]
