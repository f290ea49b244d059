"""Decentralized coordination around a cycle of links, pure (no sockets): promises alone
climb by the cycle's delay per round trip, a microstep over ``after 0``, so they never take
an idle cycle to FOREVER nor to a later time; the RTI, which has every member's reports,
sends those members the grants the promises cannot give
(:func:`reactorfed.federation.coordination.federate_maxwait.rti_backstop`)."""

from __future__ import annotations

from reactorfed.federation.coordination.federate_core import WAIT, FederateCore
from reactorfed.federation.coordination.federate_maxwait import rti_backstop
from reactorfed.federation.coordination.rti_core import RtiCore
from reactorfed.federation.coordination.rti_state import Grant
from reactorfed.federation.wire.protocol import Ltc, Promise
from reactorfed.time.tag import FOREVER_T, TagT

from .test_layout import lay

MS = 1_000_000
START = 1_000 * MS
NO_STOP = FOREVER_T


def _loop() -> tuple[FederateCore, FederateCore, RtiCore]:
    """A driver (f0) -> a worker (f1) without delay, the worker -> the driver after 0; the
    driver has run its startup at the start tag and sent the worker one message."""
    layout = lay(2, (0, 1, None), (1, 0, 0))
    layout.maxwait = []
    cores = []
    for f in (0, 1):
        c = FederateCore(layout, f, fast=True)
        c.begin(START)
        c.decentralize(layout)
        cores.append(c)
    driver, worker = cores
    rti = RtiCore(layout)
    rti.start(START)
    t0 = (START, 0)
    assert driver.acquire(t0, NO_STOP, 0) == t0
    driver.reports.sent_message(1, t0)
    driver.completed(t0, None, NO_STOP, 0)
    return driver, worker, rti


def _deliver(src: FederateCore, dst: FederateCore, rti: RtiCore) -> list[Grant]:
    """What ``src`` queued: its promises to ``dst``, its reports to the RTI; the grants the
    RTI computed from them."""
    grants: list[Grant] = []
    for m in src.outbox:
        if isinstance(m, Promise):
            dst.promises.on_promise(src.me, m.tag)
        elif isinstance(m, Ltc):
            grants += rti.on_ltc(src.me, m.tag, m.net, m.sent, m.received)
    src.outbox.clear()
    dst.grant_from_promises()
    dst.pass_on(None, NO_STOP, dst.done)
    return grants


def test_promises_alone_climb_a_microstep_per_round_trip_and_never_end_an_idle_loop() -> None:
    driver, worker, rti = _loop()
    _deliver(driver, worker, rti)
    worker.on_data(0, 0, (START, 0))
    t0 = (START, 0)
    assert worker.acquire(t0, NO_STOP, 0) == t0
    worker.reports.sent_message(0, t0)
    worker.completed(t0, None, NO_STOP, 0)
    driver.on_data(1, 1, (START, 1))
    _deliver(worker, driver, rti)
    t1 = (START, 1)
    assert driver.acquire(t1, NO_STOP, 0) == t1  # the answer, one microstep later
    driver.completed(t1, None, NO_STOP, 0)
    # Both idle now, nothing in flight: each round trip of promises moves the driver's
    # grant one microstep, however many there are.
    grants: list[TagT] = []
    for _ in range(100):
        _deliver(driver, worker, rti)
        _deliver(worker, driver, rti)
        grants.append(driver.grant)
        assert driver.acquire(None, NO_STOP, 0) is WAIT
        assert worker.acquire(None, NO_STOP, 0) is WAIT
    assert grants[-1] == (START, grants[0][1] + 99)
    # Their reports reach the RTI when due: it sends both FOREVER, and they end.
    later = 100 * MS
    assert driver.acquire(None, NO_STOP, later) is WAIT
    assert worker.acquire(None, NO_STOP, later) is WAIT
    computed = _deliver(driver, worker, rti) + _deliver(worker, driver, rti)
    sent = rti_backstop(rti.layout, computed, rti.stop_tag)
    assert {g.federate: g.tag for g in sent} == {0: FOREVER_T, 1: FOREVER_T}
    for g in sent:
        (driver, worker)[g.federate].on_tag(g.tag, g.counts)
    assert driver.acquire(None, NO_STOP, 0) is None
    assert worker.acquire(None, NO_STOP, 0) is None


def test_the_rti_backstop_reaches_only_the_members_of_cycles() -> None:
    # f0 <-> f1 after 0 (microsteps only), f2 <-> f3 with 5 ms, f1 -> f4 (on no cycle)
    layout = lay(5, (0, 1, None), (1, 0, 0), (2, 3, 5 * MS), (3, 2, None), (1, 4, None))
    t = (START + MS, 0)

    def sent(stop: TagT | None, *grants: Grant) -> list[tuple[int, TagT]]:
        return [(g.federate, g.tag) for g in rti_backstop(layout, list(grants), stop)]

    def g(f: int, tag: TagT, provisional: bool = False) -> Grant:
        return Grant(f, tag, provisional, {})

    # a cycle of microsteps: every grant (promises cannot advance its time), but a PTAG
    assert sent(None, g(0, t), g(1, t), g(1, t, True)) == [(0, t), (1, t)]
    assert sent(t, g(0, t)) == [(0, t)]
    # a cycle with a delay: its end only, and not once a stop is agreed (the StopMarks)
    assert sent(None, g(2, t), g(3, FOREVER_T)) == [(3, FOREVER_T)]
    assert sent(t, g(3, FOREVER_T)) == []
    # on no cycle: nothing, ever (promises get there)
    assert sent(None, g(4, t), g(4, FOREVER_T)) == []
