"""Ports of LF's federated programs that send Python objects between federates
(``federated/DistributedStruct*.lf``, ``DistributedSendClass.lf``, ``DistributedNoReact.lf``
and the containerized ``DistributedSendClassContainerized.lf``).

LF's Python target pickles every value it sends to another federate; reactorfed sends
plain data and arrays without pickle, and pickles other objects only where the
federation opts in (``trusted_pickle``), which these runs do. The class ``hello`` of LF's
``include/hello.py`` is :class:`_Hello` here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reactorfed import STARTUP, Input, Output, Reactor, RunSummary, Tag, reaction, sec
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(60)


class _Hello:
    """LF's test/Python/src/include/hello.py."""

    def __init__(self, name: str = "", value: int = 0) -> None:
        self.name = name
        self.value = value


# -- StructAsType.lf's and StructPrint.lf's reactors -------------------------------------------


class _Source(Reactor):
    """StructAsType.lf's and StructScale.lf's Source: hello("Earth", 42) at startup."""

    out = Output(object)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(_Hello("Earth", 42))


class _SourceDirect(Reactor):
    """StructAsTypeDirect.lf's Source: an empty hello(), its fields set afterwards."""

    out = Output(object)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out_value = _Hello()
        out_value.name = "Earth"
        out_value.value = 42
        out.set(out_value)


class _Check(Reactor):
    """The checking reactor of StructAsType.lf (``Print``), StructPrint.lf and
    StructParallel.lf (``Check``) and StructScale.lf (``TestInput``): the same code."""

    inp = Input(object)

    def __init__(self, expected: int = 42) -> None:
        self.expected = expected
        self.received: list[tuple[str, int]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        v = inp.get()
        self.received.append((v.name, v.value))
        assert v.value == self.expected, f"ERROR: Expected value to be {self.expected}."


class _Scale(Reactor):
    """StructScale.lf's and StructParallel.lf's ``Print(scale)``, whose input is ``mutable``:
    LF gives the reaction a writable copy of the object, which it scales and sends on."""

    inp = Input(object)
    out = Output(object)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def scale_it(self, inp: Any, out: Any) -> None:
        v = copy.deepcopy(inp.get())  # mutable input: this reactor's own copy
        v.value *= self.scale
        out.set(v)


def _two(main_cls: type[Reactor], check: str, expected: list[tuple[str, int]]) -> None:
    main = main_cls()
    run_local(main, timeout=sec(2))
    assert getattr(main, check).received == expected
    progs = run_federated(main_cls, timeout=sec(2), trusted_pickle=True)
    assert getattr(progs[check], check).received == expected


class _StructAsType(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("federated/DistributedStructAsType.lf", federated=True)
def test_distributed_struct_as_type() -> None:
    _two(_StructAsType, "p", [("Earth", 42)])


class _StructAsTypeDirect(Reactor):
    def __init__(self) -> None:
        self.s = _SourceDirect()
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("federated/DistributedStructAsTypeDirect.lf", federated=True)
def test_distributed_struct_as_type_direct() -> None:
    _two(_StructAsTypeDirect, "p", [("Earth", 42)])


class _StructPrint(Reactor):
    def __init__(self) -> None:
        self.s = _Source()  # StructPrint.lf's "Print": the same startup reaction as Source
        self.p = _Check()
        self.connect(self.s.out, self.p.inp)


@lf_test("federated/DistributedStructPrint.lf", federated=True)
def test_distributed_struct_print() -> None:
    _two(_StructPrint, "p", [("Earth", 42)])


class _StructScale(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.c = _Scale()
        self.p = _Check(expected=84)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.c.out, self.p.inp)


@lf_test("federated/DistributedStructScale.lf", federated=True)
def test_distributed_struct_scale() -> None:
    _two(_StructScale, "p", [("Earth", 84)])


class _StructParallel(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.c1 = _Scale()
        self.c2 = _Scale(scale=3)
        self.p1 = _Check(expected=84)
        self.p2 = _Check(expected=126)
        self.connect(self.s.out, self.c1.inp)
        self.connect(self.s.out, self.c2.inp)
        self.connect(self.c1.out, self.p1.inp)
        self.connect(self.c2.out, self.p2.inp)


@lf_test("federated/DistributedStructParallel.lf", federated=True)
def test_distributed_struct_parallel() -> None:
    """One object to two federates that each scale their own copy (``mutable`` inputs)."""
    main = _StructParallel()
    run_local(main, timeout=sec(2))
    assert main.p1.received == [("Earth", 84)] and main.p2.received == [("Earth", 126)]
    progs = run_federated(_StructParallel, timeout=sec(2), trusted_pickle=True)
    assert progs["p1"].p1.received == [("Earth", 84)]  # type: ignore[attr-defined]
    assert progs["p2"].p2.received == [("Earth", 126)]  # type: ignore[attr-defined]


# -- DistributedSendClass.lf (and containerized), DistributedNoReact.lf --------------------------


class _C:
    """The program's preamble class ``C``."""


class _B(Reactor):
    o = Output(object)

    def __init__(self) -> None:
        self.sent = False

    @reaction(triggers=[STARTUP], effects=[o])
    def start(self, o: Any) -> None:
        o.set(_C())
        self.sent = True


class _A(Reactor):
    o = Input(object)

    def __init__(self) -> None:
        self.got: list[str] = []

    @reaction(triggers=[o])
    def stop(self, o: Any) -> None:
        self.got.append(type(o.get()).__name__)
        self.request_stop()


class _SendClass(Reactor):
    def __init__(self) -> None:
        self.a = _A()
        self.b = _B()
        self.connect(self.b.o, self.a.o)


def _run_send_class() -> None:
    main = _SendClass()
    run_local(main)
    assert main.a.got == ["_C"]
    progs = run_federated(_SendClass, trusted_pickle=True)
    assert progs["a"].a.got == ["_C"]  # type: ignore[attr-defined]


@lf_test("federated/DistributedSendClass.lf", federated=True)
def test_distributed_send_class() -> None:
    """An instance of a class defined by the program crosses federates; its arrival stops
    the federation."""
    _run_send_class()


@lf_test("docker/federated/DistributedSendClassContainerized.lf", federated=True)
def test_distributed_send_class_containerized() -> None:
    """DistributedSendClass in Docker containers: the program is DistributedSendClass's."""
    _run_send_class()


class _ANoReact(Reactor):
    o = Input(object)  # no reaction at all


class _NoReact(Reactor):
    def __init__(self) -> None:
        self.a = _ANoReact()
        self.b = _B()
        self.connect(self.b.o, self.a.o)


@lf_test("federated/DistributedNoReact.lf", federated=True)
def test_distributed_no_react() -> None:
    """An object sent to a federate whose reactor has no reactions: nothing fails, both
    federates run to the 2 s timeout."""
    main = _NoReact()
    summary = run_local(main, timeout=sec(2))
    assert main.b.sent and summary.last_tag == Tag(sec(2), 0)
    summaries: dict[str, RunSummary] = {}
    progs = run_federated(_NoReact, timeout=sec(2), trusted_pickle=True, summaries=summaries)
    assert progs["b"].b.sent  # type: ignore[attr-defined]
    assert {n: s.last_tag for n, s in summaries.items()} == {"a": Tag(sec(2), 0), "b": Tag(sec(2), 0)}
