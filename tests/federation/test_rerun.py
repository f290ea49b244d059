"""A federate's reactor tree runs again: each run assembles a new program (and a new
partition) from the same declarations, and gives the same results."""

from __future__ import annotations

from typing import Any

from reactorfed import STARTUP, Input, LogicalAction, Output, Reactor, Timer, ms, reaction

from .harness import Federation, reference

Trace = list[tuple[int, int, Any]]


class Counter(Reactor):
    out = Output(int)
    tick = Timer(offset=0, period=ms(5))
    again = LogicalAction(int, min_spacing=ms(1))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[STARTUP])
    def reset(self) -> None:
        self.i = 0  # the reactor's own state: reset for each run

    @reaction(triggers=[tick, again], effects=[out, again])
    def emit(self, out: Any, again: Any) -> None:
        if self.i < 8:
            self.i += 1
            out.set(self.i)
            if self.i % 3 == 0:
                again.schedule()


class Double(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get() * 2)


class Log(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.trace: Trace = []

    @reaction(triggers=[STARTUP], sources=[inp])
    def start(self, inp: Any) -> None:
        self.trace = [(-1, 0, inp.value)]  # a new run: no value yet

    @reaction(triggers=[inp])
    def record(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.trace.append((t.time, t.microstep, inp.get()))


class Chain(Reactor):
    def __init__(self) -> None:
        self.src = Counter()
        self.mid = Double()
        self.sink = Log()
        self.connect(self.src.out, self.mid.inp, after=ms(1))
        self.connect(self.mid.out, self.sink.inp)


def _federated(mains: dict[str, Chain]) -> tuple[Trace, dict[str, Any]]:
    fed = Federation(Chain)
    for name in fed.layout.names:
        fed.start(name, factory=lambda name=name: mains[name], timeout=ms(60))
    fed.wait()
    assert not fed.errors and fed.rti_error is None, (fed.errors, fed.rti_error)
    return list(mains["sink"].sink.trace), {n: (r.tags, r.reactions, r.last_tag) for n, r in fed.results.items()}


def test_each_federate_runs_its_own_tree_twice_with_the_same_results() -> None:
    mains = {n: Chain() for n in ("src", "mid", "sink")}
    first = _federated(mains)
    second = _federated(mains)
    assert second == first
    ref = reference(Chain, timeout=ms(60))
    assert isinstance(ref, Chain)
    assert first[0] == ref.sink.trace and len(first[0]) > 5
