"""A program whose stop is agreed while one federate is idle (tests/federation/test_stop_gaps.py).

``stopper`` requests a stop at 3 ms; ``src`` is idle until its timer at 1 s and sends 99 from
its shutdown reaction; ``sink`` records (and prints, for the launcher's output) what arrives.
In one process the program stops at (3 ms, 1) and ``sink`` gets the 99 there (without delay
on the link; ``after 0`` puts it at (3 ms, 2), past the stop tag: dropped).

Loaded by file path by ``reactorfed launch tests/federation/stop_programs.py:Main``, so this
module imports nothing from the test package.
"""

from __future__ import annotations

from typing import Any

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction, sec


class Stopper(Reactor):
    t = Timer(0, ms(1))

    @reaction(triggers=[t])
    def tick(self) -> None:
        if self.elapsed() >= ms(3):
            self.request_stop()


class Src(Reactor):
    out = Output(int)
    t = Timer(sec(1))

    @reaction(triggers=[t], effects=[out])
    def late(self, out: Any) -> None:
        out.set(1)

    @reaction(triggers=[SHUTDOWN], effects=[out])
    def bye(self, out: Any) -> None:
        out.set(99)


class Sink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.got: list[tuple[int, int, int]] = []

    @reaction(triggers=[inp])
    def on(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        self.got.append((tag.time, tag.microstep, inp.get()))
        print(f"GOT {tag.time} {tag.microstep} {inp.get()}", flush=True)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.elapsed_tag()
        print(f"STOPPED {tag.time} {tag.microstep}", flush=True)


class Main(Reactor):
    """stopper, src -> sink (``after``: the link's delay, None for none)."""

    def __init__(self, after: int | None = None) -> None:
        self.stopper = Stopper()
        self.src = Src()
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp, after=after)
