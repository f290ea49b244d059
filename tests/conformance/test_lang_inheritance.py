"""Ports of LF's programs about reactor inheritance (``extends``): inherited actions,
ports and reactions, named reactions, and a diamond of base classes."""

from __future__ import annotations

from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, LogicalAction, Output, Reactor, reaction, sec
from tests.conformance.harness import lf_test, run
from tests.conformance.test_lang_imports import Count, TestCount

# -- InheritanceAction.lf ---------------------------------------------------------------


class _IASource(Reactor):
    foo = LogicalAction(int)
    y = Output(int)

    @reaction(triggers=[foo], effects=[y])
    def relay(self, foo: Any, y: Any) -> None:
        y.set(foo.get())


class _IASourceExtended(_IASource):
    @reaction(triggers=[STARTUP], effects=[_IASource.foo])
    def start(self, foo: Any) -> None:
        foo.schedule(value=42, delay=0)  # LF: foo.schedule(0, 42)


class _IATest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.count += 1
        assert x.get() == 42, "FAILURE: Expected 42"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        # LF writes "FAILURE: No data received." to stderr without exiting; the test
        # below checks that data arrived.
        pass


class _InheritanceActionMain(Reactor):
    def __init__(self) -> None:
        self.s = _IASourceExtended()
        self.d = _IATest()
        self.connect(self.s.y, self.d.x)


@lf_test("InheritanceAction.lf")
def test_inheritance_action() -> None:
    main = _InheritanceActionMain()
    run(main, fast=True)
    assert main.d.count == 1


# -- NamedReaction.lf -------------------------------------------------------------------


class _User(Reactor):
    out = Output(str)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set("Hello, world!")


class _UI(_User):
    current_value = Input(str)

    def __init__(self) -> None:
        self.printed: list[str] = []

    @reaction(triggers=[current_value])
    def u3(self, current_value: Any) -> None:
        self.printed.append(f"UI: current_value = {current_value.get()}")


class _NamedReactionMain(Reactor):
    def __init__(self) -> None:
        self.u = _UI()
        self.connect(self.u.out, self.u.current_value)


@lf_test("NamedReaction.lf")
def test_named_reaction() -> None:
    main = _NamedReactionMain()
    run(main)
    assert main.u.printed == ["UI: current_value = Hello, world!"]


# -- RepeatedInheritance.lf -------------------------------------------------------------


class _RID(Reactor):
    d = Input(int)


class _RIC(_RID):
    c = Input(int)


class _RIB(_RID):
    b = Input(int)


class _RIA(_RIB, _RIC):
    a = Input(int)
    out = Output(int)

    @reaction(triggers=[a, _RIB.b, _RIC.c, _RID.d], effects=[out])
    def add(self, a: Any, b: Any, c: Any, d: Any, out: Any) -> None:
        out.set(a.get() + b.get() + c.get() + d.get())


class _RepeatedInheritanceMain(Reactor):
    def __init__(self) -> None:
        self.c = Count()
        self.a = _RIA()
        self.t = TestCount(start=4, stride=4, num_inputs=6)
        # (c.out)+ -> a.a, a.b, a.c, a.d
        self.connect(self.c.out, [self.a.a, self.a.b, self.a.c, self.a.d], broadcast=True)
        self.connect(self.a.out, self.t.inp)


@lf_test("RepeatedInheritance.lf")
def test_repeated_inheritance() -> None:
    main = _RepeatedInheritanceMain()
    run(main, timeout=sec(5), fast=True)
    assert main.t.shutdown_checked and main.t.inputs_received == 6


# -- SubclassesAndStartup.lf ------------------------------------------------------------
# LF's parameter `name` is `name_` here: reactorfed's reactors have a `name` of their own.


class _Super(Reactor):
    def __init__(self) -> None:
        self.count = 0
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def start_super(self) -> None:
        self.printed.append(f"{self.name_}(Super) started")
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count != 0, "No startup reaction was invoked!"


class _SubA(_Super):
    def __init__(self, name_: str = "SubA") -> None:
        super().__init__()
        self.name_ = name_

    @reaction(triggers=[STARTUP])
    def start_sub(self) -> None:
        self.printed.append(f"{self.name_} started")
        assert self.count != 0, "Base class startup reaction was not invoked!"


class _SubB(_Super):
    def __init__(self, name_: str = "SubB") -> None:
        super().__init__()
        self.name_ = name_

    @reaction(triggers=[STARTUP])
    def start_sub(self) -> None:
        self.printed.append(f"{self.name_} started")
        assert self.count != 0, "Base class startup reaction was not invoked!"


class _SubclassesAndStartupMain(Reactor):
    def __init__(self) -> None:
        self.a = _SubA()
        self.b = _SubB()


@lf_test("SubclassesAndStartup.lf")
def test_subclasses_and_startup() -> None:
    main = _SubclassesAndStartupMain()
    run(main)
    assert main.a.printed == ["SubA(Super) started", "SubA started"]
    assert main.b.printed == ["SubB(Super) started", "SubB started"]
