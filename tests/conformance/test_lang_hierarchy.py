"""Ports of LF's programs about hierarchy: data carried into, out of and across contained
reactors, reactions reading and writing contained reactors' ports, and small smoke tests."""

from __future__ import annotations

from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, bank, ms, reaction, sec
from tests.conformance.harness import lf_test, run
from tests.conformance.test_lang_imports import Count, HelloWorld2

# -- Gain.lf ---------------------------------------------------------------------------


class _Scale(Reactor):
    x = Input(int)
    y = Output(int)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[x], effects=[y])
    def scale_it(self, x: Any, y: Any) -> None:
        y.set(x.get() * self.scale)


class _GainTest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.received_value: Any = 0
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received_value = True
        self.received += 1
        assert x.get() == 2, "ERROR: Expected 2!"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        # LF only reports on stderr here ("No value received" / "Test passes."); the test
        # below checks that the value arrived.
        pass


class _GainMain(Reactor):
    def __init__(self) -> None:
        self.g = _Scale()
        self.d = _GainTest()
        self.connect(self.g.y, self.d.x)

    @reaction(triggers=[STARTUP], effects=["g.x"])
    def kick(self, g: Any) -> None:
        g.x.set(1)


@lf_test("Gain.lf")
def test_gain() -> None:
    main = _GainMain()
    run(main)
    assert main.d.received == 1


# -- Hierarchy.lf -----------------------------------------------------------------------


class _HSource(Reactor):
    out = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1)


class _HGain(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def double(self, inp: Any, out: Any) -> None:
        out.set(inp.get() * 2)


class _HPrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert inp.get() == 2, "Expected 2."


class _GainContainer(Reactor):
    inp = Input(int)
    out = Output(int)
    out2 = Output(int)

    def __init__(self) -> None:
        self.gain = _HGain()
        self.connect(self.inp, self.gain.inp)
        self.connect(self.gain.out, self.out)
        self.connect(self.gain.out, self.out2)


class _HierarchyMain(Reactor):
    def __init__(self) -> None:
        self.source = _HSource()
        self.container = _GainContainer()
        self.print = _HPrint()
        self.print2 = _HPrint()
        self.connect(self.source.out, self.container.inp)
        self.connect(self.container.out, self.print.inp)
        self.connect(self.container.out, self.print2.inp)


@lf_test("Hierarchy.lf")
def test_hierarchy() -> None:
    main = _HierarchyMain()
    run(main)
    assert main.print.received == 1 and main.print2.received == 1


# -- Hierarchy2.lf ----------------------------------------------------------------------


class _H2Source(Reactor):
    out = Output(int)
    t = Timer(0, sec(1))

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1)


class _H2Count(Reactor):
    out = Output(int)
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[t], effects=[out])
    def count(self, out: Any) -> None:
        self.i += 1
        out.set(self.i)


class _Add(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    out = Output(int)

    @reaction(triggers=[in1, in2], effects=[out])
    def add(self, in1: Any, in2: Any, out: Any) -> None:
        result = 0
        if in1.is_present:
            result += in1.get()
        if in2.is_present:
            result += in2.get()
        out.set(result)


class _H2Print(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.expected = 2
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        assert inp.get() == self.expected, f"Expected {self.expected}."
        self.expected += 1


class _AddCount(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.count = _H2Count()
        self.add = _Add()
        self.connect(self.inp, self.add.in1)
        self.connect(self.count.out, self.add.in2)
        self.connect(self.add.out, self.out)


class _Hierarchy2Main(Reactor):
    def __init__(self) -> None:
        self.source = _H2Source()
        self.addCount = _AddCount()
        self.print = _H2Print()
        self.connect(self.source.out, self.addCount.inp)
        self.connect(self.addCount.out, self.print.inp)


@lf_test("Hierarchy2.lf")
def test_hierarchy2() -> None:
    main = _Hierarchy2Main()
    run(main, timeout=sec(5), fast=True)
    assert main.print.received == 6  # 0 s .. 5 s: 2, 3, ..., 7


# -- MultipleContained.lf ---------------------------------------------------------------


class _MCContained(Reactor):
    trigger = Output(int)
    in1 = Input(int)
    in2 = Input(int)

    def __init__(self) -> None:
        self.count = 0
        self.checked = False

    @reaction(triggers=[STARTUP], effects=[trigger])
    def start(self, trigger: Any) -> None:
        trigger.set(42)

    @reaction(triggers=[in1])
    def got1(self, in1: Any) -> None:
        assert in1.get() == 42, "FAILED: Expected 42."
        self.count += 1

    @reaction(triggers=[in2])
    def got2(self, in2: Any) -> None:
        assert in2.get() == 42, "FAILED: Expected 42."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 2, "FAILED: Should have received two inputs."
        self.checked = True


class _MultipleContainedMain(Reactor):
    def __init__(self) -> None:
        self.c = _MCContained()

    @reaction(triggers=["c.trigger"], effects=["c.in1", "c.in2"])
    def relay(self, c: Any) -> None:
        c.in1.set(c.trigger.get())
        c.in2.set(c.trigger.get())


@lf_test("MultipleContained.lf")
def test_multiple_contained() -> None:
    main = _MultipleContainedMain()
    run(main)
    assert main.c.count == 2 and main.c.checked


# -- MultipleOutputs.lf -----------------------------------------------------------------


class _MOC(Reactor):
    x = Output(int)
    z = Output(int)
    t = Timer(0, ms(100))

    @reaction(triggers=[t], effects=[x, z])
    def emit(self, x: Any, z: Any) -> None:
        x.set(42)
        z.set(44)


class _MultipleOutputsMain(Reactor):
    def __init__(self) -> None:
        self.c = _MOC()
        self.triggered = True  # sic: LF initializes it to True
        self.seen: list[int] = []

    @reaction(triggers=["c.z"])
    def got(self, c: Any) -> None:
        self.seen.append(c.z.get())
        self.triggered = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.triggered, "Reaction never triggered."


@lf_test("MultipleOutputs.lf")
def test_multiple_outputs() -> None:
    main = _MultipleOutputsMain()
    run(main, timeout=sec(1))
    assert main.seen == [44] * 11  # 0, 100, ..., 1000 ms


# -- NestedTriggeredReactions.lf --------------------------------------------------------


class _NTContained(Reactor):
    inp = Input(bool)

    def __init__(self) -> None:
        self.triggered = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.triggered = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.triggered, "The Contained reaction was not triggered!"


class _NTContainer(Reactor):
    inp = Input(bool)

    def __init__(self) -> None:
        self.triggered = False
        self.contained = _NTContained()
        self.connect(self.inp, self.contained.inp)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.triggered = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.triggered, "The Container reaction was not triggered!"


class _NestedTriggeredMain(Reactor):
    def __init__(self) -> None:
        self.container = _NTContainer()

    @reaction(triggers=[STARTUP], effects=["container.inp"])
    def kick(self, container: Any) -> None:
        container.inp.set(True)


@lf_test("NestedTriggeredReactions.lf")
def test_nested_triggered_reactions() -> None:
    main = _NestedTriggeredMain()
    run(main)
    assert main.container.triggered and main.container.contained.triggered


# -- ReadOutputOfContainedReactor.lf ----------------------------------------------------


class _ROContained(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)


class _ReadOutputMain(Reactor):
    def __init__(self) -> None:
        self.c = _ROContained()
        self.count = 0
        self.finished = False

    @reaction(triggers=[STARTUP], sources=["c.out"])
    def on_startup(self, c: Any) -> None:
        assert c.out.get() == 42, "Expected 42!"
        self.count += 1

    @reaction(triggers=["c.out"])
    def on_out(self, c: Any) -> None:
        assert c.out.get() == 42, "Expected 42!"
        self.count += 1

    @reaction(triggers=[STARTUP, "c.out"])
    def on_either(self, c: Any) -> None:
        assert c.out.get() == 42, "Expected 42!"
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 3, "FAILURE: One of the reactions failed to trigger."
        self.finished = True


@lf_test("ReadOutputOfContainedReactor.lf")
def test_read_output_of_contained_reactor() -> None:
    main = _ReadOutputMain()
    run(main)
    assert main.finished


# -- SendingInside.lf -------------------------------------------------------------------


class _SIPrinter(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        assert x.get() == self.count, f"FAILURE: Expected {self.count}."
        self.count += 1


class _SendingInsideMain(Reactor):
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.count = 0
        self.p = _SIPrinter()

    @reaction(triggers=[t], effects=["p.x"])
    def send(self, p: Any) -> None:
        self.count += 1
        p.x.set(self.count)


@lf_test("SendingInside.lf")
def test_sending_inside() -> None:
    main = _SendingInsideMain()
    run(main, timeout=sec(10), fast=True)
    assert main.p.count == 12  # 11 inputs, 0 s .. 10 s


# -- SendingInside2.lf ------------------------------------------------------------------


class _SI2Printer(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received += 1
        assert x.get() == 1, "ERROR: Expected 1."


class _SendingInside2Main(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.p = _SI2Printer()

    @reaction(triggers=[t], effects=["p.x"])
    def send(self, p: Any) -> None:
        p.x.set(1)


@lf_test("SendingInside2.lf")
def test_sending_inside2() -> None:
    main = _SendingInside2Main()
    run(main)
    assert main.p.received == 1


# -- StartupOutFromInside.lf ------------------------------------------------------------


class _Bar(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)


class _StartupOutFromInsideMain(Reactor):
    def __init__(self) -> None:
        self.bar = _Bar()
        self.read: Any = None

    @reaction(triggers=[STARTUP], sources=["bar.out"])
    def check(self, bar: Any) -> None:
        self.read = bar.out.get()
        assert bar.out.get() == 42, "Expected 42!"


@lf_test("StartupOutFromInside.lf")
def test_startup_out_from_inside() -> None:
    main = _StartupOutFromInsideMain()
    run(main)
    assert main.read == 42


# -- UnconnectedInput.lf ----------------------------------------------------------------


class _UISource(Reactor):
    out = Output(int)
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.s = 1

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.s)
        self.s += 1


class _UIPrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.expected = 1

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == self.expected, f"ERROR: Expected {self.expected}."
        self.expected += 1


class _UnconnectedInputMain(Reactor):
    def __init__(self) -> None:
        self.source = _UISource()
        self.add = _Add()
        self.print = _UIPrint()
        self.connect(self.source.out, self.add.in2)
        self.connect(self.add.out, self.print.inp)


@lf_test("UnconnectedInput.lf")
def test_unconnected_input() -> None:
    main = _UnconnectedInputMain()
    run(main, timeout=sec(5), fast=True)
    assert main.print.expected == 7  # 1 .. 6 received


# -- UnconnectedOutput.lf ---------------------------------------------------------------


class _UOB(Reactor):
    inp = Input(int)
    out_problem = Output(int)

    @reaction(triggers=[inp], effects=[out_problem])
    def send(self, inp: Any, out_problem: Any) -> None:
        out_problem.set(self.bank_index)


class _UOA(Reactor):
    inp = Input(int)
    out1 = Output(int)
    out2 = Output(int)
    out3 = Output(int)

    def __init__(self) -> None:
        self.b = bank(_UOB, 3)
        self.connect(self.inp, self.b.inp, broadcast=True)  # (inp)+ -> b.inp
        self.connect(self.b.out_problem, [self.out1, self.out2, self.out3])


class _UnconnectedOutputMain(Reactor):
    t = Timer(0, ms(10))

    def __init__(self) -> None:
        self.m = _UOA()
        self.seen: list[int] = []

    @reaction(triggers=[t], effects=["m.inp"])
    def kick(self, m: Any) -> None:
        m.inp.set(42)

    @reaction(triggers=["m.out3"])
    def check(self, m: Any) -> None:
        self.seen.append(m.out3.get())
        assert m.out3.get() == 2, "Expected 2."


@lf_test("UnconnectedOutput.lf")
def test_unconnected_output() -> None:
    main = _UnconnectedOutputMain()
    run(main, timeout=ms(10))
    assert main.seen == [2, 2]  # 0 ms and 10 ms


# -- Wcet.lf ----------------------------------------------------------------------------


class _WSource(Reactor):
    out1 = Output(int)
    out2 = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[out1, out2])
    def emit(self, out1: Any, out2: Any) -> None:
        out1.set(5)
        out2.set(10)


class _Work(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    out = Output(int)

    @reaction(triggers=[in1, in2], effects=[out])
    def work(self, in1: Any, in2: Any, out: Any) -> None:
        ret = 0
        if in1.get() > 10:  # noqa: SIM108 (LF's code)
            ret = in2.get() * in1.get()
        else:
            ret = in2.get() + in1.get()
        out.set(ret)


class _WPrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.printed: list[int] = []

    @reaction(triggers=[inp])
    def show(self, inp: Any) -> None:
        self.printed.append(inp.get())


class _WcetMain(Reactor):
    def __init__(self) -> None:
        self.source = _WSource()
        self.work = _Work()
        self.print = _WPrint()
        self.connect(self.source.out1, self.work.in1)
        self.connect(self.source.out2, self.work.in2)
        self.connect(self.work.out, self.print.inp)


@lf_test("Wcet.lf")
def test_wcet() -> None:
    main = _WcetMain()
    run(main)
    assert main.print.printed == [15]  # what LF prints: "Received: 15"


# -- Pipeline.lf ------------------------------------------------------------------------


class _TakeTime(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp: Any, out: Any) -> None:
        offset = 0
        for _ in range(10000):
            offset += 1
        out.set(inp.get() + offset)


class _PipelinePrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0
        self.received = 0
        self.times: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        self.times.append(self.elapsed())
        assert inp.get() == self.count + 40000, f"ERROR: Expected {self.count + 40000}."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received != 0, "ERROR: Final reactor received no data."


class _PipelineMain(Reactor):
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0
        self.c1 = _TakeTime()
        self.c2 = _TakeTime()
        self.c3 = _TakeTime()
        self.c4 = _TakeTime()
        self.p = _PipelinePrint()
        self.connect(self.c1.out, self.c2.inp, after=ms(200))
        self.connect(self.c2.out, self.c3.inp, after=ms(200))
        self.connect(self.c3.out, self.c4.inp, after=ms(200))
        self.connect(self.c4.out, self.p.inp)

    @reaction(triggers=[t], effects=["c1.inp"])
    def feed(self, c1: Any) -> None:
        c1.inp.set(self.count)
        self.count += 1


@lf_test("Pipeline.lf")
def test_pipeline() -> None:
    main = _PipelineMain()
    run(main, timeout=sec(2))
    assert main.p.times == [ms(600) + i * ms(200) for i in range(8)]


# -- Minimal.lf -------------------------------------------------------------------------


class _MinimalMain(Reactor):
    def __init__(self) -> None:
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        self.printed.append("Hello World.")


@lf_test("Minimal.lf")
def test_minimal() -> None:
    main = _MinimalMain()
    run(main)
    assert main.printed == ["Hello World."]


# -- HelloWorld.lf ----------------------------------------------------------------------
# (LF's "tracing: true" target property writes a trace file; reactorfed's equivalent,
# the metrics and run summary, does not change the program.)


class _HelloWorldMain(Reactor):
    def __init__(self) -> None:
        self.a = HelloWorld2()


@lf_test("HelloWorld.lf")
def test_hello_world() -> None:
    main = _HelloWorldMain()
    run(main)
    assert main.a.shutdown_checked


# -- Stride.lf --------------------------------------------------------------------------


class _StrideCount(Reactor):
    y = Output(int)
    t = Timer(0, ms(100))

    def __init__(self, stride: int = 1) -> None:
        self.stride = stride
        self.count = 1

    @reaction(triggers=[t], effects=[y])
    def emit(self, y: Any) -> None:
        y.set(self.count)
        self.count += self.stride


class _Display(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.expected = 1
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received += 1
        # LF writes this error to stderr without exiting; a deviation still fails here.
        assert x.get() == self.expected, f"ERROR: Expected {self.expected}."
        self.expected += 2


class _StrideMain(Reactor):
    def __init__(self) -> None:
        self.c = _StrideCount(stride=2)
        self.d = _Display()
        self.connect(self.c.y, self.d.x)


@lf_test("Stride.lf")
def test_stride() -> None:
    main = _StrideMain()
    run(main, timeout=sec(2), fast=True)
    assert main.d.received == 21


# -- ToReactionNested.lf ----------------------------------------------------------------


class _CountContainer(Reactor):
    out = Output(int)

    def __init__(self) -> None:
        self.c1 = Count()
        self.connect(self.c1.out, self.out)


class _ToReactionNestedMain(Reactor):
    def __init__(self) -> None:
        self.count = 1
        self.received = False
        self.s = _CountContainer()

    @reaction(triggers=["s.out"])
    def got(self, s: Any) -> None:
        if s.out.is_present:
            assert self.count == s.out.get(), f"ERROR: Expected {self.count}."
            self.received = True
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, "ERROR: No inputs present."


@lf_test("ToReactionNested.lf")
def test_to_reaction_nested() -> None:
    main = _ToReactionNestedMain()
    run(main, timeout=sec(5), fast=True)
    assert main.count == 7  # 1 .. 6 received, 0 s .. 5 s


# -- IdentifierLength.lf ----------------------------------------------------------------


class A_Really_Long_Name_For_A_Source_But_Not_Quite_255_Characters_Which_Is_The_Maximum_For_The_Python_Target(
    Reactor
):
    y = Output(int)
    t = Timer(offset=sec(1), period="period")  # timer t(1 sec, period)

    def __init__(self, period: int = sec(2)) -> None:
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def emit(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class Another_Really_Long_Name_For_A_Test_Class(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.count += 1
        assert x.get() == self.count, f"FAILURE: Expected {self.count}."


class IdentifierLength(Reactor):
    def __init__(self) -> None:
        self.a_really_long_name_for_a_source_instance = (
            A_Really_Long_Name_For_A_Source_But_Not_Quite_255_Characters_Which_Is_The_Maximum_For_The_Python_Target()
        )
        self.another_really_long_name_for_a_test_instance = Another_Really_Long_Name_For_A_Test_Class()
        self.connect(
            self.a_really_long_name_for_a_source_instance.y, self.another_really_long_name_for_a_test_instance.x
        )


@lf_test("IdentifierLength.lf")
def test_identifier_length() -> None:
    main = IdentifierLength()
    run(main, timeout=sec(10), fast=True)
    assert main.another_really_long_name_for_a_test_instance.count == 5  # 1, 3, 5, 7, 9 s


# -- target/AfterNoTypes.lf -------------------------------------------------------------
# After.lf with untyped ports (`input x`, `output y`) and not fast: `after` needs no
# port types.


class _ANTFoo(Reactor):
    x = Input()
    y = Output()

    @reaction(triggers=[x], effects=[y])
    def double(self, x: Any, y: Any) -> None:
        y.set(2 * x.get())


class _ANTPrint(Reactor):
    x = Input()

    def __init__(self) -> None:
        self.expected_time = ms(10)
        self.received = 0

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received += 1
        elapsed_time = self.elapsed()
        assert x.get() == 84, "ERROR: Expected result to be 84."
        assert elapsed_time == self.expected_time, f"ERROR: Expected logical time to be {self.expected_time}"
        self.expected_time += sec(1)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received != 0, "ERROR: Final reactor received no data."


class _AfterNoTypesMain(Reactor):
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.f = _ANTFoo()
        self.p = _ANTPrint()
        self.connect(self.f.y, self.p.x, after=ms(10))

    @reaction(triggers=[t], effects=["f.x"])
    def kick(self, f: Any) -> None:
        f.x.set(42)


@lf_test("target/AfterNoTypes.lf")
def test_after_no_types() -> None:
    main = _AfterNoTypesMain()
    run(main, timeout=sec(3))
    assert main.p.received == 3  # 10 ms, 1.01 s, 2.01 s (3 s's output lands after the timeout)
