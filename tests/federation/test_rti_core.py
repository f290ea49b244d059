"""RtiCore: the pure grant logic (no sockets)."""

from __future__ import annotations

from reactorfed.federation.rti import FOREVER_T, Grant, RtiCore, pred

from .test_layout import lay

MAXM = 2**32 - 1
START = 1_000


def core(n: int, *edges: tuple[int, int, int | None]) -> RtiCore:
    c = RtiCore(lay(n, *edges))
    c.start(START)
    return c


def at(dt: int, m: int = 0) -> tuple[int, int]:
    return (START + dt, m)


def last(grants: list[Grant], f: int) -> Grant | None:
    mine = [g for g in grants if g.federate == f]
    return mine[-1] if mine else None


def complete(c: RtiCore, f: int, tag: tuple[int, int], net: tuple[int, int], sent: dict[int, list[int]] | None = None,
             received: dict[int, int] | None = None) -> list[Grant]:
    return c.on_ltc(f, tag, net, sent or {}, received or {})


def test_a_federate_without_upstream_never_waits() -> None:
    c = core(2, (0, 1, None))
    assert c.grant_for(0) is None
    assert last(complete(c, 0, at(0), at(10)), 0) is None
    assert last(c.on_net(0, at(10), {}, {}), 0) is None


def test_chain_without_delay() -> None:
    c = core(2, (0, 1, None))
    g = last(complete(c, 0, at(0), at(10), sent={1: [1, *at(0)]}), 1)
    assert g is not None and not g.provisional
    assert g.tag == (START + 9, MAXM)  # everything before the source's next event
    assert g.counts == {0: 1}  # and the receiver must have the one message sent so far


def test_chain_after_0() -> None:
    c = core(2, (0, 1, 0))
    g = last(complete(c, 0, at(0), at(10)), 1)
    assert g is not None and g.tag == at(10)  # the source's next event arrives at (10, 1)


def test_chain_after_d() -> None:
    c = core(2, (0, 1, 5))
    g = last(complete(c, 0, at(0), at(10)), 1)
    assert g is not None and g.tag == (START + 14, MAXM)
    # before the source reported anything: start + 5 is the earliest it could deliver
    c = core(2, (0, 1, 5))
    assert c.grant_for(1) == Grant(1, (START + 4, MAXM), False, {0: 0})


def test_grants_only_go_forward() -> None:
    c = core(2, (0, 1, None))
    complete(c, 0, at(0), at(10))
    assert c.feds[1].granted == pred(at(10))
    assert last(c.on_net(0, at(5), {}, {}), 1) is None  # a NET cannot move a grant back
    assert c.feds[1].granted == pred(at(10))


def test_transitive_paths_hold_a_grant_back() -> None:
    # 0 -after 5-> 1 -none-> 2; 1 has no events of its own, but what 0 sends it may pass on
    c = core(3, (0, 1, 5), (1, 2, None))
    c.on_net(1, FOREVER_T, {}, {})
    g = last(complete(c, 0, at(0), at(10)), 2)
    assert g is not None and g.tag == (START + 14, MAXM)
    assert c.feds[2].granted < FOREVER_T
    c.on_resign(0, {}, {})
    assert c.feds[2].granted == FOREVER_T  # nothing can reach it any more


def test_a_resigned_upstream_releases_everything() -> None:
    c = core(3, (0, 1, None), (1, 2, 0))
    c.on_resign(0, {}, {})
    assert c.feds[1].granted == FOREVER_T  # nothing can reach 1 any more
    assert c.feds[2].granted < FOREVER_T  # but 1 still has its start event
    grants = c.on_resign(1, {}, {})
    assert last(grants, 2) is not None and c.feds[2].granted == FOREVER_T


def test_ptag_in_a_zero_delay_cycle() -> None:
    c = core(2, (0, 1, None), (1, 0, None))
    g0, g1 = c.grant_for(0), c.grant_for(1)
    assert g0 is not None and g0.provisional and g0.tag == at(0)
    assert g1 is not None and g1.provisional and g1.tag == at(0)
    # no full grant of the start tag while the other member may still send at it
    assert c.feds[0].granted < at(0) and c.feds[1].granted < at(0)
    complete(c, 0, at(0), at(10))
    assert c.feds[1].granted < at(0)
    grants = complete(c, 1, at(0), at(10))
    assert {(g.federate, g.tag, g.provisional) for g in grants} >= {(0, at(10), True), (1, at(10), True)}


def test_no_ptag_when_a_sender_outside_the_cycle_may_send() -> None:
    # 2 -none-> 0 <-> 1: 2 could still send at the tag, so 0 waits for a full grant
    c = core(3, (0, 1, None), (1, 0, None), (2, 0, None))
    c.on_net(2, at(0), {}, {})
    g = c.grant_for(0)
    assert g is None or not g.provisional
    assert c.feds[0].ptag < at(0)
    grants = complete(c, 2, at(0), FOREVER_T)
    g = last(grants, 0)
    assert g is not None and g.provisional and g.tag == at(0)


def test_a_cycle_with_a_delay_is_granted_in_full() -> None:
    # 0 -none-> 1 -after 0-> 0: no PTAG needed, the microstep breaks the cycle
    c = core(2, (0, 1, None), (1, 0, 0))
    g = c.grant_for(0)
    assert g is not None and not g.provisional and g.tag == at(0)
    g = last(complete(c, 0, at(0), at(10)), 1)
    assert g is not None and not g.provisional and g.tag == at(0)


def test_messages_in_flight_hold_grants_back_until_received() -> None:
    # 0 -> 1 -> 2 without delays. 1 idles (NET forever) before 0's message reaches it.
    c = core(3, (0, 1, None), (1, 2, None))
    c.on_net(1, FOREVER_T, {}, {0: 0})
    complete(c, 0, at(0), FOREVER_T, sent={1: [1, *at(5)]})
    # 1 will act at (5, 0) when the message arrives: 2 may not pass it
    assert c.feds[2].granted == pred(at(5))
    # 1 itself may go on: its grant says it must first have received 0's message
    assert c.feds[1].granted == FOREVER_T
    c.on_net(1, at(5), {}, {0: 1})  # received it; its next event is the message's tag
    assert c.feds[2].granted == pred(at(5))
    grants = complete(c, 1, at(5), FOREVER_T, sent={2: [1, *at(5)]}, received={0: 1})
    # 1 is done: 2 may go on forever, once it has the one message 1 sent it
    assert last(grants, 2) == Grant(2, FOREVER_T, False, {1: 1})


def test_grant_counts_name_what_must_have_arrived() -> None:
    c = core(2, (0, 1, None))
    grants = complete(c, 0, at(0), at(10), sent={1: [3, *at(0)]})
    assert last(grants, 1) == Grant(1, pred(at(10)), False, {0: 3})


def test_a_receipt_reported_before_the_send_is_not_in_flight() -> None:
    c = core(3, (0, 1, None), (1, 2, None))
    c.on_net(1, at(5), {}, {0: 1})  # the receiver's report overtook the sender's
    complete(c, 0, at(0), FOREVER_T, sent={1: [1, *at(5)]})
    assert not any(c.in_flight.values())
    complete(c, 1, at(5), FOREVER_T, received={0: 1})
    assert c.feds[2].granted == FOREVER_T


def test_reports_about_unknown_federates_are_ignored() -> None:
    c = core(2, (0, 1, None))
    complete(c, 0, at(0), at(10), sent={7: [1, 0, 0]}, received={9: 4})
    assert c.feds[1].granted == pred(at(10))


def test_stop_agreement() -> None:
    c = core(3, (0, 1, None), (1, 2, None))
    assert c.on_stop_request(0, at(10)) == at(10)
    assert c.on_stop_request(2, at(12)) is None  # folded into the request under way
    assert c.on_stop_reply(0, at(10)) is None
    assert c.on_stop_reply(1, at(11)) is None
    assert c.on_stop_reply(2, at(10, 3)) == at(12)  # the latest of all proposals
    assert c.stop_tag == at(12)
    assert c.on_stop_request(1, at(20)) is None
    assert c.on_stop_reply(1, at(30)) is None
    assert c.stop_tag == at(12)


def test_stop_agreement_without_the_resigned() -> None:
    c = core(3, (0, 1, None), (1, 2, None))
    c.on_resign(2, {}, {})
    assert c.on_stop_request(1, at(7)) == at(7)
    assert c.on_stop_reply(0, at(8)) is None
    assert c.on_stop_reply(1, at(7)) == at(8)
    assert not c.all_resigned()
    c.on_resign(0, {}, {})
    c.on_resign(1, {}, {})
    assert c.all_resigned()


def test_grants_are_computed_afresh_from_a_stop_agreement() -> None:
    """src (0) -> sink (1), no delay; 2 asks to stop. src reported NET FOREVER (nothing
    queued) before it knew of the stop, and sink was granted FOREVER on it; at the agreed
    stop tag src has an event (its shutdown reactions may send): sink's grants from the
    agreement on stop short of it until src has completed it."""
    c = core(3, (0, 1, None))
    complete(c, 2, at(0), at(1))
    g = last(complete(c, 0, at(0), FOREVER_T), 1)
    assert g is not None and g.tag == FOREVER_T
    assert c.on_stop_request(2, at(3, 1)) == at(3, 1)
    for f in (0, 1):
        assert c.on_stop_reply(f, at(3, 1)) is None
    assert c.on_stop_reply(2, at(3, 1)) == at(3, 1)
    assert c.next_event(0) == at(3, 1)  # its stale NET no longer counts
    # what sink holds is capped at the stop's predecessor (FederateCore.on_stop_granted), as here
    assert c.feds[1].granted == at(3)
    assert last(c.regrant(range(3)), 1) is None
    # src completes the stop tag having sent one message at it, then resigns
    g = last(complete(c, 0, at(3, 1), FOREVER_T, sent={1: [1, *at(3, 1)]}), 1)
    assert g is not None and g.tag == FOREVER_T and g.counts == {0: 1}  # once that message is in


def test_a_stop_agreement_keeps_grants_a_delay_makes_safe() -> None:
    """Over a link with a delay (a microstep is one), what src's shutdown sends at the stop
    tag arrives after it: sink may be granted the stop tag at once."""
    c = core(3, (0, 1, 0))
    complete(c, 0, at(0), FOREVER_T)
    c.on_stop_request(2, at(3, 1))
    for f in (0, 1, 2):
        c.on_stop_reply(f, at(3, 1))
    assert c.stop_tag == at(3, 1)
    g = last(c.regrant(range(3)), 1)
    assert g is not None and g.tag == at(3, 1)  # src's stop tag arrives at (3, 2)
