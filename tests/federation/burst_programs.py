"""Programs that send bursts in superdense time across federates (issue 16).

Imported by tests/federation/test_superdense.py and loaded by file path by
``reactorfed launch tests/federation/burst_programs.py:Bursts``, so this module imports
nothing from the test package.
"""

from __future__ import annotations

from typing import Any

from reactorfed import SHUTDOWN, Input, LogicalAction, Output, Reactor, Timer, ms, reaction

#: (elapsed time ns, microstep, value)
Trace = list[tuple[int, int, int]]


class Burst(Reactor):
    """Every 10 ms (``ticks`` times) sends ``n`` values, at (t, 0), (t, 1), ..., (t, n-1):
    value 100 * tick + k at microstep k."""

    out = Output(int)
    tick = Timer(offset=0, period=ms(10))
    again = LogicalAction(int)

    def __init__(self, n: int = 3, ticks: int = 3) -> None:
        self.n = n
        self.ticks = ticks
        self.i = 0

    @reaction(triggers=[tick, again], effects=[out, again])
    def emit(self, tick: Any, again: Any, out: Any) -> None:
        if tick.is_present:
            self.i += 1
            k = 0
        else:
            k = again.get()
        if self.i > self.ticks:
            return
        out.set(100 * self.i + k)
        if k + 1 < self.n:
            again.schedule(value=k + 1)


class Sink(Reactor):
    """Records (and prints, for the launcher's output) every value with its tag."""

    inp = Input(int)

    def __init__(self) -> None:
        self.trace: Trace = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.trace.append((t.time, t.microstep, inp.get()))
        print(f"GOT {t.time} {t.microstep} {inp.get()}", flush=True)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        print(f"SINK {len(self.trace)} values", flush=True)


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class Bursts(Reactor):
    """src -> sink over one connection (``after``: None, 0 or ns), two federates."""

    def __init__(self, after: int | None = ms(3)) -> None:
        self.src = Burst()
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp, after=after)


class BurstChain(Reactor):
    """src -> relay -> sink, both links ``after`` d: the relay's burst (itself piled up)
    piles up again on the second link; three federates."""

    def __init__(self, after: int = ms(3)) -> None:
        self.src = Burst()
        self.relay = Relay()
        self.sink = Sink()
        self.connect(self.src.out, self.relay.inp, after=after)
        self.connect(self.relay.out, self.sink.inp, after=after)


def expected(after: int | None, *, hops: int = 1, ticks: int = 3, n: int = 3, timeout: int = ms(40)) -> Trace:
    """What the sink must record: every value of every burst, at its piled-up tag."""
    out: Trace = []
    for i in range(1, ticks + 1):
        t = (i - 1) * ms(10)
        for k in range(n):
            if after is None:
                tag = (t, k)
            elif after == 0:
                tag = (t, k + hops)
            else:
                tag = (t + hops * after, k)
            if tag <= (timeout, 0):
                out.append((tag[0], tag[1], 100 * i + k))
    return out
