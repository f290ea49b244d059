"""Ports of LF's programs about timers and reading time (logical, elapsed, physical)."""

from __future__ import annotations

from reactorfed import SHUTDOWN, Reactor, Timer, reaction, sec
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
