"""Ports of LF's `after` programs (connections with a logical delay) and its physical
connections (`~>`) within one program."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
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


class _Foo(Reactor):
    x = Input(int)
    y = Output(int)

    @reaction(triggers=[x], effects=[y])
    def double(self, x: Any, y: Any) -> None:
        y.set(2 * x.get())


class _Print(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.expected_time = ms(10)
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received += 1
        assert x.get() == 84, f"expected 84, got {x.get()}"
        assert self.elapsed() == self.expected_time, f"at {self.elapsed()}, expected {self.expected_time}"
        self.expected_time += sec(1)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received > 0, "final reactor received no data"


class _AfterMain(Reactor):
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.f = _Foo()
        self.p = _Print()
        self.connect(self.f.y, self.p.x, after=ms(10))

    @reaction(triggers=[t], effects=["f.x"])
    def kick(self, f: Any) -> None:
        f.x.set(42)


@lf_test("After.lf")
def test_after() -> None:
    main = _AfterMain()
    run(main, timeout=sec(3))
    assert main.p.received == 3  # t = 0, 1 s, 2 s (the 3 s tick's output lands after the timeout)


# --------------------------------------------------------------------------- AfterCycles.lf


class _ACSource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(1)


class _ACWork(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class _AfterCycles(Reactor):
    def __init__(self) -> None:
        self.count = 0
        self.s = _ACSource()
        self.w0 = _ACWork()
        self.w1 = _ACWork()
        self.connect(self.s.out, self.w0.inp, after=ms(10))
        self.connect(self.s.out, self.w1.inp, after=ms(20))

    @reaction(triggers=["w0.out"])
    def from_w0(self, w0: Any) -> None:
        self.count += 1
        assert self.elapsed() == ms(10), "Time should have been 10000000."
        assert w0.out.get() == 1, "Value should have been 1."

    @reaction(triggers=["w1.out"])
    def from_w1(self, w1: Any) -> None:
        self.count += 1
        assert self.elapsed() == ms(20), "Time should have been 20000000."
        assert w1.out.get() == 1, "Value should have been 1."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 2, "Top-level reactions should have been triggered but were not."


@lf_test("AfterCycles.lf")
def test_after_cycles() -> None:
    main = _AfterCycles()
    run(main)
    assert main.count == 2


# ------------------------------------------------------------------------ AfterOverlapped.lf


class _Count(Reactor):
    """LF's lib/Count.lf."""

    out = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class _AOTest(Reactor):
    c = Input(int)

    def __init__(self) -> None:
        self.i = 0
        self.received = 0

    @reaction(triggers=[c])
    def check(self, c: Any) -> None:
        self.received += 1
        self.i += 1
        assert c.get() == self.i, f"ERROR: Expected {self.i} but got {c.get()}"
        elapsed_time = self.elapsed()
        expected_logical_time = sec(2) + sec(1) * (c.get() - 1)
        assert elapsed_time == expected_logical_time, (
            f"ERROR: Expected logical time to be {expected_logical_time} but got {elapsed_time}"
        )

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received != 0, "ERROR: Final reactor received no data."


class _AfterOverlapped(Reactor):
    def __init__(self) -> None:
        self.count = _Count()
        self.test = _AOTest()
        self.connect(self.count.out, self.test.c, after=sec(2))


@lf_test("AfterOverlapped.lf")
def test_after_overlapped() -> None:
    main = _AfterOverlapped()
    run(main, timeout=sec(5), fast=True)
    assert main.test.received == 4  # sent at 0..3 s, received at 2..5 s (5 s is the last tag)


# ------------------------------------------------------------------------------ AfterZero.lf


class _AZPrint(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.expected_time = 0
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received += 1
        elapsed_time = self.elapsed()
        assert x.get() == 84, "ERROR: Expected result to be 84."
        assert elapsed_time == self.expected_time, f"ERROR: Expected logical time to be {self.expected_time}."
        assert self.microstep() == 1, "ERROR: Expected microstep to be 1"
        self.expected_time += sec(1)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received != 0, "ERROR: Final reactor received no data."


class _AfterZero(Reactor):
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.f = _Foo()
        self.p = _AZPrint()
        self.connect(self.f.y, self.p.x, after=0)

    @reaction(triggers=[t], effects=["f.x"])
    def kick(self, f: Any) -> None:
        f.x.set(42)


@lf_test("AfterZero.lf")
def test_after_zero() -> None:
    main = _AfterZero()
    run(main, timeout=sec(3), fast=False)
    # (0 s, 1), (1 s, 1), (2 s, 1); the 3 s tick's output would land at (3 s, 1), after the last tag
    assert main.p.received == 3


# -- PhysicalConnection.lf, PhysicalConnectionCycle.lf -----------------------------------------
# LF's ``source.out ~> destination.inp``: connect(..., physical=True). The program checks
# that logical time has advanced at the receiver, which takes physical time passing: it
# runs on a clock that moves 1 us at every read (in LF, real time passes).


class _TickingClock(VirtualClock):
    def now(self) -> int:
        self.advance(us(1))
        return super().now()


class _PCSource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)


class _PCDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: list[tuple[int, Any]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        elapsed_time = self.elapsed()
        self.received.append((elapsed_time, inp.get()))
        assert elapsed_time > 0, "ERROR: Logical time should have been greater than zero."


class _PhysicalConnection(Reactor):
    def __init__(self) -> None:
        self.source = _PCSource()
        self.destination = _PCDestination()
        self.connect(self.source.out, self.destination.inp, physical=True)  # ~>


@lf_test("PhysicalConnection.lf")
def test_physical_connection() -> None:
    main = _PhysicalConnection()
    run(main, clock=_TickingClock())
    assert [v for _, v in main.destination.received] == [42]


class _PCFoo(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def relay(self, inp: Any, out: Any) -> None:
        pass


class _PhysicalConnectionCycle(Reactor):
    def __init__(self) -> None:
        self.a = _PCFoo()
        self.b = _PCFoo()
        self.connect(self.a.out, self.b.inp, physical=True)  # a.out ~> b.inp
        self.connect(self.b.out, self.a.inp)  # b.out -> a.inp


@lf_test("PhysicalConnectionCycle.lf")
def test_physical_connection_cycle() -> None:
    """The physical connection breaks the cycle: the program assembles and runs (nothing
    triggers it: it ends at once by starvation)."""
    summary = run(_PhysicalConnectionCycle())
    assert summary.stop_reason == "starvation"
