"""Every plan's learner reports its progress for a person (``Reactor.report_progress``):
its iteration of the run's total, the env steps and the mean training return, on the
run's board (what a federate sends the RTI, and ``kubectl get rfed`` shows)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import Environment, Reactor
from reactorfed.rl import DataParallelPlan, ParamServerPlan, PPOConfig, RunConfig, SyncPlan

from .apex_programs import SlowApex
from .async_programs import SlowAPPO
from .conftest import load_example
from .seed_programs import SlowSeed

SMALL = PPOConfig(minibatch_size=16, update_epochs=1, total_timesteps=2_000)


def _qlearning(iterations: int) -> Reactor:
    qlearning = load_example("qlearning")
    return qlearning.Main(qlearning.Args(num_samplers=2, iterations=iterations, fragment_len=20, seed=3))  # type: ignore[no-any-return]


PLANS: dict[str, Callable[[int], Reactor]] = {
    "sync PPO": lambda n: SyncPlan(SMALL, "CartPole-v1", num_samplers=2, num_envs=2, fragment_len=16,
                                   run=RunConfig(iterations=n)),
    "APPO": lambda n: SlowAPPO(iterations=n),
    "Q-learning": _qlearning,
    "Ape-X": lambda n: SlowApex(iterations=n),
    "SEED": lambda n: SlowSeed(iterations=n),
    "data-parallel": lambda n: DataParallelPlan(SMALL, "CartPole-v1", num_learners=2, samplers_per_learner=1,
                                                num_envs=2, fragment_len=16, run=RunConfig(iterations=n)),
    "param-server": lambda n: ParamServerPlan(SMALL, "CartPole-v1", num_workers=2, samplers_per_worker=1, num_envs=2,
                                              fragment_len=16, run=RunConfig(iterations=n)),
}


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_the_learner_reports_its_iteration_env_steps_and_return(plan: str) -> None:
    iterations = 4
    env = Environment(fast=True)
    sched = env.assemble(PLANS[plan](iterations))
    summary = env.run()
    count, report = sched.progress.latest()
    assert report is not None and count > iterations  # (one at the start, one per iteration at least)
    assert (report.done, report.total) == (iterations, iterations), report
    result: dict[str, Any] = next(r for r in summary.results.values() if "env_steps" in r)
    assert report.figures["env_steps"] == result["env_steps"] > 0
    if result["episodes"]:
        assert report.figures["mean_return"] == pytest.approx(result["mean_return_100"])
    else:  # no training episode ended yet: no return to show
        assert "mean_return" not in report.figures
