"""Ports of LF's multiport/ programs with multiports between single reactors: to and from
multiports, hierarchy, reactions reading or writing contained multiports, mutable
inputs, lists of ports and ``after`` delays.

LF's Python target deep-copies the values of a ``mutable input`` for the reaction it
triggers; the ports do the same where LF declares an input mutable.
"""

from __future__ import annotations

import copy
from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, ms, reaction, sec
from tests.conformance.harness import lf_test, run

# ------------------------------------------------- the Source/Destination pairs most share


class _Source4(Reactor):
    """A timer (0, 200 msec) and ``output[4] out``, each channel the next count
    (MultiportFromHierarchy.lf and MultiportToHierarchy.lf's Source)."""

    t = Timer(offset=0, period=ms(200))
    out = Output(int, width=4)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for port in out:
            port.set(self.s)
            self.s = self.s + 1


class _SumDestination(Reactor):
    """Sums the present channels; expects 6, then 16 more each time
    (MultiportToHierarchy.lf's Destination(width=4), and the like)."""

    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.s = 6
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        sm = 0
        for port in inp:
            if port.is_present:
                sm += port.get()
        assert sm == self.s, f"ERROR: Expected {self.s}."
        self.s += 16

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s > 6, "ERROR: Destination received no input!"


class _Computation(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def compute(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


# ------------------------------------------------------------------ MultiportFromHierarchy.lf


class _InsideContainer(Reactor):
    out = Output(int, width=4)

    def __init__(self) -> None:
        self.src = _Source4()
        self.connect(self.src.out, self.out)


class _FHContainer(Reactor):
    out = Output(int, width=4)

    def __init__(self) -> None:
        self.src = _InsideContainer()
        self.connect(self.src.out, self.out)


class _MultiportFromHierarchy(Reactor):
    def __init__(self) -> None:
        self.a = _FHContainer()
        self.b = _SumDestination(width=4)  # LF's Destination here has input[4]
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportFromHierarchy.lf")
def test_multiport_from_hierarchy() -> None:
    main = _MultiportFromHierarchy()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# -------------------------------------------------------------------- MultiportFromReaction.lf


class _MultiportFromReaction(Reactor):
    t = Timer(offset=0, period=ms(200))

    def __init__(self) -> None:
        self.s = 0
        self.b = _SumDestination(width=4)

    @reaction(triggers=[t], effects=["b.inp"])
    def send(self, b: Any) -> None:
        for port in b.inp:
            assert not port.is_present  # LF prints is_present before the set
            port.set(self.s)
            self.s += 1
            assert port.is_present and port.get() == self.s - 1  # LF prints them after the set


@lf_test("multiport/MultiportFromReaction.lf")
def test_multiport_from_reaction() -> None:
    main = _MultiportFromReaction()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# ------------------------------------------------------ MultiportIn.lf, MultiportInParameterized.lf


class _MISource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(int)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.s)
        self.s += 1


class _MIDestination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.s = 0
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        total = 0
        for port in inp:
            total += port.get()
        assert total == self.s, f"ERROR: Expected {self.s}"
        self.s += 4

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s != 0, "ERROR: Destination received no input!"


class _MultiportIn(Reactor):
    def __init__(self, width: int = 4) -> None:
        self.a = _MISource()
        self.t1 = _Computation()
        self.t2 = _Computation()
        self.t3 = _Computation()
        self.t4 = _Computation()
        self.b = _MIDestination(width=width)
        self.connect(self.a.out, self.t1.inp)
        self.connect(self.a.out, self.t2.inp)
        self.connect(self.a.out, self.t3.inp)
        self.connect(self.a.out, self.t4.inp)
        self.connect([self.t1.out, self.t2.out, self.t3.out, self.t4.out], self.b.inp)


@lf_test("multiport/MultiportIn.lf")
def test_multiport_in() -> None:
    main = _MultiportIn()  # Destination with input[4]
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


@lf_test("multiport/MultiportInParameterized.lf")
def test_multiport_in_parameterized() -> None:
    main = _MultiportIn(width=4)  # Destination(width=4) with input[width]
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# -------------------------------------------------------------------- MultiportMutableInput.lf


class _MMISource(Reactor):
    out = Output(int, width=2)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out[0].set(21)
        out[1].set(42)


class _MMIPrint(Reactor):
    inp = Input(int, width=2)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.got: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        expected = 42
        for port in inp:
            self.got.append(port.get())
            assert port.get() == expected, f"ERROR: Expected {expected}!"
            expected *= 2


class _MMIScale(Reactor):
    inp = Input(int, width=2)  # mutable
    out = Output(int, width=2)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def scale_it(self, inp: Any, out: Any) -> None:
        values = [copy.deepcopy(p.get()) for p in inp]  # LF: mutable input
        for idx in range(len(values)):
            # Modify the input, allowed because mutable.
            values[idx] *= self.scale
            out[idx].set(values[idx])


class _MultiportMutableInput(Reactor):
    def __init__(self) -> None:
        self.s = _MMISource()
        self.c = _MMIScale()
        self.p = _MMIPrint(scale=2)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.c.out, self.p.inp)


@lf_test("multiport/MultiportMutableInput.lf")
def test_multiport_mutable_input() -> None:
    main = _MultiportMutableInput()
    run(main)
    assert main.p.got == [42, 84]


class _MMIASource(Reactor):
    out = Output(list, width=2)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out[0].set([0, 1, 2])
        out[1].set([3, 4, 5])


class _MMIAPrint(Reactor):
    inp = Input(list, width=2)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.got: list[Any] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for idx, port in enumerate(inp):
            self.got.append(port.get())
            assert port.get() == [(self.scale * i) for i in range(3 * idx, (3 * idx) + 3)], (
                "ERROR: Value received by Print does not match expectation!"
            )


class _MMIAScale(Reactor):
    inp = Input(list, width=2)  # mutable
    out = Output(list, width=2)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def scale_it(self, inp: Any, out: Any) -> None:
        values = [copy.deepcopy(p.get()) for p in inp]  # LF: mutable input
        for idx, port in enumerate(inp):
            if port.is_present:
                values[idx] = [value * self.scale for value in values[idx]]
            out[idx].set(values[idx])


class _MultiportMutableInputArray(Reactor):
    def __init__(self) -> None:
        self.s = _MMIASource()
        self.c = _MMIAScale()
        self.p = _MMIAPrint(scale=2)
        self.connect(self.s.out, self.c.inp)
        self.connect(self.c.out, self.p.inp)


@lf_test("multiport/MultiportMutableInputArray.lf")
def test_multiport_mutable_input_array() -> None:
    main = _MultiportMutableInputArray()
    run(main)
    assert main.p.got == [[0, 2, 4], [6, 8, 10]]


# ----------------------------------------------------------------------------- MultiportOut.lf


class _MOSource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(int, width=4)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for port in out:
            port.set(self.s)
        self.s += 1


class _MODestination(Reactor):
    inp = Input(int, width=4)

    def __init__(self) -> None:
        self.s = 0
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        total = 0
        for port in inp:
            if port.is_present:
                total += port.get()
        assert total == self.s, f"ERROR: Expected {self.s}"
        self.s += 4

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s != 0, "ERROR: Destination received no input!"


class _MultiportOut(Reactor):
    def __init__(self) -> None:
        self.a = _MOSource()
        self.t1 = _Computation()
        self.t2 = _Computation()
        self.t3 = _Computation()
        self.t4 = _Computation()
        self.b = _MODestination()
        self.connect(self.a.out, [self.t1.inp, self.t2.inp, self.t3.inp, self.t4.inp])
        self.connect([self.t1.out, self.t2.out, self.t3.out, self.t4.out], self.b.inp)


@lf_test("multiport/MultiportOut.lf")
def test_multiport_out() -> None:
    main = _MultiportOut()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# -------------------------------------------------------------------- MultiportToHierarchy.lf


class _THContainer(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.dst = _SumDestination()
        self.connect(self.inp, self.dst.inp)


class _MultiportToHierarchy(Reactor):
    def __init__(self) -> None:
        self.a = _Source4()
        self.b = _THContainer()
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToHierarchy.lf")
def test_multiport_to_hierarchy() -> None:
    main = _MultiportToHierarchy()
    run(main, timeout=sec(2), fast=True)
    assert main.b.dst.received == 11


# ------------------------------------------------- MultiportToMultiport.lf, ...Parameter.lf


class _MTMSource(Reactor):
    """MultiportToMultiport.lf's Source(width = 1)."""

    t = Timer(offset=0, period=ms(200))
    out = Output(int, width="width")

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for i in range(len(out)):
            assert not out[i].is_present  # LF prints is_present before the set
            out[i].set(self.s)
            self.s += 1
            assert out[i].is_present and out[i].get() == self.s - 1  # and is_present, value after it


class _MultiportToMultiport(Reactor):
    def __init__(self) -> None:
        self.a = _MTMSource(width=4)
        self.b = _SumDestination(width=4)
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToMultiport.lf")
def test_multiport_to_multiport() -> None:
    main = _MultiportToMultiport()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


class _MultiportToMultiportParameter(Reactor):
    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.a = _MTMSource(width=width)
        self.b = _SumDestination(width=width)
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToMultiportParameter.lf")
def test_multiport_to_multiport_parameter() -> None:
    main = _MultiportToMultiportParameter()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# --------------------------------------------- MultiportToMultiport2.lf, MultiportToMultiport2After.lf


class _MTM2Source(Reactor):
    out = Output(int, width="width")

    def __init__(self, width: int = 2) -> None:
        self.width = width

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        for idx, port in enumerate(out):
            port.set(idx)


class _MTM2Destination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 2, check_time: bool = False) -> None:
        self.width = width
        self.check_time = check_time  # MultiportToMultiport2After.lf's Destination checks the time
        self.got: list[tuple[int, int]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for idx, port in enumerate(inp):
            if port.is_present:
                self.got.append((idx, port.get()))
                # NOTE: For testing purposes, this assumes the specific widths instantiated below.
                assert port.get() == idx % 3, f"ERROR: expected {idx % 3}!"
        if self.check_time:
            assert self.elapsed() == sec(1), "ERROR: Expected to receive input after one second."


class _MultiportToMultiport2(Reactor):
    def __init__(self, after: int | None = None) -> None:
        self.a1 = _MTM2Source(width=3)
        self.a2 = _MTM2Source(width=2)
        self.b = _MTM2Destination(width=5, check_time=after is not None)
        self.connect([self.a1.out, self.a2.out], self.b.inp, after=after)


@lf_test("multiport/MultiportToMultiport2.lf")
def test_multiport_to_multiport2() -> None:
    main = _MultiportToMultiport2()
    run(main)
    assert main.b.got == [(0, 0), (1, 1), (2, 2), (3, 0), (4, 1)]


@lf_test("multiport/MultiportToMultiport2After.lf")
def test_multiport_to_multiport2_after() -> None:
    main = _MultiportToMultiport2(after=sec(1))  # a1.out, a2.out -> b.inp after 1 sec
    run(main)
    assert main.b.got == [(0, 0), (1, 1), (2, 2), (3, 0), (4, 1)]


# --------------------------------------------------------------- MultiportToMultiportArray.lf


class _MTMASource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(list, width=2)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for port in out:
            port.set([self.s, self.s + 1, self.s + 2])
            self.s += 3


class _MTMADestination(Reactor):
    inp = Input(list, width=2)

    def __init__(self) -> None:
        self.s = 15
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        sm = 0
        for port in inp:
            if port.is_present:
                sm += sum(port.get())
        assert sm == self.s, f"ERROR: Expected {self.s}."
        self.s += 36

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s > 15, "ERROR: Destination received no input!"


class _MultiportToMultiportArray(Reactor):
    def __init__(self) -> None:
        self.a = _MTMASource()
        self.b = _MTMADestination()
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToMultiportArray.lf")
def test_multiport_to_multiport_array() -> None:
    main = _MultiportToMultiportArray()
    run(main, timeout=sec(2), fast=True)
    assert main.b.received == 11


# -------------------------------------------------------------------------- MultiportToPort.lf


class _MTPSource(Reactor):
    out = Output(int, width=2)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        for idx, port in enumerate(out):
            port.set(idx)


class _MTPDestination(Reactor):
    inp = Input(int)

    def __init__(self, expected: int = 0) -> None:
        self.expected = expected
        self.received = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received = True
        assert inp.get() == self.expected, f"ERROR: Expected {self.expected}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, "ERROR: Destination received no input!"


class _MultiportToPort(Reactor):
    def __init__(self) -> None:
        self.a = _MTPSource()
        self.b1 = _MTPDestination()
        self.b2 = _MTPDestination(expected=1)
        self.connect(self.a.out, [self.b1.inp, self.b2.inp])


@lf_test("multiport/MultiportToPort.lf")
def test_multiport_to_port() -> None:
    main = _MultiportToPort()
    run(main, timeout=sec(2), fast=True)
    assert main.b1.received and main.b2.received


# ---------------------------------------------------------------------- MultiportToReaction.lf


class _MTRSource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(int, width="width")

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for port in out:
            port.set(self.s)
            self.s += 1


class _MultiportToReaction(Reactor):
    def __init__(self) -> None:
        self.s = 6
        self.received = 0
        self.b = _MTRSource(width=4)

    @reaction(triggers=["b.out"])
    def check(self, b: Any) -> None:
        self.received += 1
        sm = 0
        for port in b.out:
            if port.is_present:
                sm += port.get()
        assert sm == self.s, f"ERROR: Expected {self.s}."
        self.s += 16

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s > 6, "ERROR: Destination received no input!"


@lf_test("multiport/MultiportToReaction.lf")
def test_multiport_to_reaction() -> None:
    main = _MultiportToReaction()
    run(main, timeout=sec(2), fast=True)
    assert main.received == 11


# ---------------------------------------------------------------------------- PipelineAfter.lf


class _PASource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(40)


class _PACompute(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def compute(self, inp: Any, out: Any) -> None:
        out.set(inp.get() + 2)


class _PASink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert inp.get() == 42, "ERROR: expected 42!"
        assert self.elapsed() == sec(1), "ERROR: Expected to receive input after one second."


class _PipelineAfter(Reactor):
    def __init__(self) -> None:
        self.source = _PASource()
        self.compute = _PACompute()
        self.sink = _PASink()
        # source.out, compute.out -> compute.inp, sink.inp after 500 msec
        self.connect([self.source.out, self.compute.out], [self.compute.inp, self.sink.inp], after=ms(500))


@lf_test("multiport/PipelineAfter.lf")
def test_pipeline_after() -> None:
    main = _PipelineAfter()
    run(main)
    assert main.sink.received == 1


# ------------------------------------------------------------------------ ReactionsToNested.lf


class _T(Reactor):
    z = Input(int)

    def __init__(self, expected: int = 0) -> None:
        self.expected = expected
        self.received = False

    @reaction(triggers=[z])
    def check(self, z: Any) -> None:
        self.received = True
        assert z.get() == self.expected, f"ERROR: Expected {self.expected}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, "ERROR: No input received."


class _D(Reactor):
    y = Input(int, width=2)

    def __init__(self) -> None:
        self.t1 = _T(expected=42)
        self.t2 = _T(expected=43)
        self.connect(self.y, [self.t1.z, self.t2.z])


class _ReactionsToNested(Reactor):
    def __init__(self) -> None:
        self.d = _D()

    @reaction(triggers=[STARTUP], effects=["d.y"])
    def first(self, d: Any) -> None:
        d.y[0].set(42)

    @reaction(triggers=[STARTUP], effects=["d.y"])
    def second(self, d: Any) -> None:
        d.y[1].set(43)


@lf_test("multiport/ReactionsToNested.lf")
def test_reactions_to_nested() -> None:
    main = _ReactionsToNested()
    run(main, timeout=sec(1))
    assert main.d.t1.received and main.d.t2.received
