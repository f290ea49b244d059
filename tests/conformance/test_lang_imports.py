"""Ports of LF's programs about imports, and of the reactors of LF's ``lib/`` they import.

An LF ``import X from "lib/Y.lf"`` is a Python import of the ported reactor class; an
``import X as Z`` is a second name for the same class. The library reactors are written
here once, and the library files themselves are not programs (no main reactor).
"""

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
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# -- HelloWorld.lf's HelloWorld2 -----------------------------------------------------------


class HelloWorld2(Reactor):
    """HelloWorld.lf's reactor (HelloWorld.lf is ported in test_lang_hierarchy;
    SimpleImport.lf imports it from there)."""

    def __init__(self) -> None:
        self.success = False
        self.shutdown_checked = False

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        self.success = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.success, "ERROR: startup reaction not executed."
        self.shutdown_checked = True


# -- lib/Count.lf, lib/TestCount.lf --------------------------------------------------------


class Count(Reactor):
    """Outputs 1, 2, 3, ... on a timer (offset, period) taken from its parameters."""

    out = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class TestCount(Reactor):
    """Inputs start at ``start``, go up by ``stride``, and exactly ``num_inputs`` arrive."""

    __test__ = False  # not a pytest class
    inp = Input(int)

    def __init__(self, start: int = 1, stride: int = 1, num_inputs: int = 1) -> None:
        self.stride = stride
        self.num_inputs = num_inputs
        self.count = start
        self.inputs_received = 0
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == self.count, f"Expected {self.count}."
        self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but got {self.inputs_received}."
        )
        self.shutdown_checked = True


# -- lib/ImportedAgain.lf, lib/Imported.lf, lib/ImportedComposition.lf ------------------------


class ImportedAgain(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.received: list[int] = []

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        self.received.append(x.get())
        assert x.get() == 42, f"ERROR: Expected input to be 42. Got: {x.get()}"


class Imported(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.a = ImportedAgain()

    @reaction(triggers=[x], effects=["a.x"])
    def forward(self, x: Any, a: Any) -> None:
        a.x.set(x.get())


class _ICGain(Reactor):
    x = Input(int)
    y = Output(int)

    @reaction(triggers=[x], effects=[y])
    def double(self, x: Any, y: Any) -> None:
        y.set(x.get() * 2)


class ImportedComposition(Reactor):
    x = Input(int)
    y = Output(int)

    def __init__(self) -> None:
        self.g1 = _ICGain()
        self.g2 = _ICGain()
        self.connect(self.x, self.g1.x, after=ms(10))
        self.connect(self.g1.y, self.g2.x, after=ms(30))
        self.connect(self.g2.y, self.y, after=ms(15))


# -- lib/GenDelay.lf ------------------------------------------------------------------------


class GenDelaySource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)


class GenDelaySink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.printed: list[tuple[int, int]] = []

    @reaction(triggers=[inp])
    def show(self, inp: Any) -> None:
        self.printed.append((inp.get(), self.elapsed()))


# -- lib/Test.lf ----------------------------------------------------------------------------


class TestDouble(Reactor):
    __test__ = False  # not a pytest class
    inp = Input(float)

    def __init__(self, expected: list[float] | None = None) -> None:
        self.expected = expected if expected is not None else [1.0, 1.0, 1.0, 1.0]
        self.count = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == self.expected[self.count], f"ERROR: Expected {self.expected[self.count]:f}."
        self.count += 1


# -- lib/LoopedActionSender.lf --------------------------------------------------------------


class LoopedActionSender(Reactor):
    """LF's ``Sender``: ``take_a_break_after`` messages in consecutive microsteps, then a
    break of ``break_interval``."""

    out = Output(int)
    act = LogicalAction()

    def __init__(self, take_a_break_after: int = 10, break_interval: int = ms(400)) -> None:
        self.take_a_break_after = take_a_break_after
        self.break_interval = break_interval
        self.sent_messages = 0

    @reaction(triggers=[STARTUP, act], effects=[act, out])
    def send(self, act: Any, out: Any) -> None:
        out.set(self.sent_messages)
        self.sent_messages += 1
        if self.sent_messages < self.take_a_break_after:
            act.schedule(delay=0)
        else:
            self.sent_messages = 0
            act.schedule(delay=self.break_interval)


# -- lib/FileLevelPreamble.lf ---------------------------------------------------------------

FOO = 2  # the file-level preamble


class FileLevelPreamble(Reactor):
    def __init__(self) -> None:
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.printed.append(f"FOO: {FOO}")


# -- Import.lf ------------------------------------------------------------------------------


class _ImportMain(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.a = Imported()

    @reaction(triggers=[t], effects=["a.x"])
    def kick(self, a: Any) -> None:
        a.x.set(42)


@lf_test("Import.lf")
def test_import() -> None:
    main = _ImportMain()
    run(main)
    assert main.a.a.received == [42]


# -- ImportComposition.lf -------------------------------------------------------------------


class _ImportCompositionMain(Reactor):
    def __init__(self) -> None:
        self.a = ImportedComposition()
        self.received = False

    @reaction(triggers=[STARTUP], effects=["a.x"])
    def kick(self, a: Any) -> None:
        a.x.set(42)

    @reaction(triggers=["a.y"])
    def got(self, a: Any) -> None:
        receive_time = self.elapsed()
        self.received = True
        assert receive_time == 55_000_000, "ERROR: Received time should have been 55,000,000."
        assert a.y.get() == 42 * 2 * 2, f"ERROR: Received value should have been {42 * 2 * 2}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, "ERROR: Nothing received."


@lf_test("ImportComposition.lf")
def test_import_composition() -> None:
    main = _ImportCompositionMain()
    run(main)
    assert main.received


# -- ImportRenamed.lf -----------------------------------------------------------------------

X = Imported
Y = Imported
Z = ImportedAgain


class _ImportRenamedMain(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.a = X()
        self.b = Y()
        self.c = Z()

    @reaction(triggers=[t], effects=["a.x"])
    def kick(self, a: Any) -> None:
        a.x.set(42)


@lf_test("ImportRenamed.lf")
def test_import_renamed() -> None:
    main = _ImportRenamedMain()
    run(main)
    assert main.a.a.received == [42]
    assert main.b.a.received == [] and main.c.received == []


# -- GenDelayTest.lf ------------------------------------------------------------------------


class _GenDelayTestMain(Reactor):
    def __init__(self) -> None:
        self.source = GenDelaySource()
        self.sink = GenDelaySink()
        self.connect(self.source.out, self.sink.inp, after=ms(10))


@lf_test("GenDelayTest.lf")
def test_gen_delay() -> None:
    main = _GenDelayTestMain()
    run(main)
    assert main.sink.printed == [(42, ms(10))]  # "Received 42 at time 10000000"


# -- SimpleImport.lf ------------------------------------------------------------------------


class _SimpleImportMain(Reactor):
    def __init__(self) -> None:
        self.a = HelloWorld2()
        self.b = HelloWorld2()


@lf_test("SimpleImport.lf")
def test_simple_import() -> None:
    main = _SimpleImportMain()
    run(main)
    assert main.a.shutdown_checked and main.b.shutdown_checked


# -- PreambleFileLevel.lf -------------------------------------------------------------------


class _PFLB(FileLevelPreamble):
    pass


class _PFLC(Reactor):
    def __init__(self) -> None:
        self.b = _PFLB()


class _PreambleFileLevelMain(Reactor):
    def __init__(self) -> None:
        self.c = _PFLC()


@lf_test("PreambleFileLevel.lf")
def test_preamble_file_level() -> None:
    main = _PreambleFileLevelMain()
    run(main)
    assert main.c.b.printed == ["FOO: 2"]


# -- MovingAverage.lf -----------------------------------------------------------------------


class _MASource(Reactor):
    out = Output(int)
    clock = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[clock], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class _MovingAverageImpl(Reactor):
    inp = Input(int)
    out = Output(float)

    def __init__(self) -> None:
        self.delay_line = [0.0, 0.0, 0.0]
        self.index = 0

    @reaction(triggers=[inp], effects=[out])
    def average(self, inp: Any, out: Any) -> None:
        sm = inp.get()
        sm += sum(self.delay_line)
        out.set(sm / 4.0)
        self.delay_line[self.index] = inp.get()
        self.index += 1
        if self.index >= 3:
            self.index = 0


class _MovingAverageMain(Reactor):
    def __init__(self) -> None:
        self.s = _MASource()
        self.m = _MovingAverageImpl()
        self.p = TestDouble(expected=[0.0, 0.25, 0.75, 1.5, 2.5, 3.5])
        self.connect(self.s.out, self.m.inp)
        self.connect(self.m.out, self.p.inp)


@lf_test("MovingAverage.lf")
def test_moving_average() -> None:
    main = _MovingAverageMain()
    run(main, timeout=sec(1), fast=True)
    assert main.p.count == 6


# -- lf_package_imports/*.lf, lingo_imports/*.lf --------------------------------------------
# Each imports Count from an LF package (`import Count from <package/Import.lf>`, or
# `<package>` for the package's default file), resolved by lfc from test/Python/lf-packages/
# or Lingo's download directory. Every one of those packages' Count is lib/Count.lf's
# (offset=0, period=1 sec, counting from 1); the Python import of the port is the package.


class _Actuator(Reactor):
    results = Input(int)

    def __init__(self) -> None:
        self.printed: list[str] = []

    @reaction(triggers=[results])
    def show(self, results: Any) -> None:
        self.printed.append(f"Count: {results.get()}")


class _PackageImportMain(Reactor):
    def __init__(self) -> None:
        self.count = Count()
        self.act = _Actuator()
        self.connect(self.count.out, self.act.results)


def _run_package_import() -> None:
    main = _PackageImportMain()
    run(main, timeout=sec(2))
    assert main.act.printed == ["Count: 1", "Count: 2", "Count: 3"]


@lf_test("lf_package_imports/TestImportPackages.lf")
def test_import_packages() -> None:
    _run_package_import()  # <library-test-modules/Import.lf>


@lf_test("lf_package_imports/TestImportPackagesNumeric.lf")
def test_import_packages_numeric() -> None:
    _run_package_import()  # <library-test-3-numeric-name/Import.lf>


@lf_test("lf_package_imports/TestImportPackagesNumeric2.lf")
def test_import_packages_numeric2() -> None:
    _run_package_import()  # <library-test-3numeric-name/Import.lf>


@lf_test("lingo_imports/TestImportModulesOptionalFile.lf")
def test_lingo_import_modules_optional_file() -> None:
    _run_package_import()  # <library-test-modules-defaultfile>


@lf_test("lingo_imports/TestImportPackages.lf")
def test_lingo_import_packages() -> None:
    _run_package_import()  # <library-test/Import.lf>


@lf_test("lingo_imports/TestImportPackagesOptionalFile.lf")
def test_lingo_import_packages_optional_file() -> None:
    _run_package_import()  # <library-test-defaultfile>


LEFT_OUT: dict[str, str] = {
    "lib/Count.lf": "library used by AfterOverlapped, CountTest, DoublePort, RepeatedInheritance, ToReactionNested and federated/ programs; ported with them (here: Count)",
    "lib/TestCount.lf": "library used by RepeatedInheritance and federated/ChainWithDelay, ParallelDestinations, ParallelSources, ParallelSourcesMultiport; ported with them (here: TestCount)",
    "lib/TestCountMultiport.lf": "library used by multiport/ReactionToContainedBankMultiport; ported with it",
    "lib/InternalDelay.lf": "library used by federated/ChainWithDelay; ported with it",
    "lib/Imported.lf": "library used by Import, ImportRenamed; ported here as Imported",
    "lib/ImportedAgain.lf": "library used by Imported.lf, ImportRenamed; ported here as ImportedAgain",
    "lib/ImportedComposition.lf": "library used by ImportComposition; ported here",
    "lib/GenDelay.lf": "library used by GenDelayTest; ported here as GenDelaySource, GenDelaySink",
    "lib/Test.lf": "library used by MovingAverage; ported here as TestDouble",
    "lib/LoopedActionSender.lf": "library used by Stop, Timeout, TimeoutZero and federated/DistributedLoopedAction*; ported here as LoopedActionSender",
    "lib/FileLevelPreamble.lf": "library used by PreambleFileLevel; ported here",
    "lib/InstanceInMode.lf": "library used by ImportInstanceInMode; ported with it (test_modal_models: B, U)",
    "lib/PassThrough.lf": "library used by no Python-target program",
}
