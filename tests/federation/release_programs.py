"""A sender that finishes long before its last payloads can have crossed the link.

Loaded by file path by ``reactorfed launch tests/federation/release_programs.py:Flood``
(tests/federation/test_release.py), so this module imports nothing from the test package.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction


class Source(Reactor):
    """Sends ``count`` arrays of ``mib`` MiB, one a millisecond (logical), as fast as it can."""

    out = Output(np.ndarray)
    tick = Timer(offset=0, period=ms(1))

    def __init__(self, count: int = 40, mib: int = 8) -> None:
        self.count = count
        self.n = mib << 20
        self.i = 0

    @reaction(triggers=[tick], effects=[out])
    def send(self, tick: Any, out: Any) -> None:
        if self.i < self.count:
            self.i += 1
            out.set(np.full(self.n, self.i % 251, dtype=np.uint8))


class Sink(Reactor):
    """Counts the arrays and checks each one whole, taking ``slow_ms`` (physical) over each
    (it reads nothing meanwhile); prints the tally at shutdown."""

    inp = Input(np.ndarray)

    def __init__(self, slow_ms: int = 0) -> None:
        self.got = 0
        self.bytes = 0
        self.slow_s = slow_ms / 1000

    @reaction(triggers=[inp])
    def take(self, inp: Any) -> None:
        if self.slow_s:
            time.sleep(self.slow_s)
        v = inp.get()
        self.got += 1
        assert v[0] == v[-1] == self.got % 251, (self.got, v[0], v[-1])
        self.bytes += v.nbytes

    @reaction(triggers=[SHUTDOWN])
    def tally(self) -> None:
        print(f"GOT {self.got} {self.bytes}", flush=True)


class Flood(Reactor):
    def __init__(self, count: int = 40, mib: int = 8, slow_ms: int = 0) -> None:
        self.src = Source(count, mib)
        self.sink = Sink(slow_ms)
        self.connect(self.src.out, self.sink.inp)
