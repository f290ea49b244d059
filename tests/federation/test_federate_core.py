"""FederateCore: a federate's coordination logic, pure (no sockets, no clock, no threads).

Each test feeds the core what the driver would (messages from the RTI and the peers, the
scheduler's events, the time) and asserts what it decides: whether a tag may be processed
now, and what it queues for the RTI and the peers.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.coordination.federate_core import (
    _LTC_BATCH_NS,
    _PROGRESS_NS,
    WAIT,
    FederateCore,
    Message,
)
from reactorfed.federation.coordination.federate_reports import _RTI_REPORT_NS
from reactorfed.federation.coordination.rti_core import FOREVER_T, NEVER_T, pred, succ
from reactorfed.federation.wire.protocol import Ltc, Promise, Resign, StopMark, StopReply, StopReq

from .test_layout import lay

MS = 1_000_000
#: the start time; the clock readings the tests pass are about as late (the core's timers
#: start at 0, so a first report is never held back)
START = 1_000 * MS


def at(dt: int, m: int = 0) -> tuple[int, int]:
    return (START + dt, m)


def core(n: int, me: int, *edges: tuple[int, int, int | None], peer_grants: bool = True,
         fast: bool = True) -> FederateCore:
    c = FederateCore(lay(n, *edges), me, peer_grants=peer_grants, fast=fast)
    c.begin(START)
    return c


def take(c: FederateCore) -> list[Message]:
    out = list(c.outbox)
    c.outbox.clear()
    return out


def typed(msgs: list[Message]) -> list[tuple[str, tuple[object, ...]]]:
    """Messages with their kind: NamedTuples of different types but equal fields compare
    equal, and a StopMark sent where a StopReply was due must not pass."""
    return [(type(m).__name__, tuple(m)) for m in msgs]


def promises(msgs: list[Message]) -> list[tuple[int, int]]:
    return [m.tag for m in msgs if isinstance(m, Promise)]


def reports(msgs: list[Message]) -> list[Ltc]:
    return [m for m in msgs if isinstance(m, Ltc)]


# -- grants ------------------------------------------------------------------------------
def test_a_federate_without_upstream_never_waits() -> None:
    c = core(2, 0, (0, 1, None))
    assert c.acquire(at(0), FOREVER_T, START) == at(0)
    assert c.acquire(at(500), FOREVER_T, START) == at(500)  # fast: physical time is not its concern
    assert c.acquire(None, FOREVER_T, START) is None  # nothing left: starvation


def test_a_tag_waits_for_its_grant() -> None:
    c = core(2, 1, (0, 1, None), peer_grants=False)
    assert c.acquire(at(0), FOREVER_T, START) is WAIT
    c.on_tag(at(5), {})
    assert c.acquire(at(0), FOREVER_T, START) == at(0)
    assert c.acquire(at(5), FOREVER_T, START) == at(5)
    assert c.acquire(at(5, 1), FOREVER_T, START) is WAIT
    c.on_tag(at(3), {})  # a late, older grant takes nothing back
    assert c.grant == at(5)
    assert c.acquire(None, FOREVER_T, START) is WAIT  # an upstream peer may still send
    c.on_tag(FOREVER_T, {})
    assert c.acquire(None, FOREVER_T, START) is None


def test_a_ptag_allows_its_tag_and_grants_every_tag_before_it() -> None:
    c = core(2, 1, (0, 1, None), (1, 0, None), peer_grants=False)
    c.on_ptag(at(0), {})
    assert c.acquire(at(0), FOREVER_T, START) == at(0)
    c.completed(at(0), at(0, 1), FOREVER_T, START)
    assert c.acquire(at(0, 1), FOREVER_T, START) is WAIT
    c.on_ptag(at(10), {})
    c.on_ptag(at(5), {})  # late: a newer PTAG stays
    assert c.ptag == at(10)
    # Nothing can reach it before the EIMT the PTAG was for: every tag before is granted.
    assert c.grant == pred(at(10))
    assert c.acquire(at(5), FOREVER_T, START) == at(5)
    c.completed(at(5), at(10), FOREVER_T, START)
    assert c.acquire(at(10), FOREVER_T, START) == at(10)
    c.completed(at(10), at(10, 1), FOREVER_T, START)
    assert c.acquire(at(10, 1), FOREVER_T, START) is WAIT  # past it: not granted


def test_a_ptag_for_a_tag_without_events_is_processed_all_the_same() -> None:
    # Its outputs on the zero-delay cycle must be announced absent at that tag (a peer
    # granted the same tag waits within it for them): reactor-c's dummy event.
    c = core(2, 1, (0, 1, None), (1, 0, None), peer_grants=False)
    c.on_ptag(at(0, 1), {})
    assert c.acquire(at(10), FOREVER_T, START) == at(0, 1)
    assert c.acquire(None, FOREVER_T, START) == at(0, 1)
    c.completed(at(0, 1), at(10), FOREVER_T, START)
    assert c.acquire(at(10), FOREVER_T, START) is WAIT  # done with it: its own events wait


def test_a_grant_is_used_only_once_its_counts_arrived() -> None:
    c = core(3, 2, (0, 2, None), (1, 2, None), peer_grants=False)
    c.on_tag(at(10), {0: 2, 1: 1})
    assert c.acquire(at(0), FOREVER_T, START) is WAIT
    c.on_data(0, 0, at(0))
    c.on_data(1, 1, at(0))
    assert c.acquire(at(0), FOREVER_T, START) is WAIT  # one message from 0 still missing
    c.on_data(0, 0, at(1))
    assert c.acquire(at(0), FOREVER_T, START) == at(0)
    c.on_tag(at(20), {0: 2, 1: 1})  # nothing new required: still met
    assert c.counts.ok()
    c.on_tag(at(30), {0: 3})
    assert not c.counts.ok()
    assert c.acquire(at(1), FOREVER_T, START) is WAIT  # within the older grant, but counts are counts
    c.on_data(0, 0, at(2))
    assert c.acquire(at(1), FOREVER_T, START) == at(1)
    assert c.received == {0: 3, 1: 1} and c.messages_received == 4


def test_the_stop_tag_is_processed_once_granted() -> None:
    c = core(2, 1, (0, 1, None), peer_grants=False)
    c.on_tag(at(4), {})
    assert c.acquire(at(9), at(5), START) is WAIT  # the stop tag comes first, not granted yet
    c.on_tag(at(5), {})
    assert c.acquire(at(9), at(5), START) == at(5)
    assert c.acquire(None, at(5), START) == at(5)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("tag"), st.integers(0, 40), st.integers(0, 3), st.integers(0, 4)),
    st.tuples(st.just("ptag"), st.integers(0, 40), st.integers(0, 3), st.integers(0, 4)),
    st.tuples(st.just("data"), st.integers(0, 40), st.integers(0, 3), st.integers(0, 0)),
    st.tuples(st.just("promise"), st.integers(0, 40), st.integers(0, 3), st.integers(0, 0)),
), max_size=30), st.integers(0, 45), st.integers(0, 3))
def test_acquire_allows_exactly_what_the_grants_allow(events: list[tuple[str, int, int, int]], t: int,
                                                      m: int) -> None:
    """Against a model: a tag may be processed when it is at most the latest TAG or the tag
    before the earliest promised input, or is the latest PTAG, and every count a grant
    required has arrived."""
    c = core(2, 1, (0, 1, 2))  # upstream 0, its link delayed by 2 ns
    granted, ptag, need, got, promised = NEVER_T, None, 0, 0, (START, 0)
    for kind, dt, mi, n in events:
        if kind == "tag":
            c.on_tag(at(dt, mi), {0: n})
            granted, need = max(granted, at(dt, mi)), max(need, n)
        elif kind == "ptag":
            c.on_ptag(at(dt, mi), {0: n})
            ptag, need = max(ptag or NEVER_T, at(dt, mi)), max(need, n)
            granted = max(granted, pred(at(dt, mi)))  # every tag before a PTAG's
        elif kind == "data":
            c.on_data(0, 0, at(dt + 2, mi))
            got += 1
        else:
            c.promises.on_promise(0, at(dt, mi))
            promised = max(promised, at(dt, mi))
            if c.promises.fresh:
                c.grant_from_promises()
    if promised > (START, 0):  # a promise arrived (the start tag is what peers promise at first)
        granted = max(granted, pred((promised[0] + 2, 0)))
    head = at(t, m)
    may = (head <= granted or head == ptag) and got >= need
    if ptag is not None and ptag < head and got >= need:
        # a PTAG not processed yet (nothing was) comes first, event or not
        assert c.acquire(head, FOREVER_T, START) == ptag
        return
    assert (c.acquire(head, FOREVER_T, START) == head) == may
    assert c.grant == granted


# -- peer promises -----------------------------------------------------------------------
def test_promises_grant_every_tag_before_the_earliest_input() -> None:
    # 0 -after 5 ns-> 2 <-none- 1
    c = core(3, 2, (0, 2, 5), (1, 2, None))
    assert c.promises.bound() == (START, 0)  # before any promise: 1 might send at the start tag
    c.promises.on_promise(0, at(100))
    c.grant_from_promises()
    assert c.grant < at(0)
    c.promises.on_promise(1, at(50))
    c.grant_from_promises()
    assert c.grant == pred(at(50)) and c.local_grants == 2
    c.promises.on_promise(1, at(200))
    c.grant_from_promises()
    assert c.grant == pred(at(105))  # 0's promise plus its link's delay
    c.promises.on_promise(0, at(90))  # an older promise changes nothing
    assert not c.promises.fresh
    assert c.acquire(at(104, 7), FOREVER_T, START) == at(104, 7)
    assert c.acquire(at(105), FOREVER_T, START) is WAIT
    c.promises.on_promise(0, FOREVER_T)
    c.promises.on_promise(1, FOREVER_T)
    c.grant_from_promises()
    assert c.grant == FOREVER_T and c.acquire(None, FOREVER_T, START) is None


def test_a_promise_is_the_later_of_net_and_the_tag_after_the_last_completed() -> None:
    c = core(2, 0, (0, 1, None))
    c.completed(at(10), at(3), FOREVER_T, START + 1)  # a NET before the tag after the LTC
    assert promises(take(c)) == [at(10, 1)]
    c.completed(at(11), at(20), FOREVER_T, START + 20 * MS)
    assert promises(take(c)) == [at(20)]
    c.completed(at(12), None, FOREVER_T, START + 40 * MS)  # nothing queued: FOREVER
    assert promises(take(c)) == [FOREVER_T]


def test_a_promise_saturates_at_forever() -> None:
    c = core(2, 0, (0, 1, None))
    c.completed(FOREVER_T, None, FOREVER_T, START)
    assert c.reports.ltc == FOREVER_T
    assert promises(take(c)) == [FOREVER_T]  # the tag after FOREVER is FOREVER
    c.completed(FOREVER_T, None, FOREVER_T, START + 1)
    assert promises(take(c)) == []  # promises only grow


def test_a_relay_promises_no_more_than_its_inputs_allow_and_passes_progress_on() -> None:
    # 0 -> 1 -> 2, no delays: 1 relays
    c = core(3, 1, (0, 1, None), (1, 2, None))
    c.completed(at(0), None, FOREVER_T, START)
    assert promises(take(c)) == [(START, 0)]  # 0 might still send at the start tag
    c.promises.on_promise(0, at(7))
    c.grant_from_promises()
    c.pass_on(None, FOREVER_T, at(0))  # between tags: the current tag is the last completed
    assert promises(take(c)) == [at(7)]
    c.promises.on_promise(0, at(30))
    c.grant_from_promises()
    c.pass_on(at(12), FOREVER_T, at(0))  # its own next event comes first
    assert promises(take(c)) == [at(12)]
    c.promises.on_promise(0, at(40))
    c.grant_from_promises()
    c.pass_on(None, at(20), at(0))  # nothing queued, but it stops at 20
    assert promises(take(c)) == [at(20)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 3), st.integers(-5, 60), st.booleans(),
                          st.integers(0, 60)), max_size=25))
def test_promises_follow_the_rule_and_only_grow(steps: list[tuple[int, int, int, bool, int]]) -> None:
    """Each promise = min(max(NET, the tag after the LTC), the earliest input) and is later
    than every promise before it; none is made that would not be later."""
    c = core(3, 1, (0, 1, None), (1, 2, None))
    ltc, sent = NEVER_T, NEVER_T
    now = START
    for dt, m, net_dt, none, promise_dt in steps:
        c.promises.on_promise(0, at(promise_dt))
        if c.promises.fresh:
            c.grant_from_promises()
        tag = max(at(dt, m), succ(ltc))  # completed tags only grow
        net = None if none else at(net_dt)
        now += 10 * MS  # no batching: every tag is reported
        c.completed(tag, net, FOREVER_T, now)
        ltc = tag
        n = FOREVER_T if net is None else net
        want = min(max(n, succ(ltc)), c.promises.bound())
        got = promises(take(c))
        if want > sent:
            assert got == [want]
            sent = want
        else:
            assert got == []
        assert c.reports.promised == sent


def marks(msgs: list[Message]) -> list[tuple[int, int]]:
    return [m.tag for m in msgs if isinstance(m, StopMark)]


def test_a_resigned_federate_promises_forever() -> None:
    """With a Mark: a resigned federate sends nothing more, whatever stop comes."""
    c = core(2, 0, (0, 1, None))
    c.completed(at(0), at(5), FOREVER_T, START)
    take(c)
    c.resign(at(3))
    out = take(c)
    assert isinstance(out[0], Resign) and out[0].tag == at(3)
    assert marks(out) == [FOREVER_T] and promises(out) == []
    # even if it had promised everything already (a Mark is never redundant)
    c2 = core(2, 0, (0, 1, None))
    c2.completed(at(0), None, FOREVER_T, START)
    assert promises(take(c2)) == [FOREVER_T]
    c2.resign(at(0))
    assert marks(take(c2)) == [FOREVER_T]


def test_a_resigned_peer_is_known_to_be_finished_in_both_grant_modes() -> None:
    """The resigning federate's Mark of FOREVER goes to its downstream peers with RTI
    grants only too: it is how they know its data link may close now (a link that closes
    before is a fault). There it is no promise: it grants nothing."""
    for peer_grants in (True, False):
        up = core(2, 0, (0, 1, None), peer_grants=peer_grants)
        up.resign(at(3))
        assert marks(take(up)) == [FOREVER_T], peer_grants
        down = core(2, 1, (0, 1, None), peer_grants=peer_grants)
        down.on_mark(0, at(2))
        assert 0 not in down.finished, "a stop's Mark is not the last word"
        down.on_mark(0, FOREVER_T)
        assert down.finished == {0}
        if peer_grants:
            down.grant_from_promises()
            assert down.grant == pred(FOREVER_T)
        else:
            assert not down.promises.fresh and down.grant < at(0), "RTI grants only: the Mark grants nothing"
    alone = core(1, 0, peer_grants=False)  # no downstream peer: nobody to tell
    alone.resign(at(1))
    assert marks(take(alone)) == []


# -- reports and LTC batching ------------------------------------------------------------
def relay_granted_forever() -> FederateCore:
    """Federate 1 of 0 -> 1 -> 2, whose upstream has promised everything."""
    c = core(3, 1, (0, 1, None), (1, 2, None))
    c.promises.on_promise(0, FOREVER_T)
    c.grant_from_promises()
    return c


def test_running_ahead_holds_the_report_back_until_it_waits() -> None:
    c = relay_granted_forever()
    c.completed(at(0), at(1), FOREVER_T, START + 10 * MS)  # the first report goes at once
    assert [r.tag for r in reports(take(c))] == [at(0)]
    c.completed(at(1), at(2), FOREVER_T, START + 10 * MS + 1)
    c.completed(at(2), at(3), FOREVER_T, START + 10 * MS + 2)
    assert c.reports.pending == at(2) and take(c) == []  # held: the next tag goes on at once
    # the scheduler must wait (the RTI's grant requires a message not here yet): the held
    # report goes now, with its NET
    c.on_tag(at(1), {0: 1})
    assert c.acquire(at(3), FOREVER_T, START + 10 * MS + 3) is WAIT
    out = take(c)
    assert c.reports.pending is None and c.reports.ltc == at(2)
    assert promises(out) == [at(3)]


def test_a_held_report_goes_within_the_batch_interval() -> None:
    c = core(2, 0, (0, 1, None))
    now = START + 10 * MS
    c.completed(at(0), at(1), FOREVER_T, now)
    take(c)
    c.completed(at(1), at(2), FOREVER_T, now + _LTC_BATCH_NS - 1)
    assert c.reports.pending == at(1)
    c.completed(at(2), at(3), FOREVER_T, now + _LTC_BATCH_NS)
    assert c.reports.pending is None and c.reports.ltc == at(2) and promises(take(c)) == [at(3)]


def test_no_batching_when_the_next_tag_must_wait() -> None:
    c = core(3, 1, (0, 1, None), (1, 2, None), fast=False)
    now = START  # the clock at the start time: tags after it wait for it (real time)
    c.completed(at(0), at(1), FOREVER_T, now)
    take(c)
    c.on_tag(at(50), {})
    c.completed(at(1), at(2), FOREVER_T, now + 1)  # granted, but its time is ahead of the clock
    assert c.reports.pending is None
    c.completed(at(2), at(3), FOREVER_T, now + 3)  # its time has come: goes on
    assert c.reports.pending == at(2)
    c.fast = True
    c.completed(at(3), at(60), FOREVER_T, now + 4)  # not granted
    assert c.reports.pending is None and c.reports.ltc == at(3)
    c.on_tag(at(80), {0: 1})
    c.completed(at(60), at(75), FOREVER_T, now + 6)
    assert c.reports.pending is None  # granted, but the grant's count has not arrived
    c.on_data(0, 0, at(75))
    c.completed(at(75), at(76), FOREVER_T, now + 7)  # granted: goes on
    assert c.reports.pending == at(75)


def test_report_held_reports_the_tag_as_its_own_next_event() -> None:
    c = core(2, 0, (0, 1, None))
    c.completed(at(0), at(1), FOREVER_T, START + 10 * MS)
    take(c)
    c.completed(at(1), at(2), FOREVER_T, START + 10 * MS + 1)
    c.report_held(START + 10 * MS + 2)
    assert c.reports.ltc == at(1) and c.reports.net == at(1) and promises(take(c)) == [at(1, 1)]


def test_the_rti_gets_reports_at_most_every_interval_with_peer_promises() -> None:
    c = core(2, 0, (0, 1, None))
    t0 = START + _RTI_REPORT_NS
    c.completed(at(0), at(10), FOREVER_T, t0)
    assert len(reports(take(c))) == 1
    c.completed(at(10), at(20), FOREVER_T, t0 + 10 * MS)
    out = take(c)
    assert reports(out) == [] and promises(out) == [at(20)]  # the peers hear at once
    assert c.acquire(at(20), FOREVER_T, t0 + 20 * MS) == at(20)  # no upstream: never waits
    assert take(c) == []
    assert c.acquire(at(20), FOREVER_T, t0 + _RTI_REPORT_NS) == at(20)
    (r,) = reports(take(c))  # due now
    assert r.tag == at(10) and r.net == at(20)


def test_without_peer_promises_every_report_goes_to_the_rti() -> None:
    c = core(2, 0, (0, 1, None), peer_grants=False)
    c.completed(at(0), at(10), FOREVER_T, START + 10 * MS)
    c.completed(at(10), at(20), FOREVER_T, START + 20 * MS)
    out = take(c)
    assert [r.tag for r in reports(out)] == [at(0), at(10)] and promises(out) == []


def test_reports_carry_the_counts_and_the_earliest_tag_sent_since_the_last() -> None:
    c = core(3, 0, (0, 1, None), (0, 2, 5), peer_grants=False)
    c.reports.sent_message(1, at(3))
    c.reports.sent_message(1, at(2, 4))
    c.reports.sent_message(2, at(9))
    c.completed(at(3), None, FOREVER_T, START + 10 * MS)
    (r,) = reports(take(c))
    assert r.sent == {1: [2, START + 2, 4], 2: [1, START + 9, 0]}
    c.reports.sent_message(1, at(7))
    c.completed(at(7), None, FOREVER_T, START + 20 * MS)
    (r,) = reports(take(c))
    assert r.sent == {1: [3, START + 7, 0], 2: [1, *FOREVER_T[:1], 0]}


def test_a_federate_without_downstream_reports_progress_rarely() -> None:
    c = core(2, 1, (0, 1, None), peer_grants=False)
    c.completed(at(0), None, FOREVER_T, START + _PROGRESS_NS + 1)
    assert len(reports(take(c))) == 1
    c.completed(at(1), None, FOREVER_T, START + _PROGRESS_NS + 2)
    assert take(c) == []
    c.on_tag(at(0), {})
    assert c.acquire(at(5), FOREVER_T, START) is WAIT
    assert take(c) == []  # its next event matters to nobody
    c.completed(at(2), None, FOREVER_T, START + 2 * _PROGRESS_NS + 3)
    assert [r.tag for r in reports(take(c))] == [at(2)]


def test_a_waiting_federate_reports_its_next_event_when_it_changed() -> None:
    c = core(3, 1, (0, 1, None), (1, 2, None), peer_grants=False)
    assert c.acquire(at(0), FOREVER_T, START) is WAIT
    (r,) = reports(take(c))
    assert r.net == at(0)
    assert c.acquire(at(0), FOREVER_T, START + 1) is WAIT
    assert take(c) == []  # nothing new
    c.on_data(0, 0, at(0))
    assert c.acquire(at(0), FOREVER_T, START + 2) is WAIT
    (r,) = reports(take(c))  # a message arrived: the RTI hears the count
    assert r.received == {0: 1}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2 * _LTC_BATCH_NS), st.booleans()),
                min_size=1, max_size=40))
def test_batching_loses_no_tag(steps: list[tuple[int, int, bool]]) -> None:
    """Whatever the timing, reported LTCs only grow, and the last completed tag is reported
    by the time the federate waits (or stops)."""
    c = relay_granted_forever()
    now, t, n = START, 0, 0
    reported: list[tuple[int, int]] = []
    for dt, elapsed, wait in steps:
        t += dt
        now += elapsed
        c.completed(at(t), at(t + 1), FOREVER_T, now)
        if wait:
            n += 1
            c.on_tag(at(0), {0: n})  # a message to wait for: acquire waits, after reporting
            assert c.acquire(at(t + 1), FOREVER_T, now) is WAIT
            assert c.reports.ltc == at(t)
            c.on_data(0, 0, at(t))
        reported += [m.tag for m in take(c) if isinstance(m, Promise)]
    c.flush_reports(at(t + 1), at(t), now)
    reported += promises(take(c))
    assert c.reports.ltc == at(t) and c.reports.pending is None
    assert reported == sorted(set(reported))
    assert reported[-1] == at(t + 1)


# -- zero-delay cycles -------------------------------------------------------------------
def test_zero_delay_cycle_checkpoints_and_absent_ports() -> None:
    # 0 <-> 1 without delays: links 0 (0 -> 1) and 1 (1 -> 0)
    c = core(2, 0, (0, 1, None), (1, 0, None))
    assert c.in_zero_cycle
    assert c.checkpoints([(2, 0)], [(1, 1)]) == [1, 2]
    tag = at(0)
    assert c.cycles.outputs_due(tag, 1) == []  # its writer is at level 1: not before level 2
    assert not c.inputs_ready(tag, 1)  # link 1's value or absence at the tag has not come
    assert c.inputs_ready(tag, 0)  # not read before level 1
    c.cycles.on_absent(1, tag)
    assert c.inputs_ready(tag, 1)
    assert c.cycles.outputs_due(tag, 2) == [0]
    assert c.cycles.outputs_due(tag, 3) == []  # once a tag
    assert c.cycles.outputs_due(at(1), 2) == [0]  # and again at the next
    assert not c.inputs_ready(at(1), 1)
    c.on_data(1, 1, at(1))
    assert c.inputs_ready(at(1), 1)
    c.on_tag(at(5), {})
    assert c.inputs_ready(at(4), 1)  # a full grant: everything at the tag is here


def test_zero_delay_cycles_report_at_once_and_never_batch() -> None:
    c = core(2, 0, (0, 1, None), (1, 0, None))
    c.checkpoints([(1, 0)], [(0, 1)])
    now = START + 10 * MS
    for i in range(3):
        c.on_ptag(at(i + 1), {})
        c.completed(at(i), at(i + 1), FOREVER_T, now + i)
        assert [r.tag for r in reports(take(c))] == [at(i)]
        assert c.reports.pending is None


# -- stop agreement ----------------------------------------------------------------------
def test_a_stop_request_from_the_rti_is_answered_and_held_to() -> None:
    c = core(2, 1, (0, 1, None), peer_grants=False)
    c.on_stop_request(at(5), at(7))
    assert typed(take(c)) == typed([StopReply(at(7, 1))])  # it is past 5 already: the tag after its own
    assert c.stop.limit == at(7, 1)
    c.on_tag(FOREVER_T, {})
    assert c.acquire(at(7), FOREVER_T, START) == at(7)
    # not at it until agreed: the stop may come there, and then its events are processed
    # with the shutdown reactions, once (as reactor-c's tag barrier holds proposed >= horizon)
    assert c.acquire(at(7, 1), FOREVER_T, START) is WAIT
    assert c.acquire(at(9), FOREVER_T, START) is WAIT
    assert c.on_stop_granted(at(8)) == at(8)
    c.on_tag(FOREVER_T, {})  # (the grant held before the agreement stops short of it)
    assert c.acquire(at(8), at(8), START) == at(8)
    c2 = core(2, 1, (0, 1, None))
    c2.on_stop_request(at(5), NEVER_T)  # not started yet
    assert typed(take(c2)) == typed([StopReply(at(5))])
    c3 = core(2, 1, (0, 1, None))
    c3.on_stop_request(NEVER_T, NEVER_T)
    assert typed(take(c3)) == typed([StopReply((START, 0))])


def test_a_local_stop_request_reports_first_and_holds() -> None:
    c = core(2, 0, (0, 1, None))
    c.completed(at(0), at(1), FOREVER_T, START + 10 * MS)
    c.completed(at(1), at(2), FOREVER_T, START + 10 * MS + 1)
    take(c)
    assert c.reports.pending == at(1)
    c.request_stop(at(1, 1), at(2), at(1), START + 10 * MS + 2)  # from outside, between tags
    out = take(c)
    assert [r.tag for r in reports(out)] == [at(1)]  # the RTI has everything before the request
    assert typed(out[-1:]) == typed([StopReq(at(1, 1))])
    assert promises(out) == [at(1, 1)]  # its next event is at 2, but it may stop before
    assert c.acquire(at(2), FOREVER_T, START) is WAIT  # no upstream, yet it waits for the agreement
    c.completed(at(1, 1), at(2), FOREVER_T, START + 10 * MS + 3)
    assert c.reports.pending is None  # no batching while a stop is agreed
    assert c.on_stop_granted(at(3)) == at(3)
    assert c.acquire(at(2), at(3), START) == at(2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 2)), min_size=1, max_size=6),
       st.integers(0, 30), st.integers(0, 2), st.integers(0, 40))
def test_nothing_passes_an_unagreed_stop(asks: list[tuple[bool, int, int]], cur_dt: int, cur_m: int,
                                         head_dt: int) -> None:
    """Every answer is at least the tag asked and after the current tag; the federate goes
    no further than the latest tag it asked or answered until the stop is agreed."""
    c = core(2, 0, (0, 1, None))
    cur = at(cur_dt, cur_m)
    limit = NEVER_T
    for local, dt, m in asks:
        if local:
            c.request_stop(at(dt, m), None, cur, START)
            limit = max(limit, at(dt, m))
        else:
            c.on_stop_request(at(dt, m), cur)
            (reply,) = [x.tag for x in take(c) if isinstance(x, StopReply)]
            assert reply >= at(dt, m) and reply > cur
            limit = max(limit, reply)
    assert c.stop.limit == limit
    head = at(head_dt)
    assert (c.acquire(head, FOREVER_T, START) == head) == (head < limit)
    c.on_stop_granted(limit)
    assert c.acquire(head, limit, START) == min(head, limit)


def test_nothing_promised_or_reported_passes_a_tag_in_progress() -> None:
    """A reaction that requests a stop waits for the agreement inside its tag: until that
    tag completes, its outputs are still to come, so no promise or NET may pass it (the
    race Dataflow.lf's federated run showed: a peer took such a promise as a grant and
    processed the stop tag without this tag's message)."""
    # 2 -> 0 -> 1, no delays; 2 has promised everything, so 0's promises follow its own events
    c = core(3, 0, (2, 0, None), (0, 1, None))
    c.promises.on_promise(2, FOREVER_T)
    c.grant_from_promises()
    now = START + 10 * MS
    c.completed(at(0), at(5), FOREVER_T, now)
    assert promises(take(c)) == [at(5)]
    # at(5) is in progress (current > the last completed); the queue's head is now at(10)
    c.request_stop(at(5, 1), at(10), at(5), now + 1)
    out = take(c)
    assert promises(out) == [] and c.reports.promised == at(5)
    assert reports(out) == [] and c.reports.net == at(5)  # the RTI had NET 5 already: no report past it
    c.promises.on_promise(2, FOREVER_T)  # nothing new: stays
    c.pass_on(at(10), FOREVER_T, at(5))
    assert promises(take(c)) == []
    # once the tag is complete and the stop agreed at (5, 1), the promise goes as far as the stop
    c.on_stop_granted(at(5, 1))
    c.completed(at(5), at(10), at(5, 1), now + 2)
    assert promises(take(c)) == [at(5, 1)]


def test_a_held_report_in_a_tag_in_progress_gives_that_tag_as_next_event() -> None:
    c = core(2, 0, (0, 1, None))
    now = START + 10 * MS
    c.completed(at(0), at(1), FOREVER_T, now)
    c.completed(at(1), at(5), FOREVER_T, now + 1)
    take(c)
    assert c.reports.pending == at(1)
    c.request_stop(at(5, 1), at(10), at(5), now + 2)
    out = take(c)
    (r,) = reports(out)
    assert r.tag == at(1) and r.net == at(5) and promises(out) == [at(5)]


def test_while_a_stop_is_agreed_nothing_is_promised_past_the_tag_answered() -> None:
    """A federate that answered a stop request at L may stop at L, and its shutdown
    reactions then send at L: until the stop is agreed, its NET and promises stay at L."""
    c = core(3, 1, (0, 1, None), (1, 2, None))
    now = START + 10 * MS
    c.completed(at(0), at(1), FOREVER_T, now)
    take(c)
    c.on_stop_request(at(3), at(0))
    # first the Mark (what it promised, at most L), so the peers know its promises from now on hold for the stop
    assert typed(take(c)) == typed([StopMark(at(0)), StopReply(at(3))])  # its input bound: 0 may send at the start
    c.promises.on_promise(0, at(50))
    c.grant_from_promises()
    c.pass_on(at(20), FOREVER_T, at(0))  # its next event at 20, but it may stop at 3
    assert promises(take(c)) == [at(3)]
    assert c.acquire(at(1), FOREVER_T, now) == at(1)
    c.completed(at(1), at(20), FOREVER_T, now + 1)
    out = take(c)
    assert [r.net for r in reports(out)] == [at(3)]  # reported to the RTI at once, held at 3
    assert promises(out) == []
    assert c.acquire(at(3), FOREVER_T, now + 2) is WAIT  # nor at L itself
    assert c.acquire(at(20), FOREVER_T, now + 2) is WAIT
    assert reports(take(c)) == []  # its NET, held at 3, did not change
    c.on_stop_granted(at(4))
    c.pass_on(at(20), at(4), at(1))
    assert promises(take(c)) == [at(4)]


# -- a stop agreed after promises and grants that cover its tag --------------------------
def test_promises_made_before_a_stop_was_known_do_not_cover_the_stop_tag() -> None:
    """The race test_stop_gaps.py showed: 0 (no delay to 1) promised everything before it
    knew of a stop; at the agreed stop tag its shutdown reactions may send, so 1 waits there
    for a promise 0 made knowing of the stop (after its Mark)."""
    c = core(2, 1, (0, 1, None))
    c.promises.on_promise(0, FOREVER_T)
    c.grant_from_promises()
    assert c.acquire(at(1), FOREVER_T, START) == at(1)
    c.on_stop_request(at(3, 1), at(1))
    assert typed(take(c)) == typed([StopReply(at(3, 1))])  # no downstream: no Mark
    c.on_stop_granted(at(3, 1))
    assert c.grant == at(3)  # what it held stops short of the stop tag
    assert c.acquire(at(2), at(3, 1), START) == at(2)  # before it, the promise holds
    assert c.acquire(None, at(3, 1), START) is WAIT
    c.on_mark(0, at(3, 1))  # 0 knows: nothing before (3, 1), where it stops
    c.grant_from_promises()
    assert c.acquire(None, at(3, 1), START) is WAIT
    c.promises.on_promise(0, FOREVER_T)  # 0 completed the stop tag (what it sent there came first)
    assert c.promises.fresh
    c.grant_from_promises()
    assert c.acquire(None, at(3, 1), START) == at(3, 1)


def test_a_mark_before_the_agreement_and_a_delayed_link() -> None:
    # a peer that promised nothing yet marks NEVER: what it promises next counts
    c = core(2, 1, (0, 1, None))
    c.on_mark(0, NEVER_T)
    c.on_stop_granted(at(3, 1))
    c.promises.on_promise(0, at(3, 2))
    c.grant_from_promises()
    assert c.acquire(None, at(3, 1), START) == at(3, 1)
    # the Mark and the promises after it may come before the STOP_GRANTED
    c = core(2, 1, (0, 1, None))
    c.promises.on_promise(0, at(50))
    c.on_mark(0, at(3, 1))
    c.promises.on_promise(0, FOREVER_T)
    c.grant_from_promises()
    c.on_stop_granted(at(3, 1))
    assert c.acquire(None, at(3, 1), START) == at(3, 1)
    # over a delay (a microstep is one) nothing sent at the stop tag arrives at it: the
    # promises made before still cover it
    for delay in (0, 2 * MS):
        c = core(2, 1, (0, 1, delay))
        c.promises.on_promise(0, FOREVER_T)
        c.grant_from_promises()
        c.on_stop_request(at(3, 1), at(1))
        c.on_stop_granted(at(3, 1))
        assert c.acquire(None, at(3, 1), START) == at(3, 1)


def test_rti_grants_made_before_the_agreement_stop_short_of_the_stop_tag() -> None:
    c = core(2, 1, (0, 1, None), (1, 0, None), peer_grants=False)
    c.on_tag(FOREVER_T, {})
    c.on_ptag(at(3, 1), {})
    c.on_stop_request(at(3, 1), at(1))
    c.on_stop_granted(at(3, 1))
    assert c.grant == at(3) and c.ptag is None
    assert c.acquire(None, at(3, 1), START) is WAIT
    c.on_tag(at(3, 1), {0: 1})  # the RTI's, computed from the agreement
    assert c.acquire(None, at(3, 1), START) is WAIT  # its message first
    c.on_data(0, 0, at(3, 1))
    assert c.acquire(None, at(3, 1), START) == at(3, 1)


def test_the_mark_goes_once_with_the_most_it_can_promise() -> None:
    # answering the RTI: min(what it promised, the tag it answered)
    c = core(2, 0, (0, 1, None))
    c.completed(at(0), None, FOREVER_T, START)
    assert promises(take(c)) == [FOREVER_T]
    c.on_stop_request(at(3, 1), at(0))
    assert typed(take(c)) == typed([StopMark(at(3, 1)), StopReply(at(3, 1))])
    c.on_stop_granted(at(3, 1))
    c.pass_on(None, at(3, 1), at(0))
    assert promises(take(c)) == []  # its stop tag is its next event
    c.completed(at(3, 1), None, at(3, 1), START + 1)
    assert promises(take(c)) == [FOREVER_T]  # done: promised again, after the Mark
    # asking: the Mark first, then the reports and promises (all made knowing of the stop)
    c = core(2, 0, (0, 1, None))
    c.completed(at(0), at(5), FOREVER_T, START)
    take(c)
    c.request_stop(at(0, 1), at(5), at(0), START + 1)
    out = take(c)
    assert typed([out[0], out[-1]]) == typed([StopMark(at(0, 1)), StopReq(at(0, 1))])
    c.on_stop_request(at(0, 1), at(0))  # the RTI asks everyone, this federate too
    assert typed(take(c)) == typed([StopReply(at(0, 1))])
    # without downstream peers, or without promises, there is nobody to tell
    for c in (core(2, 1, (0, 1, None)), core(2, 0, (0, 1, None), peer_grants=False)):
        c.on_stop_request(at(3), at(0))
        assert marks(take(c)) == []


@settings(max_examples=400, deadline=None)
@given(
    delay=st.sampled_from([None, 0, 2 * MS]),
    stop=st.tuples(st.integers(1, 12), st.integers(0, 2)),
    pre=st.lists(st.one_of(st.tuples(st.integers(0, 15), st.integers(0, 2)), st.just(None)), max_size=4),
    mark=st.one_of(st.none(), st.tuples(st.integers(0, 12), st.integers(0, 2))),
    post=st.lists(st.one_of(st.tuples(st.integers(0, 15), st.integers(0, 2)), st.just(None)), max_size=3),
    rti_pre=st.one_of(st.none(), st.tuples(st.integers(0, 15), st.integers(0, 2))),
    rti_post=st.one_of(st.none(), st.tuples(st.integers(0, 15), st.integers(0, 2))),
    granted_at=st.integers(0, 10),
)
def test_the_stop_tag_is_granted_only_from_what_knew_of_the_stop(
        delay: int | None, stop: tuple[int, int], pre: list[tuple[int, int] | None], mark: tuple[int, int] | None,
        post: list[tuple[int, int] | None], rti_pre: tuple[int, int] | None, rti_post: tuple[int, int] | None,
        granted_at: int) -> None:
    """Peer 0 -> 1 (``delay``): promises (None: FOREVER) before 0's Mark, the Mark (0 knew
    of the stop: at most the stop tag) and promises after it, in order; the STOP_GRANTED at
    any point among them; an RTI grant before the agreement and one after. The stop tag is
    granted exactly when a grant from the RTI after the agreement covers it, or the
    promises do with those made before the Mark held to the tags before the stop tag (plus
    the delay: a delayed link carries nothing sent at the stop tag to it)."""
    from reactorfed.federation.coordination.layout import add_delay, link_delay

    S = at(*stop)
    d = link_delay(delay)

    def tag(x: tuple[int, int] | None) -> tuple[int, int]:
        return FOREVER_T if x is None else at(*x)

    items: list[tuple[str, tuple[int, int]]] = [("promise", tag(p)) for p in pre]
    if mark is not None:
        items.append(("mark", min(at(*mark), S)))
        items += [("promise", tag(p)) for p in post]
    items.insert(min(granted_at, len(items)), ("granted", S))
    c = core(2, 1, (0, 1, delay))
    c.on_stop_request(S, NEVER_T)  # it answers S (it is at the start)
    if rti_pre is not None:
        c.on_tag(at(*rti_pre), {})
    for kind, t in items:
        if kind == "promise":
            c.promises.on_promise(0, t)
        elif kind == "mark":
            c.on_mark(0, t)
        else:
            c.on_stop_granted(t)
            if rti_post is not None:
                c.on_tag(at(*rti_post), {})
        if c.promises.fresh:
            c.grant_from_promises()
    before = max([(START, 0)] + [tag(p) for p in pre])
    bound = min(add_delay(before, d), add_delay(S, d))
    if mark is not None:
        after = max([min(at(*mark), S)] + [tag(p) for p in post])
        bound = max(bound, add_delay(after, d))
    want = bound > S or (rti_post is not None and at(*rti_post) >= S)
    assert (c.acquire(None, S, START) == S) == want
    # and every tag before the stop tag is as granted as the promises before the Mark allow
    assert c.grant >= min(pred(add_delay(before, d)), pred(S))
