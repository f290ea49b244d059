"""Elastic banks (issue 19): the declaration, the layout's slots, and the RTI core's
membership rounds: joins and leaves at agreed tags, failures, replay of the record."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed import Input, Output, Reactor, each
from reactorfed.errors import ValidationError
from reactorfed.federation.coordination.layout import (
    ElasticGroup,
    Layout,
    Link,
    add_delay,
    link_delay,
)
from reactorfed.federation.coordination.membership import (
    Admit,
    Change,
    MembershipError,
    Query,
    Refused,
    RoundEnd,
    check_schedule,
)
from reactorfed.federation.coordination.rti_core import (
    FOREVER_T,
    NEVER_T,
    Grant,
    RtiCore,
    succ,
)
from reactorfed.federation.process.runner import layout_of
from reactorfed.model.elastic import Elastic, elastic_bank
from reactorfed.time.tag import TagT

START = 1_000


def at(dt: int, m: int = 0) -> TagT:
    return (START + dt, m)


def elastic_lay(n: int, bank: tuple[int, ...], initial: int, *edges: tuple[int, int, int | None],
                lo: int = 0) -> Layout:
    links = [Link(i, s, d, delay, f"f{s}.out{i}", f"f{d}.in{i}") for i, (s, d, delay) in enumerate(edges)]
    out = Layout([f"f{i}" for i in range(n)], links,
                 elastic=[ElasticGroup("b", bank, lo, len(bank), initial)])
    out._closure()
    return out


def hub(k: int, initial: int, out: int | None = None, back: int | None = 0, lo: int = 0) -> RtiCore:
    """A learner (0) and k sampler slots (1..k): learner -out-> each, each -back-> learner."""
    edges = [e for s in range(1, k + 1) for e in ((0, s, out), (s, 0, back))]
    c = RtiCore(elastic_lay(k + 1, tuple(range(1, k + 1)), initial, *edges, lo=lo))
    c.start(START)
    return c


def answer_all(c: RtiCore, tags: dict[int, TagT] | None = None) -> list[Grant]:
    """Every federate asked in the round under way answers (its tag, or the proposal)."""
    rnd = c.members.round
    assert rnd is not None
    out: list[Grant] = []
    for f in sorted(rnd.waiting):
        out += c.members.on_membership_reply(f, rnd.id, (tags or {}).get(f, rnd.tag))
    return out


# -- the declaration and the layout ---------------------------------------------------
class Sampler(Reactor):
    out = Output(int)
    inp = Input(int)

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed


class Trainer(Reactor):
    ins = Input(int, width=lambda self: self.n)
    out = Output(int)

    def __init__(self, n: int) -> None:
        self.n = n


class Main(Reactor):
    def __init__(self, initial: int = 2, hi: int = 4) -> None:
        self.learner = Trainer(hi)
        self.samplers = elastic_bank(Sampler, Elastic(1, hi, initial=initial), seed=each(lambda i: i))
        self.connect(self.samplers.out, self.learner.ins, after=0)
        self.connect(self.learner.out, self.samplers.inp, broadcast=True)


def test_an_elastic_bank_is_laid_out_at_its_maximum_width() -> None:
    lay = layout_of(Main(2))
    assert lay.names == ["learner", "samplers[0]", "samplers[1]", "samplers[2]", "samplers[3]"]
    assert lay.elastic == [ElasticGroup("samplers", (1, 2, 3, 4), 1, 4, 2)]
    assert lay.initial_members() == {0, 1, 2}
    assert lay.elastic_of(3) == lay.elastic[0] and lay.elastic_of(0) is None


def test_the_digest_does_not_depend_on_the_width() -> None:
    assert layout_of(Main(2)).digest == layout_of(Main(4)).digest
    assert layout_of(Main(2)).digest != layout_of(Main(2, hi=5)).digest  # more slots: another program


def test_widths_are_checked_at_the_declaration() -> None:
    with pytest.raises(ValidationError, match="initial width 5 is outside"):
        Elastic(1, 4, initial=5)
    with pytest.raises(ValidationError, match="min <= max"):
        Elastic(3, 2)
    with pytest.raises(ValidationError, match="must be an int"):
        Elastic(1, 2.5)  # type: ignore[arg-type]
    assert Elastic(1, 4).initial == 4


def test_an_elastic_member_may_be_on_a_zero_delay_cycle() -> None:
    """(Taking part in the cycle's tags while present: the grants and the waits within a
    tag leave it out while absent.)"""
    lay = elastic_lay(3, (1, 2), 1, (0, 1, None), (1, 0, None))
    assert lay.scc[0] == lay.scc[1] == {0, 1}
    assert elastic_lay(3, (1, 2), 1, (0, 1, None), (1, 0, 0)).scc[1] == {1}  # after 0 breaks it


def test_a_member_joins_a_zero_delay_cycle_after_the_tags_its_partner_was_granted() -> None:
    """The learner (0) and slot 1 form a zero-delay cycle; the slot absent, the learner's
    grants do not wait for it. The slot joins one microstep after the learner's latest
    grant (LF's rule), and from there the two advance together by PTAGs."""
    c = hub(1, initial=0, out=None, back=None)
    (g,) = c.on_ltc(0, at(0), at(10), {}, {})
    assert g.federate == 0 and g.tag == at(10)
    c.members.request_join(1)
    answer_all(c)
    _query, ch, adm, _end = c.members.take_outbox()
    assert ch == Change(at(10, 1), 1, True) and isinstance(adm, Admit) and adm.tag == at(10, 1)
    grants = c.on_ltc(0, at(10), at(20), {}, {})
    assert {(gr.federate, gr.tag, gr.provisional) for gr in grants} >= {(0, at(10, 1), True), (1, at(10, 1), True)}


def test_an_elastic_bank_inside_a_federate_is_refused() -> None:
    class Inner(Reactor):
        def __init__(self) -> None:
            self.bank = elastic_bank(Sampler, Elastic(1, 2))

    class Outer(Reactor):
        def __init__(self) -> None:
            self.a = Inner()
            self.b = Trainer(1)

    with pytest.raises(ValidationError, match="must be federates"):
        layout_of(Outer())


# -- hand cases -----------------------------------------------------------------------
def test_absent_slots_hold_nothing_back() -> None:
    c = hub(3, initial=1)  # slots 2, 3 absent
    assert c.members.present == [True, True, False, False]
    assert c.feds[2].resigned and c.next_event(2) == FOREVER_T
    c.on_ltc(0, at(0), at(20), {}, {})
    c.on_ltc(1, at(0), at(10), {}, {})
    assert c.feds[0].granted == at(10)  # only sampler 1 counts: its (10, 0) arrives at (10, 1)


def test_without_changes_the_grants_are_those_of_a_fixed_federation() -> None:
    from .test_layout import lay

    edges = [(0, 1, None), (1, 0, 0), (0, 2, None), (2, 0, 0)]
    a, b = RtiCore(elastic_lay(3, (1, 2), 2, *edges)), RtiCore(lay(3, *edges))
    for c in (a, b):
        c.start(START)
    for f, tag in ((1, at(0)), (0, at(0)), (2, at(0)), (1, at(5))):
        assert a.on_ltc(f, tag, succ(tag), {}, {}) == b.on_ltc(f, tag, succ(tag), {}, {})
    assert a.members.take_outbox() == [] and a.members.record == []


def test_join_before_the_start_is_at_the_start_tag() -> None:
    c = RtiCore(elastic_lay(3, (1, 2), 1, (0, 1, None), (0, 2, None), (1, 0, 0), (2, 0, 0)))
    assert c.members.request_join(2, physical_time=5) == []
    grants = c.start(START)
    out = c.members.take_outbox()
    assert out[0] == Change(at(0), 2, True)
    assert isinstance(out[1], Admit) and out[1].tag == at(0)
    assert c.members.present == [True, True, True] and c.members.record == [Change(at(0), 2, True)]
    # Admitting it made grants due: the start returns them. Every grant the core holds as
    # sent was returned (one dropped would never be sent again: regrant sees no news).
    assert grants and all(isinstance(g, Grant) for g in grants)
    grants += c.regrant(range(3))
    last = {g.federate: g.tag for g in grants if not g.provisional}
    assert last == {f: st.granted for f, st in enumerate(c.feds) if st.granted != NEVER_T}, (grants, c.feds)


def test_join_mid_run_after_grants() -> None:
    c = hub(2, initial=1)
    c.on_ltc(0, at(0), at(30), {}, {})
    c.on_ltc(1, at(0), at(20), {}, {})
    assert c.feds[0].granted == at(20)  # sampler 1's (20, 0) comes back at (20, 1)
    c.members.request_join(2, physical_time=START + 3)
    (q,) = c.members.take_outbox()
    # LF's rule: after every tag granted downstream (the learner holds (20, 0))
    assert isinstance(q, Query) and q.tag == at(20, 1) and q.changes == ((2, True),) and q.to == {0, 1}
    assert c.next_event(2) == at(20, 1)  # no grant passes the proposal meanwhile
    c.on_ltc(1, at(20), FOREVER_T, {}, {})
    assert c.feds[0].granted == at(20, 1)  # the joining slot's (20, 1) arrives at (20, 2)
    c.members.on_membership_reply(0, q.round, at(10, 1))
    c.members.on_membership_reply(1, q.round, at(21))  # sampler 1 is further: the latest answer wins
    out = c.members.take_outbox()
    assert out[0] == Change(at(21), 2, True)
    assert isinstance(out[1], Admit) and out[1].member == 2 and out[1].tag == at(21)
    assert c.members.record == [Change(at(21), 2, True)] and c.members.present == [True, True, True]
    assert c.next_event(2) == at(21)
    assert c.feds[0].granted < add_delay(at(21), link_delay(0))


def test_join_after_the_request_time() -> None:
    c = hub(2, initial=1)
    c.members.request_join(2, physical_time=START + 500)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.tag == at(500)  # not before its request's physical time


def test_join_when_a_message_is_already_addressed_to_it() -> None:
    """A slot that left, with a message still addressed to it, joins again after it (and
    after what its last incarnation completed)."""
    c = hub(2, initial=2, lo=1)
    c.on_ltc(2, at(3), at(4), {}, {})
    c.on_ltc(0, at(0), at(50), {2: [1, *at(40)]}, {})  # the learner sent slot 2 a message for (40, 0)
    c.members.on_failed(2)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.tag == at(40, 1) and q.to == {0, 1}
    assert c.in_flight.get((0, 2), []) == []  # what was in flight to it is for nobody now
    answer_all(c)
    # (it completed (3, 0): from (3, 1) it did nothing, present until its leave)
    assert c.members.take_outbox()[-2:] == [Change(at(40, 1), 2, False, at(3, 1)), RoundEnd(1, frozenset({0, 1}))]
    assert not c.members.present[2]
    c.members.request_join(2, physical_time=0)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.tag >= at(40, 1)
    answer_all(c)
    admit = next(o for o in c.members.take_outbox() if isinstance(o, Admit))
    assert admit.received == {0: 1}  # the message to its last incarnation counts as taken


def test_leave_with_messages_in_flight() -> None:
    c = hub(2, initial=2, lo=1)
    c.on_ltc(0, at(0), at(10), {2: [1, *at(0)]}, {})  # to slot 2 at (0, 0): in flight
    c.on_ltc(2, at(0), at(5), {0: [1, *at(0, 1)]}, {0: 1})  # it took it, sent one back
    c.on_ltc(0, at(10), at(20), {2: [2, *at(10)]}, {2: 0})  # another to slot 2, for (10, 0)
    c.members.request_leave(2)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.tag == at(10, 1) and q.to == {0, 1, 2}  # after the message to it
    answer_all(c, {2: at(6)})
    assert c.members.take_outbox() == [Change(at(10, 1), 2, False), RoundEnd(q.round, q.to)]
    assert c.members.present[2]  # until it resigns, having run the tags before (10, 1)
    assert c.next_event(2) == at(5)  # its own next event, before the leave: it still runs
    c.on_ltc(2, at(10), at(30), {0: [2, *at(10, 1)]}, {0: 2})
    assert c.next_event(2) == FOREVER_T  # (30, 0) is past its leave: it sends nothing more
    assert c.in_flight[(2, 0)] == [(1, at(0, 1)), (2, at(10, 1))]  # what it sent is still due to the learner
    c.on_resign(2, {}, {})
    assert not c.members.present[2] and c.members.width("b") == 1


def test_a_failed_upstream_member_unblocks_a_waiting_grant() -> None:
    c = hub(2, initial=2, lo=1)
    c.on_ltc(0, at(0), at(40), {}, {})
    c.on_ltc(1, at(0), at(30), {}, {})
    c.on_ltc(2, at(0), at(5), {}, {})
    assert c.feds[0].granted == at(5)  # the learner waits on slot 2's (5, 0)
    grants = c.members.on_failed(2)
    g = [gr for gr in grants if gr.federate == 0]
    assert g and g[-1].tag == at(30)  # at once, before the round ends
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.to == {0, 1}  # the failed member is not asked
    answer_all(c)
    assert c.members.record == [Change(at(0, 1), 2, False)]


def test_a_round_does_not_wait_for_a_member_that_leaves_meanwhile() -> None:
    """A member whose leave is agreed is asked in the next round until it resigns; when it
    resigns (or fails) before answering, that round goes on without it."""
    for gone in ("resign", "fail"):
        c = hub(3, initial=3)
        c.members.request_leave(3)
        answer_all(c)
        assert c.members.take_outbox()[-2] == Change(at(0), 3, False)
        c.members.request_leave(2)
        (q,) = [o for o in c.members.take_outbox() if isinstance(o, Query)]
        assert 3 in q.to  # still present: it has not resigned yet
        for f in (0, 1, 2):
            c.members.on_membership_reply(f, q.round, q.tag)
        assert c.members.take_outbox() == []  # waiting for 3
        if gone == "resign":
            c.on_resign(3, {}, {})
        else:
            c.members.on_failed(3)
        assert c.members.take_outbox() == [Change(q.tag, 2, False), RoundEnd(q.round, q.to)], gone
        assert c.members.round is None and not c.members.present[3]


def test_a_rejoin_waits_until_nothing_more_can_reach_the_last_incarnation() -> None:
    """A message sent to a member before it left, arriving after (over a delay), is dropped;
    a join of its slot is agreed only once every federate that could still send it such a
    message is past the leave, at a tag after the last of them: so the joiner's counts do
    not include a message it never gets."""
    c = hub(2, initial=2, out=5)  # the learner's links to the samplers: after 5 ns
    c.on_ltc(0, at(0), at(1), {}, {})
    c.members.request_leave(2)
    answer_all(c, {0: at(2)})
    assert c.members.take_outbox()[-2] == Change(at(2), 2, False)
    c.on_resign(2, {}, {})
    c.members.request_join(2)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.tag < at(6)
    answer_all(c)
    assert c.members.take_outbox() == [] and c.members.round is not None  # the learner may still send to it
    c.on_ltc(0, at(1), at(10), {2: [1, *at(6)]}, {})  # it did, at (1, 0), for (6, 0): dropped
    out = c.members.take_outbox()
    assert out[0] == Change(at(6, 1), 2, True)  # after that message
    assert isinstance(out[1], Admit) and out[1].received == {0: 1}  # counted as taken


def test_grants_do_not_wait_for_what_a_failed_member_sent_and_nobody_received() -> None:
    c = hub(2, initial=2, lo=1)
    c.on_ltc(0, at(0), at(40), {}, {})
    c.on_ltc(1, at(0), at(30), {}, {})
    c.on_ltc(2, at(0), at(50), {0: [2, *at(0, 1)]}, {})  # two messages to the learner, for (0, 1)
    c.on_ltc(0, at(0), at(40), {}, {2: 1})  # one arrived
    assert c.feds[0].granted == at(0, 1)  # the other, for (0, 1), holds it there
    grants = [g for g in c.members.on_failed(2) if g.federate == 0]
    assert grants and grants[-1].tag == at(30) and grants[-1].counts[2] == 1  # lost with it


def test_leaving_below_the_minimum_or_joining_past_the_maximum_is_refused() -> None:
    c = hub(2, initial=2, lo=2)
    with pytest.raises(MembershipError, match="bank b would fall below its minimum width 2"):
        c.members.request_leave(1)
    with pytest.raises(MembershipError, match="f1 failed: bank b would fall below its minimum width 2"):
        c.members.on_failed(1)
    assert c.members.present == [True, True, True] and c.members.take_outbox() == []  # nothing changed
    with pytest.raises(MembershipError, match="at its maximum width 2"):
        c.members.free_slot("b")
    with pytest.raises(MembershipError, match="already present"):
        c.members.request_join(1)
    with pytest.raises(MembershipError, match="not a member of an elastic bank"):
        c.members.request_join(0)


def test_changes_asked_together_are_at_one_tag() -> None:
    c = hub(4, initial=1)
    c.on_ltc(1, at(0), at(7), {}, {})
    c.members.request_join(2)  # a round starts
    c.members.request_join(3)  # waits for the next one, with 4
    c.members.request_join(4)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query)
    answer_all(c)
    out = c.members.take_outbox()
    (q2,) = [o for o in out if isinstance(o, Query)]
    assert q2.changes == ((3, True), (4, True)) and q2.to == {0, 1, 2}
    answer_all(c, {2: at(9)})
    assert [(ch.member, ch.tag) for ch in c.members.record] == [(2, q.tag), (3, at(9)), (4, at(9))]


def test_no_change_at_or_past_the_stop_tag() -> None:
    c = hub(2, initial=1)
    c.on_stop_request(0, at(5))
    c.members.request_join(2)
    assert c.members.take_outbox() == [Refused(2, True, "f2: the federation is stopping")]
    c = hub(2, initial=1)
    c.members.request_join(2)
    (_q,) = c.members.take_outbox()
    c.on_stop_request(0, at(5))
    for f in (0, 1):
        c.on_stop_reply(f, at(5))
    assert c.stop_tag == at(5)
    answer_all(c, {1: at(6)})
    out = c.members.take_outbox()
    assert isinstance(out[-2], Refused) and out[-1] == RoundEnd(1, frozenset({0, 1}))  # called off
    assert c.members.record == [] and not c.members.present[2]
    assert c.next_event(2) == FOREVER_T


def test_replay_applies_the_recorded_tags() -> None:
    c = RtiCore(hub(2, initial=1).layout)
    sched = [Change(at(20), 2, True), Change(at(40), 1, False)]
    c.members.load_schedule(sched)
    assert c.members.take_outbox() == sched  # every federate gets the whole schedule
    c.start(START)
    assert c.next_event(2) == at(20)  # it holds grants at its join tag until it connects
    c.on_ltc(0, at(0), at(50), {}, {})
    c.on_ltc(1, at(0), at(30), {}, {})
    assert c.feds[0].granted == at(20)  # (20, 0) from slot 2 arrives at (20, 1)
    with pytest.raises(MembershipError, match="replayed"):
        c.members.request_leave(1)
    # a replay is exempt from LF's physical-time term: asked 999 ns in, it joins at (20, 0)
    c.members.request_join(2, physical_time=START + 999)
    (adm,) = c.members.take_outbox()
    assert isinstance(adm, Admit) and adm.tag == at(20)
    c.on_ltc(1, at(39), FOREVER_T, {}, {})
    assert c.next_event(1) == FOREVER_T  # it leaves at (40, 0)
    c.on_resign(1, {}, {})
    assert c.members.present == [True, False, True] and c.members.record == sched


def test_a_schedule_that_does_not_add_up_is_refused() -> None:
    lay = hub(2, initial=1, lo=1).layout
    with pytest.raises(MembershipError, match="already present"):
        check_schedule(lay, [Change(at(1), 1, True)])
    with pytest.raises(MembershipError, match="width 0 at"):
        check_schedule(lay, [Change(at(1), 1, False)])
    with pytest.raises(MembershipError, match="before the one before"):
        check_schedule(lay, [Change(at(2), 2, True), Change(at(1), 1, False)])
    with pytest.raises(MembershipError, match="not a member"):
        check_schedule(lay, [Change(at(2), 0, True)])
    check_schedule(lay, [Change(at(2), 1, False), Change(at(2), 2, True)])  # a swap at one tag


def test_a_record_is_the_schedule_one_process_applies() -> None:
    from reactorfed.federation.coordination.membership import bank_schedule, record_of
    from reactorfed.model.elastic import MemberChange

    lay = layout_of(Main(2))
    rec = [Change(at(20), 3, True), Change(at(40, 2), 1, False)]
    sched = bank_schedule(lay, rec, START)
    assert sched == [MemberChange(20, 0, "samplers", 2, True), MemberChange(40, 2, "samplers", 0, False)]
    assert record_of(lay, sched, START) == rec
    with pytest.raises(MembershipError, match="not a member"):
        bank_schedule(lay, [Change(at(1), 0, True)], START)


# -- property: a simulated federation under random joins and leaves --------------------
class Sim:
    """Federates that run as reactorfed's would, against an RtiCore: each has a timer
    every ``period`` from its start tag and reacts to its inputs; at every tag it processes
    it sends one value on each link whose receiver is present (by the changes it knows) at
    that tag, a function of the tag and its inputs. It completes a tag only when granted
    (or without upstream), never at or past an unanswered round's tag it answered, and
    reports each tag it completes. Every send checks the safety of grants: the message
    arrives after every tag the receiver was granted and has completed."""

    END = START + 40

    def __init__(self, lay: Layout, schedule: list[Change] | None) -> None:
        self.lay = lay
        self.c = RtiCore(lay)
        n = len(lay.names)
        if schedule is not None:
            self.c.members.load_schedule(schedule)
        self.known: list[Change] = []  # the changes every federate has (broadcast at once)
        self.granted = [NEVER_T] * n
        self.ltc = [NEVER_T] * n
        self.started = [False] * n
        self.start = [at(0)] * n
        self.inbox: list[dict[TagT, list[Any]]] = [{} for _ in range(n)]
        self.sent = [dict[int, int]() for _ in range(n)]
        self.recv = [dict[int, int]() for _ in range(n)]
        self.last_on = [dict[int, TagT]() for _ in range(n)]  # the last tag put on each link
        self.barrier: list[tuple[int, TagT] | None] = [None] * n  # (round, my answer)
        self.trace: list[list[tuple[TagT, Any]]] = [[] for _ in range(n)]
        self.failed: set[int] = set()
        self.ups = [lay.upstream(f) for f in range(n)]
        self.acc = [0] * n
        self.c.start(START)
        for f in lay.initial_members():
            self.started[f] = True
        self._drain()

    def present(self, m: int, tag: TagT) -> bool:
        p = m in self.lay.initial_members()
        for ch in self.known:
            if ch.member == m and ch.tag <= tag:
                p = ch.joined
        return p

    def _drain(self) -> None:
        for o in self.c.members.take_outbox():
            if isinstance(o, Change):
                assert o not in self.known
                self.known.append(o)
                for f in range(len(self.lay.names)):  # the same membership at the same tag everywhere
                    assert not self.started[f] or self.ltc[f] < o.tag, (f, self.ltc[f], o)
            elif isinstance(o, Admit):
                self.started[o.member] = True
                self.start[o.member] = o.tag
                self.ltc[o.member] = NEVER_T
                self.granted[o.member] = NEVER_T
                self.sent[o.member] = dict(o.sent)
                # What came for its tags before it connected (a replayed member that
                # connects late) is its own, and counts on top of where its slot starts.
                self.inbox[o.member] = {t: v for t, v in self.inbox[o.member].items() if t >= o.tag}
                self.recv[o.member] = dict(o.received)
                for vs in self.inbox[o.member].values():
                    for src, _v in vs:
                        self.recv[o.member][src] = self.recv[o.member].get(src, 0) + 1
                self.acc[o.member] = 0
            elif isinstance(o, Query):
                for f in o.to:
                    self.barrier[f] = (o.round, self._answer(f, o))
            elif isinstance(o, RoundEnd):
                for f in o.to:
                    b = self.barrier[f]
                    if b is not None and b[0] == o.round:
                        self.barrier[f] = None

    def _answer(self, f: int, q: Query) -> TagT:
        t = max(q.tag, succ(self.ltc[f]))
        for m, _j in q.changes:
            if m in self.last_on[f]:
                t = max(t, succ(self.last_on[f][m]))
        return t

    def _grants(self, grants: list[Grant]) -> None:
        self._drain()
        for g in grants:
            if g.provisional:
                # (no zero-delay cycles here; a PTAG still comes when a federate's own
                # in-flight input, looping back over a delay, attains its EIMT: unused)
                continue
            self.granted[g.federate] = max(self.granted[g.federate], g.tag)

    def timer(self, f: int) -> TagT:
        period = 3 + f
        s = self.start[f]
        lt = self.ltc[f]
        if lt < s:
            return s
        k = (lt[0] - s[0]) // period + 1
        return (s[0] + k * period, 0)

    def next_tag(self, f: int) -> TagT:
        t = min([self.timer(f), *self.inbox[f].keys()])
        return t if t < (self.END, 0) else FOREVER_T

    def step(self, f: int) -> None:
        """Federate ``f`` acts: processes its next tag if it may, else reports its NET."""
        if not self.started[f] or self.c.feds[f].resigned:
            return
        t = self.next_tag(f)
        if any(ch.member == f and not ch.joined and self.start[f] <= ch.tag <= t for ch in self.known):
            # this incarnation left (by the changes it knows; it may join again later)
            self.started[f] = False
            self._grants(self.c.on_resign(f, self._sent_report(f), dict(self.recv[f])))
            return
        if t == FOREVER_T:
            self._grants(self.c.on_ltc(f, self.ltc[f], FOREVER_T, self._sent_report(f), dict(self.recv[f])))
            return
        b = self.barrier[f]
        free = not self.ups[f]
        if (b is not None and t >= b[1]) or not (free or t <= self.granted[f]):
            self._grants(self.c.on_net(f, t, self._sent_report(f), dict(self.recv[f])))
            return
        fires = t == self.timer(f)
        inputs = sorted(self.inbox[f].pop(t, []))
        self.trace[f].append((t, inputs))
        self.acc[f] = hash((self.acc[f], t, tuple(inputs))) % 1000
        self._earliest: dict[int, TagT] = {}
        for lk in self.lay.links:  # (on its timer only: a value from what it received so far)
            if not fires or lk.src != f or not self.present(lk.dst, t):
                continue
            a = max(add_delay(t, link_delay(lk.delay)), succ(self.last_on[f].get(lk.dst, NEVER_T)))
            r = lk.dst
            assert a > self.granted[r] or not self.started[r], ("granted past a message", f, r, a, self.granted[r])
            assert a > self.ltc[r] or not self.started[r], ("a message to the past", f, r, a)
            self.last_on[f][r] = a
            self.sent[f][r] = self.sent[f].get(r, 0) + 1
            self._earliest.setdefault(r, a)
            # Delivered when the incarnation of the receiver present at t is still present
            # at a (no change of it in (t, a]); a member that has not connected yet gets it
            # when it does, as over a network.
            if not any(ch.member == r and t < ch.tag <= a for ch in self.known):
                self.inbox[r].setdefault(a, []).append((f, self.acc[f]))
                self.recv[r][f] = self.recv[r].get(f, 0) + 1
        self.ltc[f] = t
        sent = {d: [c, *self._earliest.get(d, self.last_on[f].get(d, NEVER_T))] for d, c in self.sent[f].items()}
        self._grants(self.c.on_ltc(f, t, self.next_tag(f), sent, dict(self.recv[f])))

    def _sent_report(self, f: int) -> dict[int, list[int]]:
        return {d: [c, *self.last_on[f].get(d, NEVER_T)] for d, c in self.sent[f].items()}

    def join(self, m: int, physical: int) -> None:
        self._grants(self.c.members.request_join(m, physical))

    def leave(self, m: int) -> None:
        self._grants(self.c.members.request_leave(m))

    def answer(self, f: int) -> None:
        b = self.barrier[f]
        if b is not None and self.started[f] and not self.c.feds[f].resigned:
            self._grants(self.c.members.on_membership_reply(f, b[0], max(b[1], succ(self.ltc[f]))))


@st.composite
def elastic_layouts(draw: st.DrawFn) -> Layout:
    """A fixed part (0, maybe 1) and a bank of slots; links with delays, or zero-delay links
    that form no cycle (no PTAG: the simulation's federates do not announce absent ports)."""
    fixed = draw(st.integers(1, 2))
    k = draw(st.integers(1, 4))
    n = fixed + k
    edges = []
    for s in range(fixed, n):  # every slot talks with a fixed federate both ways
        f = draw(st.integers(0, fixed - 1))
        edges.append((f, s, draw(st.sampled_from([None, 0, 2]))))
        edges.append((s, f, draw(st.sampled_from([0, 1, 4]))))
    if fixed == 2:
        edges.append((0, 1, draw(st.sampled_from([None, 0, 3]))))
    initial = draw(st.integers(0, k))
    return elastic_lay(n, tuple(range(fixed, n)), initial, *edges)


def _run(data: st.DataObject, lay: Layout, schedule: list[Change] | None) -> Sim:
    sim = Sim(lay, schedule)
    n = len(lay.names)
    slots = lay.elastic[0].slots
    for _ in range(data.draw(st.integers(20, 160))):
        kind = data.draw(st.sampled_from(["step"] * 6 + ["answer"] * 2 + ["join", "leave", "fail"]))
        if kind == "step":
            sim.step(data.draw(st.integers(0, n - 1)))
        elif kind == "answer":
            sim.answer(data.draw(st.integers(0, n - 1)))
        elif schedule is not None:
            # replay: the members connect whenever; they join at the recorded tags
            m = data.draw(st.sampled_from(slots))
            if kind == "join" and not sim.started[m] and m not in sim.c.members.connected:
                sim.join(m, START + data.draw(st.integers(0, 40)))
        else:
            m = data.draw(st.sampled_from(slots))
            try:
                if kind == "join":
                    sim.join(m, START + data.draw(st.integers(0, 40)))
                elif kind == "leave":
                    sim.leave(m)
                elif sim.started[m]:
                    sim._grants(sim.c.members.on_failed(m))
                    sim.started[m] = False
                    sim.failed.add(m)
            except MembershipError:
                pass
    # finish: everyone answers and runs to the end; replayed joins connect
    before = None
    while True:
        for f in range(n):
            sim.answer(f)
            sim.step(f)
            if schedule is not None and not sim.started[f] and f in sim.c.members.slots.floor and f not in sim.c.members.connected:
                sim.join(f, START)
        now = (list(sim.ltc), list(sim.granted), len(sim.known), sim.c.members.round and sim.c.members.round.id, list(sim.started))
        if now == before:
            break
        before = now
    return sim


def _finished(sim: Sim) -> None:
    """Every federate that runs has run to the end: none is left waiting (for a grant, a
    change or a round)."""
    assert sim.c.members.round is None
    for f in range(len(sim.lay.names)):
        if sim.started[f] and not sim.c.feds[f].resigned:
            assert sim.next_tag(f) == FOREVER_T, (f, sim.ltc[f], sim.next_tag(f), sim.granted[f], sim.barrier[f])


@settings(max_examples=100, deadline=10_000)  # (~30 ms an example; the whole file runs in ~5 s)
@given(st.data())
def test_random_joins_and_leaves_keep_grants_safe_and_replay_gives_the_same_run(data: st.DataObject) -> None:
    """Every message arrives after what its receiver was granted (checked at each send),
    every change reaches every federate before it passes the change's tag, every run goes
    to its end, and a replay of the record, whatever the order in which the federates act
    and connect, runs the fixed federates through the same tags with the same inputs, and
    makes the same record. (Failures are not replayed: a run with one is checked for safety
    and progress only.)"""
    lay = data.draw(elastic_layouts())
    live = _run(data, lay, None)
    _finished(live)
    rec = live.c.members.record
    assert [ch.tag for ch in rec] == sorted(ch.tag for ch in rec)
    replay = _run(data, lay, list(rec))
    _finished(replay)
    assert replay.c.members.record == rec
    if not live.failed:
        for f in range(len(lay.names)):
            if lay.elastic_of(f) is None:
                assert live.trace[f] == replay.trace[f], f


def test_a_failed_members_leave_records_from_which_tag_it_did_nothing() -> None:
    """A member whose process dies is present until its leave is agreed (every federate
    ran those tags with it present), but did nothing after the last tag it completed: the
    record's leave says so (``quiet``), so that a replay has it present and silent there."""
    c = hub(2, initial=2, out=10, back=None, lo=1)  # weights after 10 ns, fragments back at the tag
    c.on_ltc(1, at(10), at(20), {0: [1, *at(10)]}, {})
    c.on_ltc(2, at(10), at(20), {0: [1, *at(10)]}, {})
    c.on_ltc(0, at(10), at(20), {1: [1, *at(20)], 2: [1, *at(20)]}, {1: 1, 2: 1})  # weights for (20, 0)
    c.on_ltc(1, at(20), at(30), {0: [2, *at(20)]}, {0: 1})  # sampler 1 answered round (20, 0)
    assert c.feds[0].granted < at(20)  # the learner waits for sampler 2's fragment at (20, 0)
    grants = c.members.on_failed(2)  # sampler 2 dies at (20, 0), before it sent anything there
    assert any(g.federate == 0 and g.tag >= at(20) for g in grants)  # the learner goes on at once
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.to == {0, 1}
    answer_all(c, {0: at(20, 1), 1: at(20, 1)})  # both ran (20, 0) with it present
    assert c.members.record == [Change(at(20, 1), 2, False, quiet=at(10, 1))]
    assert not c.members.present[2] and c.members.slots.quiet == {2: at(10, 1)}  # (LOST tells the learner)
    c.members.request_join(2, physical_time=0)  # a new process for the slot
    answer_all(c)
    c.on_ltc(0, at(20, 1), at(30), {1: [2, *at(30)]}, {1: 2, 2: 1})  # (past the leave: settled)
    assert c.members.present[2] and c.members.slots.quiet == {}  # (of the incarnation that failed)
    assert c.members.record[-1].joined and c.members.record[-1].quiet is None


def test_a_member_that_fails_before_its_agreed_leave_has_its_record_say_so() -> None:
    """A leave agreed before the member's process died: the record's entry gets the tag
    from which it did nothing, unless it had completed every tag before its leave."""
    for last, quiet in ((at(5), at(5, 1)), (at(39), at(39, 1)), (at(40), None)):
        c = hub(2, initial=2, lo=1)
        c.on_ltc(2, at(3), at(4), {}, {})
        c.members.request_leave(2)
        answer_all(c, {0: at(40, 1)})
        assert c.members.record == [Change(at(40, 1), 2, False)]
        c.on_ltc(2, last, at(41), {}, {})
        c.members.on_failed(2)
        assert c.members.record == [Change(at(40, 1), 2, False, quiet)], last
        assert not c.members.present[2]


def test_a_member_that_fails_before_completing_a_tag_is_quiet_from_its_join() -> None:
    c = hub(2, initial=1, lo=1)
    c.members.request_join(2, physical_time=0)
    answer_all(c)
    ((join,),) = [[o for o in c.members.take_outbox() if isinstance(o, Change)]]
    c.members.on_failed(2)  # it completed nothing
    answer_all(c)
    leave = c.members.record[-1]
    assert not leave.joined and leave.quiet == join.tag < leave.tag


def test_a_failed_members_quiet_tag_is_after_what_a_federate_took_from_it() -> None:
    """A member runs ahead of its reports (its downstream federates take its messages on
    its promises): the answers to its leave's round say the last tag each took a message
    of it at, and its quiet tag is after that (it did that tag's work)."""
    c = hub(2, initial=2, lo=1)
    c.on_ltc(2, at(3), at(4), {}, {})  # what the RTI knows it completed: (3, 0)
    c.members.on_failed(2)
    (q,) = c.members.take_outbox()
    assert c.members.slots.quiet == {2: at(3, 1)}
    c.members.on_membership_reply(0, q.round, at(9, 1), {2: at(9)})  # the learner took its (9, 0)
    c.members.on_membership_reply(1, q.round, at(9, 1), {})
    assert c.members.record == [Change(at(9, 1), 2, False)]  # (its quiet tag is its leave's: it did every tag before)
    c = hub(2, initial=2, lo=1)
    c.members.on_failed(2)
    (q,) = c.members.take_outbox()
    c.members.on_membership_reply(0, q.round, at(20, 1), {2: at(9)})
    c.members.on_membership_reply(1, q.round, at(20, 1))
    assert c.members.record == [Change(at(20, 1), 2, False, quiet=at(9, 1))]
