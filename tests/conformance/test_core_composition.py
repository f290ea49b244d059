"""Ports of LF's programs on composition: hierarchy, inheritance, banks, state, simultaneity."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    bank,
    each,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# ------------------------------------------------------------------------------ BankIndex.lf


class _BIA(Reactor):
    def __init__(self, value: int = 0) -> None:
        self.value = value
        self.checked = False

    @reaction(triggers=[STARTUP])
    def check(self) -> None:
        assert self.bank_index is not None
        assert self.value == 4 - self.bank_index, "ERROR: Expected value to be 4 - bank_index."
        self.checked = True


class _BankIndex(Reactor):
    def __init__(self, table: list[int] | None = None) -> None:
        self.table = [4, 3, 2, 1] if table is None else table
        self.a = bank(_BIA, 4, value=each(lambda i: self.table[i]))


@lf_test("BankIndex.lf")
def test_bank_index() -> None:
    main = _BankIndex()
    run(main)
    assert [m.checked for m in main.a] == [True] * 4


# ----------------------------------------------------------------- CharLiteralInitializer.lf


class _CharLiteralInitializer(Reactor):
    def __init__(self) -> None:
        self.c = "x"
        self.checked = False

    @reaction(triggers=[STARTUP])
    def check(self) -> None:
        assert self.c == "x", f"FAILED: Expected 'x', got {self.c}."
        self.checked = True


@lf_test("CharLiteralInitializer.lf")
def test_char_literal_initializer() -> None:
    main = _CharLiteralInitializer()
    run(main)
    assert main.checked


# ---------------------------------------------------------------------------- Composition.lf


class _CSource(Reactor):
    y = Output(int)
    t = Timer(offset=sec(1), period="period")

    def __init__(self, period: int = sec(2)) -> None:
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class _CTest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.count += 1
        assert x.get() == self.count, f"FAILURE: Expected {self.count}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        # LF writes "FAILURE: No data received." to stderr here (without exiting)
        assert self.count != 0, "FAILURE: No data received."


class _Composition(Reactor):
    def __init__(self) -> None:
        self.s = _CSource()
        self.d = _CTest()
        self.connect(self.s.y, self.d.x)


@lf_test("Composition.lf")
def test_composition() -> None:
    main = _Composition()
    run(main, timeout=sec(10), fast=True)
    assert main.d.count == 5  # 1, 3, 5, 7, 9 s


# ----------------------------------------------------------------------- CompositionAfter.lf


class _CATest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.count += 1
        assert x.get() == self.count, f"FAILURE: Expected {self.count}"


class _CompositionAfter(Reactor):
    def __init__(self, delay: int = sec(5)) -> None:
        self.delay = delay
        self.s = _CSource()
        self.d = _CATest()
        self.connect(self.s.y, self.d.x, after=self.delay)


@lf_test("CompositionAfter.lf")
def test_composition_after() -> None:
    main = _CompositionAfter()
    run(main, timeout=sec(10), fast=True)
    assert main.d.count == 3  # sent at 1, 3, 5 s, received at 6, 8, 10 s


# ------------------------------------------------------------------------ CompositionGain.lf


class _Gain(Reactor):
    gainin = Input(int)
    y = Output(int)

    @reaction(triggers=[gainin], effects=[y])
    def gain(self, gainin: Any, y: Any) -> None:
        y.set(gainin.get() * 2)


class _Wrapper(Reactor):
    x = Input(int)
    y = Output(int)

    def __init__(self) -> None:
        self.gain = _Gain()
        self.connect(self.x, self.gain.gainin)
        self.connect(self.gain.y, self.y)


class _CompositionGain(Reactor):
    def __init__(self) -> None:
        self.wrapper = _Wrapper()
        self.received = 0

    @reaction(triggers=[STARTUP], effects=["wrapper.x"])
    def start(self, wrapper: Any) -> None:
        wrapper.x.set(42)

    @reaction(triggers=["wrapper.y"])
    def check(self, wrapper: Any) -> None:
        self.received += 1
        assert wrapper.y.get() == 42 * 2, f"ERROR: Received value should have been {42 * 2}"


@lf_test("CompositionGain.lf")
def test_composition_gain() -> None:
    main = _CompositionGain()
    run(main)
    assert main.received == 1


# ----------------------------------------------------------------- CompositionInheritance.lf


class _CISource(Reactor):
    foo = Input(int)
    y = Output(int)
    t = Timer(offset=sec(1), period="period")

    def __init__(self, period: int = sec(2)) -> None:
        self.period = period
        self.count = 0
        self.base_sent: list[int] = []

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.base_sent.append(self.count)  # "Hello World. My count is: ..."
        y.set(self.count)


class _CISourceExtended(_CISource):
    y2 = Output(int)
    t2 = Timer(offset=sec(1), period=sec(3))

    @reaction(triggers=[t2], effects=[y2])
    def tick2(self, y2: Any) -> None:
        self.count += 1
        y2.set(self.count)


class _CompositionInheritance(Reactor):
    def __init__(self) -> None:
        self.s = _CISourceExtended()
        self.d = _CTest()
        self.connect(self.s.y2, self.d.x)


@lf_test("CompositionInheritance.lf")
def test_composition_inheritance() -> None:
    main = _CompositionInheritance()
    run(main, timeout=sec(10), fast=True)
    assert main.d.count == 4  # t2 at 1, 4, 7, 10 s
    # the base's reaction (1, 3, 5, 7, 9 s) runs before the subclass's at 1 s and 7 s
    assert main.s.base_sent == [0, 1, 2, 2, 3]


# ------------------------------------------------------------------------------ CountTest.lf


class _Count(Reactor):
    """LF's lib/Count.lf."""

    out = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class _CTTest(Reactor):
    c = Input(int)

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[c])
    def check(self, c: Any) -> None:
        self.i += 1
        assert c.get() == self.i, f"ERROR: Expected {self.i} but got {c.get()}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.i == 4, f"ERROR: Test should have reacted 4 times, but reacted {self.i} times."


class _CountTest(Reactor):
    def __init__(self) -> None:
        self.count = _Count()
        self.test = _CTTest()
        self.connect(self.count.out, self.test.c)


@lf_test("CountTest.lf")
def test_count_test() -> None:
    main = _CountTest()
    run(main, timeout=sec(3), fast=True)
    assert main.test.i == 4


# ------------------------------------------------------------------------- DanglingOutput.lf


class _DOSource(Reactor):
    out = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[out])
    def go(self, out: Any) -> None:
        out.set(1)


class _DOGain(Reactor):
    inp = Input(int)
    out = Output(int)  # connected to nothing

    def __init__(self) -> None:
        self.received: list[int] = []

    @reaction(triggers=[inp], effects=[out])
    def gain(self, inp: Any, out: Any) -> None:
        self.received.append(inp.get())
        out.set(inp.get() * 2)


class _DanglingOutput(Reactor):
    def __init__(self) -> None:
        self.source = _DOSource()
        self.container = _DOGain()
        self.connect(self.source.out, self.container.inp)


@lf_test("DanglingOutput.lf")
def test_dangling_output() -> None:
    # LF's program passes by compiling and running; the port also checks the value got through.
    main = _DanglingOutput()
    run(main)
    assert main.container.received == [1]


# ---------------------------------------------------------------------------- Determinism.lf


class _DSource(Reactor):
    y = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[y])
    def go(self, y: Any) -> None:
        y.set(1)


class _DDestination(Reactor):
    x = Input(int)
    y = Input(int)

    def __init__(self) -> None:
        self.fired = 0

    @reaction(triggers=[x, y])
    def check(self, x: Any, y: Any) -> None:
        self.fired += 1
        sm = 0
        if x.is_present:
            sm += x.get()
        if y.is_present:
            sm += y.get()
        assert sm == 2, "FAILURE: Expected 2."


class _DPass(Reactor):
    x = Input(int)
    y = Output(int)

    @reaction(triggers=[x], effects=[y])
    def forward(self, x: Any, y: Any) -> None:
        y.set(x.get())


class _Determinism(Reactor):
    def __init__(self) -> None:
        self.s = _DSource()
        self.d = _DDestination()
        self.p1 = _DPass()
        self.p2 = _DPass()
        self.connect(self.s.y, self.d.y)
        self.connect(self.s.y, self.p1.x)
        self.connect(self.p1.y, self.p2.x)
        self.connect(self.p2.y, self.d.x)


@lf_test("Determinism.lf")
def test_determinism() -> None:
    main = _Determinism()
    run(main)
    assert main.d.fired == 1


# ----------------------------------------------------------------------- DoubleInvocation.lf


class _Ball(Reactor):
    position = Output(int)
    velocity = Output(int)
    trigger = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.p = 200

    @reaction(triggers=[trigger], effects=[position, velocity])
    def move(self, position: Any, velocity: Any) -> None:
        position.set(self.p)
        velocity.set(-1)
        self.p -= 1


class _DIPrint(Reactor):
    velocity = Input(int)
    position = Input(int)

    def __init__(self) -> None:
        self.previous = -1
        self.started = False
        self.positions: list[int] = []

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.started = True

    @reaction(triggers=[position, velocity])
    def check(self, position: Any, velocity: Any) -> None:
        if position.is_present:
            self.positions.append(position.get())
        assert position.get() != self.previous, "ERROR: Multiple firings at the same logical time!"


class _DoubleInvocation(Reactor):
    def __init__(self) -> None:
        self.b1 = _Ball()
        self.p = _DIPrint()
        self.plot = _DIPrint()
        self.connect(self.b1.position, self.p.position)
        self.connect(self.b1.velocity, self.p.velocity)
        self.connect(self.b1.position, self.plot.position)
        self.connect(self.b1.velocity, self.plot.velocity)


@lf_test("DoubleInvocation.lf")
def test_double_invocation() -> None:
    main = _DoubleInvocation()
    run(main, timeout=sec(5), fast=True)
    # each Print fires once per tag (0..5 s), never twice
    for p in (main.p, main.plot):
        assert p.started
        assert p.positions == [200, 199, 198, 197, 196, 195]


# ----------------------------------------------------------------------------- DoublePort.lf


class _CountMicrostep(Reactor):
    out = Output(int)
    act = LogicalAction(int)
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[t], effects=[act])
    def tick(self, act: Any) -> None:
        act.schedule(value=self.count, delay=0)
        self.count += 1

    @reaction(triggers=[act], effects=[out])
    def emit(self, act: Any, out: Any) -> None:
        out.set(act.get())


class _DPPrint(Reactor):
    inp = Input(int)
    inp2 = Input(int)

    def __init__(self) -> None:
        self.seen: list[tuple[Any, Any, Any]] = []
        self.shut = False

    @reaction(triggers=[inp, inp2])
    def check(self, inp: Any, inp2: Any) -> None:
        self.seen.append((self.elapsed_tag(), inp.get(), inp2.get()))
        assert not (inp.is_present and inp2.is_present), "ERROR: invalid logical simultaneity."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        self.shut = True  # "SUCCESS: messages were at least one microstep apart."


class _DoublePort(Reactor):
    def __init__(self) -> None:
        self.c = _Count()
        self.cm = _CountMicrostep()
        self.p = _DPPrint()
        self.connect(self.c.out, self.p.inp)
        self.connect(self.cm.out, self.p.inp2)


@lf_test("DoublePort.lf")
def test_double_port() -> None:
    main = _DoublePort()
    run(main, timeout=ms(900), fast=True)
    assert main.p.seen == [((0, 0), 1, None), ((0, 1), None, 1)]
    assert main.p.shut


# ------------------------------------------------------------------------- DoubleReaction.lf


class _Clock(Reactor):
    y = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class _DRDestination(Reactor):
    x = Input(int)
    w = Input(int)

    def __init__(self) -> None:
        self.s = 2

    @reaction(triggers=[x, w])
    def check(self, x: Any, w: Any) -> None:
        sm = 0
        if x.is_present:
            sm += x.get()
        if w.is_present:
            sm += w.get()
        assert sm == self.s, f"FAILURE: Expected sum to be {self.s}, but it was {sm}."
        self.s += 2


class _DoubleReaction(Reactor):
    def __init__(self) -> None:
        self.c1 = _Clock()
        self.c2 = _Clock()
        self.d = _DRDestination()
        self.connect(self.c1.y, self.d.x)
        self.connect(self.c2.y, self.d.w)


@lf_test("DoubleReaction.lf")
def test_double_reaction() -> None:
    main = _DoubleReaction()
    run(main, timeout=sec(10), fast=True)
    assert main.d.s == 2 + 2 * 11  # one firing per tag, 0..10 s


# -------------------------------------------------------------------------- DoubleTrigger.lf


class _DoubleTrigger(Reactor):
    t1 = Timer()
    t2 = Timer()

    def __init__(self) -> None:
        self.s = 0
        self.shut = False

    @reaction(triggers=[t1, t2])
    def fire(self) -> None:
        self.s += 1
        assert self.s <= 1, "FAILURE: Reaction got triggered twice."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s == 1, "FAILURE: Reaction was never triggered."
        self.shut = True


@lf_test("DoubleTrigger.lf")
def test_double_trigger() -> None:
    main = _DoubleTrigger()
    run(main, timeout=sec(1), fast=True)
    assert main.shut and main.s == 1
