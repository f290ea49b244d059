"""Ports of LF's federated counting programs (``federated/DistributedCount*.lf`` and
relatives), and the reactors of LF's ``lib/`` that they import, written here once for
every ``test_fed_*`` module (``Count``, ``InternalDelay``, ``TestCount``,
``TestCountMultiport``), with :func:`run_fed`, the federated run these modules share.

Every program runs twice: in one process (:func:`run_local`, virtual clock) and
federated (:func:`run_fed`: an RTI and one federate per top-level reactor, over real
sockets, in fast mode: LF's timeouts are logical). LF runs every federate with
``keepalive`` (its federated code generator forces it: no starvation analysis across a
federation), so the one-process runs keep alive too: they end at the timeout or at a
stop request, never by starvation. A program that LF runs under ``coordination:
decentralized`` runs decentralized here too (``run_federated(..., coordination=
"decentralized")``); where LF's semantics promise the same result under centralized
coordination (maxwait forever, LF's default: no message is ever tardy), it runs both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    maxwait,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(60)

# -- the two runs these modules share ----------------------------------------------------


# -- LF's lib/Count.lf, lib/InternalDelay.lf, lib/TestCount.lf, lib/TestCountMultiport.lf ---

_COUNT_CLASSES: dict[tuple[int, int], type[Reactor]] = {}


def count_class(offset: int = 0, period: int = sec(1)) -> type[Reactor]:
    """lib/Count.lf's ``Count(offset, period)``: on a timer (offset, period), outputs 1, 2,
    3, ... The timer's offset and period are parameters in LF; here each pair gets its
    own class (a declared timer takes constants), made once."""
    cls = _COUNT_CLASSES.get((offset, period))
    if cls is None:

        class _Count(Reactor):
            out = Output(int)
            t = Timer(offset, period)

            def __init__(self) -> None:
                self.count = 1

            @reaction(triggers=[t], effects=[out])
            def emit(self, out: Any) -> None:
                out.set(self.count)
                self.count += 1

        cls = _COUNT_CLASSES[(offset, period)] = _Count
    return cls


def count(offset: int = 0, period: int = sec(1)) -> Any:
    """``new Count(offset=..., period=...)``."""
    return count_class(offset, period)()


class InternalDelay(Reactor):
    """lib/InternalDelay.lf: delays its input by ``delay`` through a logical action."""

    inp = Input(int)
    out = Output(int)
    d = LogicalAction(int)

    def __init__(self, delay: int = ms(10)) -> None:
        self.delay = delay

    @reaction(triggers=[inp], effects=[d])
    def delay_it(self, inp: Any, d: Any) -> None:
        d.schedule(value=inp.get(), delay=self.delay)

    @reaction(triggers=[d], effects=[out])
    def emit(self, d: Any, out: Any) -> None:
        out.set(d.get())


class TestCount(Reactor):
    """lib/TestCount.lf: inputs start at ``start``, go up by ``stride``, and exactly
    ``num_inputs`` of them arrive."""

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
        assert inp.get() == self.count, f"Received {inp.get()}. Expected {self.count}."
        self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but got {self.inputs_received}."
        )
        self.shutdown_checked = True


class TestCountMultiport(Reactor):
    """lib/TestCountMultiport.lf: every channel present at each input, the values counting
    up across channels, ``num_inputs`` inputs in all."""

    __test__ = False
    inp = Input(int, width="width")

    def __init__(self, start: int = 1, stride: int = 1, num_inputs: int = 1, width: int = 2) -> None:
        self.stride = stride
        self.num_inputs = num_inputs
        self.width = width
        self.count = start
        self.inputs_received = 0
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for i, ch in enumerate(inp):
            assert ch.is_present, f"No input on channel {i}."
            assert ch.get() == self.count, f"Received {ch.get()} on channel {i}. Expected {self.count}."
            self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but only got {self.inputs_received}."
        )
        self.shutdown_checked = True


# -- DistributedCount.lf and the programs that import its Print ---------------------------


class _Print(Reactor):
    """DistributedCount.lf's Print: value c arrives at 200 ms + (c - 1) s; 5 of them."""

    inp = Input(int)

    def __init__(self) -> None:
        self.c = 1
        self.done = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        elapsed = self.elapsed()
        assert inp.get() == self.c, f"Expected to receive {self.c}."
        assert elapsed == ms(200) + sec(1) * (self.c - 1), f"Expected received time to be {ms(200) * self.c}."
        self.c += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.c == 6, "Expected to receive 5 items."
        self.done = True


class _DistributedCount(Reactor):
    def __init__(self, offset: int = ms(200)) -> None:
        self.c = count()
        self.p = _Print()
        self.connect(self.c.out, self.p.inp, after=offset)


def _check_count(main: Reactor) -> None:
    p = main.p  # type: ignore[attr-defined]
    assert p.c == 6 and p.done


def _run_count(factory: Callable[[], Reactor], *, decentralized: bool = False) -> None:
    main = factory()
    run_local(main, timeout=sec(5))
    _check_count(main)
    for coordination in ("centralized", "decentralized") if decentralized else ("centralized",):
        progs = run_federated(factory, timeout=sec(5), coordination=coordination)
        _check_count(progs["p"])


@lf_test("federated/DistributedCount.lf", federated=True)
def test_distributed_count() -> None:
    _run_count(_DistributedCount)


@lf_test("federated/DistributedCountSST.lf", federated=True)
def test_distributed_count_sst() -> None:
    """LF's ``comm-type: SST`` (the Secure Swarm Toolkit carries the federates' traffic) has
    no counterpart here (federates prove membership with an HMAC challenge, data goes
    peer to peer); the program, DistributedCount's Count and Print, is ported as written."""
    _run_count(_DistributedCount)


@lf_test("federated/DistributedCountTLS.lf", federated=True)
def test_distributed_count_tls() -> None:
    """As DistributedCountSST, with ``comm-type: TLS``: the transport is not modelled, the
    program (Count, DistributedCount's Print, ``after offset``) is ported as written."""
    _run_count(_DistributedCount)


@lf_test("docker/federated/DistributedCountContainerized.lf", federated=True)
def test_distributed_count_containerized() -> None:
    """DistributedCount in Docker containers (``docker: {rti-image: ...}``, ``at rti``): the
    containers are LF's deployment; the program is DistributedCount's, ported as such."""
    _run_count(_DistributedCount)


class _PrintDecentralized(Reactor):
    """DistributedCountDecentralized.lf's Print (it also prints each message's intended
    tag: with maxwait forever, LF's default, it is the tag it is processed at)."""

    inp = Input(int)

    def __init__(self) -> None:
        self.c = 1
        self.done = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert inp.intended_tag == self.tag(), f"{inp.intended_tag} is not the current tag {self.tag()}"
        assert inp.get() == self.c, f"Expected to receive {self.c}."
        assert self.elapsed() == ms(200) + sec(1) * (self.c - 1), f"Expected received time to be {ms(200) * self.c}."
        self.c += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.c == 6, "Expected to receive 5 items."
        self.done = True


class _DistributedCountDecentralized(Reactor):
    def __init__(self) -> None:
        self.c = count()
        self.p = _PrintDecentralized()
        self.connect(self.c.out, self.p.inp, after=ms(200))


@lf_test("federated/DistributedCountDecentralized.lf", federated=True)
def test_distributed_count_decentralized() -> None:
    """Decentralized, as LF runs it (maxwait forever, LF's default: every message on
    time); its checks (each value at 200 ms + (c - 1) s, five of them) hold under
    centralized coordination as well, also checked."""
    _run_count(_DistributedCountDecentralized, decentralized=True)


# -- ChainWithDelay.lf ----------------------------------------------------------------------


class _ChainWithDelay(Reactor):
    def __init__(self) -> None:
        self.c = count(period=ms(1))
        self.i = InternalDelay(delay=us(500))
        self.t = TestCount(num_inputs=3)
        self.connect(self.c.out, self.i.inp)
        self.connect(self.i.out, self.t.inp)


@lf_test("federated/ChainWithDelay.lf", federated=True)
def test_chain_with_delay() -> None:
    """Count every 1 ms, delayed 500 us inside the middle federate (a logical action),
    counted downstream: 1, 2, 3 by the 3 ms timeout (the fourth would land at 3.5 ms)."""
    main = _ChainWithDelay()
    run_local(main, timeout=ms(3))
    assert main.t.inputs_received == 3 and main.t.shutdown_checked
    progs = run_federated(_ChainWithDelay, timeout=ms(3))
    t = progs["t"].t  # type: ignore[attr-defined]
    assert t.inputs_received == 3 and t.shutdown_checked


# -- DistributedDoublePort.lf ---------------------------------------------------------------


class _CountMicrostep(Reactor):
    out = Output(int)
    act = LogicalAction(int)
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[t], effects=[act])
    def tick(self, act: Any) -> None:
        act.schedule(value=self.count, delay=0)
        self.count += 1

    @reaction(triggers=[act], effects=[out])
    def emit(self, act: Any, out: Any) -> None:
        out.set(act.get())


class _DoublePortPrint(Reactor):
    inp = Input(int)
    inp2 = Input(int)

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, bool, bool]] = []
        self.done = False

    @reaction(triggers=[inp, inp2])
    def got(self, inp: Any, inp2: Any) -> None:
        t = self.elapsed_tag()
        self.seen.append((t.time, t.microstep, inp.is_present, inp2.is_present))
        assert not (inp.is_present and inp2.is_present), "ERROR: invalid logical simultaneity."

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.done = True  # "SUCCESS: messages were at least one microstep apart."


class _DistributedDoublePort(Reactor):
    def __init__(self) -> None:
        self.c = count()
        self.cm = _CountMicrostep()
        self.p = _DoublePortPrint()
        self.connect(self.c.out, self.p.inp)
        self.connect(self.cm.out, self.p.inp2)


def _run_double_port() -> None:
    expected = [(0, 0, True, False), (0, 1, False, True)]  # the 1 s ticks are past the 900 ms timeout
    main = _DistributedDoublePort()
    run_local(main, timeout=ms(900))
    assert main.p.seen == expected and main.p.done
    progs = run_federated(_DistributedDoublePort, timeout=ms(900))
    p = progs["p"].p  # type: ignore[attr-defined]
    assert p.seen == expected and p.done


@lf_test("federated/DistributedDoublePort.lf", federated=True)
def test_distributed_double_port() -> None:
    _run_double_port()


@lf_test("docker/federated/DistributedDoublePortContainerized.lf", federated=True)
def test_distributed_double_port_containerized() -> None:
    """DistributedDoublePort in Docker containers: the program is DistributedDoublePort's."""
    _run_double_port()


# -- DecentralizedP2PUnbalancedTimeout.lf ------------------------------------------------------


class _Clock(Reactor):
    y = Output(int)
    t = Timer(0, us(10))  # Clock(period=10 usec): the federated reactor's parameter

    def __init__(self) -> None:
        self.count = 0
        self.exited = False

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.exited = True  # "SUCCESS: the source exited successfully."


class _Destination(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.s = 1
        self.startup_logical_time = 0
        self.shut = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.startup_logical_time = self.logical_time()

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        t = self.tag()
        assert x.get() == self.s, (
            f"At tag ({t.time - self.startup_logical_time}, {t.microstep}) expected {self.s} and got {x.get()}."
        )
        self.s += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.shut = True


class _UnbalancedTimeout(Reactor):
    def __init__(self) -> None:
        self.c = _Clock()
        self.d = _Destination()
        self.connect(self.c.y, self.d.x)


@lf_test("federated/DecentralizedP2PUnbalancedTimeout.lf", federated=True)
def test_decentralized_p2p_unbalanced_timeout() -> None:
    """A 10 us source for 1 ms; the federation must exit. LF's version dates from when
    decentralized coordination's maxwait defaulted to 0, where the destination may stop
    before the source's last messages arrive (lost, with warnings); with maxwait forever,
    LF's default since, the destination waits for the source's word at every tag, and
    every one of the 101 messages (0 to 1 ms inclusive) arrives in order, decentralized as
    centralized, and both federates exit."""
    main = _UnbalancedTimeout()
    run_local(main, timeout=ms(1))
    assert main.d.s == 102 and main.d.shut and main.c.exited
    for coordination in ("decentralized", "centralized"):
        progs = run_federated(_UnbalancedTimeout, timeout=ms(1), coordination=coordination)
        d = progs["d"].d  # type: ignore[attr-defined]
        assert d.s == 102 and d.shut and progs["c"].c.exited  # type: ignore[attr-defined]


# -- DecentralizedP2PComm.lf -------------------------------------------------------------------


class _Platform(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, ms(100))

    def __init__(self, start: int = 0, expected_start: int = 0) -> None:
        self.expected_start = expected_start
        self.count = start
        self.expected = expected_start
        self.shut = False
        self.tardy = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert inp.get() == self.expected, f"Expected {self.expected_start} but got {inp.get()}."
        self.expected += 1

    @got.tardy_handler
    def got_late(self, inp: Any) -> None:
        # "Received {} late." / "STP offset was violated by ...": printed, not an error
        t, it = self.tag(), inp.intended_tag
        assert (t.time, t.microstep) > (it.time, it.microstep)
        self.expected += 1
        self.tardy += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.expected != self.expected_start, "Did not receive anything."
        self.shut = True


class _P2PComm(Reactor):
    def __init__(self) -> None:
        self.a = _Platform(expected_start=100)
        maxwait(self.a, 0)
        self.b = _Platform(start=100)
        maxwait(self.b, 0)
        self.connect(self.a.out, self.b.inp, absent_after=ms(10))
        self.connect(self.b.out, self.a.inp, absent_after=ms(10))


@lf_test("federated/DecentralizedP2PComm.lf", federated=True)
def test_decentralized_p2p_comm() -> None:
    """Two platforms send each other a count every 100 ms over zero-delay connections (a
    zero-delay cycle between federates, acyclic at the level of reactions), decentralized
    as in LF (``@maxwait(0)``, ``@absent_after(10 ms)``, a tardy handler that only prints),
    in real time as LF runs it: each waits for the other's value at most 10 ms past the
    tag's time. A value that comes later is tardy, handled at a later microstep, and
    counted; one after the 1 s stop tag is dropped (LF's checks: every value in order,
    something received). In one process and under centralized coordination, every value
    is on time."""
    main = _P2PComm()
    run_local(main, timeout=sec(1))
    assert (main.a.expected, main.b.expected) == (111, 11) and main.a.shut and main.b.shut
    progs = run_federated(_P2PComm, timeout=sec(1), coordination="decentralized", fast=False)
    a, b = progs["a"].a, progs["b"].b  # type: ignore[attr-defined]
    assert 100 < a.expected <= 111 and 0 < b.expected <= 11 and a.shut and b.shut
    progs = run_federated(_P2PComm, timeout=sec(1))
    a, b = progs["a"].a, progs["b"].b  # type: ignore[attr-defined]
    assert (a.expected, b.expected) == (111, 11) and (a.tardy, b.tardy) == (0, 0) and a.shut and b.shut


# -- LingoFederatedImport.lf ----------------------------------------------------------------------


class _Actuator(Reactor):
    results = Input(int)

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    @reaction(triggers=[results])
    def got(self, results: Any) -> None:
        self.seen.append((self.elapsed(), results.get()))  # "Count: {value}"


class _LingoFederatedImport(Reactor):
    def __init__(self) -> None:
        self.count = count()
        self.act = _Actuator()
        self.connect(self.count.out, self.act.results)


@lf_test("federated/LingoFederatedImport.lf", federated=True)
def test_lingo_federated_import() -> None:
    """LF's test of importing a reactor from a Lingo package (``import Count from
    <library-test/Import.lf>``). That package's Count (in LF's repository under
    test/Python/lf-packages and build/lfc_include) is lib/Count.lf's, ported once here;
    the package mechanism itself has no counterpart (Python imports). LF's Actuator only
    prints; the test checks what it saw: 1, 2, 3 at 0, 1, 2 s."""
    expected = [(0, 1), (sec(1), 2), (sec(2), 3)]
    main = _LingoFederatedImport()
    run_local(main, timeout=sec(2))
    assert main.act.seen == expected
    progs = run_federated(_LingoFederatedImport, timeout=sec(2))
    assert progs["act"].act.seen == expected  # type: ignore[attr-defined]
