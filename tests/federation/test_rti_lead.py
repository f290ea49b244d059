"""The lead window, pure: the RTI core's limits (:mod:`reactorfed.federation.coordination.rti_lead`)
and a federate core's side of it (it waits at its limit and says so at once; it reports
when a WATCH's tag is reached). Whole federations of cores under a window never hang:
``test_cycles.py``'s property test."""

from __future__ import annotations

import pytest

from reactorfed.federation.coordination.federate_core import WAIT, FederateCore
from reactorfed.federation.coordination.rti_core import FOREVER_T, RtiCore
from reactorfed.federation.coordination.rti_lead import limit_at
from reactorfed.federation.wire.protocol import Ltc
from reactorfed.time.tag import FOREVER

from .test_layout import lay

MS = 1_000_000
START = 1_000 * MS
W = 10 * MS
MAXM = 2**32 - 1


def at(dt: int, m: int = 0) -> tuple[int, int]:
    return (START + dt, m)


def rti(n: int, *edges: tuple[int, int, int | None], window: int | None = W) -> RtiCore:
    c = RtiCore(lay(n, *edges), window)
    c.start(START)
    return c


def report(c: RtiCore, f: int, ltc: tuple[int, int], net: tuple[int, int]) -> None:
    c.on_ltc(f, ltc, net, {}, {})


# -- the RTI's side ----------------------------------------------------------------------
def test_the_limit_is_the_window_past_the_time_of_a_bound() -> None:
    assert limit_at(START, W) == (START + W, MAXM)
    assert limit_at(FOREVER - 1, W) == FOREVER_T  # saturates
    with pytest.raises(ValueError, match="at least 0"):
        RtiCore(lay(2, (0, 1, None)), -1)


def test_a_federate_starts_a_window_ahead_and_one_without_downstream_has_no_limit() -> None:
    c = rti(3, (0, 1, None), (1, 2, None))
    assert c.lead.limit == [at(W, MAXM), at(W, MAXM), FOREVER_T]
    assert c.lead.downstream == [(1, 2), (2,), ()]


def test_a_held_producer_is_freed_when_its_consumer_catches_up() -> None:
    c = rti(2, (0, 1, None))
    report(c, 0, at(19 * MS), at(20 * MS))  # its next event lies past its limit: held
    assert c.lead.held == {0}
    # The consumer is still at the start: no room, so it is watched for the tag that
    # would give the producer half a window of room.
    leads, watches = c.lead.due()
    assert leads == [] and watches == [(1, at(15 * MS))]
    assert c.lead.due() == ([], [])  # (asked once)
    report(c, 1, at(12 * MS), at(13 * MS))  # not far enough: 23 ms < 20 + 5
    assert c.lead.due() == ([], [])
    report(c, 1, at(14 * MS), at(15 * MS))
    assert c.lead.watched[1] == FOREVER_T  # reached: forgotten
    leads, watches = c.lead.due()
    assert leads == [(0, at(25 * MS, MAXM))] and watches == []
    assert c.lead.held == set() and c.lead.leads_sent == 1


def test_the_slowest_federate_downstream_sets_the_limit_over_any_path() -> None:
    c = rti(3, (0, 1, None), (1, 2, ms_delay := 2 * MS))
    report(c, 2, at(0), at(1 * MS))  # the far end lags
    report(c, 1, at(30 * MS), at(31 * MS))
    report(c, 0, at(30 * MS), at(31 * MS))
    leads, watches = c.lead.due()
    assert leads == []
    assert sorted(watches) == [(2, at(31 * MS + W // 2 - W))]
    assert ms_delay  # (the delay does not count: the window is on the tags processed)
    report(c, 2, at(29 * MS), at(30 * MS))
    leads, _ = c.lead.due()
    assert dict(leads)[0] == at(30 * MS + W, MAXM)


def test_a_resigned_consumer_holds_nobody_back() -> None:
    c = rti(2, (0, 1, None))
    report(c, 0, at(19 * MS), at(20 * MS))
    c.on_resign(1, {}, {})
    leads, _ = c.lead.due()
    assert leads == [(0, FOREVER_T)]


def test_the_earliest_federate_is_never_held() -> None:
    # 0 -> 1 -> 0 through delays: each is downstream of the other. Whoever has the
    # earliest next event gets at least a window of room.
    c = rti(2, (0, 1, 5 * MS), (1, 0, 5 * MS))
    report(c, 0, at(30 * MS), at(35 * MS))
    report(c, 1, at(20 * MS), at(25 * MS))
    leads, _ = c.lead.due()
    # 1's next event (25 ms) is the earliest: its limit is its bound downstream, 0's at
    # 30 ms (1's next event plus the delay), plus the window. 0 waits for 1.
    assert leads == [(1, at(30 * MS + W, MAXM))]
    assert c.lead.held == {0}


def test_without_a_window_nothing_is_held_or_sent() -> None:
    c = rti(2, (0, 1, None), window=None)
    assert c.lead.limit == [FOREVER_T, FOREVER_T]
    report(c, 0, at(10_000 * MS), at(20_000 * MS))
    assert c.lead.held == set() and c.lead.due() == ([], [])


# -- a federate's side ---------------------------------------------------------------------
def fed(
    n: int, me: int, *edges: tuple[int, int, int | None], window: int | None = W
) -> FederateCore:
    c = FederateCore(lay(n, *edges), me, fast=True)
    c.begin(START, window)
    return c


def test_a_producer_waits_at_its_limit_and_tells_the_rti_at_once() -> None:
    c = fed(2, 0, (0, 1, None))
    assert c.lead.limit == at(W, MAXM)
    assert c.acquire(at(W), FOREVER_T, START) == at(W)
    c.outbox.clear()
    assert (
        c.acquire(at(W + 1), FOREVER_T, START + 1) is WAIT
    )  # (the RTI's period not due: at once all the same)
    assert [m.net for m in c.outbox if isinstance(m, Ltc)] == [at(W + 1)]
    assert c.lead.waits == 1
    c.lead.widen(at(3 * W, MAXM))
    assert c.acquire(at(W + 1), FOREVER_T, START + 2) == at(W + 1)
    c.lead.widen(at(2 * W, MAXM))  # (an older one takes nothing back)
    assert c.lead.limit == at(3 * W, MAXM)


def test_no_window_and_no_downstream_mean_no_limit() -> None:
    assert fed(2, 0, (0, 1, None), window=None).lead.limit == FOREVER_T
    sink = fed(2, 1, (0, 1, None))
    assert sink.lead.limit == FOREVER_T


def test_a_watched_consumer_reports_when_it_gets_there() -> None:
    sink = fed(2, 1, (0, 1, None))
    sink.on_tag(at(100 * MS), {})
    sink.on_watch(at(5 * MS), at(3 * MS), FOREVER_T, at(2 * MS), START)
    assert sink.outbox == []  # not there yet
    assert sink.acquire(at(3 * MS), FOREVER_T, START + 1) == at(3 * MS)
    sink.completed(
        at(3 * MS), at(6 * MS), FOREVER_T, START + 2
    )  # (a sink reports seldom otherwise)
    assert [(m.tag, m.net) for m in sink.outbox if isinstance(m, Ltc)] == [(at(3 * MS), at(6 * MS))]
    sink.outbox.clear()
    sink.completed(at(6 * MS), at(7 * MS), FOREVER_T, START + 3)
    assert sink.outbox == []  # once


def test_a_consumer_already_past_the_watch_reports_at_once() -> None:
    sink = fed(2, 1, (0, 1, None))
    sink.on_tag(at(100 * MS), {})
    sink.acquire(at(8 * MS), FOREVER_T, START)
    sink.completed(at(8 * MS), None, FOREVER_T, START + 1)  # idle; its report held back (a sink)
    sink.outbox.clear()
    sink.on_watch(at(5 * MS), None, FOREVER_T, at(8 * MS), START + 2)
    assert [(m.tag, m.net) for m in sink.outbox if isinstance(m, Ltc)] == [(at(8 * MS), FOREVER_T)]
