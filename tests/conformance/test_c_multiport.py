"""Ports of LF's C-target ``multiport/`` programs that the Python suite has no counterpart
for: ganged connection lists through banks, a bank broadcasting to itself, banks that
multicast through their container, interleaved (channel-major) connections, sparse
multiports, two reactions writing one multiport at one tag, and reactions reading and
writing contained banks.

LF's ``interleaved(b.p)`` has no reactorfed operator: a port lists the channels in that
order (channel-major over the bank's members) for ``connect``.
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
    bank,
    ms,
    reaction,
    sec,
)
from tests.conformance.c_lib import Count, TestCount
from tests.conformance.harness import lf_test, run

# ----------------------------------------------------------------- BankGangedConnections.lf


class _Through(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def through(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class _GangedBank(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.t = _Through()
        self.connect([self.inp, self.t.out], [self.t.inp, self.out])  # in, t.out -> t.in, out


class _BankGangedConnections(Reactor):
    def __init__(self) -> None:
        self.b = bank(_GangedBank, 2)
        self.s = Count()
        self.t = TestCount()
        self.connect([self.s.out, self.b.out], [self.b.inp, self.t.inp])  # s.out, b.out -> b.in, t.in


@lf_test("multiport/BankGangedConnections.lf", suite="C")
def test_bank_ganged_connections() -> None:
    """Count -> b[0] -> b[1] -> TestCount, through one ganged connection list."""
    main = _BankGangedConnections()
    run(main, timeout=0)
    assert main.t.inputs_received == 1


# ------------------------------------------------------------------------ BankMulticast.lf


class _Foo(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.c = Count()
        self.connect(self.c.out, self.out)
        self.d = TestCount(num_inputs=4)
        self.connect(self.inp, self.d.inp)


class _Bar(Reactor):
    out = Output(int, width=4)

    def __init__(self) -> None:
        self.foo = bank(_Foo, 4)
        self.connect(self.foo.out, self.foo.inp)
        self.connect(self.foo.out, self.out)


class _BankMulticast(Reactor):
    def __init__(self) -> None:
        self.bar = _Bar()
        self.d = bank(TestCount, 4, num_inputs=4)
        self.connect(self.bar.out, self.d.inp)


@lf_test("multiport/BankMulticast.lf", suite="C")
def test_bank_multicast() -> None:
    """A contained bank's outputs go to a local connection and, through the container's
    output multiport, to another bank."""
    main = _BankMulticast()
    run(main, timeout=sec(3), fast=True)
    assert [d.inputs_received for d in main.d] == [4] * 4
    assert [f.d.inputs_received for f in main.bar.foo] == [4] * 4


# -------------------------------------------------------------- BankMultiportToReaction.lf


class _DoubleCount(Reactor):
    out = Output(int, width=2)

    def __init__(self) -> None:
        self.c1 = Count()
        self.c2 = Count()
        self.connect([self.c1.out, self.c2.out], self.out)


class _BankMultiportToReaction(Reactor):
    def __init__(self) -> None:
        self.count = 1
        self.received = False
        self.seen = 0
        self.s = bank(_DoubleCount, 2)

    @reaction(triggers=["s.out"])
    def got(self, s: Any) -> None:
        # s.out: the bank's output channels, member by member (LF: s[i].out[j])
        for i in range(len(self.s)):
            for j in range(2):
                p = s.out[i * 2 + j]
                if p.is_present:
                    assert p.get() == self.count, f"Received {p.get()}. Expected {self.count}."
                    self.received = True
                    self.seen += 1
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, "No inputs present."


@lf_test("multiport/BankMultiportToReaction.lf", suite="C")
def test_bank_multiport_to_reaction() -> None:
    main = _BankMultiportToReaction()
    run(main, timeout=sec(5), fast=True)
    assert main.count == 7 and main.seen == 6 * 4


# --------------------------------------------------------------------- BankSelfBroadcast.lf


class _SelfBroadcastA(Reactor):
    inp = Input(int, width=4)
    out = Output(int)

    def __init__(self) -> None:
        self.received = False

    @reaction(triggers=[STARTUP], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.bank_index)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for i, p in enumerate(inp):
            assert p.is_present, f"Reactor {self.bank_index} channel {i} is absent. Expected {i}."
            assert p.get() == i, f"Reactor {self.bank_index} received {p.get()} on channel {i}. Expected {i}."
            self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, "No inputs received."


class _BankSelfBroadcast(Reactor):
    def __init__(self) -> None:
        self.a = bank(_SelfBroadcastA, 4)
        self.connect(self.a.out, self.a.inp, broadcast=True)  # (a.out)+ -> a.in


@lf_test("multiport/BankSelfBroadcast.lf", suite="C")
def test_bank_self_broadcast() -> None:
    """Each member of a bank receives, on channel j of its multiport, member j's output."""
    main = _BankSelfBroadcast()
    run(main)
    assert all(a.received for a in main.a)


# ------------------------------------------------------------------------- BankToReaction.lf


class _BankToReaction(Reactor):
    def __init__(self) -> None:
        self.count = 1
        self.s = bank(Count, 2)

    @reaction(triggers=["s.out"])
    def got(self, s: Any) -> None:
        for i in range(len(self.s)):
            assert s.out[i].get() == self.count, f"Received {s.out[i].get()}. Expected {self.count}."
        self.count += 1


@lf_test("multiport/BankToReaction.lf", suite="C")
def test_bank_to_reaction() -> None:
    main = _BankToReaction()
    run(main, timeout=sec(5), fast=True)
    assert main.count == 7


# ----------------------------------------------------------------- DualBanks(Multiport).lf


class _DualBase(Reactor):
    def __init__(self) -> None:
        self.received = False

    @reaction(triggers=[SHUTDOWN])
    def base_done(self) -> None:
        assert self.received, f"Bank member {self.bank_index} received no input."


class _HelloBase(_DualBase):
    I = Input(bool)  # noqa: E741 (LF's name)


class _Hello(_HelloBase):
    @reaction(triggers=[_HelloBase.I])
    def hello(self) -> None:
        self.received = True


class _World(_HelloBase):
    @reaction(triggers=[_HelloBase.I])
    def world(self) -> None:
        self.received = True


class _DualBanks(Reactor):
    def __init__(self) -> None:
        self.hellos = bank(_Hello, 3)
        self.worlds = bank(_World, 3)

    @reaction(triggers=[STARTUP], effects=["hellos.I", "worlds.I"])
    def start(self, hellos: Any, worlds: Any) -> None:
        for i in range(len(self.hellos)):
            hellos.I[i].set(True)
        for i in range(len(self.worlds)):
            worlds.I[i].set(True)


@lf_test("multiport/DualBanks.lf", suite="C")
def test_dual_banks() -> None:
    """One reaction writes the inputs of two banks (of reactors that extend one base)."""
    main = _DualBanks()
    run(main)
    assert all(m.received for m in [*main.hellos, *main.worlds])


class _MultiBase(_DualBase):
    I = Input(bool, width=2)  # noqa: E741


class _MultiHello(_MultiBase):
    @reaction(triggers=[_MultiBase.I])
    def hello(self, I: Any) -> None:  # noqa: E741
        if I[0].is_present and I[1].is_present:
            self.received = True


class _MultiWorld(_MultiBase):
    @reaction(triggers=[_MultiBase.I])
    def world(self, I: Any) -> None:  # noqa: E741
        if I[0].is_present and I[1].is_present:
            self.received = True


class _DualBanksMultiport(Reactor):
    def __init__(self) -> None:
        self.hellos = bank(_MultiHello, 3)
        self.worlds = bank(_MultiWorld, 3)

    @reaction(triggers=[STARTUP], effects=["hellos.I", "worlds.I"])
    def start(self, hellos: Any, worlds: Any) -> None:
        for i in range(len(self.hellos)):  # LF: hellos[i].I[j]
            hellos.I[i * 2].set(True)
            hellos.I[i * 2 + 1].set(True)
        for i in range(len(self.worlds)):
            worlds.I[i * 2].set(True)
            worlds.I[i * 2 + 1].set(True)


@lf_test("multiport/DualBanksMultiport.lf", suite="C")
def test_dual_banks_multiport() -> None:
    main = _DualBanksMultiport()
    run(main)
    assert all(m.received for m in [*main.hellos, *main.worlds])


# ------------------------------------------------------------------------- FullyConnected.lf


class _Node(Reactor):
    inp = Input(int, width="num_nodes")
    out = Output(int)

    def __init__(self, num_nodes: int = 4) -> None:
        self.num_nodes = num_nodes
        self.received = False
        self.got: list[int] = []

    @reaction(triggers=[STARTUP], effects=[out])
    def hello(self, out: Any) -> None:
        out.set(self.bank_index)  # broadcast my ID to everyone

    @reaction(triggers=[inp])
    def got_(self, inp: Any) -> None:
        count = 0
        for p in inp:
            if p.is_present:
                self.received = True
                count += 1
                self.got.append(p.get())
        assert count == self.num_nodes, "Received fewer messages than expected!"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, "Received no input!"


class _FullyConnected(Reactor):
    def __init__(self, num_nodes: int = 4) -> None:
        self.num_nodes = num_nodes
        self.nodes = bank(_Node, num_nodes, num_nodes=num_nodes)
        self.connect(self.nodes.out, self.nodes.inp, broadcast=True)  # (nodes.out)+ -> nodes.in


@lf_test("multiport/FullyConnected.lf", suite="C")
def test_fully_connected() -> None:
    main = _FullyConnected()
    run(main)
    assert [n.got for n in main.nodes] == [[0, 1, 2, 3]] * 4


class _AddrNode(Reactor):
    """FullyConnectedAddressable.lf's Node: sends its index to the next node only."""

    inp = Input(int, width="num_nodes")
    out = Output(int, width="num_nodes")

    def __init__(self, num_nodes: int = 4) -> None:
        self.num_nodes = num_nodes
        self.received = 0
        self.triggered = False
        self.at: list[int] = []

    @reaction(triggers=[STARTUP], effects=[out])
    def send(self, out: Any) -> None:
        assert self.bank_index is not None
        out[(self.bank_index + 1) % self.num_nodes].set(self.bank_index)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.bank_index is not None
        self.triggered = True
        self.at.append(self.elapsed())
        count = 0
        for p in inp:
            if p.is_present:
                count += 1
                self.received = p.get()
        expected = self.num_nodes - 1 if self.bank_index == 0 else self.bank_index - 1
        assert count == 1, f"Received {count} messages, but expecting only one!"
        assert self.received == expected, f"Received {self.received}, but expected {expected}!"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.triggered, "Received no input!"


def _interleaved(b: Any, port: str, width: int) -> list[Any]:
    """LF's ``interleaved(b.port)``: channel-major over the members of bank ``b``."""
    return [getattr(m, port)[c] for c in range(width) for m in b]


class _FullyConnectedAddressable(Reactor):
    def __init__(self, num_nodes: int = 4, after1: int | None = None, after2: int | None = None) -> None:
        self.num_nodes = num_nodes
        self.nodes1 = bank(_AddrNode, num_nodes, num_nodes=num_nodes)
        # nodes1.out -> interleaved(nodes1.in)
        self.connect(self.nodes1.out, _interleaved(self.nodes1, "inp", num_nodes), after=after1)
        self.nodes2 = bank(_AddrNode, num_nodes, num_nodes=num_nodes)
        # interleaved(nodes2.out) -> nodes2.in
        self.connect(_interleaved(self.nodes2, "out", num_nodes), self.nodes2.inp, after=after2)


@lf_test("multiport/FullyConnectedAddressable.lf", suite="C")
def test_fully_connected_addressable() -> None:
    """Node i's out[j] reaches node j's in[i], by interleaving either side."""
    main = _FullyConnectedAddressable()
    run(main)
    assert all(n.at == [0] for n in [*main.nodes1, *main.nodes2])


@lf_test("multiport/FullyConnectedAddressableAfter.lf", suite="C")
def test_fully_connected_addressable_after() -> None:
    main = _FullyConnectedAddressable(after1=ms(200), after2=ms(400))
    run(main)
    assert [n.at for n in main.nodes1] == [[ms(200)]] * 4
    assert [n.at for n in main.nodes2] == [[ms(400)]] * 4


# ------------------------------------------------------------------- InterleavedHierarchy.lf


class _IHA(Reactor):
    out = Output(int, width=2)
    t = Timer(0, ms(10))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for i in range(2):
            out[i].set(self.count)
            self.count += 1


class _IHB(Reactor):
    inp = Input(int, width=3)

    def __init__(self) -> None:
        self.log: list[list[int | None]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.log.append([p.get() for p in inp])


class _InterleavedHierarchy(Reactor):
    def __init__(self) -> None:
        self.a = bank(_IHA, 3)
        self.b = bank(_IHB, 2)
        self.connect(self.a.out, _interleaved(self.b, "inp", 3))  # a.out -> interleaved(b.in)


@lf_test("multiport/InterleavedHierarchy.lf", suite="C")
def test_interleaved_hierarchy() -> None:
    """The original only prints; the port checks what it prints: a[i].out[j] (each member
    counting 0, 1 then 2, 3, ...) reaches b[j].in[i]."""
    main = _InterleavedHierarchy()
    run(main, timeout=ms(20))
    assert main.b[0].log == [[0, 0, 0], [2, 2, 2], [4, 4, 4]]
    assert main.b[1].log == [[1, 1, 1], [3, 3, 3], [5, 5, 5]]


# ------------------------------------------------------------------- MultiportToBankDouble.lf


class _DoubleSource(Reactor):
    out = Output(int, width=3)

    @reaction(triggers=[STARTUP], effects=[out])
    def first(self, out: Any) -> None:
        for i, p in enumerate(out):
            p.set(i)

    @reaction(triggers=[STARTUP], effects=[out])
    def second(self, out: Any) -> None:
        for i, p in enumerate(out):
            p.set(i * 2)


class _DoubleDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.bank_index is not None
        assert inp.get() == self.bank_index * 2, f"Received {inp.get()}. Expected {self.bank_index * 2}."
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received, f"Destination {self.bank_index} received no input!"


class _MultiportToBankDouble(Reactor):
    def __init__(self) -> None:
        self.a = _DoubleSource()
        self.b = bank(_DoubleDestination, 3)
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToBankDouble.lf", suite="C")
def test_multiport_to_bank_double() -> None:
    """Two reactions write one multiport at one tag: the later write is what is read."""
    main = _MultiportToBankDouble()
    run(main, timeout=sec(2), fast=True)
    assert all(d.received for d in main.b)


# ---------------------------------------------------------------- ReactionToContainedBank*.lf


class _ReactionToContainedBank(Reactor):
    t = Timer(0, ms(100))

    def __init__(self, width: int = 2) -> None:
        self.width = width
        self.count = 1
        self.test = bank(TestCount, width, num_inputs=11)

    @reaction(triggers=[t], effects=["test.inp"])
    def send(self, test: Any) -> None:
        for i in range(self.width):
            test.inp[i].set(self.count)
        self.count += 1


@lf_test("multiport/ReactionToContainedBank.lf", suite="C")
def test_reaction_to_contained_bank() -> None:
    main = _ReactionToContainedBank()
    run(main, timeout=sec(1), fast=True)
    assert [t.inputs_received for t in main.test] == [11, 11]


class _ReactionToContainedBank2(Reactor):
    def __init__(self, width: int = 2) -> None:
        self.width = width
        self.a = _ReactionToContainedBank(width=width)
        self.b = _ReactionToContainedBank(width=4)


@lf_test("multiport/ReactionToContainedBank2.lf", suite="C")
def test_reaction_to_contained_bank2() -> None:
    """The same, twice, at two widths, one level down."""
    main = _ReactionToContainedBank2()
    run(main, timeout=sec(1), fast=True)
    assert [t.inputs_received for t in main.a.test] == [11] * 2
    assert [t.inputs_received for t in main.b.test] == [11] * 4


# ------------------------------------------------------------------------ Sparse(Fallback).lf


class _SparseSource(Reactor):
    t = Timer(0, ms(1))
    out = Output(int, width="width")

    def __init__(self, width: int = 20, next_first: bool = True) -> None:
        self.width = width
        self.next_first = next_first
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        next_count = self.count + 1
        if next_count >= self.width:
            next_count = 0
        if self.next_first:  # Sparse.lf writes the next channel first, SparseFallback.lf last
            out[next_count].set(next_count)
            out[self.count].set(self.count)
        else:
            out[self.count].set(self.count)
            out[next_count].set(next_count)
        self.count = next_count


class _SparseSink(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 20) -> None:
        self.width = width
        self.log: list[list[int]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        # LF's lf_multiport_iterator: the present channels, in order
        previous = -1
        seen = []
        for channel, value in inp.present():
            assert value == channel, f"Received {value} on channel {channel}. Expected {channel}"
            assert channel > previous, "Input channels not read in order."
            previous = channel
            seen.append(channel)
        self.log.append(seen)


class _Sparse(Reactor):
    def __init__(self, width: int = 20, next_first: bool = True) -> None:
        self.width = width
        self.s = _SparseSource(width=width, next_first=next_first)
        self.d = _SparseSink(width=width)
        self.connect(self.s.out, self.d.inp)


@lf_test("multiport/Sparse.lf", suite="C")
def test_sparse() -> None:
    """Two of twenty channels present at a time: the present ones, in channel order."""
    main = _Sparse(20, next_first=True)
    run(main, timeout=ms(20))
    assert main.d.log == [sorted({k % 20, (k + 1) % 20}) for k in range(21)]


@lf_test("multiport/SparseFallback.lf", suite="C")
def test_sparse_fallback() -> None:
    """Two of ten channels (dense enough for reactor-c to fall back to a scan)."""
    main = _Sparse(10, next_first=False)
    run(main, timeout=ms(20))
    assert main.d.log == [sorted({k % 10, (k + 1) % 10}) for k in range(21)]


# --------------------------------------------------------- TriggerDownstreamOnlyIfPresent.lf


class _TDSource(Reactor):
    a = Output(int)
    b = Output(int)
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[a, b])
    def send(self, a: Any, b: Any) -> None:
        self.count += 1
        if (self.count - 1) % 2 == 0:
            a.set(self.count)
        else:
            b.set(self.count)


class _TDDestination(Reactor):
    a = Input(int)
    b = Input(int)

    def __init__(self) -> None:
        self.runs: list[str] = []

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        assert a.is_present, "Reaction to a triggered even though all inputs are absent!"
        self.runs.append("a")

    @reaction(triggers=[b])
    def on_b(self, b: Any) -> None:
        assert b.is_present, "Reaction to b triggered even though all inputs are absent!"
        self.runs.append("b")


class _TriggerDownstreamOnlyIfPresent(Reactor):
    def __init__(self) -> None:
        self.s = bank(_TDSource, 2)
        self.d = bank(_TDDestination, 2)
        self.connect(self.s.a, self.d.a)
        self.connect(self.s.b, self.d.b)


@lf_test("multiport/TriggerDownstreamOnlyIfPresent.lf", suite="C")
def test_trigger_downstream_only_if_present() -> None:
    main = _TriggerDownstreamOnlyIfPresent()
    run(main, timeout=sec(1), fast=True)
    assert [d.runs for d in main.d] == [["a", "b", "a", "b", "a", "b"]] * 2


# ----------------------------------------------------- BankMultiportIsPresentSetup.lf and co


class _R1(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()
    out = Output(int, width=2)

    @reaction(triggers=[STARTUP], effects=[out])
    def first(self, out: Any) -> None:
        out[0].set(42)

    @reaction(triggers=[STARTUP], effects=[out])
    def second(self, out: Any) -> None:
        out[1].set(43)


class _R4(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()
    inp = Input(int, width=3)
    in2 = Input(int, width=3)
    in3 = Input(int, width=2)

    def __init__(self) -> None:
        self.log: list[tuple[str, list[int | None]]] = []

    @reaction(triggers=[inp])
    def on_in(self, inp: Any) -> None:
        self.log.append(("in", [p.get() for p in inp]))

    @reaction(triggers=[in2])
    def on_in2(self, in2: Any) -> None:
        self.log.append(("in2", [p.get() for p in in2]))

    @reaction(triggers=[in3])
    def on_in3(self, in3: Any) -> None:
        self.log.append(("in3", [p.get() for p in in3]))


class _R2(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r1 = bank(_R1, 3)
        self.r4 = bank(_R4, 2)
        self.connect(self.r1.out, self.r4.inp)

    @reaction(triggers=[STARTUP], effects=["r4.in2", "r4.in3"])
    def start(self, r4: Any) -> None:
        # LF: r4[k].in2[c] is r4.in2[k * 3 + c] here (member by member)
        r4.in2[0].set(44)
        r4.in2[3].set(45)
        r4.in2[1].set(46)
        r4.in2[4].set(47)
        r4.in2[2].set(48)
        r4.in2[5].set(49)
        r4.in3[0].set(50)
        r4.in3[2].set(51)
        r4.in3[1].set(52)
        r4.in3[3].set(53)


class _R3(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r2 = bank(_R2, 4)


class _BankMultiportIsPresentSetup(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r = bank(_R3, 2)


@lf_test("multiport/BankMultiportIsPresentSetup.lf", suite="C")
def test_bank_multiport_is_present_setup() -> None:
    """A smoke test of nested banks with multiports and actions; the original prints what
    each R4 receives, the port checks it."""
    main = _BankMultiportIsPresentSetup()
    run(main)
    for r3 in main.r:
        for r2 in r3.r2:
            assert r2.r4[0].log == [("in", [42, 43, 42]), ("in2", [44, 46, 48]), ("in3", [50, 52])]
            assert r2.r4[1].log == [("in", [43, 42, 43]), ("in2", [45, 47, 49]), ("in3", [51, 53])]


class _AR1(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []

    @reaction(triggers=[STARTUP], effects=[a1, a2])
    def start(self, a1: Any, a2: Any) -> None:
        a1.schedule(delay=ms(10))
        a2.schedule(delay=ms(10))

    @reaction(triggers=[a1])
    def on_a1(self) -> None:
        self.log.append(("a1", self.elapsed()))

    @reaction(triggers=[a2])
    def on_a2(self) -> None:
        self.log.append(("a2", self.elapsed()))


class _AR2(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r1 = bank(_AR1, 3)


class _AR3(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r2 = bank(_AR2, 4)


class _BankOfActionsIsPresentSetup(Reactor):
    a1 = LogicalAction()
    a2 = LogicalAction()

    def __init__(self) -> None:
        self.r = bank(_AR3, 2)


@lf_test("multiport/BankOfActionsIsPresentSetup.lf", suite="C")
def test_bank_of_actions_is_present_setup() -> None:
    main = _BankOfActionsIsPresentSetup()
    run(main)
    logs = [r1.log for r3 in main.r for r2 in r3.r2 for r1 in r2.r1]
    assert logs == [[("a1", ms(10)), ("a2", ms(10))]] * 24


# ------------------------------------------------------ MultiBank_UnconnectedOutput_Test.lf


class _Echo(Reactor):
    request = Input(int)
    response = Output(int)
    unconnected = Output(int)

    @reaction(triggers=[request], effects=[response])
    def echo(self, request: Any, response: Any) -> None:
        response.set(request.get())


class _TestingEcho(Reactor):
    req = Output(int)
    resp = Input(int)

    def __init__(self) -> None:
        self.seed = 0
        self.received: int | None = None

    @reaction(triggers=[STARTUP], effects=[req])
    def start(self, req: Any) -> None:
        assert self.bank_index is not None
        req.set(42 + self.bank_index)

    @reaction(triggers=[resp])
    def got(self, resp: Any) -> None:
        assert self.bank_index is not None
        self.received = resp.get()
        assert self.received == self.bank_index + 42, f"Wrong value. Should have been {self.bank_index + 42}."


class _MultiBankUnconnectedOutput(Reactor):
    def __init__(self) -> None:
        self.test = bank(_TestingEcho, 2)
        self.e = bank(_Echo, 2)
        self.connect(self.test.req, self.e.request)
        self.connect(self.e.response, self.test.resp)


@lf_test("multiport/MultiBank_UnconnectedOutput_Test.lf", suite="C")
def test_multibank_unconnected_output() -> None:
    """A bank with an output connected nowhere (reactor-c once crashed on it)."""
    main = _MultiBankUnconnectedOutput()
    run(main, workers=1)
    assert [t.received for t in main.test] == [42, 43]


class _Adder(Reactor):
    add_request = Input(int, width="n_ports")
    add_response = Output(int)
    unconnected = Output(int, width="n_ports")

    def __init__(self, n_ports: int = 1) -> None:
        self.n_ports = n_ports
        self.sum = 0

    @reaction(triggers=[add_request], effects=[add_response])
    def add(self, add_request: Any, add_response: Any) -> None:
        for p in add_request:
            if p.is_present:
                self.sum += p.get()
        add_response.set(self.sum)
        self.sum = 0


class _TestingAdder(Reactor):
    add_req = Output(int)
    result_req = Output(int)
    add_resp = Input(int)
    unconnected = Input(int)

    def __init__(self, bank_width: int = 1) -> None:
        self.bank_width = bank_width
        self.received: int | None = None

    @reaction(triggers=[STARTUP], effects=[add_req])
    def start(self, add_req: Any) -> None:
        add_req.set(42)

    @reaction(triggers=[add_resp])
    def got(self, add_resp: Any) -> None:
        self.received = add_resp.get()
        assert self.received == self.bank_width * 42, f"Wrong value. Should have been {self.bank_width * 42}."


class _MultiPortMultiBankUnconnectedOutput(Reactor):
    def __init__(self) -> None:
        self.test = bank(_TestingAdder, 2, bank_width=2)
        self.a = _Adder(n_ports=2)
        self.connect(self.test.add_req, self.a.add_request)
        self.connect(self.a.add_response, self.test.add_resp, broadcast=True)  # (a.add_response)+


@lf_test("multiport/MultiPort_MultiBankTest_UnconnectedOutput_Test.lf", suite="C")
def test_multiport_multibank_unconnected_output() -> None:
    main = _MultiPortMultiBankUnconnectedOutput()
    run(main, workers=1)
    assert [t.received for t in main.test] == [84, 84]
