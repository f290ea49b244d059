"""The program of the lead window's tests (tests/federation/test_lead.py), as a new user
writes it: three producers (timers, no upstream), two mixers and a sink that calls
``request_stop()`` after 50 rounds, at 0.49 s of logical time (in one process the run ends
at (490 ms, 1)). ``slow_ms``: how long (wall) each of the sink's reactions takes.

Loaded by file path by ``reactorfed launch tests/federation/lead_programs.py:Main`` too, so
this module imports nothing from the test package.
"""

from __future__ import annotations

import time
from typing import Any

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction

#: the producers' period, and the rounds after which the sink asks to stop
PERIOD = ms(10)
ROUNDS = 50


class Producer(Reactor):
    out = Output(int)
    t = Timer(0, PERIOD)

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        self.n += 1
        out.set(self.n)


class Mixer(Reactor):
    a = Input(int)
    b = Input(int)
    out = Output(int)

    @reaction(triggers=[a, b], effects=[out])
    def mix(self, a: Any, b: Any, out: Any) -> None:
        out.set((a.get() if a.is_present else 0) + (b.get() if b.is_present else 0))


class Sink(Reactor):
    a = Input(int)
    b = Input(int)

    def __init__(self, slow_ms: int = 0) -> None:
        self.slow_ms = slow_ms
        self.rounds = 0
        self.last = 0
        self.stopped: tuple[int, int] | None = None

    @reaction(triggers=[a, b])
    def on(self, a: Any, b: Any) -> None:
        if self.slow_ms:
            time.sleep(self.slow_ms / 1000)
        self.rounds += 1
        self.last = (a.get() if a.is_present else 0) + (b.get() if b.is_present else 0)
        if self.rounds == ROUNDS:
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.elapsed_tag()
        self.stopped = (tag.time, tag.microstep)
        print(f"STOPPED {tag.time} {tag.microstep} after {self.rounds} rounds", flush=True)


class Main(Reactor):
    """p0, p1 -> m0; p1, p2 -> m1; m0, m1 -> sink."""

    def __init__(self, slow_ms: int = 0) -> None:
        self.p0 = Producer()
        self.p1 = Producer()
        self.p2 = Producer()
        self.m0 = Mixer()
        self.m1 = Mixer()
        self.sink = Sink(slow_ms)
        self.connect(self.p0.out, self.m0.a)
        self.connect(self.p1.out, self.m0.b)
        self.connect(self.p1.out, self.m1.a)
        self.connect(self.p2.out, self.m1.b)
        self.connect(self.m0.out, self.sink.a)
        self.connect(self.m1.out, self.sink.b)
