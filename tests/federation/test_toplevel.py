"""A federated program whose main reactor has reactions, a timer, an action and state of
its own (LF's replication: reactorfed.assembly.toplevel) runs as it does in one process:
the reactions that touch one federate's ports run there, with the values and tags of the
one-process run, and every federate runs its own copy of the replicated ones."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Tag,
    Timer,
    ms,
    reaction,
)
from reactorfed.federation import run_threads

pytestmark = pytest.mark.timeout(60)


class Counter(Reactor):
    out = Output(int)
    t = Timer(0, ms(2))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        self.n += 1
        out.set(self.n)


class Logger(Reactor):
    inp = Input(int)
    extra = Input(int)

    def __init__(self) -> None:
        self.log: list[tuple[Tag, int | None, int | None]] = []

    @reaction(triggers=[inp, extra])
    def got(self, inp: Any, extra: Any) -> None:
        self.log.append(
            (
                self.elapsed_tag(),
                inp.get() if inp.is_present else None,
                extra.get() if extra.is_present else None,
            )
        )


class Main(Reactor):
    poke = Timer(ms(1), ms(4))
    later = LogicalAction(int)

    def __init__(self) -> None:
        self.starts = 0
        self.seen: list[tuple[Tag, int]] = []
        self.a = Counter()
        self.b = Logger()
        self.connect(self.a.out, self.b.inp, after=ms(1))

    @reaction(triggers=[STARTUP])
    def start(self) -> None:  # every federate's copy
        self.starts += 1

    @reaction(triggers=["a.out"], effects=[later])
    def watch(self, a: Any, later: Any) -> None:  # a's only
        later.schedule(value=a.out.get() * 10, delay=0)

    @reaction(triggers=[later])
    def note(self, later: Any) -> None:  # replicated, but only a schedules the action
        self.seen.append((self.elapsed_tag(), later.get()))

    @reaction(triggers=[poke], effects=["b.extra"])
    def push(self, b: Any) -> None:  # b's only
        b.extra.set(-1)


def test_the_main_reactors_reactions_run_federated_as_in_one_process() -> None:
    one = Main()
    Environment(fast=True, timeout=ms(10)).run(one)
    assert one.starts == 1 and len(one.seen) == 5 and one.b.log
    run = run_threads(Main, fast=True, timeout=ms(10), join_timeout_s=30)
    assert not run.errors, run.errors
    a, b = run.programs["a"], run.programs["b"]
    assert isinstance(a, Main) and isinstance(b, Main)
    assert a.starts == b.starts == 1
    assert a.seen == one.seen and b.seen == []
    assert b.b.log == one.b.log and a.b.log == []
