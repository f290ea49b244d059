"""Ports of LF's programs delaying values (ints, strings, lists, objects) through logical
actions and ``after`` connections."""

from __future__ import annotations

import copy
from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run


class _Hello:
    """LF's test/Python/src/include/hello.py (the struct the Delay*Struct programs send)."""

    def __init__(self, name: str = "", value: int = 0) -> None:
        self.name = name
        self.value = value


# ----------------------------------------------------------------------------- DelayArray.lf


class _DelayPointerList(Reactor):
    inp = Input(list)  # mutable
    out = Output(list)
    a = LogicalAction(list)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[inp], effects=[a])
    def delay_it(self, inp: Any, a: Any) -> None:
        # LF: a mutable input is a deep copy for this reaction
        a.schedule(value=copy.deepcopy(inp.get()), delay=self.delay)

    @reaction(triggers=[a], effects=[out])
    def emit(self, a: Any, out: Any) -> None:
        out.set(a.get())


class _DASource(Reactor):
    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set([0, 1, 2])  # an output list of length 3


class _DAPrint(Reactor):
    inp = Input(list)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.received: list[tuple[int, Any]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append((self.elapsed(), inp.get()))
        assert inp.get() == [x * self.scale for x in [0, 1, 2]], (
            "ERROR: Value received by Print does not match expectation!"
        )


class _DelayArray(Reactor):
    def __init__(self) -> None:
        self.s = _DASource()
        self.d = _DelayPointerList()
        self.p = _DAPrint()
        self.connect(self.s.out, self.d.inp)
        self.connect(self.d.out, self.p.inp)


@lf_test("DelayArray.lf")
def test_delay_array() -> None:
    main = _DelayArray()
    run(main)
    assert main.p.received == [(ms(100), [0, 1, 2])]


# -------------------------------------------------------------------- DelayArrayWithAfter.lf


class _DAWSource(Reactor):
    out = Output(list)
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.iteration = 1

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set([(x * self.iteration) for x in [1, 2, 3]])
        self.iteration += 1


class _DAWPrint(Reactor):
    inp = Input(list)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.iteration = 1
        self.inputs_received = 0
        self.times: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.inputs_received += 1
        self.times.append(self.elapsed())
        assert inp.get() == [(x * self.scale * self.iteration) for x in [1, 2, 3]], (
            "ERROR: Value received by Print does not match expectation!"
        )
        assert len(inp.get()) == 3, "ERROR: Received list length is not 3!"
        self.iteration += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received != 0, "ERROR: Print reactor received no inputs."


class _DelayArrayWithAfter(Reactor):
    def __init__(self) -> None:
        self.s = _DAWSource()
        self.p = _DAWPrint()
        self.connect(self.s.out, self.p.inp, after=ms(1500))


@lf_test("DelayArrayWithAfter.lf")
def test_delay_array_with_after() -> None:
    main = _DelayArrayWithAfter()
    run(main, timeout=sec(5), fast=True)
    assert main.p.times == [ms(1500), ms(2500), ms(3500), ms(4500)]


# ------------------------------------------------------------------------------- DelayInt.lf


class _Delay(Reactor):
    inp = Input(int)
    out = Output(int)
    a = LogicalAction(int)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[a], effects=[out])
    def emit(self, a: Any, out: Any) -> None:
        if (a.get() is not None) and a.is_present:
            out.set(a.get())

    @reaction(triggers=[inp], effects=[a])
    def delay_it(self, inp: Any, a: Any) -> None:
        a.schedule(value=inp.get(), delay=self.delay)


class _DITest(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.start_time_ = 0
        self.received_value = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        # Record the logical time at the start.
        self.start_time_ = self.logical_time()

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received_value = True
        elapsed = self.logical_time() - self.start_time_
        assert elapsed == 100000000, f"ERROR: Expected elapsed time to be 100000000. It was {elapsed}."
        assert inp.get() == 42, f"ERROR: Expected input value to be 42. It was {inp.get()}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received_value is True, "ERROR: No communication occurred!"


class _DelayInt(Reactor):
    def __init__(self) -> None:
        self.d = _Delay()
        self.t = _DITest()
        self.connect(self.d.out, self.t.inp)

    @reaction(triggers=[STARTUP], effects=["d.inp"])
    def start(self, d: Any) -> None:
        d.inp.set(42)


@lf_test("DelayInt.lf")
def test_delay_int() -> None:
    main = _DelayInt()
    run(main)
    assert main.t.received_value


# ---------------------------------------------------------------------------- DelayString.lf


class _DelayString2(Reactor):
    inp = Input(str)
    out = Output(str)
    a = LogicalAction(str)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[a], effects=[out])
    def emit(self, a: Any, out: Any) -> None:
        out.set(a.get())

    @reaction(triggers=[inp], effects=[a])
    def delay_it(self, inp: Any, a: Any) -> None:
        a.schedule(value=inp.get(), delay=self.delay)


class _DSTest(Reactor):
    inp = Input(str)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        elapsed = self.elapsed()
        assert elapsed == 100000000, f"ERROR: Expected elapsed time to be 100000000. It was {elapsed}."
        assert inp.get() == "Hello", f"ERROR: Expected input value to be 'Hello'. It was '{inp.get()}'."


class _DelayString(Reactor):
    def __init__(self) -> None:
        self.d = _DelayString2()
        self.t = _DSTest()
        self.connect(self.d.out, self.t.inp)

    @reaction(triggers=[STARTUP], effects=["d.inp"])
    def start(self, d: Any) -> None:
        d.inp.set("Hello")


@lf_test("DelayString.lf")
def test_delay_string() -> None:
    main = _DelayString()
    run(main)
    assert main.t.received == 1


# ---------------------------------------------------------------------------- DelayStruct.lf


class _DelayPointer(Reactor):
    inp = Input(_Hello)
    out = Output(_Hello)
    a = LogicalAction(_Hello)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[a], effects=[out])
    def emit(self, a: Any, out: Any) -> None:
        out.set(a.get())

    @reaction(triggers=[inp], effects=[a])
    def delay_it(self, inp: Any, a: Any) -> None:
        # Schedule the actual object from the input rather than a copy.
        a.schedule(value=inp.get(), delay=self.delay)


class _StructSource(Reactor):
    out = Output(_Hello)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(_Hello("Earth", 42))


class _StructPrint(Reactor):
    inp = Input(_Hello)

    def __init__(self, expected: int = 42) -> None:
        self.expected = expected
        self.received: list[tuple[int, str, int]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append((self.elapsed(), inp.get().name, inp.get().value))
        assert inp.get().value == self.expected, f"ERROR: Expected value to be {self.expected}."


class _DelayStruct(Reactor):
    def __init__(self) -> None:
        self.s = _StructSource()
        self.d = _DelayPointer()
        self.p = _StructPrint()
        self.connect(self.s.out, self.d.inp)
        self.connect(self.d.out, self.p.inp)


@lf_test("DelayStruct.lf")
def test_delay_struct() -> None:
    main = _DelayStruct()
    run(main)
    assert main.p.received == [(ms(100), "Earth", 42)]


class _DelayStructWithAfter(Reactor):
    def __init__(self) -> None:
        self.s = _StructSource()
        self.p = _StructPrint()
        self.connect(self.s.out, self.p.inp, after=ms(100))


@lf_test("DelayStructWithAfter.lf")
def test_delay_struct_with_after() -> None:
    main = _DelayStructWithAfter()
    run(main)
    assert main.p.received == [(ms(100), "Earth", 42)]


# --------------------------------------------------------- DelayStructWithAfterOverlapped.lf


class _OverlappedSource(Reactor):
    out = Output(_Hello)
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        self.s += 1
        out.set(_Hello("Earth", 42 * self.s))


class _OverlappedPrint(Reactor):
    inp = Input(_Hello)

    def __init__(self) -> None:
        self.s = 0
        self.times: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.s += 1
        self.times.append(self.elapsed())
        assert inp.get().value == 42 * self.s, f"ERROR: Expected value to be {42 * self.s}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s != 0, "ERROR: Print received no data."


class _DelayStructWithAfterOverlapped(Reactor):
    def __init__(self) -> None:
        self.s = _OverlappedSource()
        self.p = _OverlappedPrint()
        self.connect(self.s.out, self.p.inp, after=ms(1500))


@lf_test("DelayStructWithAfterOverlapped.lf")
def test_delay_struct_with_after_overlapped() -> None:
    main = _DelayStructWithAfterOverlapped()
    run(main, timeout=sec(5), fast=True)
    assert main.p.times == [ms(1500), ms(2500), ms(3500), ms(4500)]


# ------------------------------------------------------------------------- DelayedReaction.lf


class _DRSource(Reactor):
    out = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[out])
    def go(self, out: Any) -> None:
        out.set(1)


class _DRSink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert self.elapsed() == 100000000, "ERROR: Expected 100000000 but."


class _DelayedReaction(Reactor):
    def __init__(self) -> None:
        self.source = _DRSource()
        self.sink = _DRSink()
        self.connect(self.source.out, self.sink.inp, after=ms(100))


@lf_test("DelayedReaction.lf")
def test_delayed_reaction() -> None:
    main = _DelayedReaction()
    run(main)
    assert main.sink.received == 1
