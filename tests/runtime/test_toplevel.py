"""What each federate keeps of a federated program's main reactor (assembly.toplevel):
LF's replication rules, rule by rule, on the assembled programs of each federate."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Input,
    LogicalAction,
    Mode,
    Output,
    Reactor,
    Timer,
    ValidationError,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble
from reactorfed.assembly.program import Program


class Src(Reactor):
    out = Output(int)
    t = Timer(0, ms(1))

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1)


class Dst(Reactor):
    inp = Input(int)
    extra = Input(int)

    @reaction(triggers=[inp, extra])
    def got(self, inp: Any, extra: Any) -> None:
        pass


class Main(Reactor):
    """Every kind of top-level element: replicated, or one federate's."""

    own = Output(int)
    every = Timer(0, ms(1))  # referenced by a replicated reaction: in every federate
    only_b = Timer(0, ms(2))  # referenced only by b's reaction
    unused = Timer(0, ms(3))  # referenced by no reaction: in no federate (LF generates none)
    act = LogicalAction(
        int
    )  # scheduled by a's reaction, triggers a replicated one: in every federate

    def __init__(self) -> None:
        self.a = Src()
        self.b = Dst()
        self.connect(self.a.out, self.b.inp)

    @reaction(triggers=[STARTUP, every], effects=[own])
    def replicated(self, own: Any) -> None:
        own.set(0)

    @reaction(triggers=["a.out"], effects=[act])
    def of_a(self, a: Any, act: Any) -> None:
        act.schedule(value=a.out.get())

    @reaction(triggers=[act])
    def on_act(self, act: Any) -> None:  # touches no federate's port: replicated (LF's rule)
        pass

    @reaction(triggers=[only_b], effects=["b.extra"])
    def of_b(self, b: Any) -> None:
        b.extra.set(2)


def _kept(prog: Program) -> tuple[list[str], list[str], list[str]]:
    main = prog.main
    return (
        [rx.decl.name for rx in prog.reactions if rx.reactor is main],
        [t.decl.name for t in prog.timers if t.reactor is main],
        [a.decl.name for a in prog.actions if a.reactor is main],
    )


def test_one_process_runs_the_whole_main_reactor() -> None:
    reactions, timers, actions = _kept(assemble(Main()))
    assert sorted(reactions) == ["of_a", "of_b", "on_act", "replicated"]
    assert sorted(timers) == ["every", "only_b", "unused"] and actions == ["act"]


def test_each_federate_keeps_the_replicated_elements_and_its_own() -> None:
    main = Main()
    a, b = assemble(main, "a"), assemble(main, "b")
    ra, ta, aa = _kept(a)
    rb, tb, ab = _kept(b)
    assert sorted(ra) == ["of_a", "on_act", "replicated"] and ta == ["every"] and aa == ["act"]
    # b keeps act (on_act references it) though nothing in b schedules it, as LF does
    assert (
        sorted(rb) == ["of_b", "on_act", "replicated"]
        and sorted(tb) == ["every", "only_b"]
        and ab == ["act"]
    )
    # the main reactor's own port is every federate's; it crosses no network
    assert a.is_local(main) and b.is_local(main)
    assert [(lk.src.fqn, lk.dst.fqn) for lk in a.partition.links] == [("Main.a.out", "Main.b.inp")]  # type: ignore[union-attr]


def test_a_reaction_that_touches_two_federates_is_refused() -> None:
    class Mixed(Reactor):
        def __init__(self) -> None:
            self.a = Src()
            self.b = Dst()

        @reaction(triggers=["a.out"], effects=["b.extra"])
        def relay(self, a: Any, b: Any) -> None:
            b.extra.set(a.out.get())

    assemble(Mixed())  # one process: a plain reaction of the main reactor
    with pytest.raises(
        ValidationError, match=r"Mixed\.relay touches the ports of the federates a, b"
    ):
        assemble(Mixed(), "a")


def test_a_connection_between_the_main_reactors_port_and_a_federate_is_refused() -> None:
    class Wired(Reactor):
        out = Output(int)

        def __init__(self) -> None:
            self.a = Src()
            self.connect(self.a.out, self.out)

    assemble(Wired())
    with pytest.raises(
        ValidationError, match=r"Wired\.a\.out -> Wired\.out joins the main reactor's own port"
    ):
        assemble(Wired(), "a")


def test_modes_in_a_federated_main_reactor_are_refused() -> None:
    class Modal(Reactor):
        one = Mode(initial=True)

        def __init__(self) -> None:
            self.a = Src()

        with one:

            @reaction(triggers=[STARTUP])
            def hello(self) -> None:
                pass

    assemble(Modal())
    with pytest.raises(ValidationError, match="cannot have modes"):
        assemble(Modal(), "a")
