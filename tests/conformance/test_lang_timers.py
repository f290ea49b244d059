"""Ports of LF's programs about timers and reading time (logical, elapsed, physical), and
periodic tasks with deadlines."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    Input,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.harness import lf_test, run

# -- Timers.lf --------------------------------------------------------------------------


class _TimersMain(Reactor):
    t = Timer(0, sec(1))
    t2 = Timer(0, sec(2))

    def __init__(self) -> None:
        self.counter = 0
        self.shutdown_checked = False

    @reaction(triggers=[t2])
    def on_t2(self) -> None:
        self.counter += 2

    @reaction(triggers=[t])
    def on_t(self) -> None:
        self.counter -= 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.counter == 1, f"Error: Expected 1 and got {self.counter}."
        self.shutdown_checked = True


@lf_test("Timers.lf")
def test_timers() -> None:
    main = _TimersMain()
    run(main, timeout=sec(2))
    assert main.shutdown_checked


# -- GetTime.lf -------------------------------------------------------------------------


class _GetTimeMain(Reactor):
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.printed: list[tuple[int, int, int, int, int]] = []

    @reaction(triggers=[t])
    def show(self) -> None:
        logical = self.logical_time()
        elapsed = self.elapsed()
        physical = self.physical_time()
        elapsed_physical = physical - self.start_time()
        self.printed.append((logical, elapsed, physical, elapsed_physical, physical - logical))


@lf_test("GetTime.lf")
def test_get_time() -> None:
    main = _GetTimeMain()
    run(main, timeout=sec(2))  # fast: false
    assert [p[1] for p in main.printed] == [0, sec(1), sec(2)]
    # Not fast: logical time never runs ahead of physical time (the lag is >= 0).
    assert all(lag >= 0 and ep >= el for _, el, _, ep, lag in main.printed)


# -- PeriodicTask.lf --------------------------------------------------------------------
# The program checks the order in which reactions ready at one tag run by comparing the
# physical times at which they start: in LF each reaction takes some real time. On the
# virtual clock time stands still within a tag, so the port runs on a clock that advances
# 1 us at every read (a reaction's start is then later than any reaction's before it).


class _TickingClock(VirtualClock):
    """A virtual clock that moves 1 us forward every time it is read."""

    def now(self) -> int:
        self.advance(us(1))
        return super().now()


class _Periodic(Reactor):
    trigger = Timer(0, "period")
    t = Output(int)

    def __init__(self, period: int = ms(50), name_: str = "Unnamed") -> None:
        self.period = period
        self.name_ = name_  # LF's parameter `name` (reactorfed's reactors have their own)

    @reaction(triggers=[trigger], effects=[t])
    def go(self, t: Any) -> None:
        start_time = self.physical_time() - self.start_time()
        t.set(start_time)


class _Probe(Reactor):
    i = Input(int)
    t = Output(int)

    def __init__(self, dl: int = ms(2), name_: str = "Unnamed") -> None:
        self.dl = dl
        self.name_ = name_
        self.violations = 0

    @reaction(triggers=[i], effects=[t], deadline="dl")
    def probe(self, i: Any, t: Any) -> None:
        start_time = self.physical_time() - self.start_time()
        t.set(start_time)

    @probe.deadline_handler
    def violated(self, i: Any, t: Any) -> None:
        start_time = self.physical_time() - self.start_time()
        t.set(start_time)
        self.violations += 1


class _PeriodicTaskMain(Reactor):
    def __init__(self) -> None:
        self.task1 = _Periodic(period=ms(50), name_="task1")
        self.detector1 = _Probe(dl=ms(50), name_="detector1")
        self.connect(self.task1.t, self.detector1.i)
        self.task2 = _Periodic(period=ms(50), name_="task2")
        self.detector2 = _Probe(dl=ms(25), name_="detector2")
        self.connect(self.task2.t, self.detector2.i)
        self.checked = 0

    @reaction(triggers=["task1.t", "detector2.t"])
    def check(self, task1: Any, detector2: Any) -> None:
        self.checked += 1
        assert not (
            task1.t.is_present and detector2.t.is_present and task1.t.get() < detector2.t.get()
        ), "EDF policy violated. detector2 should execute before task1 when both are triggered."


@lf_test("PeriodicTask.lf")
def test_periodic_task() -> None:
    main = _PeriodicTaskMain()
    run(main, timeout=ms(200), clock=_TickingClock())  # workers: 1
    assert main.checked == 5  # 0, 50, ..., 200 ms
