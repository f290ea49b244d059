"""Ports of LF's C-target ``federated/`` programs that apply to centralized coordination
and have no Python-suite counterpart: federate-level cycles that are not reaction-level
cycles, ``after`` delays on every link of a cycle through four federates, interleaved
multiport-to-bank connections between federates, contained reactions in a federate
forming a level pattern with another federate, and microstep-apart inputs on a loop.

Each runs in one process (``run_local``) and federated (``run_federated``); what the
federates observe must agree."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    SystemClock,
    Timer,
    VirtualClock,
    bank,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.c_lib import Count, TestCount
from tests.conformance.harness import lf_test, run, run_federated, run_local

pytestmark = pytest.mark.timeout(90)

# ------------------------------------------------------------------------------- Absent.lf


class _AbsentSender(Reactor):
    out1 = Output(int)
    out2 = Output(int)
    t = Timer(0, ms(20))

    def __init__(self) -> None:
        self.c = 1

    @reaction(triggers=[t], effects=[out1, out2])
    def send(self, out1: Any, out2: Any) -> None:
        if self.c % 2 != 0:
            out1.set(self.c)
        else:
            out2.set(self.c)
        self.c += 1


class _AbsentReceiver(Reactor):
    in1 = Input(int)
    in2 = Input(int)

    def __init__(self) -> None:
        self.log: list[tuple[str, int, int]] = []

    @reaction(triggers=[in1])
    def on1(self, in1: Any) -> None:
        self.log.append(("in1", self.elapsed(), in1.get()))
        assert in1.get() % 2 != 0, "********* Expected an odd integer!"

    @reaction(triggers=[in2])
    def on2(self, in2: Any) -> None:
        self.log.append(("in2", self.elapsed(), in2.get()))
        assert in2.get() % 2 == 0, "********* Expected an even integer!"


class _Absent(Reactor):
    def __init__(self, d: int = ms(1)) -> None:
        self.d = d
        self.s = _AbsentSender()
        self.r = _AbsentReceiver()
        self.connect(self.s.out1, self.r.in1)
        self.connect(self.s.out2, self.r.in2)


@lf_test("federated/Absent.lf", federated=True, suite="C")
def test_absent() -> None:
    """Two links from one federate, one of them absent at each tag."""
    main = _Absent()
    run_local(main, timeout=ms(100))
    want = [("in1" if c % 2 else "in2", ms(20) * (c - 1), c) for c in range(1, 7)]
    assert main.r.log == want
    progs = run_federated(_Absent, timeout=ms(100))
    assert progs["r"].r.log == want  # type: ignore[attr-defined]


# -------------------------------------------------------------------------- AfterDelays.lf


class _Base(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    out1 = Output(int)
    out2 = Output(int)


class _Node(_Base):
    t = Timer(0, ms(20))

    def __init__(self) -> None:
        self.c = 1
        self.log: list[tuple[str, int, int]] = []

    @reaction(triggers=[t], effects=[_Base.out1, _Base.out2])
    def send(self, out1: Any, out2: Any) -> None:
        if self.c % 2 == 0:
            out1.set(self.c)
        else:
            out2.set(self.c)
        self.c += 1

    @reaction(triggers=[_Base.in1])
    def on1(self, in1: Any) -> None:
        self.log.append(("in1", self.elapsed(), in1.get()))
        assert in1.get() % 2 != 0, "Expected an odd integer!"

    @reaction(triggers=[_Base.in2])
    def on2(self, in2: Any) -> None:
        self.log.append(("in2", self.elapsed(), in2.get()))
        assert in2.get() % 2 == 0, "Expected an even integer!"


class _Switch(_Base):
    @reaction(triggers=[_Base.in1], effects=[_Base.out2])
    def one_to_two(self, in1: Any, out2: Any) -> None:
        out2.set(in1.get())

    @reaction(triggers=[_Base.in2], effects=[_Base.out1])
    def two_to_one(self, in2: Any, out1: Any) -> None:
        out1.set(in2.get())


class _AfterDelays(Reactor):
    def __init__(self, d: int = ms(1)) -> None:
        self.d = d
        self.n1 = _Node()
        self.n2 = _Node()
        self.sw1 = _Switch()
        self.sw2 = _Switch()
        self.connect(self.n1.out1, self.sw1.in2, after=d)
        self.connect(self.sw1.out2, self.n1.in1, after=d)
        self.connect(self.n1.out2, self.sw2.in1, after=d)
        self.connect(self.sw2.out1, self.n1.in2, after=d)
        self.connect(self.sw2.out2, self.n2.in1, after=d)
        self.connect(self.n2.out1, self.sw2.in2, after=d)
        self.connect(self.n2.out2, self.sw1.in1, after=d)
        self.connect(self.sw1.out1, self.n2.in2, after=d)


def _after_delays_want() -> list[tuple[str, int, int]]:
    # a node's odd counts (out2) go through a switch's in1 -> out2 to the other node's in1,
    # its even counts (out1) through a switch's in2 -> out1 to the other node's in2: two
    # hops of 1 ms, sent every 20 ms; the last (at 100 ms) would arrive after the timeout
    return [("in1" if c % 2 else "in2", ms(20) * (c - 1) + ms(2), c) for c in range(1, 6)]


@lf_test("federated/AfterDelays.lf", federated=True, suite="C")
def test_after_delays() -> None:
    """A cycle through four federates, an ``after`` delay on every link."""
    main = _AfterDelays()
    run_local(main, timeout=ms(100))
    want = _after_delays_want()
    assert main.n1.log == want and main.n2.log == want
    progs = run_federated(_AfterDelays, timeout=ms(100))
    assert progs["n1"].n1.log == want  # type: ignore[attr-defined]
    assert progs["n2"].n2.log == want  # type: ignore[attr-defined]


class _MultiportNode(Reactor):
    inp = Input(int, width=2)
    out = Output(int, width=2)
    t = Timer(0, ms(20))

    def __init__(self) -> None:
        self.c = 1
        self.log: list[tuple[int, int, int]] = []

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        if self.c % 2 == 0:
            out[0].set(self.c)
        else:
            out[1].set(self.c)
        self.c += 1

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        if inp[0].is_present:
            self.log.append((0, self.elapsed(), inp[0].get()))
            assert inp[0].get() % 2 != 0, "Expected an odd integer!"
        if inp[1].is_present:
            self.log.append((1, self.elapsed(), inp[1].get()))
            assert inp[1].get() % 2 == 0, "Expected an even integer!"


class _AfterDelaysWithMultiport(Reactor):
    def __init__(self, d: int = ms(1)) -> None:
        self.d = d
        self.n1 = _MultiportNode()
        self.n2 = _MultiportNode()
        self.sw1 = _Switch()
        self.sw2 = _Switch()
        self.connect(self.n1.out, [self.sw1.in2, self.sw2.in1], after=ms(1))
        self.connect(self.n2.out, [self.sw2.in2, self.sw1.in1], after=ms(1))
        self.connect([self.sw1.out2, self.sw2.out1], self.n1.inp, after=ms(1))
        self.connect([self.sw2.out2, self.sw1.out1], self.n2.inp, after=ms(1))


@lf_test("federated/AfterDelaysWithMultiport.lf", federated=True, suite="C")
def test_after_delays_with_multiport() -> None:
    """AfterDelays with the nodes' ports as multiports, connected by lists."""
    main = _AfterDelaysWithMultiport()
    run_local(main, timeout=ms(100))
    want = [(0 if c % 2 else 1, ms(20) * (c - 1) + ms(2), c) for c in range(1, 6)]
    assert main.n1.log == want and main.n2.log == want
    progs = run_federated(_AfterDelaysWithMultiport, timeout=ms(100))
    assert progs["n1"].n1.log == want  # type: ignore[attr-defined]
    assert progs["n2"].n2.log == want  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- BankIndex.lf


class _BINode(Reactor):
    inp = Input(int, width="num_nodes")
    out = Output(int)

    def __init__(self, num_nodes: int = 3) -> None:
        self.num_nodes = num_nodes

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(self.bank_index)


class _BICheck(Reactor):
    inp = Input(int, width="num_nodes")

    def __init__(self, num_nodes: int = 3) -> None:
        self.num_nodes = num_nodes
        self.success = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for i in range(self.num_nodes):
            assert inp[i].value == i, f"Expected {i}, not {inp[i].value}."
        self.success = True
        self.request_stop()


class _BankIndex(Reactor):
    def __init__(self) -> None:
        self.b = bank(_BINode, 4, num_nodes=4)
        self.c = _BICheck(num_nodes=4)
        self.connect(self.b.out, self.c.inp)


@lf_test("federated/BankIndex.lf", federated=True, suite="C")
def test_bank_index() -> None:
    """Bank members (each a federate, each with an unconnected input multiport) send
    their index; the checker stops the federation."""
    main = _BankIndex()
    run_local(main)
    assert main.c.success
    progs = run_federated(_BankIndex)
    assert progs["c"].c.success  # type: ignore[attr-defined]


# -------------------------------------------------------------- DistributedInterleaved.lf


class _Count4(Reactor):
    out = Output(int, width=4)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for p in out:
            p.set(self.count)
            self.count += 1


class _IDestination(Reactor):
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.count = 0
        self.got: list[list[int]] = []

    @reaction(triggers=[inp])
    def got_(self, inp: Any) -> None:
        self.got.append([inp[0].get(), inp[1].get()])
        # Because the connection is interleaved, the difference between the two inputs
        # should be 2, not 1.
        assert inp[1].get() - inp[0].get() == 2, "Expected a difference of two."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count != 0, "No data received."


class _DistributedInterleaved(Reactor):
    def __init__(self) -> None:
        self.s = _Count4()
        self.d = bank(_IDestination, 2)
        # s.out -> interleaved(d.in): channel-major over the bank's members
        self.connect(self.s.out, [m.inp[c] for c in range(2) for m in self.d])


@lf_test("federated/DistributedInterleaved.lf", federated=True, suite="C")
def test_distributed_interleaved() -> None:
    main = _DistributedInterleaved()
    run_local(main, timeout=sec(3), fast=True)
    want = [[[4 * k + 1 + i, 4 * k + 3 + i] for k in range(4)] for i in range(2)]
    assert [d.got for d in main.d] == want
    progs = run_federated(_DistributedInterleaved, timeout=sec(3))
    assert [progs[f"d[{i}]"].d[i].got for i in range(2)] == want  # type: ignore[attr-defined]


# ---------------------------------------------------------- DistributedDoublePortLooped*.lf


class _Foo(Reactor):
    t = Timer(0, us(700))
    out = Output(int)

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(0)


class _DPCount(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    in3 = Input(int)
    out1 = Output(int)
    out2 = Output(int)
    t = Timer(0, ms(1))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[in1], effects=[out1])
    def r1(self, in1: Any, out1: Any) -> None:
        pass

    # in2 is not connected to anything. Consequently, the control reaction for in2 waits forever.
    @reaction(triggers=[in2, t], effects=[out2])
    def r2(self, in2: Any, out2: Any) -> None:
        out2.set(self.count)
        self.count += 1

    @reaction(triggers=[in3])
    def r3(self, in3: Any) -> None:
        pass


class _CountMicrostep(Reactor):
    out = Output(int)
    act = LogicalAction(int)
    t = Timer(0, ms(1))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[t], effects=[act])
    def tick(self, act: Any) -> None:
        act.schedule(delay=0, value=self.count)
        self.count += 1

    @reaction(triggers=[act], effects=[out])
    def send(self, act: Any, out: Any) -> None:
        out.set(act.get())


class _DPPrint(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    in3 = Input(int)
    out = Output(int)
    t = Timer(0, ms(2))

    def __init__(self) -> None:
        self.runs = 0
        self.in1_tags: list[tuple[int, int]] = []

    @reaction(triggers=[in1, in2, in3, t], effects=[out])
    def got(self, in1: Any, in2: Any, in3: Any, out: Any) -> None:
        self.runs += 1
        if in1.is_present:
            tag = self.elapsed_tag()
            self.in1_tags.append((tag.time, tag.microstep))
        assert not (in1.is_present and in2.is_present), "ERROR: invalid logical simultaneity."
        out.set(in1.value)


class _DistributedDoublePortLooped(Reactor):
    def __init__(self) -> None:
        self.f = _Foo()
        self.c = _DPCount()
        self.connect(self.f.out, self.c.in1)
        self.cm = _CountMicrostep()
        self.p = _DPPrint()
        self.connect(self.c.out1, self.p.in2)
        self.connect(self.c.out2, self.p.in3)  # Indicating a 'logical' connection.
        self.connect(self.cm.out, self.p.in1)
        self.connect(self.p.out, self.c.in3)


@lf_test("federated/DistributedDoublePortLooped.lf", federated=True, suite="C")
def test_distributed_double_port_looped() -> None:
    """A loop through a federate whose reaction to one input never produces its output:
    inputs a microstep apart never arrive together."""
    main = _DistributedDoublePortLooped()
    run_local(main, timeout=ms(900), fast=True)
    # the timeout's tag is (900 ms, 0): the last microstep-1 input is at 899 ms
    want = [(ms(k), 1) for k in range(900)]
    assert main.p.in1_tags == want
    runs = main.p.runs
    progs = run_federated(_DistributedDoublePortLooped, timeout=ms(900))
    p = progs["p"].p  # type: ignore[attr-defined]
    assert p.in1_tags == want and p.runs == runs


class _DP2Count(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, ms(1))

    def __init__(self) -> None:
        self.count = 1
        self.received: list[tuple[int, int, int | None]] = []

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        self.received.append((tag.time, tag.microstep, inp.get()))


class _DP2Print(Reactor):
    inp = Input(int)
    in2 = Input(int)
    out = Output(int)
    t = Timer(0, ms(2))

    def __init__(self) -> None:
        self.log: list[tuple[int, int, str, int]] = []

    @reaction(triggers=[inp, in2], effects=[out])
    def got(self, inp: Any, in2: Any, out: Any) -> None:
        tag = self.elapsed_tag()
        if inp.is_present:
            self.log.append((tag.time, tag.microstep, "in", inp.get()))
        if in2.is_present:
            self.log.append((tag.time, tag.microstep, "in2", in2.get()))
        assert not (inp.is_present and in2.is_present), "ERROR: invalid logical simultaneity."
        out.set(inp.value)

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass  # Do nothing


class _DistributedDoublePortLooped2(Reactor):
    def __init__(self) -> None:
        self.c = _DP2Count()
        self.cm = _CountMicrostep()
        self.p = _DP2Print()
        self.connect(self.c.out, self.p.inp)  # Indicating a 'logical' connection.
        self.connect(self.cm.out, self.p.in2)
        self.connect(self.p.out, self.c.inp)


@lf_test("federated/DistributedDoublePortLooped2.lf", federated=True, suite="C")
def test_distributed_double_port_looped2() -> None:
    main = _DistributedDoublePortLooped2()
    run_local(main, timeout=ms(5), fast=True)
    # the run stops at (5 ms, 0): cm's event at (5 ms, 1) is past it
    want = [e for k in range(5) for e in ((ms(k), 0, "in", k + 1), (ms(k), 1, "in2", k + 1))]
    want.append((ms(5), 0, "in", 6))
    assert main.p.log == want
    # Print echoes in's latest value at both microsteps; Count receives it at each
    got = [(ms(k), m, k + 1) for k in range(5) for m in (0, 1)] + [(ms(5), 0, 6)]
    assert main.c.received == got
    progs = run_federated(_DistributedDoublePortLooped2, timeout=ms(5))
    assert progs["p"].p.log == want  # type: ignore[attr-defined]
    assert progs["c"].c.received == got  # type: ignore[attr-defined]


# -------------------------------------------------------------------------- LevelPattern.lf


class _Through(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def through(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class _LPA(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    out1 = Output(int)
    out2 = Output(int)

    def __init__(self) -> None:
        self.i1 = _Through()
        self.connect(self.i1.out, self.out1)
        self.i2 = _Through()
        self.connect(self.i2.out, self.out2)

    @reaction(triggers=[in1], effects=["i1.inp"])
    def first(self, in1: Any, i1: Any) -> None:
        i1.inp.set(in1.get())

    @reaction(triggers=[in2], effects=["i2.inp"])
    def second(self, in2: Any, i2: Any) -> None:
        i2.inp.set(in2.get())


class _LevelPattern(Reactor):
    def __init__(self) -> None:
        self.c = Count()
        self.test = TestCount(num_inputs=2)
        self.b = _LPA()
        self.t = _Through()
        self.connect(self.c.out, self.b.in1)
        self.connect(self.b.out1, self.t.inp)
        self.connect(self.t.out, self.b.in2)
        self.connect(self.b.out2, self.test.inp)


@lf_test("federated/LevelPattern.lf", federated=True, suite="C")
def test_level_pattern() -> None:
    """Federates b and t form a cycle of federates with no cycle of reactions (b's two
    reactions are independent): a value goes b -> t -> b at one tag."""
    main = _LevelPattern()
    run_local(main, timeout=sec(1))
    assert main.test.inputs_received == 2
    progs = run_federated(_LevelPattern, timeout=sec(1))
    assert progs["test"].test.inputs_received == 2  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- SimpleFederated.lf


class _Fed(Reactor):
    inp = Input(int)
    out = Output(int)


class _SimpleFederated(Reactor):
    def __init__(self) -> None:
        self.fed1 = _Fed()
        self.fed2 = _Fed()
        self.connect(self.fed1.out, self.fed2.inp)
        self.connect(self.fed2.out, self.fed1.inp)


@lf_test("federated/SimpleFederated.lf", federated=True, suite="C")
def test_simple_federated() -> None:
    """Two federates without reactions, connected both ways, run to their timeout."""
    summary = run_local(_SimpleFederated(), timeout=sec(2))
    assert summary.stop_reason == "timeout", summary
    summaries: dict[str, Any] = {}
    run_federated(_SimpleFederated, timeout=sec(2), summaries=summaries)
    assert set(summaries) == {"fed1", "fed2"}


# ------------------------------------------------------------- LoopDistributedCentralized2.lf


class _Looper(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, sec(1))

    def __init__(self, incr: int = 1, delay: int = 0) -> None:
        self.incr = incr
        self.delay = delay
        self.count = 0
        self.received: list[int] = []

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)
        self.count += self.incr

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received.append(inp.get())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 5 * self.incr, "Failed to receive all five expected inputs."


class _Looper2(Reactor):
    """Looper with its input reaction first."""

    inp = Input(int)
    out = Output(int)
    t = Timer(0, sec(1))

    def __init__(self, incr: int = 1, delay: int = 0) -> None:
        self.incr = incr
        self.delay = delay
        self.count = 0
        self.received: list[int] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received.append(inp.get())

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)
        self.count += self.incr

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 5 * self.incr, "Failed to receive all five expected inputs."


class _LoopDistributedCentralized2(Reactor):
    def __init__(self, delay: int = 0) -> None:
        self.delay = delay
        self.left = _Looper()
        self.right = _Looper2(incr=-1)
        self.connect(self.left.out, self.right.inp)
        self.connect(self.right.out, self.left.inp)


@lf_test("federated/LoopDistributedCentralized2.lf", federated=True, suite="C")
def test_loop_distributed_centralized2() -> None:
    """A zero-delay cycle between two federates, acyclic in reactions, one with its input
    reaction before its output reaction, the other after (the original's physical actions
    are never scheduled; LF's advance-message-interval has no counterpart here)."""
    main = _LoopDistributedCentralized2()
    run_local(main, timeout=sec(4))
    assert main.right.received == [0, 1, 2, 3, 4] and main.left.received == [0, -1, -2, -3, -4]
    progs = run_federated(_LoopDistributedCentralized2, timeout=sec(4))
    assert progs["right"].right.received == [0, 1, 2, 3, 4]  # type: ignore[attr-defined]
    assert progs["left"].left.received == [0, -1, -2, -3, -4]  # type: ignore[attr-defined]


# -------------------------------------------------------------- MultiportToMultiportArray.lf


class _ArraySource(Reactor):
    t = Timer(0, ms(200))
    out = Output(list, width=2)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for p in out:
            p.set([self.s, self.s + 1, self.s + 2])
            self.s += 3


class _ArrayDestination(Reactor):
    inp = Input(list, width=2)

    def __init__(self) -> None:
        self.s = 15
        self.sums: list[int] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        total = 0
        for p in inp:
            assert p.is_present, "ERROR: Expected input to be present."
            assert len(p.get()) == 3
            total += sum(p.get())
        assert total == self.s, f"Sum of received: {total}. Expected {self.s}."
        self.sums.append(total)
        self.s += 36

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s > 15, "ERROR: Destination received no input!"


class _MultiportToMultiportArray(Reactor):
    def __init__(self) -> None:
        self.a = _ArraySource()
        self.b = _ArrayDestination()
        self.connect(self.a.out, self.b.inp)


@lf_test("federated/MultiportToMultiportArray.lf", federated=True, suite="C")
def test_multiport_to_multiport_array() -> None:
    """Arrays on each channel of a multiport between federates."""
    main = _MultiportToMultiportArray()
    run_local(main, timeout=sec(2))
    want = [15 + 36 * k for k in range(11)]
    assert main.b.sums == want
    progs = run_federated(_MultiportToMultiportArray, timeout=sec(2))
    assert progs["b"].b.sums == want  # type: ignore[attr-defined]


@lf_test("federated/LoopDistributedCentralized.lf", federated=True, suite="C")
def test_loop_distributed_centralized() -> None:
    """As LoopDistributedCentralized2, both federates with their timer reaction first."""

    class LoopDistributedCentralized(Reactor):
        def __init__(self, delay: int = 0) -> None:
            self.delay = delay
            self.left = _Looper()
            self.right = _Looper(incr=-1)
            self.connect(self.left.out, self.right.inp)
            self.connect(self.right.out, self.left.inp)

    main = LoopDistributedCentralized()
    run_local(main, timeout=sec(4))
    assert main.right.received == [0, 1, 2, 3, 4] and main.left.received == [0, -1, -2, -3, -4]
    progs = run_federated(LoopDistributedCentralized, timeout=sec(4))
    assert progs["right"].right.received == [0, 1, 2, 3, 4]  # type: ignore[attr-defined]
    assert progs["left"].left.received == [0, -1, -2, -3, -4]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- FederatedFixedSizeArray.lf


class _ReactorA(Reactor):
    test_out = Output(list)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.counter = 8

    @reaction(triggers=[t], effects=[test_out])
    def send(self, test_out: Any) -> None:
        test_out.set([self.counter, self.counter * 2, self.counter * 3])
        self.counter += 1


class _BEmbed(Reactor):
    test_in = Input(list)

    def __init__(self) -> None:
        self.counter = 8

    @reaction(triggers=[test_in])
    def got(self, test_in: Any) -> None:
        c = self.counter
        assert test_in.get() == [c, c * 2, c * 3], f"Expected: {c} {c * 2} {c * 3}"
        self.counter += 1


class _ReactorB(Reactor):
    test_in = Input(list)

    def __init__(self) -> None:
        self.counter = 8
        self.embed = _BEmbed()
        self.connect(self.test_in, self.embed.test_in)

    @reaction(triggers=[test_in])
    def got(self, test_in: Any) -> None:
        c = self.counter
        assert test_in.get() == [c, c * 2, c * 3], f"Expected: {c} {c * 2} {c * 3}"
        self.counter += 1


class _FederatedFixedSizeArray(Reactor):
    def __init__(self) -> None:
        self.a = _ReactorA()
        self.b = _ReactorB()
        self.connect(self.a.test_out, self.b.test_in)


@lf_test("federated/FederatedFixedSizeArray.lf", federated=True, suite="C")
def test_federated_fixed_size_array() -> None:
    """A fixed-size array between federates, read by the receiving federate and by a
    reactor it contains."""
    main = _FederatedFixedSizeArray()
    run_local(main, timeout=sec(1))
    assert main.b.counter == 19 and main.b.embed.counter == 19
    progs = run_federated(_FederatedFixedSizeArray, timeout=sec(1))
    b = progs["b"].b  # type: ignore[attr-defined]
    assert b.counter == 19 and b.embed.counter == 19


# ------------------------------------------------------------- InheritanceFederated(Import).lf


class _IA(Reactor):
    def __init__(self) -> None:
        self.hello = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.hello = True  # printf("Hello\n")


class _IB(Reactor):
    def __init__(self) -> None:
        self.a = _IA()


class _IC(_IB):
    pass


class _InheritanceFederated(Reactor):
    def __init__(self) -> None:
        self.c = _IC()


@lf_test("federated/InheritanceFederated.lf", federated=True, suite="C")
def test_inheritance_federated() -> None:
    """A federate whose class extends one that contains a reactor (LF issue 1733)."""
    main = _InheritanceFederated()
    run_local(main, timeout=ms(1))
    assert main.c.a.hello
    progs = run_federated(_InheritanceFederated, timeout=ms(1))
    assert progs["c"].c.a.hello  # type: ignore[attr-defined]


class _HelloWorld2(Reactor):
    """HelloWorld.lf's HelloWorld2."""

    def __init__(self) -> None:
        self.success = False

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        self.success = True

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.success, "ERROR: startup reaction not executed."


class _Print(_HelloWorld2):
    def __init__(self) -> None:
        super().__init__()
        self.foo = False

    @reaction(triggers=[STARTUP])
    def print_foo(self) -> None:
        assert self.success, "the base class's startup reaction runs first"
        self.foo = True


class _InheritanceFederatedImport(Reactor):
    def __init__(self) -> None:
        self.print = _Print()


@lf_test("federated/InheritanceFederatedImport.lf", federated=True, suite="C")
def test_inheritance_federated_import() -> None:
    main = _InheritanceFederatedImport()
    run_local(main, timeout=ms(1))
    assert main.print.foo
    progs = run_federated(_InheritanceFederatedImport, timeout=ms(1))
    assert progs["print"].print.foo  # type: ignore[attr-defined]


# ------------------------------------------------------------ CommandLineDeadlineFederated.lf


class _CLSource(Reactor):
    out = Output(int)

    def __init__(self, execution_time: int = ms(100), sleep: Any = None) -> None:
        self.execution_time = execution_time
        self.sleep = sleep

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        self.sleep(self.execution_time)  # lf_sleep(self->execution_time)
        out.set(42)


class _CLPrint(Reactor):
    inp = Input(int)

    def __init__(self, deadline_time: int = ms(50), expect_violation: int = 1) -> None:
        self.deadline_time = deadline_time
        self.expect_violation = expect_violation
        self.violation_detected = 0
        self.checked = False

    @reaction(triggers=[inp], deadline="deadline_time")
    def got(self, inp: Any) -> None:
        pass  # "No deadline violation."

    @got.deadline_handler
    def late(self, inp: Any) -> None:
        self.violation_detected = 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.violation_detected == self.expect_violation, (
            f"Expected expect_violation={self.expect_violation} but got {self.violation_detected}.")
        self.checked = True


class _CommandLineDeadlineFederated(Reactor):
    def __init__(self, execution_time: int = ms(100), deadline_time: int = ms(50),
                 expect_violation: int = 1, sleep: Any = None) -> None:
        self.execution_time = execution_time
        self.deadline_time = deadline_time
        self.expect_violation = expect_violation
        self.s = _CLSource(execution_time=execution_time, sleep=sleep)
        self.p = _CLPrint(deadline_time=deadline_time, expect_violation=expect_violation)
        self.connect(self.s.out, self.p.inp)


@lf_test("federated/CommandLineDeadlineFederated.lf", federated=True, suite="C")
def test_command_line_deadline_federated() -> None:
    """The federated reactor's parameters reach a federate's deadline: with the defaults
    (100 ms of work upstream, a 50 ms deadline) the deadline is missed; with LF's test's
    command-line values (10 ms of work, 200 ms) it is not. In one process the work
    advances a virtual clock; federated it is real sleep."""

    def real_sleep(d: int) -> None:
        time.sleep(d / 1e9)

    for params in ({}, {"execution_time": ms(10), "deadline_time": ms(200), "expect_violation": 0}):
        clock = VirtualClock()
        main = _CommandLineDeadlineFederated(**params, sleep=clock.advance)
        run(main, timeout=0, keepalive=True, clock=clock)
        assert main.p.checked
        progs = run_federated(lambda p=params: _CommandLineDeadlineFederated(**p, sleep=real_sleep),  # type: ignore[misc]
                              timeout=0, fast=False)
        assert progs["p"].p.checked  # type: ignore[attr-defined]


# ----------------------------------------------------------------- DelayToPhysicalAction*.lf


def _external(action: Any) -> None:
    """The programs' thread: schedules the physical action with 0, 1, ..., 9, one every
    100 ms of real time."""
    for i in range(10):
        time.sleep(0.1)
        action.schedule(value=i)


class _DPR(Reactor):
    out = Output(int)
    a = PhysicalAction(int)

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        threading.Thread(target=_external, args=(self.a,), daemon=True).start()

    @reaction(triggers=[a], effects=[out])
    def fire(self, a: Any, out: Any) -> None:
        out.set(a.get())


class _DPWrapper(Reactor):
    out = Output(int)

    def __init__(self, delay: int = ms(10)) -> None:
        self.delay = delay
        self.r = _DPR()
        self.connect(self.r.out, self.out, after=delay)


class _DPPrintT(Reactor):
    inp = Input(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.got: list[int] = []
        self.tags: list[int] = []
        self.ticks = 0

    @reaction(triggers=[inp])
    def got_(self, inp: Any) -> None:
        self.got.append(inp.get())
        self.tags.append(self.elapsed())

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.ticks += 1


class _DelayToPhysicalAction(Reactor):
    def __init__(self) -> None:
        self.r = _DPWrapper(delay=ms(1))
        self.p = _DPPrintT()
        self.connect(self.r.out, self.p.inp)


def _check_physical_print(p: _DPPrintT) -> None:
    # the original only prints; the port checks the ten values arrive in order, at
    # increasing tags, and the timer ticked every 100 ms to the 2 s timeout
    assert p.got == list(range(10)), p.got
    assert all(a < b for a, b in zip(p.tags, p.tags[1:], strict=False)), p.tags
    assert p.ticks == 21


@lf_test("federated/DelayToPhysicalAction.lf", federated=True, suite="C")
def test_delay_to_physical_action() -> None:
    """A physical action upstream of an ``after`` delay inside a federate, then a link to
    another federate (real time: 2 s each way)."""
    main = _DelayToPhysicalAction()
    run(main, timeout=sec(2), clock=SystemClock())
    _check_physical_print(main.p)
    progs = run_federated(_DelayToPhysicalAction, timeout=sec(2), fast=False)
    _check_physical_print(progs["p"].p)  # type: ignore[attr-defined]


class _DPPR(Reactor):
    out = Output(int)
    a = PhysicalAction(int)
    b = LogicalAction(int, min_delay=ms(10))
    c = LogicalAction(int, min_delay=0)
    d = LogicalAction(int, min_delay=ms(5))

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        threading.Thread(target=_external, args=(self.a,), daemon=True).start()

    @reaction(triggers=[a], effects=[b, c, d])
    def fire(self, a: Any, b: Any, c: Any, d: Any) -> None:
        b.schedule(delay=0, value=a.get())
        c.schedule(delay=0, value=a.get())
        d.schedule(delay=0, value=a.get())

    @reaction(triggers=[b, c, d], effects=[out])
    def forward(self, b: Any, c: Any, d: Any, out: Any) -> None:
        if b.is_present:
            out.set(b.get())
        elif c.is_present:
            out.set(c.get())
        else:
            out.set(d.get())


class _DelayToPhysicalActionParallelPaths(Reactor):
    def __init__(self) -> None:
        self.r = _DPPR()
        self.p = _DPPrintT()
        self.connect(self.r.out, self.p.inp)


def _check_parallel(p: _DPPrintT) -> None:
    # each physical event reaches p three times: through c (next microstep), d (5 ms)
    # and b (10 ms)
    assert p.got == [i for i in range(10) for _ in range(3)], p.got
    assert all(a < b for a, b in zip(p.tags[::3], p.tags[3::3], strict=False))
    for k in range(10):
        t0 = p.tags[3 * k]
        assert p.tags[3 * k + 1: 3 * k + 3] == [t0 + ms(5), t0 + ms(10)], p.tags
    assert p.ticks == 21


@lf_test("federated/DelayToPhysicalActionParallelPaths.lf", federated=True, suite="C")
def test_delay_to_physical_action_parallel_paths() -> None:
    """A physical action reaching another federate along three paths of logical actions
    with different minimum delays (real time: 2 s each way)."""
    main = _DelayToPhysicalActionParallelPaths()
    run(main, timeout=sec(2), clock=SystemClock())
    _check_parallel(main.p)
    progs = run_federated(_DelayToPhysicalActionParallelPaths, timeout=sec(2), fast=False)
    _check_parallel(progs["p"].p)  # type: ignore[attr-defined]


class _Simple(Reactor):
    out = Output(int)
    a = LogicalAction()
    b = LogicalAction()

    @reaction(triggers=[a], effects=[b])
    def on_a(self, a: Any, b: Any) -> None:
        pass

    @reaction(triggers=[b], effects=[a, out])
    def on_b(self, b: Any, a: Any, out: Any) -> None:
        pass


class _Delay(Reactor):
    inp = Input(int, width="width")
    out = Output(int)

    def __init__(self, width: int = 1) -> None:
        self.width = width

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp: Any, out: Any) -> None:
        pass


class _Hard(Reactor):
    out2 = Output(int)
    d = PhysicalAction(min_delay="small_delay")
    e = PhysicalAction(min_delay="large_delay")
    f = PhysicalAction(min_delay="medium_delay")

    def __init__(self, small_delay: int = sec(1), medium_delay: int = sec(2), large_delay: int = sec(10)) -> None:
        self.small_delay = small_delay
        self.medium_delay = medium_delay
        self.large_delay = large_delay
        self.delay = _Delay(width=2)
        self.delay2 = _Delay(width=1)
        self.connect(self.delay.out, self.delay2.inp, after=sec(1))

    @reaction(triggers=[d, "delay2.out"], effects=["delay.inp"])
    def r1(self, d: Any, delay2: Any, delay: Any) -> None:
        pass

    @reaction(triggers=[e, "delay2.out"], effects=[d, out2])
    def r2(self, e: Any, delay2: Any, d: Any, out2: Any) -> None:
        pass

    @reaction(triggers=[f], effects=["delay.inp"])
    def r3(self, f: Any, delay: Any) -> None:
        pass


class _DelayToPhysicalActionWithLoops(Reactor):
    def __init__(self) -> None:
        self.simple = _Simple()
        self.hard = _Hard()


@lf_test("federated/DelayToPhysicalActionWithLoops.lf", federated=True, suite="C")
def test_delay_to_physical_action_with_loops() -> None:
    """Two federates, one with physical actions of several minimum delays inside loops
    through a contained bank-free multiport and an ``after`` link; nothing is ever
    scheduled: the federation assembles and runs to its 1 ms timeout."""
    summary = run_local(_DelayToPhysicalActionWithLoops(), timeout=ms(1))
    assert summary.stop_reason == "timeout", summary
    summaries: dict[str, Any] = {}
    run_federated(_DelayToPhysicalActionWithLoops, timeout=ms(1), summaries=summaries)
    assert set(summaries) == {"simple", "hard"}


# -- DisconnectedInput.lf -----------------------------------------------------------------------


class _DisconnectedA(Reactor):
    inp = Input(int)  # connected, read by no reaction
    out = Output(int)
    t = Timer(0, ms(25))

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(42)


class _DisconnectedB(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.got: list[tuple[int, int]] = []

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        self.got.append((self.elapsed(), inp.get()))  # LF: lf_print("B received %d", ...)
        out.set(inp.get())


class _DisconnectedInput(Reactor):
    def __init__(self) -> None:
        self.a = _DisconnectedA()
        self.b = _DisconnectedB()
        self.connect(self.a.out, self.b.inp)
        self.connect(self.b.out, self.a.inp)


@lf_test("federated/DisconnectedInput.lf", federated=True, suite="C")
def test_disconnected_input() -> None:
    """A zero-delay cycle through an input no reaction reads: no spurious dependency. Its
    values may reach that federate after the tag (nothing there waits for them, or reads
    them): counted, not a coordination error."""
    want = [(ms(25) * i, 42) for i in range(5)]
    main = _DisconnectedInput()
    run_local(main, timeout=ms(100), fast=True)
    assert main.b.got == want
    progs = run_federated(_DisconnectedInput, timeout=ms(100))
    assert progs["b"].b.got == want  # type: ignore[attr-defined]


class _SourceReader(Reactor):
    """As _DisconnectedA, but a reaction reads the returning input as a source: that value
    must be there (and current) when it runs, so the federate waits for it within the tag."""

    inp = Input(int)
    out = Output(int)
    t = Timer(0, ms(25))

    def __init__(self) -> None:
        self.seen: list[int | None] = []

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(42)

    @reaction(triggers=[t], sources=[inp])
    def look(self, inp: Any) -> None:
        self.seen.append(inp.get())


class _SourceLoop(Reactor):
    def __init__(self) -> None:
        self.a = _SourceReader()
        self.b = _DisconnectedB()
        self.connect(self.a.out, self.b.inp)
        self.connect(self.b.out, self.a.inp)


def test_an_input_read_as_a_source_on_a_zero_delay_cycle_is_waited_for() -> None:
    main = _SourceLoop()
    run_local(main, timeout=ms(100), fast=True)
    assert main.a.seen == [42] * 5
    progs = run_federated(_SourceLoop, timeout=ms(100))
    assert progs["a"].a.seen == [42] * 5  # type: ignore[attr-defined]
