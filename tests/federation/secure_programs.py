"""Programs for the secure-links tests (``test_secure_links.py``, ``test_preauth_memory.py``),
loaded by file path by the processes they start: this module imports nothing from the
test package.

``Marked``: ``src`` sends ``sink`` a text carrying :data:`MARKER` and a byte array carrying
it too, every 20 ms of real time; the sink prints its PID at startup, a line every 10
values, and at shutdown how many values it got and a digest of them all (the output to
compare with the single-process run).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, ms, reaction

MARKER = "PAYLOAD-MARKER-4f9c2e"


class MarkedSource(Reactor):
    text = Output(str)
    blob = Output(object)
    tick = Timer(offset=0, period=ms(20))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[tick], effects=[text, blob])
    def emit(self, text: Any, blob: Any) -> None:
        self.i += 1
        text.set(f"{MARKER} #{self.i}")
        blob.set(np.frombuffer((MARKER * 40).encode(), dtype=np.uint8).copy())


class MarkedSink(Reactor):
    text = Input(str)
    blob = Input(object)

    def __init__(self) -> None:
        self.n = 0
        self.digest = hashlib.sha256()

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PID {os.getpid()}", flush=True)

    @reaction(triggers=[text, blob])
    def got(self, text: Any, blob: Any) -> None:
        self.n += 1
        t = self.elapsed_tag()
        self.digest.update(f"{t.time},{t.microstep},{text.get()},".encode())
        self.digest.update(blob.get().tobytes())
        if self.n % 10 == 0:
            print(f"received {self.n}", flush=True)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        print(f"sink: {self.n} values, digest {self.digest.hexdigest()[:16]}", flush=True)


class Marked(Reactor):
    def __init__(self) -> None:
        self.src = MarkedSource()
        self.sink = MarkedSink()
        self.connect(self.src.text, self.sink.text)
        self.connect(self.src.blob, self.sink.blob)
