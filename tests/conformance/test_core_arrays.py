"""Ports of LF's programs passing lists and tuples ("arrays") between reactors.

LF's Python target deep-copies the value of a ``mutable input`` for the reaction it
triggers (the generated reaction receives ``copy.deepcopy`` of the port's value); the
ports do the same where LF declares an input mutable, so that in-place changes stay
local to the reaction, as in LF.
"""

from __future__ import annotations

import copy
from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, LogicalAction, Output, Reactor, reaction
from tests.conformance.harness import lf_test, run

# ------------------------------------------------------------- ArrayPrint.lf (and its imports)


class _Source(Reactor):
    """ArrayPrint.lf's Source: a list of length 3."""

    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set([0, 1, 2])


class _Print(Reactor):
    """ArrayPrint.lf's Print (the scale parameter is for testing)."""

    inp = Input(list)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.received: list[Any] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append(list(inp.get()))
        assert inp.get() == [x * self.scale for x in [0, 1, 2]], (
            "ERROR: Value received by Print does not match expectation!"
        )


class _Scale(Reactor):
    """ArrayScale.lf's Scale: modifies its mutable input and sends it on."""

    inp = Input(list)  # mutable
    out = Output(list)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def scale_it(self, inp: Any, out: Any) -> None:
        value = copy.deepcopy(inp.get())  # LF: mutable input
        for i in range(len(value)):
            value[i] *= self.scale
        out.set(value)


class _Free(Reactor):
    """ArrayFree.lf's Free: modifies its mutable input and does nothing else with it."""

    inp = Input(list)  # mutable

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale
        self.ran = 0

    @reaction(triggers=[inp])
    def scale_it(self, inp: Any) -> None:
        value = copy.deepcopy(inp.get())  # LF: mutable input
        for i in range(len(value)):
            value[i] *= self.scale
        self.ran += 1


class _ArrayPrint(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.p = _Print()
        self.connect(self.s.out, self.p.inp)


@lf_test("ArrayPrint.lf")
def test_array_print() -> None:
    main = _ArrayPrint()
    run(main)
    assert main.p.received == [[0, 1, 2]]


class _ArrayScale(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.c = _Scale()
        self.p = _Print(scale=2)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.c.out, self.p.inp)


@lf_test("ArrayScale.lf")
def test_array_scale() -> None:
    main = _ArrayScale()
    run(main)
    assert main.p.received == [[0, 2, 4]]


class _ArrayFree(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.c = _Free()
        self.c2 = _Scale()
        self.p = _Print(scale=2)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.s.out, self.c2.inp)
        self.connect(self.c2.out, self.p.inp)


@lf_test("ArrayFree.lf")
def test_array_free() -> None:
    main = _ArrayFree()
    run(main)
    assert main.c.ran == 1
    assert main.p.received == [[0, 2, 4]]


class _AFMSource(Reactor):
    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set([0, 1, 2])


class _ArrayFreeMultiple(Reactor):
    def __init__(self) -> None:
        self.s = _AFMSource()
        self.c = _Free()
        self.c2 = _Scale()
        self.p = _Print(scale=2)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.s.out, self.c2.inp)
        self.connect(self.c2.out, self.p.inp)


@lf_test("ArrayFreeMultiple.lf")
def test_array_free_multiple() -> None:
    main = _ArrayFreeMultiple()
    run(main)
    assert main.c.ran == 1
    assert main.p.received == [[0, 2, 4]]


class _ArrayParallel(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.c1 = _Scale()
        self.c2 = _Scale(scale=3)
        self.p1 = _Print(scale=2)
        self.p2 = _Print(scale=3)
        self.connect(self.s.out, self.c1.inp)
        self.connect(self.s.out, self.c2.inp)
        self.connect(self.c1.out, self.p1.inp)
        self.connect(self.c2.out, self.p2.inp)


@lf_test("ArrayParallel.lf")
def test_array_parallel() -> None:
    main = _ArrayParallel()
    run(main)
    assert main.p1.received == [[0, 2, 4]]
    assert main.p2.received == [[0, 3, 6]]


# ------------------------------------------------------------------------ ArrayAsParameter.lf


class _APSource(Reactor):
    out = Output(int)
    next = LogicalAction(object)

    def __init__(self, sequence: list[int] | None = None) -> None:
        self.sequence = [0, 1, 2] if sequence is None else sequence
        self.count = 0

    @reaction(triggers=[STARTUP, next], effects=[out, next])
    def emit(self, out: Any, next: Any) -> None:
        out.set(self.sequence[self.count])
        self.count += 1
        if self.count < len(self.sequence):
            next.schedule(delay=0)


class _APPrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 1
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert inp.get() == self.count, f"ERROR: Expected {self.count}."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received != 0, "ERROR: Final reactor received no data."


class _ArrayAsParameter(Reactor):
    def __init__(self) -> None:
        self.s = _APSource(sequence=[1, 2, 3, 4])
        self.p = _APPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("ArrayAsParameter.lf")
def test_array_as_parameter() -> None:
    main = _ArrayAsParameter()
    run(main)
    assert main.p.received == 4


# ----------------------------------------------------------------------------- ArrayAsType.lf


class _ATSource(Reactor):
    out = Output(tuple)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set((0, 2.8, "hello"))  # a tuple


class _ATPrint(Reactor):
    inp = Input(tuple)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert inp.get() == (0, 2.8, "hello"), "ERROR: Value received by Print does not match expectation!"


class _ArrayAsType(Reactor):
    def __init__(self) -> None:
        self.s = _ATSource()
        self.p = _ATPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("ArrayAsType.lf")
def test_array_as_type() -> None:
    main = _ArrayAsType()
    run(main)
    assert main.p.received == 1


# -------------------------------------------------------------------------------- ArraySet.lf


class _ASSource(Reactor):
    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        array = [0, 1, 2]
        out.set(array)


class _ASPrint(Reactor):
    inp = Input(list)

    def __init__(self) -> None:
        self.seen: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for i in range(len(inp.get())):
            self.seen.append(inp.get()[i])
            assert inp.get()[i] == i, f"Expected {i}."


class _ArraySet(Reactor):
    def __init__(self) -> None:
        self.s = _ASSource()
        self.p = _ASPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("ArraySet.lf")
def test_array_set() -> None:
    main = _ArraySet()
    run(main)
    assert main.p.seen == [0, 1, 2]
