"""Inheritance from several base classes, as Lingua Franca's ``reactor C extends A, B``:
the reactions of A (its own bases' first), then B's, then C's own; ports, actions and
timers of every base are C's too. (Python's MRO alone gives B's reactions before A's.)"""

from __future__ import annotations

from typing import Any

from reactorfed import STARTUP, Input, LogicalAction, Output, Reactor, Tag, Timer, ms, reaction

from .util import run


class Logs(Reactor):
    def __init__(self) -> None:
        self.log: list[str] = []


class A(Logs):
    @reaction(triggers=[STARTUP])
    def a1(self) -> None:
        self.log.append("A.a1")

    @reaction(triggers=[STARTUP])
    def a2(self) -> None:
        self.log.append("A.a2")


class B(Logs):
    @reaction(triggers=[STARTUP])
    def b1(self) -> None:
        self.log.append("B.b1")


def order(cls: type[Logs]) -> list[str]:
    r = cls()
    run(r)
    assert [d.name for d in cls._decl_reactions] == [e.split(".")[1] for e in r.log]
    return r.log


def test_reactions_of_two_bases_run_in_the_order_the_bases_are_listed_then_the_subclass() -> None:
    class C(A, B):
        @reaction(triggers=[STARTUP])
        def c1(self) -> None:
            self.log.append("C.c1")

    class D(B, A):
        @reaction(triggers=[STARTUP])
        def d1(self) -> None:
            self.log.append("D.d1")

    assert order(C) == ["A.a1", "A.a2", "B.b1", "C.c1"]
    assert order(D) == ["B.b1", "A.a1", "A.a2", "D.d1"]


def test_a_bases_own_bases_come_before_it() -> None:
    class Root(Logs):
        @reaction(triggers=[STARTUP])
        def r(self) -> None:
            self.log.append("Root.r")

    class A2(Root):
        @reaction(triggers=[STARTUP])
        def a(self) -> None:
            self.log.append("A2.a")

    class B2(Logs):
        @reaction(triggers=[STARTUP])
        def b(self) -> None:
            self.log.append("B2.b")

    class C(A2, B2):
        @reaction(triggers=[STARTUP])
        def c(self) -> None:
            self.log.append("C.c")

    assert order(C) == ["Root.r", "A2.a", "B2.b", "C.c"]


def test_a_diamond_counts_the_shared_base_once_where_first_reached() -> None:
    class Root(Logs):
        @reaction(triggers=[STARTUP])
        def r(self) -> None:
            self.log.append("Root.r")

    class L(Root):
        @reaction(triggers=[STARTUP])
        def left(self) -> None:
            self.log.append("L.left")

    class R(Root):
        @reaction(triggers=[STARTUP])
        def right(self) -> None:
            self.log.append("R.right")

    class C(L, R):
        pass

    assert order(C) == ["Root.r", "L.left", "R.right"]


def test_an_override_keeps_the_position_of_the_reaction_it_replaces() -> None:
    class C(A, B):
        @reaction(triggers=[STARTUP])
        def a1(self) -> None:
            self.log.append("C.a1")

    assert order(C) == ["C.a1", "A.a2", "B.b1"]


def test_one_name_in_two_bases_is_one_reaction_the_one_python_finds() -> None:
    """Python has one attribute per name: the first base's (its MRO), at the first
    base's position. (LF reactions have no names; give inherited reactions distinct ones.)"""

    class X(Logs):
        @reaction(triggers=[STARTUP])
        def go(self) -> None:
            self.log.append("X.go")

    class Y(Logs):
        @reaction(triggers=[STARTUP])
        def first(self) -> None:
            self.log.append("Y.first")

        @reaction(triggers=[STARTUP])
        def go(self) -> None:
            self.log.append("Y.go")

    class C(Y, X):
        pass

    class D(X, Y):
        pass

    assert order(C) == ["Y.first", "Y.go"]
    assert order(D) == ["X.go", "Y.first"]


class Emitter(Reactor):
    out = Output(int)
    tick = Timer(offset=ms(1), period=ms(2))


class Scheduling(Reactor):
    inp = Input(int)
    act = LogicalAction(int)


def test_ports_actions_and_timers_of_every_base_are_the_subclass_s() -> None:
    class Both(Emitter, Scheduling):
        def __init__(self) -> None:
            self.log: list[tuple[Tag, str, Any]] = []

        @reaction(triggers=["tick"], effects=["act", "out"])
        def on_tick(self, act: Any, out: Any) -> None:
            out.set(self.elapsed())
            act.schedule(value=self.elapsed(), delay=ms(1))

        @reaction(triggers=[Scheduling.act])
        def on_act(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), "act", act.get()))

    class Sink(Reactor):
        inp = Input(int)

        def __init__(self) -> None:
            self.got: list[tuple[Tag, Any]] = []

        @reaction(triggers=[inp])
        def got_(self, inp: Any) -> None:
            self.got.append((self.elapsed_tag(), inp.get()))

    class Main(Reactor):
        def __init__(self) -> None:
            self.both = Both()
            self.sink = Sink()
            self.connect(self.both.out, self.sink.inp)

    assert list(Both._decl_ports) == ["out", "inp"]
    assert list(Both._decl_actions) == ["act"]
    assert list(Both._decl_timers) == ["tick"]
    m = Main()
    run(m, timeout=ms(4))
    assert m.sink.got == [(Tag(ms(1), 0), ms(1)), (Tag(ms(3), 0), ms(3))]
    assert m.both.log == [(Tag(ms(2), 0), "act", ms(1)), (Tag(ms(4), 0), "act", ms(3))]
