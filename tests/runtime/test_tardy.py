"""Tardy messages (decentralized coordination, :mod:`reactorfed.execution.tardy`): a
message posted after its tag runs a reaction's tardy handler instead of its body; without
a handler the body runs and what it writes is tardy downstream; a handler's outputs are
on time. Posted here directly, as a decentralized federate's driver posts them."""

from __future__ import annotations

from typing import Any

from reactorfed import STARTUP, Environment, Input, Output, Reactor, VirtualClock, ms, reaction
from reactorfed.execution.tardy import Tardiness
from reactorfed.model.attachment import scheduler_of
from reactorfed.model.trigger import Slot


class Handles(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.log: list[tuple[str, int, int, int]] = []

    @reaction(triggers=[inp], effects=[out])
    def got(self, inp: Any, out: Any) -> None:
        self.log.append(("on time", self.microstep(), inp.get(), inp.intended_tag.microstep))
        out.set(inp.get())

    @got.tardy_handler
    def got_late(self, inp: Any, out: Any) -> None:
        t = self.tag()
        self.log.append(("tardy", t.microstep, inp.get(), inp.intended_tag.microstep))
        out.set(inp.get())


class Passes(Reactor):
    """No tardy handler: its body runs, and its output is tardy too."""

    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class Injector(Reactor):
    """At startup, posts a message for its federate's input as a tardy one, meant for the
    start tag (what a decentralized federate does with a message that came late)."""

    def __init__(self, target: Any) -> None:
        self.target = target

    @reaction(triggers=[STARTUP])
    def inject(self) -> None:
        sched = scheduler_of(self)
        assert sched is not None
        slot = sched.program.slot_of(self.target)
        assert sched.post_tardy(slot, 7, sched.current_tag) == (sched.current_tag[0], 1)


class Direct(Reactor):
    def __init__(self) -> None:
        self.h = Handles()
        self.i = Injector(self.h.inp)


class Chain(Reactor):
    def __init__(self) -> None:
        self.p = Passes()
        self.h = Handles()
        self.after = Handles()
        self.connect(self.p.out, self.h.inp)
        self.connect(self.h.out, self.after.inp)
        self.i = Injector(self.p.inp)


def run(main: Reactor) -> Any:
    return Environment(fast=True, timeout=ms(1), clock=VirtualClock()).run(main)


def test_a_tardy_message_runs_the_tardy_handler_with_its_intended_tag() -> None:
    main = Direct()
    run(main)
    assert main.h.log == [("tardy", 1, 7, 0)]


def test_without_a_handler_the_violation_goes_downstream_until_one_handles_it() -> None:
    main = Chain()
    run(main)
    assert main.h.log == [("tardy", 1, 7, 0)]  # passed down from Passes, which has no handler
    assert main.after.log == [("on time", 1, 7, 1)]  # the handler's output is on time


def test_a_tags_end_forgets_the_arrivals_at_or_before_it_and_keeps_those_ahead() -> None:
    tardy, a, b = Tardiness(), Slot("a"), Slot("b")
    tardy.arrived((0, 1), a, 10)
    tardy.arrived((5, 0), a, 11)  # a federate behind its upstream holds arrivals ahead
    tardy.arrived((0, 3), b, 12)
    tardy.arrived((0, 3), b, 13)  # the later arrival's time stands
    tardy.arrived((0, 3), a, 14)
    tardy.end((0, 2))
    assert tardy.arrivals == {((5, 0), a): 11, ((0, 3), b): 13, ((0, 3), a): 14}
    tardy.end((0, 3))
    assert tardy.arrivals == {((5, 0), a): 11}
    tardy.arrived((4, 0), b, 15)
    tardy.end((9, 0))
    assert tardy.arrivals == {}
