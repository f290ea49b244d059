"""Ports of LF's federated programs with banks and multiports: a bank's members are
federates each on their own; multiports and banks connect across federates channel by
channel (``federated/BankIndex*.lf``, ``DistributedBank*.lf``, ``DistributedMultiport*.lf``,
``Parallel*.lf``, ``BroadcastFeedback*.lf``)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, bank, ms, reaction, sec
from tests.conformance.harness import lf_test, run, run_federated, run_local
from tests.conformance.test_fed_count import TestCount, count, count_class

pytestmark = pytest.mark.timeout(60)

# -- BankIndexFed.lf -------------------------------------------------------------------------


class _FirstReactor(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(self.bank_index)


class _SecondReactor(Reactor):
    inp = Input(int, width=4)

    def __init__(self) -> None:
        self.checked = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for i, port in enumerate(inp):
            assert port.is_present, f"in[{i}] is absent"
            assert port.get() == i, f"in[{i}]: {port.get()}"
            self.checked += 1
        self.request_stop()


class _BankIndexFed(Reactor):
    def __init__(self) -> None:
        self.a = bank(_FirstReactor, 4)
        self.b = _SecondReactor()
        self.connect(self.a.out, self.b.inp)


@lf_test("federated/BankIndexFed.lf", federated=True)
def test_bank_index_fed() -> None:
    """Four federates of one bank send their bank index; the fifth sees each on its channel."""
    main = _BankIndexFed()
    run_local(main)
    assert main.b.checked == 4
    progs = run_federated(_BankIndexFed)
    assert progs["b"].b.checked == 4  # type: ignore[attr-defined]


# -- BankIndexOverride.lf --------------------------------------------------------------------


class _SingleReactor(Reactor):
    def __init__(self, bank_index: int = 0) -> None:
        self.bank_index = bank_index  # LF's bank_index parameter, given a value by the container
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert self.bank_index == 2, f"bank_index: {self.bank_index}"
        self.checked = True


class _BankIndexOverride(Reactor):
    def __init__(self) -> None:
        self.a = _SingleReactor(bank_index=2)


@lf_test("federated/BankIndexOverride.lf", federated=True)
def test_bank_index_override() -> None:
    """A reactor outside any bank whose ``bank_index`` parameter its container sets to 2. LF
    writes it as a ``main reactor`` (one process); it runs here both ways, federated as a
    federation of that one reactor (a main reactor: no keepalive, it ends by starvation)."""
    main = _BankIndexOverride()
    run(main)
    assert main.a.checked
    progs = run_federated(_BankIndexOverride)
    assert progs["a"].a.checked  # type: ignore[attr-defined]


# -- DistributedBank.lf ----------------------------------------------------------------------


class _Node(Reactor):
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.count = 0
        self.checked = False

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.count += 1  # "Hello world {count}."

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count != 0, "Timer reactions did not execute."
        self.checked = True


class _DistributedBank(Reactor):
    def __init__(self) -> None:
        self.n = bank(_Node, 2)


@lf_test("federated/DistributedBank.lf", federated=True)
def test_distributed_bank() -> None:
    """A bank of two federates, each on its timer: 11 ticks (0 to 1 s) in each."""
    main = _DistributedBank()
    run_local(main, timeout=sec(1))
    assert [(n.count, n.checked) for n in main.n] == [(11, True), (11, True)]
    progs = run_federated(_DistributedBank, timeout=sec(1))
    assert [(progs[f"n[{i}]"].n[i].count, progs[f"n[{i}]"].n[i].checked) for i in range(2)] == [(11, True)] * 2  # type: ignore[attr-defined]


# -- DistributedBankToMultiport.lf -------------------------------------------------------------


class _BankDestination(Reactor):
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.count = 1
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for ch in inp:
            assert ch.get() == self.count, f"Received {ch.get()}. Expected {self.count}."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count != 0, "No data received."
        self.checked = True


class _BankToMultiport(Reactor):
    def __init__(self) -> None:
        self.s = bank(count_class(), 2)
        self.d = _BankDestination()
        self.connect(self.s.out, self.d.inp)


@lf_test("federated/DistributedBankToMultiport.lf", federated=True)
def test_distributed_bank_to_multiport() -> None:
    """Two Count federates (a bank) into a width-2 multiport: 1..4 on both channels by 3 s."""
    main = _BankToMultiport()
    run_local(main, timeout=sec(3))
    assert main.d.count == 5 and main.d.checked
    progs = run_federated(_BankToMultiport, timeout=sec(3))
    d = progs["d"].d  # type: ignore[attr-defined]
    assert d.count == 5 and d.checked


# -- DistributedMultiport.lf (and its containerized variant) ------------------------------------


class _MultiportSource(Reactor):
    out = Output(int, width=4)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for ch in out:
            ch.set(self.count)
            self.count += 1


class _MultiportDestination(Reactor):
    inp = Input(int, width=4)

    def __init__(self) -> None:
        self.count = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for ch in inp:
            if ch.is_present:
                assert ch.get() == self.count, f"Received {ch.get()}. Expected {self.count}."
                self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count != 0, "No data received."
        self.checked = True


class _DistributedMultiport(Reactor):
    def __init__(self) -> None:
        self.s = _MultiportSource()
        self.d = _MultiportDestination()
        self.connect(self.s.out, self.d.inp)


def _run_multiport() -> None:
    main = _DistributedMultiport()
    run_local(main, timeout=sec(1))
    assert main.d.count == 44 and main.d.checked  # 11 ticks, 4 channels
    progs = run_federated(_DistributedMultiport, timeout=sec(1))
    d = progs["d"].d  # type: ignore[attr-defined]
    assert d.count == 44 and d.checked


@lf_test("federated/DistributedMultiport.lf", federated=True)
def test_distributed_multiport() -> None:
    _run_multiport()


@lf_test("docker/federated/DistributedMultiportContainerized.lf", federated=True)
def test_distributed_multiport_containerized() -> None:
    """DistributedMultiport in Docker containers: the program is DistributedMultiport's."""
    _run_multiport()


# -- DistributedMultiportToBank.lf ----------------------------------------------------------------


class _ToBankSource(Reactor):
    out = Output(int, width=2)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for ch in out:
            ch.set(self.count)
        self.count += 1


class _ToBankDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.count == inp.get(), f"Received {inp.get()}. Expected {self.count}."
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count != 0, "No data received."
        self.checked = True


class _MultiportToBank(Reactor):
    def __init__(self) -> None:
        self.s = _ToBankSource()
        self.d = bank(_ToBankDestination, 2)
        self.connect(self.s.out, self.d.inp)


@lf_test("federated/DistributedMultiportToBank.lf", federated=True)
def test_distributed_multiport_to_bank() -> None:
    main = _MultiportToBank()
    run_local(main, timeout=sec(1))
    assert [(d.count, d.checked) for d in main.d] == [(11, True)] * 2
    progs = run_federated(_MultiportToBank, timeout=sec(1))
    got = [(progs[f"d[{i}]"].d[i].count, progs[f"d[{i}]"].d[i].checked) for i in range(2)]  # type: ignore[attr-defined]
    assert got == [(11, True)] * 2


# -- DistributedMultiportToken.lf ------------------------------------------------------------------


class _TokenSource(Reactor):
    out = Output(str, width=4)
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for ch in out:
            self.count += 1
            ch.set(f"Hello {self.count}")


class _TokenDestination(Reactor):
    inp = Input(str, width=4)

    def __init__(self) -> None:
        self.received: list[tuple[int, str]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for i, ch in enumerate(inp):
            if ch.is_present:
                self.received.append((i, ch.get()))  # "Received {value}."


class _MultiportToken(Reactor):
    def __init__(self) -> None:
        self.s = _TokenSource()
        self.d = _TokenDestination()
        self.connect(self.s.out, self.d.inp)


@lf_test("federated/DistributedMultiportToken.lf", federated=True)
def test_distributed_multiport_token() -> None:
    """Strings (tokens in LF's C runtime) over a multiport between federates. LF's program
    only prints them; the test checks that all 24 arrived, each on its channel."""
    expected = [(i % 4, f"Hello {i + 1}") for i in range(24)]  # 6 ticks (0 to 1 s), 4 channels
    main = _MultiportToken()
    run_local(main, timeout=sec(1))
    assert main.d.received == expected
    progs = run_federated(_MultiportToken, timeout=sec(1))
    assert progs["d"].d.received == expected  # type: ignore[attr-defined]


# -- ParallelDestinations.lf, ParallelSources.lf, ParallelSourcesMultiport.lf -----------------------


class _ParallelSource(Reactor):
    out = Output(int, width=2)

    def __init__(self) -> None:
        self.c1 = count()
        self.c2 = count()
        self.connect([self.c1.out, self.c2.out], self.out)


class _ParallelDestinations(Reactor):
    def __init__(self) -> None:
        self.s = _ParallelSource()
        self.t1 = TestCount(num_inputs=3)
        self.t2 = TestCount(num_inputs=3)
        self.connect(self.s.out, [self.t1.inp, self.t2.inp])


def _counted(*tcs: Any) -> list[tuple[int, bool]]:
    return [(t.inputs_received, t.shutdown_checked) for t in tcs]


@lf_test("federated/ParallelDestinations.lf", federated=True)
def test_parallel_destinations() -> None:
    """A multiport output of one federate to two federates (a channel each)."""
    main = _ParallelDestinations()
    run_local(main, timeout=sec(2))
    assert _counted(main.t1, main.t2) == [(3, True)] * 2
    progs = run_federated(_ParallelDestinations, timeout=sec(2))
    assert _counted(progs["t1"].t1, progs["t2"].t2) == [(3, True)] * 2  # type: ignore[attr-defined]


class _ParallelDestination(Reactor):
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.t1 = TestCount(num_inputs=3)
        self.t2 = TestCount(num_inputs=3)
        self.connect(self.inp, [self.t1.inp, self.t2.inp])


class _ParallelSources(Reactor):
    def __init__(self) -> None:
        self.c1 = count()
        self.c2 = count()
        self.d = _ParallelDestination()
        self.connect([self.c1.out, self.c2.out], self.d.inp)


@lf_test("federated/ParallelSources.lf", federated=True)
def test_parallel_sources() -> None:
    """Two federates into one federate's multiport input (forwarded to two contained reactors)."""
    main = _ParallelSources()
    run_local(main, timeout=sec(2))
    assert _counted(main.d.t1, main.d.t2) == [(3, True)] * 2
    progs = run_federated(_ParallelSources, timeout=sec(2))
    d = progs["d"].d  # type: ignore[attr-defined]
    assert _counted(d.t1, d.t2) == [(3, True)] * 2


class _Destination1(Reactor):
    inp = Input(int, width=3)

    def __init__(self) -> None:
        self.t1 = TestCount(num_inputs=3)
        self.t2 = TestCount(num_inputs=3)
        self.t3 = TestCount(num_inputs=3)
        self.connect(self.inp, [self.t1.inp, self.t2.inp, self.t3.inp])


class _ParallelSourcesMultiport(Reactor):
    def __init__(self) -> None:
        self.s1 = _ParallelSource()
        self.s2 = _ParallelSource()
        self.d1 = _Destination1()
        self.t4 = TestCount(num_inputs=3)
        self.connect([self.s1.out, self.s2.out], [self.d1.inp, self.t4.inp])


@lf_test("federated/ParallelSourcesMultiport.lf", federated=True)
def test_parallel_sources_multiport() -> None:
    """Two federates' multiports (4 channels) into one federate's width-3 multiport and a
    fourth federate's input."""
    main = _ParallelSourcesMultiport()
    run_local(main, timeout=sec(2))
    assert _counted(main.d1.t1, main.d1.t2, main.d1.t3, main.t4) == [(3, True)] * 4
    progs = run_federated(_ParallelSourcesMultiport, timeout=sec(2))
    d1, t4 = progs["d1"].d1, progs["t4"].t4  # type: ignore[attr-defined]
    assert _counted(d1.t1, d1.t2, d1.t3, t4) == [(3, True)] * 4


# -- BroadcastFeedback.lf, BroadcastFeedbackWithHierarchy.lf --------------------------------------


class _SenderAndReceiver(Reactor):
    out = Output(int)
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.received = False
        self.checked = False

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        if inp[0].is_present and inp[1].is_present and inp[0].get() == 42 and inp[1].get() == 42:
            self.received = True  # "SUCCESS"

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.received, "Failed to receive broadcast"
        self.checked = True


class _BroadcastFeedback(Reactor):
    def __init__(self) -> None:
        self.s = bank(_SenderAndReceiver, 2)
        self.connect(self.s.out, self.s.inp, broadcast=True)  # (s.out)+ -> s.inp


@lf_test("federated/BroadcastFeedback.lf", federated=True)
def test_broadcast_feedback() -> None:
    """Each member of a bank of two federates broadcasts to both (itself included) at the
    same tag: a zero-delay cycle between federates, acyclic at the level of reactions."""
    main = _BroadcastFeedback()
    run_local(main, timeout=sec(1))
    assert [s.checked for s in main.s] == [True, True]
    progs = run_federated(_BroadcastFeedback, timeout=sec(1))
    assert [progs[f"s[{i}]"].s[i].checked for i in range(2)] == [True, True]  # type: ignore[attr-defined]


class _Receiver(Reactor):
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.received = False
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        if inp[0].is_present and inp[1].is_present and inp[0].get() == 42 and inp[1].get() == 42:
            self.received = True

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.received, "Failed to receive broadcast"
        self.checked = True


class _SenderAndReceiverH(Reactor):
    out = Output(int)
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.received = False
        self.r = _Receiver()
        self.connect(self.inp, self.r.inp)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(42)


class _BroadcastFeedbackWithHierarchy(Reactor):
    def __init__(self) -> None:
        self.s = bank(_SenderAndReceiverH, 2)
        self.connect(self.s.out, self.s.inp, broadcast=True)


@lf_test("federated/BroadcastFeedbackWithHierarchy.lf", federated=True)
def test_broadcast_feedback_with_hierarchy() -> None:
    """BroadcastFeedback with the receiving reaction in a contained reactor."""
    main = _BroadcastFeedbackWithHierarchy()
    run_local(main, timeout=sec(1))
    assert [s.r.checked for s in main.s] == [True, True]
    progs = run_federated(_BroadcastFeedbackWithHierarchy, timeout=sec(1))
    assert [progs[f"s[{i}]"].s[i].r.checked for i in range(2)] == [True, True]  # type: ignore[attr-defined]
