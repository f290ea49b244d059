"""Ports of LF's C++-target ``multiport/`` programs that neither the Python nor the C suite
has: reading a contained bank's (multiport) outputs as triggers and as sources, writing
a contained bank's (multiport) inputs, splitting and joining multiports through a
container's ports, sparse multiports read in index order, a channel set several times at
one tag, widths computed from parameters, and a physical multiport connection."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    Output,
    Reactor,
    SystemClock,
    Timer,
    bank,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# ------------------------------------------------------- Read(Multiport)OutputOfContainedBank.lf


class _Contained(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        assert self.bank_index is not None
        out.set(42 * self.bank_index)


class _ReadOutputOfContainedBank(Reactor):
    def __init__(self) -> None:
        self.c = bank(_Contained, 4)
        self.count = 0

    def _check(self, c: Any) -> None:
        for i in range(len(self.c)):
            result = c.out[i].get()
            assert result == 42 * i, f"FAILURE: expected {42 * i}, got {result}"
        self.count += 1

    @reaction(triggers=[STARTUP], sources=["c.out"])
    def at_startup(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=["c.out"])
    def on_out(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=[STARTUP, "c.out"])
    def alternate(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 3, "ERROR: One of the reactions failed to trigger."


@lf_test("multiport/ReadOutputOfContainedBank.lf", suite="Cpp")
def test_read_output_of_contained_bank() -> None:
    """A contained bank's outputs read by a reaction they trigger, by one they are only a
    source of (triggered by startup, after the bank's reactions) and by one with both."""
    main = _ReadOutputOfContainedBank()
    run(main)
    assert main.count == 3


class _ContainedMulti(Reactor):
    out = Output(int, width=3)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        assert self.bank_index is not None
        for i in range(3):
            out[i].set(self.bank_index * i)


class _ReadMultiportOutputOfContainedBank(Reactor):
    def __init__(self) -> None:
        self.c = bank(_ContainedMulti, 3)
        self.count = 0

    def _check(self, c: Any) -> None:
        for i in range(len(self.c)):
            for j in range(3):  # LF: c[i].out[j]
                result = c.out[i * 3 + j].get()
                assert result == i * j, f"FAILURE: expected {i * j}, got {result}"
        self.count += 1

    @reaction(triggers=[STARTUP], sources=["c.out"])
    def at_startup(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=["c.out"])
    def on_out(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=[STARTUP, "c.out"])
    def alternate(self, c: Any) -> None:
        self._check(c)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 3, "ERROR: One of the reactions failed to trigger."


@lf_test("multiport/ReadMultiportOutputOfContainedBank.lf", suite="Cpp")
def test_read_multiport_output_of_contained_bank() -> None:
    main = _ReadMultiportOutputOfContainedBank()
    run(main)
    assert main.count == 3


# ------------------------------------------------------ Write(Multiport)InputOfContainedBank.lf


class _WContained(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.bank_index is not None
        assert inp.get() == self.bank_index * 42, f"FAILURE: expected {42 * self.bank_index}"
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 1, "ERROR: One of the reactions failed to trigger."


class _WriteInputOfContainedBank(Reactor):
    def __init__(self) -> None:
        self.c = bank(_WContained, 4)

    @reaction(triggers=[STARTUP], effects=["c.inp"])
    def start(self, c: Any) -> None:
        for i in range(len(self.c)):
            c.inp[i].set(i * 42)


@lf_test("multiport/WriteInputOfContainedBank.lf", suite="Cpp")
def test_write_input_of_contained_bank() -> None:
    main = _WriteInputOfContainedBank()
    run(main)
    assert [c.count for c in main.c] == [1] * 4


class _WMContained(Reactor):
    inp = Input(int, width=4)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.bank_index is not None
        for i in range(3):
            assert inp[i].get() == self.bank_index * i, f"FAILURE: expected {i * self.bank_index}"
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 1, "ERROR: One of the reactions failed to trigger."


class _WriteMultiportInputOfContainedBank(Reactor):
    def __init__(self) -> None:
        self.c = bank(_WMContained, 4)

    @reaction(triggers=[STARTUP], effects=["c.inp"])
    def start(self, c: Any) -> None:
        for i in range(len(self.c)):
            for j in range(4):  # LF: c[i].in[j]
                c.inp[i * 4 + j].set(i * j)


@lf_test("multiport/WriteMultiportInputOfContainedBank.lf", suite="Cpp")
def test_write_multiport_input_of_contained_bank() -> None:
    main = _WriteMultiportInputOfContainedBank()
    run(main)
    assert [c.count for c in main.c] == [1] * 4


# ------------------------------------------------------------ IndexIntoMultiport(In|Out)put.lf


class _ReactorWithMultiportIn(Reactor):
    inp = Input(int, width=3)

    def __init__(self) -> None:
        self.runs = 0

    @reaction(triggers=[STARTUP, inp])
    def check(self, inp: Any) -> None:
        for i, p in enumerate(inp):
            assert p.is_present, f"input {i} is not present"
            assert p.get() == i, f"received wrong input on port {i}"
        self.runs += 1


class _MultiportJoiner(Reactor):
    """IndexIntoMultiportInput.lf's MultiportSplitter: three inputs onto one multiport."""

    out = Output(int, width=3)
    in0 = Input(int)
    in1 = Input(int)
    in2 = Input(int)

    def __init__(self) -> None:
        self.connect([self.in0, self.in1, self.in2], self.out)  # in0, in1, in2 -> out


class IndexIntoMultiportInput(Reactor):
    def __init__(self) -> None:
        self.splitter = _MultiportJoiner()
        self.receiver = _ReactorWithMultiportIn()
        self.connect(self.splitter.out, self.receiver.inp)

    @reaction(triggers=[STARTUP], effects=["splitter.in0"])
    def s0(self, splitter: Any) -> None:
        splitter.in0.set(0)

    @reaction(triggers=[STARTUP], effects=["splitter.in1"])
    def s1(self, splitter: Any) -> None:
        splitter.in1.set(1)

    @reaction(triggers=[STARTUP], effects=["splitter.in2"])
    def s2(self, splitter: Any) -> None:
        splitter.in2.set(2)


@lf_test("multiport/IndexIntoMultiportInput.lf", suite="Cpp")
def test_index_into_multiport_input() -> None:
    """Three reactions write three single ports that a container joins into one multiport."""
    main = IndexIntoMultiportInput()
    run(main)
    assert main.receiver.runs == 1


class _ReactorWithMultiportOut(Reactor):
    out = Output(int, width="width")

    def __init__(self, width: int = 3) -> None:
        self.width = width

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        for i in range(self.width):
            out[i].set(i)


class _MultiportSplitter(Reactor):
    inp = Input(int, width="width")
    out0 = Output(int)
    out1 = Output(int)
    out2 = Output(int)

    def __init__(self, width: int = 3) -> None:
        self.width = width
        self.connect(self.inp, [self.out0, self.out1, self.out2])  # in -> out0, out1, out2


class IndexIntoMultiportOutput(Reactor):
    def __init__(self) -> None:
        self.source = _ReactorWithMultiportOut()
        self.splitter = _MultiportSplitter()
        self.connect(self.source.out, self.splitter.inp)
        self.received = [False, False, False]

    @reaction(triggers=["splitter.out0"])
    def r0(self, splitter: Any) -> None:
        self.received[0] = True
        assert splitter.out0.get() == 0, "expected 0"

    @reaction(triggers=["splitter.out1"])
    def r1(self, splitter: Any) -> None:
        self.received[1] = True
        assert splitter.out1.get() == 1, "expected 1"

    @reaction(triggers=["splitter.out2"])
    def r2(self, splitter: Any) -> None:
        self.received[2] = True
        assert splitter.out2.get() == 2, "expected 2"


@lf_test("multiport/IndexIntoMultiportOutput.lf", suite="Cpp")
def test_index_into_multiport_output() -> None:
    """A container splits a multiport input onto three single outputs. (The original only
    logs "missed a message" at shutdown; the port checks all three arrived.)"""
    main = IndexIntoMultiportOutput()
    run(main)
    assert main.received == [True, True, True]


# ---------------------------------------------------------------------------- Multiport.lf


class _Test(Reactor):
    __test__ = False

    sink = Input(object, width=3000)
    source = Output(object, width=3000)

    @reaction(triggers=[sink], effects=[source])
    def forward(self, sink: Any, source: Any) -> None:
        for i, _ in sink.present():
            source[i].set(None)


class Multiport(Reactor):
    def __init__(self) -> None:
        self.test = _Test()
        self.received = False

    @reaction(triggers=[STARTUP], effects=["test.sink"])
    def start(self, test: Any) -> None:
        for i in range(30):
            test.sink[(i * 100) % 3000].set(None)

    @reaction(triggers=["test.source"])
    def got(self, test: Any) -> None:
        self.received = True
        positions = [(i * 100) % 3000 for i in range(30)]
        received_indices = [i for i, p in enumerate(test.source) if p.is_present]
        assert received_indices == positions, f"indices do not match: {received_indices}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, "Error: received no input!"


@lf_test("multiport/Multiport.lf", suite="Cpp")
def test_multiport() -> None:
    """Thirty of 3000 channels of a valueless (``void``) multiport present, forwarded
    channel for channel: the present indices come out as they went in. (A value-less
    port is set with ``None`` here; ``is_present`` says it was set.)"""
    main = Multiport()
    run(main)
    assert main.received


# ------------------------------------------------------------ SparseMultiport.lf, MultipleSet


class _Producer(Reactor):
    t = Timer(0, ms(100))
    out = Output(int, width=10)

    def __init__(self, repeat: bool = False) -> None:
        self.repeat = repeat
        self.odd = True

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for i in range(1 if self.odd else 0, 10, 2):
            if self.repeat:  # MultiportMultipleSet.lf: each channel set ten times
                for j in range(10):
                    out[i].set(j)
            else:
                out[i].set(i)
        self.odd = not self.odd


class _SparseConsumer(Reactor):
    inp = Input(int, width=10)

    def __init__(self) -> None:
        self.odd = True
        self.runs = 0

    def _check_index(self, i: int) -> None:
        assert not (self.odd and i % 2 == 0), f"Expected values only on odd ports, but received one on port {i}"
        assert not (not self.odd and i % 2 == 1), f"Expected values only on even ports, but received one on port {i}"

    @reaction(triggers=[inp])
    def scan(self, inp: Any) -> None:
        for i in range(10):
            if inp[i].is_present:
                self._check_index(i)

    @reaction(triggers=[inp])
    def indices(self, inp: Any) -> None:
        count = 0
        last = -1
        for i, _ in inp.present():  # present_indices_sorted()
            count += 1
            self._check_index(i)
            assert i >= last, f"Received index out of order! {i} after {last}"
            last = i
        for i, _ in inp.present():  # present_indices_unsorted()
            count += 1
            self._check_index(i)
        assert count == 10, f"Expected count to be 10, but got {count}"
        self.odd = not self.odd
        self.runs += 1


class _SparseMultiport(Reactor):
    def __init__(self) -> None:
        self.c = _SparseConsumer()
        self.p = _Producer()
        self.connect(self.p.out, self.c.inp)


@lf_test("multiport/SparseMultiport.lf", suite="Cpp")
def test_sparse_multiport() -> None:
    """Odd channels at one tag, even ones at the next: the present ones, in index order."""
    main = _SparseMultiport()
    run(main, timeout=sec(1))
    assert main.c.runs == 11


class _MultipleSetConsumer(Reactor):
    inp = Input(int, width=10)

    def __init__(self) -> None:
        self.odd = True
        self.runs = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        count = 0
        for i, v in inp.present():
            count += 1
            assert not (self.odd and i % 2 == 0), f"Expected values only on odd ports, but received one on port {i}"
            assert not (not self.odd and i % 2 == 1), f"Expected values only on even ports, but received one on port {i}"
            assert v == 9, f"Expected 9 but got {v}"
        assert count == 5, f"Expected count to be 5, but got {count}"
        self.odd = not self.odd
        self.runs += 1


class _MultiportMultipleSet(Reactor):
    def __init__(self) -> None:
        self.c = _MultipleSetConsumer()
        self.p = _Producer(repeat=True)
        self.connect(self.p.out, self.c.inp)


@lf_test("multiport/MultiportMultipleSet.lf", suite="Cpp")
def test_multiport_multiple_set() -> None:
    """A channel set ten times at one tag is present once, with the last value."""
    main = _MultiportMultipleSet()
    run(main, timeout=sec(1))
    assert main.c.runs == 11


# ------------------------------------------------------------------------ WidthGivenByCode.lf


class _Foo(Reactor):
    inp = Input(int, width=lambda r: r.a * r.b)  # LF: input[{= a*b =}] in
    out = Output(int, width=lambda r: r.a // r.b)  # LF: output[{= a/b =}] out

    def __init__(self, a: int = 8, b: int = 2) -> None:
        self.a = a
        self.b = b
        self.checked = False

    @reaction(triggers=[STARTUP], sources=[inp], effects=[out])
    def start(self, inp: Any, out: Any) -> None:
        assert len(inp) == self.a * self.b, f"ERROR: expected in to have a width of {self.a * self.b}"
        assert len(out) == self.a // self.b, f"ERROR: expected out to have a width of {self.a // self.b}"
        self.checked = True


class _WidthGivenByCode(Reactor):
    def __init__(self) -> None:
        self.foo1 = _Foo()
        self.foo2 = _Foo(a=10, b=3)
        self.foo3 = _Foo(a=9, b=9)
        self.foo_bank = bank(_Foo, 42)  # LF: new[{= 42 =}] Foo()
        self.checked = False

    @reaction(triggers=[STARTUP], sources=["foo_bank.out"])
    def start(self, foo_bank: Any) -> None:
        assert len(self.foo_bank) == 42, "ERROR: expected foo_bank to have a width of 42"
        for foo in self.foo_bank:
            assert foo.out.width == 4, "ERROR: expected foo_bank.out to have a width of 4"
        assert len(foo_bank.out) == 42 * 4
        self.checked = True


@lf_test("multiport/WidthGivenByCode.lf", suite="Cpp")
def test_width_given_by_code() -> None:
    """Widths of multiports and a bank computed from parameters (LF's target-code
    expressions: functions of the reactor here)."""
    main = _WidthGivenByCode()
    run(main)
    assert main.checked and all(f.checked for f in [main.foo1, main.foo2, main.foo3, *main.foo_bank])


# ------------------------------------------------------- MultiportToMultiportAfterParameterized.lf


class _PSource(Reactor):
    out = Output(int, width="width")

    def __init__(self, width: int = 2) -> None:
        self.width = width

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        for i, p in enumerate(out):
            p.set(i)


class _PDestination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 2) -> None:
        self.width = width
        self.got: list[int | None] = []

    @reaction(triggers=[inp])
    def got_(self, inp: Any) -> None:
        for i, p in enumerate(inp):
            if p.is_present:
                assert p.get() == i % 3, f"ERROR: expected {i % 3}"
        self.got = [p.get() for p in inp]
        assert self.elapsed() == sec(1), "ERROR: Expected to receive input after one second."


class _MultiportToMultiportAfterParameterized(Reactor):
    def __init__(self, delay: int = sec(1)) -> None:
        self.delay = delay
        self.a1 = _PSource(width=3)
        self.a2 = _PSource(width=2)
        self.b = _PDestination(width=5)
        self.connect([self.a1.out, self.a2.out], self.b.inp, after=delay)


@lf_test("multiport/MultiportToMultiportAfterParameterized.lf", suite="Cpp")
def test_multiport_to_multiport_after_parameterized() -> None:
    """Two multiports gathered into a wider one, after a delay from a parameter."""
    main = _MultiportToMultiportAfterParameterized()
    run(main)
    assert main.b.got == [0, 1, 2, 0, 1]


# ------------------------------------------------------------- MultiportToMultiportPhysical.lf


class _PhysSource(Reactor):
    out = Output(int, width=4)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        for i, p in enumerate(out):
            p.set(i)


class _PhysSink(Reactor):
    inp = Input(int, width=4)

    def __init__(self) -> None:
        self.received = -1

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        present_ports = [i for i, _ in inp.present()]
        assert len(present_ports) == 1, f"Expected only one value, but got {len(present_ports)}"
        idx = present_ports[0]
        assert idx > self.received, f"Received index {idx} after {self.received}"
        self.received = idx

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received == 3, "Error: No data received!"


class _MultiportToMultiportPhysical(Reactor):
    def __init__(self) -> None:
        self.source = _PhysSource()
        self.sink = _PhysSink()
        self.connect(self.source.out, self.sink.inp, physical=True)  # source.out ~> sink.in


@lf_test("multiport/MultiportToMultiportPhysical.lf", suite="Cpp")
def test_multiport_to_multiport_physical() -> None:
    """A physical connection between multiports: each channel's value takes the physical
    time it is delivered, so (on a real clock, as reactor-cpp's) each arrives at its own
    tag, in channel order. On the virtual clock, which does not move while the channels
    are delivered, all four would share one tag: physical time is the test's premise."""
    main = _MultiportToMultiportPhysical()
    run(main, clock=SystemClock())
    assert main.sink.received == 3
