"""A program of ``bench/distance.py``: ``n`` 100 KB frames from one federate to another,
one per tag, measured at the sink from the federation's start to the last frame."""

from __future__ import annotations

import numpy as np

from reactorfed import (
    STARTUP,
    ActionHandle,
    Input,
    LogicalAction,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    reaction,
    us,
)

FRAME = 100 * 1024


class _Src(Reactor):
    out = Output(np.ndarray)
    again = LogicalAction(int)

    def __init__(self, n: int) -> None:
        self.n = n
        self.frame = np.arange(FRAME, dtype=np.uint8)

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: ActionHandle) -> None:
        again.schedule(value=0)

    @reaction(triggers=[again], effects=[again, out])
    def send(self, again: ActionHandle, out: PortWriter[np.ndarray]) -> None:
        i: int = again.get()
        out.set(self.frame)
        if i + 1 < self.n:
            again.schedule(value=i + 1, delay=us(1))


class _Sink(Reactor):
    inp = Input(np.ndarray)

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.t0 = 0

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.t0 = self.physical_time()

    @reaction(triggers=[inp])
    def take(self, inp: PortReader[np.ndarray]) -> None:
        v = inp.get()
        assert v is not None and v.nbytes == FRAME
        self.count += 1
        if self.count == self.n:
            self.report_result({"frames": self.count, "seconds": (self.physical_time() - self.t0) / 1e9})


class Frames(Reactor):
    def __init__(self, n: int = 1000) -> None:
        self.src = _Src(n)
        self.sink = _Sink(n)
        self.connect(self.src.out, self.sink.inp)
