"""Ports of LF's programs that pass objects, lists and pointers through ports and state.

LF's ``include/hello.py`` (a class with ``name`` and ``value``) is :class:`hello` here.
A ``mutable input`` in LF's Python target is a deep copy of the input's value made when
the reaction starts (LF generates ``inp = copy.deepcopy(mutable_inp)``); reactorfed
has no mutable inputs, so the ports make that copy themselves."""

from __future__ import annotations

import copy
import ctypes
from typing import Any

from reactorfed import STARTUP, Input, Output, Reactor, reaction
from tests.conformance.harness import lf_test, run


class hello:
    def __init__(self, name: str = "", value: int = 0) -> None:
        self.name = name
        self.value = value


class _Check(Reactor):
    """The checking reactor of the struct programs (``Print``, ``Check``, ``TestInput``)."""

    inp = Input(hello)

    def __init__(self, expected: int = 42) -> None:
        self.expected = expected
        self.received: list[tuple[str, int]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append((inp.get().name, inp.get().value))
        assert inp.get().value == self.expected, f"ERROR: Expected value to be {self.expected}."


# -- StructAsState.lf -------------------------------------------------------------------


class _StructAsStateMain(Reactor):
    class hello:
        def __init__(self, name: str, value: int) -> None:
            self.name = name
            self.value = value

    def __init__(self) -> None:
        self.s = self.hello("Earth", 42)
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def show(self) -> None:
        self.printed.append(f'State s.name="{self.s.name}", value={self.s.value}.')
        assert self.s.value == 42, "FAILED: Expected 42."


@lf_test("StructAsState.lf")
def test_struct_as_state() -> None:
    main = _StructAsStateMain()
    run(main)
    assert main.printed == ['State s.name="Earth", value=42.']


# -- StructAsType.lf --------------------------------------------------------------------


class _SATSource(Reactor):
    out = Output(hello)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        temp = hello("Earth", 42)
        out.set(temp)


class _StructAsTypeMain(Reactor):
    def __init__(self) -> None:
        self.s = _SATSource()
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("StructAsType.lf")
def test_struct_as_type() -> None:
    main = _StructAsTypeMain()
    run(main)
    assert main.p.received == [("Earth", 42)]


# -- StructAsTypeDirect.lf --------------------------------------------------------------


class _SATDSource(Reactor):
    out = Output(hello)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out_value = out.get()
        out_value = hello()
        out_value.name = "Earth"
        out_value.value = 42
        out.set(out_value)


class _StructAsTypeDirectMain(Reactor):
    def __init__(self) -> None:
        self.s = _SATDSource()
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("StructAsTypeDirect.lf")
def test_struct_as_type_direct() -> None:
    main = _StructAsTypeDirectMain()
    run(main)
    assert main.p.received == [("Earth", 42)]


# -- StructPrint.lf ---------------------------------------------------------------------


class _SPPrint(Reactor):
    out = Output(hello)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(hello("Earth", 42))


class _StructPrintMain(Reactor):
    def __init__(self) -> None:
        self.s = _SPPrint()
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("StructPrint.lf")
def test_struct_print() -> None:
    main = _StructPrintMain()
    run(main)
    assert main.p.received == [("Earth", 42)]


# -- StructScale.lf ---------------------------------------------------------------------


class StructScaleSource(Reactor):
    """StructScale.lf's Source (StructParallel.lf imports it)."""

    out = Output(hello)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(hello("Earth", 42))


class _SSPrint(Reactor):
    inp = Input(hello)  # mutable input
    out = Output(hello)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def scale_it(self, inp: Any, out: Any) -> None:
        value = copy.deepcopy(inp.get())  # the mutable input's copy
        value.value *= self.scale
        out.set(value)


class _StructScaleMain(Reactor):
    def __init__(self) -> None:
        self.s = StructScaleSource()
        self.c = _SSPrint()
        self.p = _Check(expected=84)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.c.out, self.p.inp)


@lf_test("StructScale.lf")
def test_struct_scale() -> None:
    main = _StructScaleMain()
    run(main)
    assert main.p.received == [("Earth", 84)]


# -- StructParallel.lf ------------------------------------------------------------------


class _StructParallelMain(Reactor):
    def __init__(self) -> None:
        self.s = StructScaleSource()
        self.c1 = _SSPrint()
        self.c2 = _SSPrint(scale=3)
        self.p1 = _Check(expected=84)
        self.p2 = _Check(expected=126)
        self.connect(self.s.out, self.c1.inp)
        self.connect(self.s.out, self.c2.inp)
        self.connect(self.c1.out, self.p1.inp)
        self.connect(self.c2.out, self.p2.inp)


@lf_test("StructParallel.lf")
def test_struct_parallel() -> None:
    main = _StructParallelMain()
    run(main)
    assert main.p1.received == [("Earth", 84)] and main.p2.received == [("Earth", 126)]


# -- SetArray.lf ------------------------------------------------------------------------


class _SASource(Reactor):
    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set([0, 1, 2])


class _SAPrint(Reactor):
    inp = Input(list)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.received: list[list[int]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append(inp.get())
        assert inp.get() == [self.scale * count for count in range(len(inp.get()))], (
            "ERROR: Value received by Print does not match expectation!"
        )


class _SetArrayMain(Reactor):
    def __init__(self) -> None:
        self.s = _SASource()
        self.p = _SAPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("SetArray.lf")
def test_set_array() -> None:
    main = _SetArrayMain()
    run(main)
    assert main.p.received == [[0, 1, 2]]


# -- SendsPointerTest.lf ----------------------------------------------------------------


class _SendsPointer(Reactor):
    out = Output()

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        my_constant = ctypes.c_int(42)
        out.set(ctypes.byref(my_constant))


class _SPTPrint(Reactor):
    inp = Input()

    def __init__(self, expected: int = 42) -> None:
        self.expected = expected
        self.received: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append(inp.get()._obj.value)
        assert inp.get()._obj.value == self.expected, f"ERROR: Expected value to be {self.expected}."


class _SendsPointerTestMain(Reactor):
    def __init__(self) -> None:
        self.s = _SendsPointer()
        self.p = _SPTPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("SendsPointerTest.lf")
def test_sends_pointer() -> None:
    main = _SendsPointerTestMain()
    run(main)
    assert main.p.received == [42]


# -- Mutable.lf -------------------------------------------------------------------------


class _MutS(Reactor):
    out = Output(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        for i in range(self.width):
            out[i].set(0)


class _Copy:
    """What LF's generated code makes for a mutable input channel (``Make()`` with a
    deep copy of the value)."""

    def __init__(self, value: Any) -> None:
        self.value = copy.deepcopy(value)


class _MutR(Reactor):
    inp = Input(int, width=2)  # mutable input[2] inp
    out = Output(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width

    @reaction(triggers=[inp], effects=[out])
    def relay(self, inp: Any, out: Any) -> None:
        mine = [_Copy(ch.get()) for ch in inp]
        for i in range(self.width):
            mine[i].value = (i + 1) * 2
            out[i].set(mine[i].value)


class _MutableMain(Reactor):
    def __init__(self) -> None:
        self.s = _MutS(width=2)
        self.r = _MutR(width=2)
        self.connect(self.s.out, self.r.inp)
        self.printed: list[str] = []

    @reaction(triggers=["r.out"])
    def from_r(self, r: Any) -> None:
        self.printed.append(f"Received from R {r.out[0].get()}, {r.out[1].get()}")
        assert r.out[0].get() == 2 and r.out[1].get() == 4, "ERROR: Expected 2 and 4."

    @reaction(triggers=["s.out"])
    def from_s(self, s: Any) -> None:
        self.printed.append(f"Received from S {s.out[0].get()}, {s.out[1].get()}")
        assert s.out[0].get() == 0 and s.out[1].get() == 0, "ERROR: Expected zeros."


@lf_test("Mutable.lf")
def test_mutable() -> None:
    main = _MutableMain()
    run(main)
    assert main.printed == ["Received from R 2, 4", "Received from S 0, 0"]
