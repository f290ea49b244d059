"""FederateCore and live rescaling (issue 19), pure: a federate answers a membership round's
Query, holds the barrier until the round ends, applies changes at their tags (no sends to
absent members, late messages to a member that left dropped and counted, promises and
grants ignore absent peers), and a joiner starts at its Admit tag with its slot's counts.

The federation of these tests: a learner (0) and sampler slots 1..k of an elastic bank;
the learner sends to each slot, each slot sends back."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.coordination.federate_core import WAIT, FederateCore, Message
from reactorfed.federation.coordination.layout import ElasticGroup, Layout, Link
from reactorfed.federation.coordination.presence import Presence
from reactorfed.federation.coordination.rti_core import FOREVER_T, NEVER_T, pred, succ
from reactorfed.federation.wire.protocol import Ltc, Promise, QueryReply

MS = 1_000_000
START = 1_000 * MS


def at(dt: int, m: int = 0) -> tuple[int, int]:
    return (START + dt, m)


def hub(k: int, initial: int, out: int | None = None, back: int | None = 0) -> Layout:
    edges = [e for s in range(1, k + 1) for e in ((0, s, out), (s, 0, back))]
    links = [Link(i, s, d, delay, f"f{s}.out{i}", f"f{d}.in{i}") for i, (s, d, delay) in enumerate(edges)]
    lay = Layout([f"f{i}" for i in range(k + 1)], links,
                 elastic=[ElasticGroup("b", tuple(range(1, k + 1)), 0, k, initial)])
    lay._closure()
    return lay


def core(lay: Layout, me: int, *, peer_grants: bool = True) -> FederateCore:
    c = FederateCore(lay, me, peer_grants=peer_grants, fast=True)
    c.begin(START)
    return c


def take(c: FederateCore) -> list[Message]:
    out = list(c.outbox)
    c.outbox.clear()
    return out


def replies(msgs: list[Message]) -> list[QueryReply]:
    return [m for m in msgs if isinstance(m, QueryReply)]


# -- presence -------------------------------------------------------------------------------
def test_presence_by_tag_and_incarnation() -> None:
    p = Presence(hub(2, initial=1))
    assert p.present(0, at(0)) and p.present(1, at(0)) and not p.present(2, at(0))
    p.add(at(5), 2, True)
    p.add(at(9), 2, False)
    p.add(at(12, 1), 2, True)
    assert [p.present(2, t) for t in (at(4), at(5), at(8), at(9), at(12), at(12, 1))] == [
        False, True, True, False, False, True]
    assert p.joined_at(2, at(7)) == at(5) and p.leaves_at(2, at(7)) == at(9)
    assert p.next_join(2, at(6)) == at(12, 1) and p.width((1, 2), at(6)) == 2
    # a message reaches the incarnation present when it was sent, if that one is still there
    assert p.delivered(2, at(6), at(8)) and not p.delivered(2, at(6), at(9))
    assert not p.delivered(2, at(6), at(13))  # another incarnation is there by then
    assert not p.delivered(2, at(10), at(13))  # absent when it was sent
    assert p.delivered(0, at(10), at(13))  # not elastic: always


# -- joins ------------------------------------------------------------------------------------
def test_absent_slots_hold_back_no_promise_until_their_join_is_known() -> None:
    lay = hub(2, initial=1, back=2)
    c = core(lay, 0)
    c.promises.on_promise(1, at(10))
    assert c.promises.bound() == at(12)  # slot 2 is absent: only slot 1's promise counts
    c.membership.on_change(at(4), 2, True)  # joins at (4, 0): it sends nothing before
    assert c.promises.bound() == at(6)
    c.grant_from_promises()
    assert c.grant == pred(at(6))


def test_a_join_takes_back_a_grant_from_promises_that_passes_it() -> None:
    """A grant taken from the present peers' promises while a slot was absent may reach past
    the tag it joins at (the RTI, which agreed on that tag, never saw the grant): it no
    longer holds, so the joiner's first message, at its join, is waited for (found end to
    end: tests/federation/test_live_membership.py, the learner dropped it as late)."""
    lay = hub(2, initial=1, out=0, back=None)  # slots -> learner without delay: (J, m) arrives for (J, m)
    c = core(lay, 0)
    c.promises.on_promise(1, at(10))
    c.grant_from_promises()
    assert c.grant == pred(at(10))
    assert replies(c.membership.on_query(1, at(4, 1), ((2, True),), at(3)) and take(c)) == [QueryReply(1, at(4, 1))]
    c.membership.on_change(at(4, 1), 2, True)
    c.membership.on_round_end(1)
    assert c.grant == at(4)  # (4, 0): the tag before the join
    assert c.acquire(at(4, 1), FOREVER_T, 0) is WAIT, "the joiner's step at its join is waited for"
    c.promises.on_promise(2, at(8))
    c.grant_from_promises()
    assert c.acquire(at(4, 1), FOREVER_T, 0) == at(4, 1)


def test_a_join_at_the_start_tag() -> None:
    """The RTI's changes for joins asked before the start come before any tag."""
    lay = hub(2, initial=1)
    c = core(lay, 0)
    assert not c.membership.send_to(2, at(0))
    c.membership.on_change(at(0), 2, True)
    assert c.membership.send_to(2, at(0)) and c.promises.bound() == at(0, 1)  # after 0: (0, 0) + 1 microstep


def test_a_query_is_answered_after_the_current_tag_and_the_last_message_to_the_member() -> None:
    lay = hub(2, initial=2, out=5)
    c = core(lay, 0)
    c.completed(at(3), at(4), FOREVER_T, START)
    c.reports.sent_message(2, at(8))  # its output at (3, 0) for slot 2, after 5 ns
    take(c)
    assert c.membership.on_query(1, at(2), ((2, False),), at(3)) == at(8, 1)
    assert replies(take(c)) == [QueryReply(1, at(8, 1))]
    assert c.membership.on_query(2, at(2), ((1, False),), at(3)) == at(3, 1)  # no message to slot 1
    assert c.membership.on_query(3, at(20), ((1, True),), at(3)) == at(20)  # the proposal, if later


def test_the_barrier_holds_until_the_round_ends_even_within_a_grant() -> None:
    """Right after a grant: the federate may not use all of it until the round is over."""
    lay = hub(2, initial=1)
    c = core(lay, 0, peer_grants=False)
    c.on_tag(at(10), {})
    assert c.acquire(at(2), FOREVER_T, START) == at(2)
    c.completed(at(2), at(4), FOREVER_T, START)
    take(c)
    c.membership.on_query(1, at(3), ((2, True),), at(2))
    assert c.acquire(at(2, 5), FOREVER_T, START) == at(2, 5)  # before the answer (3, 0)
    assert c.acquire(at(4), FOREVER_T, START) is WAIT
    assert c.acquire(None, FOREVER_T, START) is WAIT  # nothing queued: a change may bring some
    assert all(r.net <= at(3) for r in take(c) if isinstance(r, Ltc))  # nothing reported past it
    c.membership.on_change(at(3), 2, True)
    c.membership.on_round_end(7)  # another round's end lifts nothing
    assert c.acquire(at(4), FOREVER_T, START) is WAIT
    c.membership.on_round_end(1)
    assert c.acquire(at(4), FOREVER_T, START) == at(4)


def test_promises_stop_at_the_answer_while_a_round_is_under_way() -> None:
    lay = hub(1, initial=1)
    c = core(lay, 1)  # the sampler: upstream the learner
    c.promises.on_promise(0, at(50))
    c.grant_from_promises()
    c.membership.on_query(1, at(5), ((1, False),), at(0))
    c.completed(at(0), at(30), FOREVER_T, START)
    assert [m.tag for m in take(c) if isinstance(m, Promise)] == [at(5)]
    c.membership.on_round_end(1)
    c.completed(at(1), at(30), FOREVER_T, START + 10 * MS)
    assert [m.tag for m in take(c) if isinstance(m, Promise)] == [at(30)]


def test_a_joiner_starts_at_its_admit_tag_with_its_slots_counts() -> None:
    lay = hub(2, initial=1, out=2)
    c = core(lay, 2)  # slot 2, joining
    c.membership.on_change(at(10), 2, True)
    c.admit(at(10), {0: 3}, {0: 5})
    assert c.membership.joined == at(10) and c.received == {0: 5}
    assert c.promises.bound() == at(12)  # the learner sends it nothing before (10, 0)
    c.promises.on_promise(0, at(4))  # a promise from before its start adds nothing
    assert c.promises.bound() == at(12)
    c.reports.sent_message(0, at(10, 1))
    assert c.reports.sent[0][0] == 4  # counts go on from the slot's
    assert c.on_data(0, 0, at(12)) and c.received == {0: 6}
    c.on_tag(at(20), {0: 6})
    assert c.counts.ok()


# -- leaves -----------------------------------------------------------------------------------
def test_no_sends_to_a_member_from_its_leave_on() -> None:
    lay = hub(2, initial=2)
    c = core(lay, 0)
    c.membership.on_change(at(6), 2, False)
    assert c.membership.send_to(2, at(5)) and not c.membership.send_to(2, at(6)) and c.membership.send_to(1, at(6))
    c.membership.on_change(at(9), 2, True)
    assert c.membership.send_to(2, at(9))


def test_a_leaving_member_drops_and_counts_what_comes_for_its_leave_or_later() -> None:
    """Messages in flight: one for before its leave is delivered; one that arrived before
    the leave was known, for after it, is dropped when the leave is known; one arriving
    after is dropped at once. Each counts as received (it arrived) and as dropped."""
    lay = hub(1, initial=1, out=3)
    c = core(lay, 1)
    assert c.on_data(0, 0, at(5)) and c.on_data(0, 0, at(9))
    c.completed(at(0), at(5), FOREVER_T, START)
    c.membership.on_change(at(7), 1, False)  # it leaves at (7, 0)
    assert c.membership.dropped == {0: 1} and c.membership.leaves == at(7)
    assert not c.on_data(0, 0, at(7))
    assert c.on_data(0, 0, at(6, 2))
    assert c.membership.dropped == {0: 2} and c.membership.messages_dropped == 2 and c.received == {0: 4}
    assert not c.membership.gone(at(6, 2))
    assert not c.membership.gone(at(7)) and not c.membership.gone(None), "the tags before its leave are not granted yet"
    c.on_tag(pred(at(7)), {0: 4})
    assert c.membership.gone(at(7)) and c.membership.gone(None)


def test_a_member_that_knows_its_leave_still_waits_for_what_comes_before_it() -> None:
    """A replayed joiner learns its leave ``L`` at its Admit. Between two weights (over the
    learner's 40 ms delay) its next event is ``L``, but weights for a tag before ``L`` may
    still be on their way: it processes ``L`` (and resigns) only once every tag before ``L``
    is granted, with the messages the grants count. (It went to ``L`` at once: a replayed
    joiner skipped every round whose weights had not arrived yet, and the federated replay
    of tests/rl/test_live_scale.py counted 10 incomplete iterations of 60.)"""
    lay = hub(1, initial=0, out=40 * MS)  # the learner (0) -> slot 1 over 40 ms; back at once
    c = FederateCore(lay, 1, fast=True)
    c.membership.joining = True
    c.begin(START)
    join, leave = at(400 * MS), at(800 * MS, 1)
    c.membership.on_change(join, 1, True)
    c.membership.on_change(leave, 1, False)
    c.admit(join, {}, {})
    assert c.membership.leaves == leave
    c.grant_from_promises()
    assert c.grant == pred(at(440 * MS))  # nothing from the learner before the join's tag
    assert not c.membership.gone(leave), "weights for (440 ms) .. (800 ms) may come"
    assert c.acquire(leave, leave, START) is WAIT
    assert c.on_data(0, 0, at(440 * MS))  # they come: delivered, and processed first
    c.promises.on_promise(0, at(760 * MS))  # the learner's next round sends at (760 ms) at the earliest
    c.grant_from_promises()
    assert c.grant == pred(at(800 * MS)) and not c.membership.gone(leave)  # (800 ms, 0) is not granted
    c.promises.on_promise(0, at(800 * MS))
    c.grant_from_promises()
    assert c.grant >= pred(leave) and c.membership.gone(leave) and c.membership.gone(None)
    # without promises, the RTI's grant: counted messages included
    r = FederateCore(lay, 1, peer_grants=False, fast=True)
    r.membership.joining = True
    r.begin(START)
    r.membership.on_change(join, 1, True)
    r.membership.on_change(leave, 1, False)
    r.admit(join, {}, {})
    r.on_tag(pred(leave), {0: 1})
    assert not r.membership.gone(leave), "a message the grant counts has not arrived"
    assert r.on_data(0, 0, at(800 * MS))
    assert not r.membership.gone(at(800 * MS))  # (its next event now: it is processed first)
    assert r.membership.gone(leave)


def test_a_leaving_upstream_members_promises_count_up_to_its_leave_then_its_next_join() -> None:
    lay = hub(2, initial=2, back=0)
    c = core(lay, 0)
    c.promises.on_promise(1, FOREVER_T)
    c.membership.on_change(at(8), 2, False)
    c.promises.on_promise(2, at(20))  # (maybe from its next incarnation: capped at the leave)
    assert c.promises.bound() == at(8, 1)
    c.membership.on_change(at(30), 2, True)
    assert c.promises.bound() == at(8, 1)  # its last incarnation has not said its last word
    c.on_mark(2, FOREVER_T)
    assert c.promises.bound() == at(30, 1)  # now its next incarnation: nothing before (30, 0)
    c.promises.on_promise(2, at(40))
    assert c.promises.bound() == at(40, 1)


def test_a_member_that_leaves_for_good_holds_nothing_back() -> None:
    lay = hub(2, initial=2)
    c = core(lay, 0)
    c.on_mark(1, FOREVER_T)  # (slot 1 resigned too)
    c.membership.on_change(at(8), 2, False)
    c.on_mark(2, FOREVER_T)
    assert c.promises.bound() == FOREVER_T and c.finished == {1, 2}
    c.on_stop_granted(at(20))  # a stop later: its last word knew of it
    assert c.promises.bound() == FOREVER_T


def test_a_failed_upstream_member_holds_back_neither_grants_nor_promises() -> None:
    lay = hub(2, initial=2)
    c = core(lay, 0)
    c.on_tag(at(10), {1: 0, 2: 2})  # the RTI had a report of two messages from slot 2
    assert c.on_data(2, 2, at(3))
    assert c.acquire(at(3), FOREVER_T, START) is WAIT  # one is missing
    c.on_peer_failed(2)  # its link closed without its last word
    assert c.acquire(at(3), FOREVER_T, START) == at(3)
    c.promises.on_promise(1, FOREVER_T)
    assert c.promises.bound() == FOREVER_T
    assert c.membership.lost == {2: 1}  # the one missing: lost with it, unless it comes
    c.completed(at(3), None, FOREVER_T, START)
    assert not c.on_data(2, 2, at(2, 1))  # for a tag already processed: dropped, counted
    assert c.membership.dropped == {2: 1} and c.membership.lost == {2: 0}  # (it came)


def test_what_a_failed_member_sent_after_its_last_completed_tag_is_dropped_and_counted() -> None:
    """The RTI's LOST says from which tag the failed member did nothing (the record's quiet
    tag: a replay has nothing of it from there). What it sent before arrives and is taken;
    what it sent from there (before the RTI knew of that tag) is dropped and counted, over
    a link without a delay, or after 0 (a microstep: the tags tell); over a delay in time
    the arrival's tag does not tell the sending one: taken."""
    for back, sent, arrives in ((None, at(5), at(5)), (0, at(5), at(5, 1))):
        c = core(hub(2, initial=2, out=5, back=back), 0)
        c.on_tag(at(3), {1: 0, 2: 0})
        c.on_peer_failed(2, at(5))  # it completed (4, 0)... and sent at (5, 0) before it died
        assert c.on_data(2, 2, at(4) if back is None else at(4, 1)), back  # (sent before: taken)
        assert not c.on_data(2, 2, arrives), (back, sent)
        assert c.membership.dropped == {2: 1} and c.received[2] == 2
        c.membership.peer_connected(2)  # a new process for the slot: its own messages are taken
        assert c.on_data(2, 2, at(30))
    c = core(hub(2, initial=2, out=5, back=5), 0)
    c.on_tag(at(3), {1: 0, 2: 0})
    c.on_peer_failed(2, at(5))
    assert c.on_data(2, 2, at(10)) and c.membership.dropped == {}  # (sent at (5, 0), or at (5, 3)?)


def test_the_answer_to_a_failed_members_leave_says_the_last_tag_taken_from_it() -> None:
    """What a failed member sent before the RTI knew it completed that tag (this federate
    took it on its promises) moves its quiet tag: the answer says so, is after it, and
    what it sent later is dropped (counted)."""
    c = core(hub(2, initial=2, out=5, back=None), 0)
    c.on_tag(at(3), {1: 0, 2: 0})
    assert c.on_data(2, 2, at(7))  # taken: it ran (7, 0)
    c.on_peer_failed(2, at(4, 1))  # the RTI knew it completed (4, 0)
    assert c.membership.heard == {2: at(7)} and c.membership.quiet == {2: at(7, 1)}
    assert not c.on_data(2, 2, at(8)) and c.membership.dropped == {2: 1}
    assert c.membership.on_query(1, at(5), ((2, False),), at(3)) == at(7, 1)
    assert replies(take(c)) == [QueryReply(1, at(7, 1), {2: at(7)})]


def test_a_member_whose_end_came_before_its_leave_is_waited_for_again_from_its_next_join() -> None:
    """Its last words (the RTI's LOST, or its Mark of FOREVER) may come before the CHANGE of
    its leave: that leave then caps nothing, and its next incarnation's join holds the
    bound (it was held at FOREVER, and a new process's messages were dropped as late)."""
    for end in ("failed", "marked"):
        lay = hub(2, initial=2, back=0)
        c = core(lay, 0)
        c.promises.on_promise(1, FOREVER_T)
        c.promises.on_promise(2, at(5))
        if end == "failed":
            c.on_peer_failed(2)  # the RTI's LOST, before the round of its leave ended
        else:
            c.on_mark(2, FOREVER_T)  # its resignation, read before the RTI's CHANGE
        assert c.promises.bound() == FOREVER_T, end
        c.membership.on_change(at(8), 2, False)
        assert c.promises.bound() == FOREVER_T, end
        c.membership.on_change(at(30), 2, True)  # a new process for the slot
        assert c.promises.bound() == at(30, 1), f"{end}: the next incarnation is waited for from its join"
        c.promises.on_promise(2, at(40))
        assert c.promises.bound() == at(40, 1), end


def test_a_new_process_for_a_slot_present_at_the_start_takes_its_last_leave_as_not_its_own() -> None:
    """A joiner (the RTI's START said so) whose slot was present at the start: the record's
    leave is its last incarnation's, not its own; it starts at its ADMIT."""
    lay = hub(2, initial=2)
    c = FederateCore(lay, 2, fast=True)
    c.membership.joining = True
    c.begin(START)
    assert c.membership.joined == NEVER_T, "not present from the start: it joins"
    c.membership.on_change(at(8), 2, False)  # the record: its last incarnation left
    assert c.membership.leaves is None and not c.membership.gone(at(20))
    c.membership.on_change(at(20), 2, True)
    c.admit(at(20), {0: 3}, {0: 5})
    assert c.membership.joined == at(20) and c.membership.leaves is None and c.received == {0: 5}
    c.membership.on_change(at(50), 2, False)  # its own leave, later
    assert c.membership.leaves == at(50) and not c.membership.gone(at(50))  # (what comes before it may be on its way)
    c.promises.on_promise(0, FOREVER_T)  # the learner resigned
    c.grant_from_promises()
    assert c.membership.gone(at(50))


def test_the_rtis_initial_widths_hold_over_the_programs() -> None:
    p = Presence(hub(3, initial=1))
    p.set_initial(frozenset({3}))  # the RTI: slots 1 and 2 present at the start, 3 absent
    assert [p.present(f, at(0)) for f in range(4)] == [True, True, True, False]
    p.add(at(5), 3, True)
    assert p.present(3, at(5))


def test_a_change_never_comes_for_a_tag_already_processed() -> None:
    lay = hub(1, initial=1)
    c = core(lay, 0)
    c.completed(at(5), None, FOREVER_T, START)
    try:
        c.membership.on_change(at(5), 1, False)
    except AssertionError:
        pass
    else:
        raise AssertionError("a change for a processed tag was taken")
    c.membership.on_change(succ(at(5)), 1, False)
    assert not c.membership.send_to(1, succ(at(5)))


def test_without_elastic_banks_nothing_changes() -> None:
    from .test_layout import lay

    c = FederateCore(lay(2, (0, 1, None)), 1, fast=True)
    c.begin(START)
    assert c.on_data(0, 0, at(0)) is True and c.membership.send_to(0, at(0)) and c.membership.dropped == {}
    assert c.membership.joined == NEVER_T and not c.membership.last_on


@settings(max_examples=200, deadline=5_000)
@given(st.lists(st.tuples(st.sampled_from(["data", "done", "leave"]), st.integers(0, 30), st.integers(0, 2)),
                max_size=25))
def test_every_message_to_a_member_is_delivered_or_counted_dropped(ops: list[tuple[str, int, int]]) -> None:
    """Whatever the order of arrivals, completed tags and its leave: a member keeps exactly
    the messages for its tags (after what it completed, before its leave), and counts every
    other one dropped, once."""
    c = core(hub(1, initial=1, out=2), 1)
    kept: list[tuple[int, int]] = []  # delivered, not processed yet
    processed = dropped = 0
    for kind, dt, m in ops:
        tag = at(dt, m)
        if kind == "data":
            ours = tag > c.done and (c.membership.leaves is None or tag < c.membership.leaves)
            assert c.on_data(0, 0, tag) == ours
            if ours:
                kept.append(tag)
            else:
                dropped += 1
        elif kind == "done" and tag > c.done and (c.membership.leaves is None or tag < c.membership.leaves):
            c.completed(tag, None, FOREVER_T, START)
            processed += sum(1 for t in kept if t <= tag)
            kept = [t for t in kept if t > tag]
        elif kind == "leave" and c.membership.leaves is None and tag > c.done:
            c.membership.on_change(tag, 1, False)
            dropped += sum(1 for t in kept if t >= tag)
            kept = [t for t in kept if t < tag]
    assert c.membership.messages_dropped == dropped
    assert processed + dropped + len(kept) == c.received[0] == c.messages_received


# -- a member on a zero-delay cycle ----------------------------------------------------------
def test_a_member_on_a_zero_delay_cycle_is_waited_for_within_a_tag_only_while_present() -> None:
    """The learner and slot 1 form a zero-delay cycle (link 0 to the slot, link 1 back):
    within a tag the learner waits before its reaction that reads link 1 for the slot's
    value or absence, while the slot is present; from its leave to its next join nothing
    comes from it, and nothing is waited for."""
    lay = hub(1, initial=1, out=None, back=None)
    assert lay.scc[0] == {0, 1}
    c = core(lay, 0)
    c.checkpoints([(1, 0)], [(1, 1)])
    assert not c.inputs_ready(at(5), 1)  # present: its word at (5, 0) is awaited
    c.membership.on_change(at(5), 1, False)
    assert not c.inputs_ready(at(4), 1) and c.inputs_ready(at(5), 1) and c.inputs_ready(at(8), 1)
    c.membership.on_change(at(9), 1, True)
    assert c.inputs_ready(at(8), 1) and not c.inputs_ready(at(9), 1)
    c.cycles.on_absent(1, at(9))
    assert c.inputs_ready(at(9), 1)


def test_a_late_message_from_a_live_peer_is_tardy_under_decentralized_coordination() -> None:
    """A message for a tag this federate has processed: under centralized coordination it
    can only be from a peer that failed (no grant waited for it): dropped and counted;
    under decentralized coordination, one from a live peer is tardy: delivered (the inbound
    side posts it as tardy), as without elastic banks."""
    for decentralized in (False, True):
        c = core(hub(1, initial=1, out=5, back=5), 0)
        if decentralized:
            c.decentralize(c_lay := hub(1, initial=1, out=5, back=5))
            assert c_lay.scc[0] == {0}
        c.completed(at(5), None, FOREVER_T, START)
        assert c.on_data(1, 1, at(4)) is decentralized
        assert c.membership.dropped == ({} if decentralized else {1: 1})
