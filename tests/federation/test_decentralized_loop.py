"""A closed loop of federates over ``after 0`` under decentralized coordination: a driver
broadcasts a round to a bank of workers, each answers into the driver's multiport one
microstep later, and the driver starts the next round when all answers are in (the shape of
``bench/scale_programs.py:Loop`` and of synchronous RL). Promises alone climb one microstep
per round trip around such a cycle: the federation must still advance to later times and
end, with the result it has centralized and in one process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    ActionHandle,
    Environment,
    Input,
    LogicalAction,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    bank,
    ms,
    reaction,
)
from reactorfed.federation import run_threads

pytestmark = pytest.mark.timeout(120)

ROUNDS = 6


class _Driver(Reactor):
    go = Output(int)
    answers = Input(int, width="n")
    later = LogicalAction(int)

    def __init__(self, n: int, step: int | None) -> None:
        self.n = n
        #: logical time between rounds (None: the next round at the answers' microstep)
        self.step = step
        #: (time since the start, microstep, the answers' sum) per round
        self.trace: list[tuple[int, int, int]] = []

    @reaction(triggers=[STARTUP], effects=[go])
    def start(self, go: PortWriter[int]) -> None:
        go.set(0)

    @reaction(triggers=[answers], effects=[go, later])
    def gather(self, answers: MultiReader[int], go: PortWriter[int], later: ActionHandle) -> None:
        present = answers.present()
        assert len(present) == self.n, "a round without every worker's answer"
        t = self.elapsed_tag()
        self.trace.append((t.time, t.microstep, sum(v for _, v in present)))
        if len(self.trace) < ROUNDS:
            if self.step is None:
                go.set(len(self.trace))
            else:
                later.schedule(value=len(self.trace), delay=self.step)

    @reaction(triggers=[later], effects=[go])
    def next_round(self, later: ActionHandle, go: PortWriter[int]) -> None:
        go.set(later.get())


class _Worker(Reactor):
    go = Input(int)
    answer = Output(int)

    @reaction(triggers=[go], effects=[answer])
    def work(self, go: PortReader[int], answer: PortWriter[int]) -> None:
        v = go.get()
        assert v is not None
        answer.set(10 * v + (self.bank_index or 0))


def loop(workers: int, step: int | None) -> Callable[[], Reactor]:
    def make() -> Reactor:
        class Loop(Reactor):
            def __init__(self) -> None:
                self.driver = _Driver(workers, step)
                self.workers = bank(_Worker, workers)
                self.connect(self.driver.go, self.workers.go, broadcast=True)
                self.connect(self.workers.answer, self.driver.answers, after=0)

        return Loop()

    return make


def _driver_trace(run: Any) -> list[tuple[int, int, int]]:
    main = run.programs["driver"]
    return next(c for c in main.children if c.name == "driver").trace


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("step", [None, ms(1)], ids=["microsteps", "1ms"])
def test_a_loop_over_after_0_ends_decentralized_as_centralized_and_in_one_process(
        workers: int, step: int | None) -> None:
    factory = loop(workers, step)
    single = factory()
    Environment(fast=True).run(single)
    expected = single.driver.trace  # type: ignore[attr-defined]
    assert len(expected) == ROUNDS
    for coordination in ("centralized", "decentralized"):
        run = run_threads(factory, fast=True, join_timeout_s=15, coordination=coordination)
        run.raise_errors()
        assert _driver_trace(run) == expected, coordination
