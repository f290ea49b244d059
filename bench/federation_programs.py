"""The reactor programs of ``bench/federation.py``, loaded by ``reactorfed run`` /
``reactorfed launch`` (so this module imports nothing but reactorfed and numpy).

Every program measures itself and writes one JSON object to ``result_path``: wall
clock (``time.time()``, comparable across the processes of one machine) of the
events that matter, so launch and process start-up are not part of a throughput
figure and are the whole of a start-up figure.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from reactorfed import STARTUP, Input, LogicalAction, Output, Reactor, bank, reaction, us


def _write(path: str, data: dict[str, Any], suffix: str = "") -> None:
    """Write ``data`` as JSON to ``path + suffix``; nothing without a path (no result asked)."""
    if not path:
        return
    path += suffix
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


class Source(Reactor):
    """Advances one tag per step: reschedules itself ``step`` ns later, ``n`` times, and sends
    the step's counter (or a ``frame_bytes`` numpy frame) downstream."""

    out = Output(object)
    again = LogicalAction(int)

    def __init__(self, n: int, frame_bytes: int, result_path: str, step: int) -> None:
        self.n = n
        self.step = step
        self.frame = np.arange(frame_bytes, dtype=np.uint8) if frame_bytes else None
        self.result_path = result_path

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: Any) -> None:
        again.schedule(value=0)

    @reaction(triggers=[again], effects=[again, out])
    def tick(self, again: Any, out: Any) -> None:
        v = again.get()
        if v == 0:
            _write(self.result_path, {"first": time.time()}, ".src")
        out.set(v if self.frame is None else self.frame)
        if v + 1 < self.n:
            again.schedule(value=v + 1, delay=self.step)


class Relay(Reactor):
    inp = Input(object)
    out = Output(object)

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp: Any, out: Any) -> None:
        v = inp.get()
        out.set(v + 1 if isinstance(v, int) else v)


class Sink(Reactor):
    """Counts what arrives; records the wall time of its start-up and of the first and
    last arrival, and checks the values."""

    inp = Input(object)

    def __init__(self, n: int, relays: int, frame_bytes: int, result_path: str) -> None:
        self.n = n
        self.relays = relays
        self.frame_bytes = frame_bytes
        self.result_path = result_path
        self.count = 0
        self.first = 0.0
        self.last_value: Any = None

    @reaction(triggers=[STARTUP])
    def ready(self) -> None:
        _write(self.result_path, {"ready": time.time(), "pid": os.getpid()}, ".ready")

    @reaction(triggers=[inp])
    def recv(self, inp: Any) -> None:
        v = inp.get()
        if self.count == 0:
            self.first = time.time()
        self.count += 1
        if self.frame_bytes:
            assert v.nbytes == self.frame_bytes, v.nbytes
        else:
            assert v == self.count - 1 + self.relays, (v, self.count)
        if self.count == self.n:
            _write(self.result_path, {"first": self.first, "last": time.time(), "count": self.count})


class TagChain(Reactor):
    """``federates`` federates in a zero-delay chain: a source, ``federates - 2`` relays
    and a sink; ``n`` tags, one per ``step`` of logical time (default 1 us)."""

    def __init__(self, n: int = 10_000, federates: int = 2, frame_bytes: int = 0, result_path: str = "",
                 step: int = us(1)) -> None:
        relays = max(0, federates - 2)
        self.src = Source(n, frame_bytes, result_path, step)
        self.relays = bank(Relay, relays)
        self.sink = Sink(n, relays, frame_bytes, result_path)
        prev = self.src.out
        for i in range(relays):
            self.connect(prev, self.relays[i].inp)
            prev = self.relays[i].out
        self.connect(prev, self.sink.inp)
