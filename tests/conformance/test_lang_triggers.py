"""Ports of LF's programs about what triggers a reaction: only present inputs, outputs
set or not by an earlier reaction of the same reactor, unconnected and never-set outputs,
and inputs read at tags where nothing arrived."""

from __future__ import annotations

import random
from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, bank, ms, reaction, sec
from tests.conformance.harness import lf_test, run

# -- TriggerDownstreamOnlyIfPresent.lf --------------------------------------------------


class _TDSource(Reactor):
    a = Output(int)
    b = Output(int)
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0  # never incremented (as in LF): only `a` is ever set

    @reaction(triggers=[t], effects=[a, b])
    def emit(self, a: Any, b: Any) -> None:
        if (self.count % 2) == 0:
            a.set(self.count)
        else:
            b.set(self.count)


class _TDDestination(Reactor):
    a = Input(int)
    b = Input(int)

    def __init__(self) -> None:
        self.a_count = 0
        self.b_count = 0

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        self.a_count += 1
        assert a.is_present is True, "Reaction to a triggered even though all inputs are absent!"

    @reaction(triggers=[b])
    def on_b(self, b: Any) -> None:
        self.b_count += 1
        assert b.is_present is True, "Reaction to b triggered even though all inputs are absent!"


class _TriggerDownstreamOnlyIfPresentMain(Reactor):
    def __init__(self) -> None:
        self.s = bank(_TDSource, 2)
        self.d = bank(_TDDestination, 2)
        self.connect(self.s.a, self.d.a)
        self.connect(self.s.b, self.d.b)


@lf_test("TriggerDownstreamOnlyIfPresent.lf")
def test_trigger_downstream_only_if_present() -> None:
    main = _TriggerDownstreamOnlyIfPresentMain()
    run(main, timeout=sec(1), fast=True)
    assert [(d.a_count, d.b_count) for d in main.d] == [(6, 0), (6, 0)]


# -- TriggerDownstreamOnlyIfPresent2.lf -------------------------------------------------


class _TD2Source(Reactor):
    out = Output(int, width=2)
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        if (self.count % 2) == 0:
            self.count += 1
            out[0].set(self.count)
        else:
            out[1].set(self.count)


class _TD2Destination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0
        self.shutdown_seen = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.count += 1
        assert inp.is_present is True, "Reaction to input of triggered even though all inputs are absent!"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        self.shutdown_seen = True  # "SUCCESS."


class _TriggerDownstreamOnlyIfPresent2Main(Reactor):
    def __init__(self) -> None:
        self.s = _TD2Source()
        self.d = bank(_TD2Destination, 2)
        self.connect(self.s.out, self.d.inp)


@lf_test("TriggerDownstreamOnlyIfPresent2.lf")
def test_trigger_downstream_only_if_present2() -> None:
    main = _TriggerDownstreamOnlyIfPresent2Main()
    run(main, timeout=sec(1), fast=True)
    assert [d.count for d in main.d] == [1, 5]  # channel 0 at 0 ms, channel 1 at 200 .. 1000 ms
    assert all(d.shutdown_seen for d in main.d)


# -- TriggerIssue.lf --------------------------------------------------------------------


class _TISource(Reactor):
    x = Output(bool)
    y = Output(bool)

    @reaction(triggers=[STARTUP], effects=[x, y])
    def start(self, x: Any, y: Any) -> None:
        y.set(True)


class _TIDestination(Reactor):
    y = Input(bool)

    def __init__(self) -> None:
        self.gotY = False
        self.shutdown_checked = False

    @reaction(triggers=[y])
    def got(self, y: Any) -> None:
        self.gotY = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.gotY, "No reaction to Y!"
        self.shutdown_checked = True


class _TriggerIssueMain(Reactor):
    def __init__(self) -> None:
        self.ui = _TISource()
        self.dlc = _TIDestination()
        self.connect(self.ui.y, self.dlc.y)


@lf_test("TriggerIssue.lf")
def test_trigger_issue() -> None:
    main = _TriggerIssueMain()
    run(main, timeout=sec(1))
    assert main.dlc.shutdown_checked


# -- TriggerIssue2.lf -------------------------------------------------------------------


class _OnlySuccess(Reactor):
    start = Input(bool)
    success = Output(bool)
    failure = Output(bool)

    def __init__(self) -> None:
        self.printed: list[str] = []

    @reaction(triggers=[start], effects=[success, failure])
    def go(self, start: Any, success: Any, failure: Any) -> None:
        self.printed.append("Create Success")
        success.set(True)


class _ForwardFailure(Reactor):
    inp = Input(bool)
    out = Output(bool)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(True)


class _Sequence(Reactor):
    start = Input(bool)
    success = Output(bool)
    failure = Output(bool)

    def __init__(self) -> None:
        self.s = _OnlySuccess()
        self.f = _ForwardFailure()
        self.connect(self.start, self.s.start)
        self.connect(self.s.success, self.success)
        self.connect(self.s.failure, self.f.inp)
        self.connect(self.f.out, self.failure)


class _TriggerIssue2Main(Reactor):
    def __init__(self) -> None:
        self.s = _Sequence()

    @reaction(triggers=[STARTUP], effects=["s.start"])
    def start(self, s: Any) -> None:
        s.start.set(True)

    @reaction(triggers=["s.failure"])
    def failed(self, s: Any) -> None:
        raise AssertionError("Failure")


@lf_test("TriggerIssue2.lf")
def test_trigger_issue2() -> None:
    main = _TriggerIssue2Main()
    run(main, timeout=sec(1))
    assert main.s.s.printed == ["Create Success"]


# -- TestForPreviousOutput.lf -----------------------------------------------------------


class _TFPOSource(Reactor):
    out = Output(int)

    def __init__(self) -> None:
        self.random = random.Random()
        self.produced_first = False

    @reaction(triggers=[STARTUP], effects=[out])
    def maybe(self, out: Any) -> None:
        self.random.seed()  # seeded from the current time, as in LF
        if self.random.choice([0, 1]) == 1:
            self.produced_first = True
            out.set(21)

    @reaction(triggers=[STARTUP], effects=[out])
    def always(self, out: Any) -> None:
        if out.is_present:
            out.set(2 * out.get())
        else:
            out.set(42)


class _TFPOSink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append(inp.get())
        assert inp.get() == 42, "FAILED: Expected 42."


class _TestForPreviousOutputMain(Reactor):
    def __init__(self) -> None:
        self.s = _TFPOSource()
        self.d = _TFPOSink()
        self.connect(self.s.out, self.d.inp)


@lf_test("TestForPreviousOutput.lf")
def test_for_previous_output() -> None:
    # The program picks its branch at random; run it until both branches were taken.
    branches = set()
    for _ in range(64):
        main = _TestForPreviousOutputMain()
        run(main)
        assert main.d.received == [42]
        branches.add(main.s.produced_first)
        if len(branches) == 2:
            break
    assert branches == {True, False}


# -- PersistentInputs.lf ----------------------------------------------------------------


class _PISource(Reactor):
    out = Output(int)
    t = Timer(ms(100), ms(200))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class _PISink(Reactor):
    """LF's Sink. Its ``reaction(startup) inp {= inp.set(0) =}`` is not ported: in LF's
    Python target an input is a pointer to the connected output (reactor-c), so that
    ``set`` on a reaction's *source* writes the source's output value (a loophole: not
    an effect, no presence, nothing triggered); reactorfed refuses writing one's own
    input (and a source handle has no ``set``). Without it, LF's comment says, ``inp.value``
    is None at time 0: that is what the check expects there; every later check is LF's."""

    inp = Input(int)
    t = Timer(0, ms(100))
    out = Output(int)
    t2 = Timer(ms(100), ms(200))

    def __init__(self) -> None:
        self.count = 0
        self.seen: list[tuple[int, Any]] = []

    @reaction(triggers=[t2])
    def bump(self) -> None:
        self.count += 1

    @reaction(triggers=[t], sources=[inp])
    def check(self, inp: Any) -> None:
        # LF reads inp.value: persistent, the latest value, present or not.
        self.seen.append((self.elapsed(), inp.value))
        expected = None if self.elapsed() == 0 else self.count
        assert inp.value == expected, f"Expected {expected}."


class _PersistentInputsMain(Reactor):
    def __init__(self) -> None:
        self.source = _PISource()
        self.sink = _PISink()
        self.connect(self.source.out, self.sink.inp)


@lf_test("PersistentInputs.lf")
def test_persistent_inputs() -> None:
    main = _PersistentInputsMain()
    run(main, timeout=ms(400), fast=True)
    assert main.sink.seen == [(0, None), (ms(100), 1), (ms(200), 1), (ms(300), 2), (ms(400), 2)]
