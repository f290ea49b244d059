"""RtiCore: the pure grant logic (no sockets)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.coordination.layout import Layout, add_delay
from reactorfed.federation.coordination.rti_core import (
    FOREVER_T,
    NEVER_T,
    FederateState,
    Grant,
    RtiCore,
    pred,
    succ,
)
from reactorfed.time.tag import TagT

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


# -- the same decisions as the straightforward algorithm ---------------------------------
class NaiveRti:
    """The RTI's grant logic as first written (before issue 18): every grant recomputes the
    EIMT over all upstream federates, each next event scanning every message in flight.
    The reference RtiCore must agree with, call for call."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        n = len(layout.names)
        self.feds = [FederateState() for _ in range(n)]
        self.in_flight: dict[tuple[int, int], list[tuple[int, TagT]]] = {}
        self._upstream = [layout.upstream(f) for f in range(n)]
        self._direct = [layout.direct_upstream(f) for f in range(n)]
        self._affects = [{g for g in range(n) if f in self._upstream[g]} for f in range(n)]
        self.stop_tag: TagT | None = None
        self.stop_proposed: TagT | None = None
        self.stop_replies: dict[int, TagT] = {}

    def start(self, start_time: int) -> None:
        for s in self.feds:
            s.net = (start_time, 0)

    def on_net(self, f: int, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        self.feds[f].net = net
        self._counts(f, sent, received)
        return self.regrant((f,)) if regrant else []

    def on_ltc(self, f: int, ltc: TagT, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        s = self.feds[f]
        if ltc > s.ltc:
            s.ltc = ltc
        s.net = net
        self._counts(f, sent, received)
        return self.regrant((f,)) if regrant else []

    def on_resign(self, f: int, sent: dict[int, list[int]], received: dict[int, int],
                  regrant: bool = True) -> list[Grant]:
        s = self.feds[f]
        self._counts(f, sent, received)
        s.resigned = True
        s.net = s.ltc = FOREVER_T
        return self.regrant((f,)) if regrant else []

    def _counts(self, f: int, sent: dict[int, list[int]], received: dict[int, int]) -> None:
        s = self.feds[f]
        for d, (count, t, m) in sent.items():
            if d >= len(self.feds):
                continue
            if count > s.sent.get(d, 0):
                s.sent[d] = count
                if count > self.feds[d].received.get(f, 0):
                    self.in_flight.setdefault((f, d), []).append((count, (t, m)))
        for u, count in received.items():
            if u >= len(self.feds):
                continue
            if count > s.received.get(u, 0):
                s.received[u] = count
            lst = self.in_flight.get((u, f))
            if lst:
                self.in_flight[(u, f)] = [(c, t) for c, t in lst if c > count]

    def next_event(self, u: int) -> TagT:
        s = self.feds[u]
        if s.resigned:
            return FOREVER_T
        e = max(s.net, succ(s.ltc))
        stop = self.stop_tag
        if stop is not None and e > stop and s.ltc < stop:
            e = stop
        for (_src, dst), lst in self.in_flight.items():
            if dst == u:
                for _c, t in lst:
                    if t < e:
                        e = t
        return e

    def eimt(self, f: int) -> tuple[TagT, set[int]]:
        best = FOREVER_T
        who: set[int] = set()
        for u, d in self._upstream[f].items():
            t = add_delay(self.next_event(u), d)
            if t < best:
                best, who = t, {u}
            elif t == best:
                who.add(u)
        return best, who

    def grant_for(self, f: int) -> Grant | None:
        s = self.feds[f]
        if s.resigned or not self._upstream[f]:
            return None
        e, who = self.eimt(f)
        n = s.net
        counts = {u: self.feds[u].sent.get(f, 0) for u in self._direct[f]}
        if e > n:
            g = pred(e)
            if g > s.granted:
                s.granted = g
                return Grant(f, g, False, counts)
            return None
        if e == n and who <= self.layout.scc[f] and n > s.ptag and n > s.granted:
            s.ptag = n
            return Grant(f, n, True, counts)
        g = pred(e)
        if g > s.granted:
            s.granted = g
            return Grant(f, g, False, counts)
        return None

    def regrant(self, changed: Iterable[int]) -> list[Grant]:
        todo: set[int] = set()
        for c in changed:
            todo |= self._affects[c]
            todo.add(c)
        out: list[Grant] = []
        for f in sorted(todo):
            g = self.grant_for(f)
            if g is not None:
                out.append(g)
                if g.provisional:
                    out += self.ptag_upstream(f, g.tag)
        return out

    def ptag_upstream(self, f: int, tag: TagT) -> list[Grant]:
        """reactor-c's notify_provisional_tag_advance_grant: the immediate upstream federates
        of one given a PTAG for ``tag`` get ``tag`` too (a TAG if nothing can reach them
        before, else a PTAG if only their zero-delay cycle can), transitively."""
        out: list[Grant] = []
        todo = [f]
        while todo:
            x = todo.pop()
            for u in self._direct[x]:
                s = self.feds[u]
                if s.resigned or not self._upstream[u] or tag <= s.granted:
                    continue
                e, who = self.eimt(u)
                counts = {v: self.feds[v].sent.get(u, 0) for v in self._direct[u]}
                if e > tag:
                    s.granted = tag
                    out.append(Grant(u, tag, False, counts))
                elif e == tag and tag > s.ptag and who <= self.layout.scc[u]:
                    s.ptag = tag
                    out.append(Grant(u, tag, True, counts))
                    todo.append(u)
        return out

    def on_stop_request(self, f: int, tag: TagT) -> TagT | None:
        if self.stop_tag is not None:
            return None
        if self.stop_proposed is None:
            self.stop_proposed = tag
            self.stop_replies = {}
            return tag
        self.stop_proposed = max(self.stop_proposed, tag)
        return None

    def on_stop_reply(self, f: int, tag: TagT) -> TagT | None:
        if self.stop_proposed is None or self.stop_tag is not None:
            return None
        self.stop_replies[f] = tag
        if all(i in self.stop_replies for i, s in enumerate(self.feds) if not s.resigned):
            self.stop_tag = stop = max([self.stop_proposed, *self.stop_replies.values()])
            last = pred(stop)
            for s in self.feds:
                s.granted = min(s.granted, last)
                s.ptag = min(s.ptag, last)
            return stop
        return None


def _exact(out: object) -> object:
    """A call's result with each grant's counts in order (a dict compares unordered)."""
    if isinstance(out, list):
        return [(g.federate, g.tag, g.provisional, list(g.counts.items())) for g in out]
    if isinstance(out, Grant):
        return _exact([out])
    return out


def _state(c: RtiCore | NaiveRti) -> object:
    n = len(c.feds)
    return (c.feds, c.stop_tag, c.stop_proposed, c.stop_replies,
            {k: v for k, v in c.in_flight.items() if v},
            [c.next_event(u) for u in range(n)], [c.eimt(f) for f in range(n)])


_DELAY = st.sampled_from([None, None, 0, 1, 3])
_REAL = st.tuples(st.integers(0, 8).map(lambda dt: START + dt), st.integers(0, 2))
_EDGE = st.tuples(st.sampled_from([FOREVER_T[0], NEVER_T[0]]), st.integers(0, 2))
_TAG = st.one_of(_REAL, _REAL, _REAL, st.just(FOREVER_T), _EDGE)  # mostly real tags; idle; edges


@st.composite
def layouts(draw: st.DrawFn) -> Layout:
    """Random links (cycles and self-links included), or a hub and spokes (the learner and
    its samplers: a broadcast without delay, answers after 0, or other delays)."""
    n = draw(st.integers(1, 6))
    if n > 1 and draw(st.booleans()):
        out, back = draw(_DELAY), draw(_DELAY)
        edges = [e for s in range(1, n) for e in ((0, s, out), (s, 0, back))]
    else:
        edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), _DELAY), min_size=1, max_size=10))
    return lay(n, *edges)


@st.composite
def calls(draw: st.DrawFn, n: int) -> tuple[Any, ...]:
    """One call as the RTI server would make it, with counts (cumulative: mostly growing,
    not always) and the earliest tag sent since the last report (FOREVER: none)."""
    fed = st.integers(0, n - 1)
    peer = st.integers(0, n)  # n: a federate the layout does not have
    sent = st.dictionaries(peer, st.tuples(st.integers(0, 6), _TAG).map(lambda x: [x[0], *x[1]]), max_size=3)
    received = st.dictionaries(peer, st.integers(0, 6), max_size=3)
    regrant = st.booleans()
    return draw(st.one_of(
        st.tuples(st.just("on_ltc"), fed, _TAG, _TAG, sent, received, regrant),
        st.tuples(st.just("on_net"), fed, _TAG, sent, received, regrant),
        st.tuples(st.just("on_resign"), fed, sent, received, regrant),
        st.tuples(st.just("regrant"), st.lists(fed, max_size=n)),
        st.tuples(st.just("grant_for"), fed),
        st.tuples(st.just("on_stop_request"), fed, _TAG),
        st.tuples(st.just("on_stop_reply"), fed, _TAG),
        st.tuples(st.just("agree_stop"), fed, _TAG),
    ))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_same_grants_as_the_straightforward_algorithm(data: st.DataObject) -> None:
    layout = data.draw(layouts())
    n = len(layout.names)
    new, old = RtiCore(layout), NaiveRti(layout)
    assert _state(new) == _state(old)
    if data.draw(st.integers(0, 4)) > 0:  # (the server starts before any report; the API allows it)
        new.start(START)
        old.start(START)
    for call in data.draw(st.lists(calls(n), min_size=3, max_size=40)):
        name, *args = call
        if name == "agree_stop":  # a request every live federate answers at once
            f, tag = args
            for c in (new, old):
                c.on_stop_request(f, tag)
                for i in range(n):
                    if not c.feds[i].resigned:
                        c.on_stop_reply(i, tag)
            assert _state(new) == _state(old), call
            continue
        assert _exact(getattr(new, name)(*args)) == _exact(getattr(old, name)(*args)), call
        assert _state(new) == _state(old), call


# -- release: a resigned federate keeps its links until what it sent is received -----------


def test_a_resigned_federate_with_nothing_in_flight_is_released_at_once() -> None:
    c = core(2, (0, 1, None))
    complete(c, 0, at(0), at(10), sent={1: [1, *at(0)]})
    complete(c, 1, at(0), at(10), received={0: 1})
    c.on_resign(0, {1: [1, *at(0)]}, {})
    assert c.take_released() == [0]
    assert c.take_released() == []  # once


def test_a_resigned_federate_is_released_once_its_receiver_reports_everything() -> None:
    c = core(3, (0, 2, None), (1, 2, None))
    c.on_resign(0, {2: [3, *at(5)]}, {})
    c.on_resign(1, {}, {})
    assert c.take_released() == [1]  # it sent nothing
    complete(c, 2, at(0), at(5), received={0: 2})
    assert c.take_released() == []  # the third message is still on its way
    complete(c, 2, at(5), at(10), received={0: 3})
    assert c.take_released() == [0]


def test_a_receiver_that_resigns_releases_its_senders() -> None:
    # It stopped before reading them: it reads nothing more, nobody waits for it.
    c = core(2, (0, 1, None))
    c.on_resign(0, {1: [2, *at(5)]}, {})
    assert c.take_released() == []
    c.on_resign(1, {}, {0: 1})
    assert c.take_released() == [0, 1]


def test_release_waits_for_every_receiver() -> None:
    c = core(3, (0, 1, None), (0, 2, None))
    c.on_resign(0, {1: [1, *at(0)], 2: [1, *at(0)]}, {})
    complete(c, 1, at(0), at(10), received={0: 1})
    assert c.take_released() == []
    c.on_net(2, at(10), {}, {0: 1})  # a NET report carries receipts too
    assert c.take_released() == [0]
