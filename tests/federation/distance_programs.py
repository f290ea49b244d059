"""A small deterministic program for the distance test (``test_proxy_faults.py``): three
federates, a fan-in of two paths of different length (one through a relay) into one
reaction at the same tag, and a feedback loop one microstep long, so that its output
depends on every message arriving at its tag and being seen together with the others of
that tag, and on nothing else.

Loaded by file path by ``reactorfed run`` / ``rti`` / ``federate``, so it imports nothing
from the test package. The sink prints ``TRACE <json>`` at shutdown.
"""

from __future__ import annotations

import json
from typing import Any

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction


class _Src(Reactor):
    """Every 10 ms a value that mixes in the feedback heard so far."""

    out = Output(int)
    back = Input(int)
    tick = Timer(offset=0, period=ms(10))

    def __init__(self) -> None:
        self.i = 0
        self.heard = 0

    @reaction(triggers=[back])
    def hear(self, back: Any) -> None:
        self.heard = (self.heard * 31 + back.get()) % 1_000_003

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        self.i += 1
        out.set(self.i * 1000 + self.heard % 1000)


class _Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get() * 2 + 1)


class _Sink(Reactor):
    direct = Input(int)
    relayed = Input(int)
    back = Output(int)

    def __init__(self) -> None:
        self.trace: list[list[Any]] = []

    @reaction(triggers=[direct, relayed], effects=[back])
    def join(self, direct: Any, relayed: Any, back: Any) -> None:
        t = self.elapsed_tag()
        a = direct.get() if direct.is_present else None
        b = relayed.get() if relayed.is_present else None
        self.trace.append([t.time, t.microstep, a, b])
        back.set((a or 0) + (b or 0))

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        print("TRACE " + json.dumps(self.trace), flush=True)


class Main(Reactor):
    def __init__(self) -> None:
        self.src = _Src()
        self.relay = _Relay()
        self.sink = _Sink()
        self.connect(self.src.out, self.sink.direct)
        self.connect(self.src.out, self.relay.inp)
        self.connect(self.relay.out, self.sink.relayed)
        self.connect(self.sink.back, self.src.back, after=0)  # the next microstep: a cycle through the RTI's PTAGs
