"""The learner's wait for samples (``learner_wait``): the share of its recent wall time it
spent waiting for fragments, reported as a progress figure by the learners of elastic banks
(the figure an autoscaler scales samplers on), measured only: training never reads it."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from reactorfed import Environment, Reactor
from reactorfed.rl import PPOConfig, RunConfig, SyncPlan
from reactorfed.rl.algos.appo.config import APPOConfig
from reactorfed.rl.plans.async_ import AsyncPlan
from reactorfed.rl.plans.learner_wait import FIGURE, LearnerWait

from .conftest import load_example

S = 1_000_000_000  # ns


class FakeClock:
    def __init__(self) -> None:
        self.t = 100 * S

    def __call__(self) -> int:
        return self.t


def test_the_share_is_the_waits_part_of_wait_and_work() -> None:
    clock = FakeClock()
    w = LearnerWait(clock, window_ns=10 * S)
    assert w.figures() == {}  # nothing measured yet: no figure
    w.working()  # the first update: no wait before it is known
    clock.t += 1 * S
    w.idle()
    assert w.share() == 0.0
    clock.t += 3 * S  # waits 3 s
    w.working()
    w.working()  # (again, at the same update: nothing)
    clock.t += 1 * S
    assert w.figures() == {FIGURE: round(3 / 5, 4)}  # (figures() ends the update)
    w.idle()  # (again: nothing)
    assert len(w.spans) == 2


def test_a_timed_round_counts_only_the_wait_past_its_time() -> None:
    clock = FakeClock()
    w = LearnerWait(clock)
    w.working()
    clock.t += 1 * S
    w.idle()
    clock.t += 4 * S  # 4 s until the reaction, which starts 1 s after its tag's time
    w.working(late_by=1 * S)
    clock.t += 1 * S
    w.idle()
    assert w.share() == pytest.approx(1 / 3)
    clock.t += 2 * S  # the fragments came before the round's time: no wait
    w.working(late_by=-S // 1000)
    clock.t += 1 * S
    w.idle()
    assert w.share() == pytest.approx(1 / 4)


def test_the_window_forgets_old_updates_but_keeps_the_last() -> None:
    clock = FakeClock()
    w = LearnerWait(clock, window_ns=10 * S)
    for wait, work in ((0, S), (9 * S, S), (S // 2, S // 2), (S // 2, S // 2)):
        clock.t += wait
        w.working()
        clock.t += work
        w.idle()
    assert w.share() == pytest.approx(10 / 12)  # the first has left the window
    clock.t += 100 * S
    w.working()
    clock.t += 1 * S
    w.idle()
    assert w.share() == pytest.approx(100 / 101)  # only the last remains


def _qlearning() -> Reactor:
    qlearning = load_example("qlearning")
    return qlearning.Main(qlearning.Args(num_samplers=2, max_samplers=3, iterations=6, fragment_len=20, seed=3))


ELASTIC: dict[str, Callable[[], Reactor]] = {
    "Q-learning": _qlearning,
    "sync PPO": lambda: SyncPlan(PPOConfig(minibatch_size=16, update_epochs=1, total_timesteps=2_000), "CartPole-v1",
                                 num_samplers=2, num_envs=2, fragment_len=16, max_samplers=3,
                                 run=RunConfig(iterations=4)),
    "APPO": lambda: AsyncPlan(APPOConfig(minibatch_size=32, update_epochs=1), "CartPole-v1", num_samplers=2,
                              num_envs=2, fragment_len=16, max_samplers=3, run=RunConfig(iterations=4)),
}


@pytest.mark.parametrize("plan", sorted(ELASTIC))
def test_the_learner_of_an_elastic_bank_reports_its_wait(plan: str) -> None:
    env = Environment(fast=True)
    sched = env.assemble(ELASTIC[plan]())
    env.run()
    _, report = sched.progress.latest()
    assert report is not None
    share = report.figures[FIGURE]
    assert 0.0 <= share <= 1.0 and not math.isnan(share)


def test_the_wait_is_measured_only() -> None:
    """Two runs measure different waits (wall time) and train the same weights."""
    weights = []
    for _ in range(2):
        program = _qlearning()
        env = Environment(fast=True)
        env.assemble(program)
        env.run()
        learner = program.learner  # type: ignore[attr-defined]
        weights.append(np.asarray(learner.learner.payload()).copy())
    assert np.array_equal(weights[0], weights[1])
