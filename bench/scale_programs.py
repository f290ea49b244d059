"""The reactor programs of ``bench/scale.py``: three shapes of N federates, each stepping
``tags`` logical tags, each measuring itself from its first tag to its last.

* :class:`FanIn`: N sources, each sending one value per tag into one sink's multiport;
* :class:`Chain`: a source, N - 2 relays and a sink in a line, zero-delay links: every
  tag crosses all N federates;
* :class:`Loop`: a driver and N - 1 workers, the shape of synchronous RL: the driver
  broadcasts a round, every worker answers (after 0), and the driver starts the next
  round when all answers are in: a zero-delay cycle through every worker.

The sink (or driver) reports ``tags`` and ``seconds``: physical time, read through the
runtime's clock, from the federation's start to its last tag (the processes' start-up
and joining are not part of the figure). The start is the earlier of the sink's startup
and the start time the RTI fixed: as fast as possible, federates begin when the RTI's
START comes, up to its lead (20 ms) before that time, so at small N the startup is the
earlier; with hundreds of sources on 2 cores, the sink may get its first slice after most
sources ran through their tags, and timing from its startup would time only its catch-up
(fan-in N = 128 read 36k tags/s that way, N = 32 4k); the start time is then the earlier,
at most the lead after the true start.
"""

from __future__ import annotations

from typing import Any

from reactorfed import (
    STARTUP,
    ActionHandle,
    Input,
    LogicalAction,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    bank,
    reaction,
    us,
)

#: logical time between two tags of the open shapes (fan-in, chain)
STEP = us(10)


class _Ticker(Reactor):
    """Advances one tag every ``STEP``, ``tags`` times, sending the tag's number."""

    out = Output(int)
    again = LogicalAction(int)

    def __init__(self, tags: int) -> None:
        self.tags = tags

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: ActionHandle) -> None:
        again.schedule(value=0)

    @reaction(triggers=[again], effects=[again, out])
    def tick(self, again: ActionHandle, out: PortWriter[int]) -> None:
        v: int = again.get()
        out.set(v)
        if v + 1 < self.tags:
            again.schedule(value=v + 1, delay=STEP)


class _Meter:
    """A run from the federation's start time to the measuring reactor's last tag, in
    physical time."""

    def __init__(self) -> None:
        self.count = 0
        self.first = 0
        self.last = 0

    def start(self, now: int) -> None:
        self.first = self.last = now

    def seen(self, now: int) -> None:
        self.last = now
        self.count += 1

    def result(self, n: int) -> dict[str, Any]:
        return {"federates": n, "tags": self.count, "seconds": (self.last - self.first) / 1e9}


class _Sink(Reactor):
    inp = Input(int, width="n")

    def __init__(self, n: int, tags: int, federates: int) -> None:
        self.n = n
        self.tags = tags
        self.federates = federates
        self.meter = _Meter()

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.meter.start(min(self.physical_time(), self.start_time()))

    @reaction(triggers=[inp])
    def take(self, inp: MultiReader[int]) -> None:
        self.meter.seen(self.physical_time())
        if self.meter.count == self.tags:
            self.report_result(self.meter.result(self.federates))


class FanIn(Reactor):
    """``federates`` - 1 sources into one sink."""

    def __init__(self, federates: int = 8, tags: int = 2000) -> None:
        n = federates - 1
        self.sources = bank(_Ticker, n, tags)
        self.sink = _Sink(n, tags, federates)
        self.connect(self.sources.out, self.sink.inp)


class _Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: PortReader[int], out: PortWriter[int]) -> None:
        v = inp.get()
        assert v is not None
        out.set(v)


class Chain(Reactor):
    """A source, ``federates`` - 2 relays and a sink, in a line."""

    def __init__(self, federates: int = 8, tags: int = 2000) -> None:
        self.source = _Ticker(tags)
        self.relays = bank(_Relay, federates - 2)
        self.sink = _Sink(1, tags, federates)
        prev = self.source.out
        for r in self.relays:
            self.connect(prev, r.inp)
            prev = r.out
        self.connect(prev, self.sink.inp)


class _Driver(Reactor):
    go = Output(int)
    answers = Input(int, width="n")

    def __init__(self, n: int, tags: int, federates: int) -> None:
        self.n = n
        self.tags = tags
        self.federates = federates
        self.meter = _Meter()

    @reaction(triggers=[STARTUP], effects=[go])
    def start(self, go: PortWriter[int]) -> None:
        self.meter.start(min(self.physical_time(), self.start_time()))
        go.set(0)

    @reaction(triggers=[answers], effects=[go])
    def gather(self, answers: MultiReader[int], go: PortWriter[int]) -> None:
        assert len(answers.present()) == self.n, "a round without every worker's answer"
        self.meter.seen(self.physical_time())
        if self.meter.count < self.tags:
            go.set(self.meter.count)
        else:
            self.report_result(self.meter.result(self.federates))


class _Worker(Reactor):
    go = Input(int)
    answer = Output(int)

    @reaction(triggers=[go], effects=[answer])
    def work(self, go: PortReader[int], answer: PortWriter[int]) -> None:
        v = go.get()
        assert v is not None
        answer.set(v + 1)


class Loop(Reactor):
    """A driver and ``federates`` - 1 workers in a zero-delay closed loop."""

    def __init__(self, federates: int = 8, tags: int = 2000) -> None:
        n = federates - 1
        self.driver = _Driver(n, tags, federates)
        self.workers = bank(_Worker, n)
        self.connect(self.driver.go, self.workers.go, broadcast=True)
        self.connect(self.workers.answer, self.driver.answers, after=0)


SHAPES = {"fan-in": FanIn, "chain": Chain, "loop": Loop}
__all__ = ["SHAPES", "Chain", "FanIn", "Loop"]
