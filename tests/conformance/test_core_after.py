"""Ports of LF's `after` programs (connections with a logical delay)."""

from __future__ import annotations

from typing import Any

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction, sec
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
