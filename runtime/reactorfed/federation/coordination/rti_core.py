"""The RTI's coordination logic: pure, no sockets (see :mod:`..process.rti_server` for those).

For each federate ``f`` the RTI knows its next event tag (NET), its latest tag complete
(LTC), what its peers have sent it and what it has received. The earliest tag at which
anything could still reach ``f`` (its EIMT) is the minimum, over every federate ``u``
with a path of links to ``f``, of ``u``'s next possible event plus the path's delay. A
federate ``u`` cannot act before ``max(NET(u), LTC(u) + 1 microstep)`` unless a message
still in flight to it is earlier. ``f`` may process every tag before its EIMT (TAG); at
its EIMT it may go ahead provisionally (PTAG) when the only federates that could still
send at that tag are in a zero-delay cycle with it (they announce absent ports).

**Incremental** (issue 18). Recomputing every EIMT from scratch on each report costs
O(N^3) per report for a learner and N samplers. Instead the core keeps, always exact:

* each federate's next event (:meth:`next_event`), recomputed in O(1) when its report,
  the messages in flight to it (:mod:`.rti_flight`: indexed by receiver, with their
  earliest tag) or the stop tag change;
* the EIMTs (:mod:`.rti_bounds`): within a cycle of links, over the next events of the
  cycle's federates; from outside it, over the *bounds* of the federates with a link into
  it (the earliest each could send at: its next event or its own EIMT), followed along
  the links and only as far as a bound moves (a report costs O(1) in a chain of N, not
  O(N)). Federates with the same terms share one EIMT (the N samplers are one group): the
  minimum and how many terms attain it. A term that moves moves it in O(1); only when the
  last term attaining the minimum moves later is it recomputed in full;
* which federates' grants may have changed since :meth:`grant_for` last looked at them
  (``_stale``, which the bounds add to): a grant depends only on the federate's EIMT, who attains it, its NET and
  the grants it holds, and looking again with those unchanged grants nothing (except
  after a PTAG: the next look grants the tag before it). So :meth:`regrant` looks only at
  those, in the same order as looking at all would.

``tests/federation/test_rti_core.py`` checks it makes, call for call, the grants the
straightforward algorithm makes.

**Membership** (issue 19; :mod:`.membership`, :mod:`.rti_membership`). The slots of an elastic bank may be absent:
an absent slot is resigned as far as grants go (it holds back nobody, gets no grant). A
member joins or leaves at a tag agreed in a *round*, as a stop is: the core proposes the
earliest tag by Lingua Franca's rule for transient federates (reactor-c's
``handle_timestamp``, branch ``transient-fed``), asks every present federate
(:class:`.membership.Query`), and agrees on the latest of the proposal and the answers; it
then sends every federate the :class:`.membership.Change` s. While a round is under way a
joining slot counts as having its next event at the proposal, so no grant passes it. A
failed member stops holding grants back at once and leaves at a tag agreed the same way
(the record's leave says from which tag it did nothing: ``Change.quiet``).
Replayed (:meth:`.RtiMembership.load_schedule`), the tags are given: a slot that joins at ``J``
counts as having its next event at ``J`` until it connects. Nothing changes for a
federation whose membership does not: no slot, no round, the same grants.

**Release.** A federate that resigned may still have messages on their way to its
downstream peers: queued in its own process (a fast sender's last payloads, megabytes of
them). Closing its links then would lose them, and the receiver would wait for ever for
messages the counts say were sent. So it keeps its links open until the RTI releases it
(:meth:`RtiCore.take_released`): once every message it sent has been reported received, or
its receiver resigned or failed (it will read nothing more).

**Parts.** The core composes parts that own their state: :attr:`RtiCore.bounds` (the
EIMTs: :class:`.rti_bounds.RtiBounds`, given the core's ``next_event`` and the set its
moves mark stale), :attr:`RtiCore.flight` (:class:`.rti_flight.Flight`, given the
federates' states and what to tell when an earliest tag in flight moves),
:attr:`RtiCore.lead` (the lead window: :class:`.rti_lead.LeadWindow`, which reads the
federates' states and the bounds; the driver asks it for LEADs after each regrant) and
:attr:`RtiCore.members` (:class:`.rti_membership.RtiMembership` with its
:class:`.rti_slots.Slots`, which use the core through the small ``Core`` protocols of
their modules: its federates' states, the stop, and the operations on its own state
that a change of membership makes). What a report reads of them on every message is
bound once in :meth:`RtiCore.__init__` (their lists, sets and methods, never replaced),
so the parts cost no look-up on that path. The driver's membership calls go to
:attr:`RtiCore.members` (requests, answers, failures, the record, the outbox).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...time.tag import TagT, pred, succ
from .layout import Layout
from .rti_bounds import RtiBounds
from .rti_flight import Flight
from .rti_lead import LeadWindow
from .rti_membership import RtiMembership
from .rti_state import FOREVER_T, MAX_MICROSTEP, NEVER_T, FederateState, Grant

__all__ = ["FOREVER_T", "MAX_MICROSTEP", "NEVER_T", "FederateState", "Grant", "RtiCore", "pred", "succ"]

class RtiCore:
    """The grants due as federates report. State changes only through these methods
    (the caches below follow them); :attr:`feds` is for reading. Its parts (see Parts in
    the module docstring): the EIMTs (:attr:`bounds`), the messages in flight
    (:attr:`flight`) and the membership (:attr:`members`)."""

    def __init__(self, layout: Layout, window: int | None = None) -> None:
        self.layout = layout
        n = len(layout.names)
        self.feds = [FederateState() for _ in range(n)]
        #: federates whose grants may have changed since grant_for last looked at them
        self._stale: set[int] = set()
        self.bounds = bounds = RtiBounds(layout, self._next_event, self._stale)
        self.flight = flight = Flight(layout, self.feds, bounds.refresh)
        # what a report reads of the parts (bound once: no look-up through them)
        self._group = bounds.group
        self._refresh = bounds.refresh
        self._only_cycle = bounds.only_cycle
        self._counts = flight.counts
        self._earliest = flight.earliest
        self._up_set = [frozenset(u) for u in bounds.upstream]
        self._direct = [layout.direct_upstream(f) for f in range(n)]
        self.stop_tag: TagT | None = None
        self.stop_proposed: TagT | None = None
        self.stop_replies: dict[int, TagT] = {}
        #: resigned federates not released yet (see Release)
        self._releasing: set[int] = set()
        #: how far each federate may run ahead of its downstream federates (``window`` ns
        #: of logical time; None: without limit): :mod:`.rti_lead`
        self.lead = LeadWindow(layout, window, self.feds, bounds)
        self._lead_reported = self.lead.reported if window is not None else None
        self.members = members = RtiMembership(layout, self, flight)
        # what the next events read of the membership (its slots' dicts, never replaced)
        self._floor = members.slots.floor
        self._leave_at = members.slots.leave_at
        for f in range(n):
            if not members.present[f]:  # an absent slot: resigned as far as grants go
                self._resign(f)
        bounds.recompute_all()

    def start(self, start_time: int) -> list[Grant]:
        """The federation starts at ``start_time``. Returns the grants that admitting the
        joins asked before the start made due (:meth:`.RtiMembership.start`)."""
        for st in self.feds:
            st.net = (start_time, 0)
        self.bounds.recompute_all()
        self.lead.start(start_time)
        return self.members.start(start_time)

    @property
    def in_flight(self) -> dict[tuple[int, int], list[tuple[int, TagT]]]:
        """The messages in flight, per (sender, receiver) (a copy, for reading)."""
        return self.flight.in_flight

    # -- reports from federates --------------------------------------------------------
    # Each report returns the grants it makes due; with ``regrant=False`` it only updates
    # the state, and :meth:`regrant` computes the grants of a whole batch of reports at once
    # (the RTI server does that: a backlog of reports then yields one grant per federate,
    # covering every tag the batch made safe, instead of one grant per report).
    def on_net(self, f: int, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        st.net = net
        self._counts(f, sent, received)
        return self._reported(f, regrant)

    def on_ltc(self, f: int, ltc: TagT, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        if ltc > st.ltc:
            st.ltc = ltc
        st.net = net
        self._counts(f, sent, received)
        return self._reported(f, regrant)

    def on_resign(self, f: int, sent: dict[int, list[int]], received: dict[int, int],
                  regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        self._counts(f, sent, received)
        if st.resigned:  # (twice, or a failed member's last words: nothing else changes)
            st.net = st.ltc = FOREVER_T
            return self._reported(f, regrant)
        last = st.ltc
        self._resign(f)
        st.net = st.ltc = FOREVER_T
        self._releasing.add(f)
        return self.members.on_resign(f, last) + self._reported(f, regrant)

    def _resign(self, f: int) -> None:
        """No grants for ``f`` any more, and it holds nobody back (_next_event)."""
        self.feds[f].resigned = True
        g = self._group[f]
        if g is not None:
            g.members.discard(f)

    def take_released(self) -> list[int]:
        """The resigned federates, not released before, whose messages have all been
        received, or whose receivers that still lack some have resigned or failed (see
        Release in the module docstring). Asked once per batch of reports, not per report."""
        if not self._releasing:
            return []
        done = sorted(filter(self.flight.delivered, self._releasing))
        self._releasing.difference_update(done)
        return done

    def _reported(self, f: int, regrant: bool) -> list[Grant]:
        if not self.feds[f].resigned and self._group[f] is not None:
            self._stale.add(f)  # its NET changed (maybe)
        if self._lead_reported is not None:
            self._lead_reported(f)
        self._refresh(f)
        return self.regrant((f,)) if regrant else []

    # -- next events (their EIMTs: the bounds) -------------------------------------------
    def _next_event(self, u: int) -> TagT:
        st = self.feds[u]
        if st.resigned:
            # an absent slot joining (a round under way, or replayed): not before that
            return self._floor.get(u, FOREVER_T) if self._floor else FOREVER_T
        e = max(st.net, succ(st.ltc))
        stop = self.stop_tag
        if stop is not None and e > stop and st.ltc < stop:
            # Agreed: u has an event at the stop tag (its shutdown reactions), whatever
            # NET it reported before it knew of the stop.
            e = stop
        e = min(e, self._earliest[u])
        if self._leave_at and e >= self._leave_at.get(u, FOREVER_T):
            # it leaves before that: it sends nothing more (replayed: until the slot's
            # next incarnation, whose join tag holds grants back)
            return self._floor.get(u, FOREVER_T)
        return e

    # -- grants ----------------------------------------------------------------------
    def grant_for(self, f: int) -> Grant | None:
        """The grant ``f`` should get now, if it improves on what it has."""
        self._stale.discard(f)
        st = self.feds[f]
        g = self._group[f]
        if st.resigned or g is None:
            return None
        e = g.best
        n = st.net
        if e > n:
            t = pred(e)
            if t > st.granted:
                st.granted = t
                return Grant(f, t, False, self._counts_to(f))
            return None
        if e == n and n > st.ptag and n > st.granted and self._only_cycle(f, g):
            st.ptag = n
            self._stale.add(f)  # the next look grants the tag before it (the last case)
            return Grant(f, n, True, self._counts_to(f))
        t = pred(e)
        if t > st.granted:
            st.granted = t
            return Grant(f, t, False, self._counts_to(f))
        return None

    def _counts_to(self, f: int) -> dict[int, int]:
        """The messages each direct upstream federate has reported sending ``f``."""
        return {u: self.feds[u].sent.get(f, 0) for u in self._direct[f]}

    def regrant(self, changed: Iterable[int]) -> list[Grant]:
        """The grants due after reports from the federates ``changed``: those of the
        federates they are upstream of, and their own, in federate order. Only those whose
        grant may have changed are looked at (_stale: looking at the others grants nothing)."""
        out: list[Grant] = []
        members = self.members
        if members.round is not None or members.connected:
            out = members.progressed()
        ch = set(changed)
        due = sorted(f for f in self._stale if f in ch or not self._up_set[f].isdisjoint(ch))
        for f in due:
            gr = self.grant_for(f)
            if gr is not None:
                out.append(gr)
                if gr.provisional:
                    out += self._ptag_upstream(f, gr.tag)
        return out

    def _ptag_upstream(self, f: int, tag: TagT) -> list[Grant]:
        """A PTAG for ``tag`` to ``f`` also lets ``f``'s immediate upstream federates reach
        ``tag``, transitively: ``f`` waits within ``tag`` for its inputs on the cycle, and an
        upstream member with no event of its own at ``tag`` would never announce them absent.
        It is granted ``tag`` when nothing can reach it before then, and given a PTAG for it
        (which it processes even without an event: :meth:`.FederateCore.acquire`) when only
        its own cycle could; reactor-c's ``notify_provisional_tag_advance_grant``."""
        out: list[Grant] = []
        todo = [f]
        feds, group = self.feds, self._group
        while todo:
            x = todo.pop()
            for u in self._direct[x]:
                st, g = feds[u], group[u]
                if st.resigned or g is None or tag <= st.granted:
                    continue
                if g.best > tag:
                    st.granted = tag
                    out.append(Grant(u, tag, False, self._counts_to(u)))
                elif g.best == tag and tag > st.ptag and self._only_cycle(u, g):
                    st.ptag = tag
                    self._stale.add(u)  # (as in grant_for: the next look grants the tag before it)
                    out.append(Grant(u, tag, True, self._counts_to(u)))
                    todo.append(u)
        return out

    # -- stopping --------------------------------------------------------------------
    def on_stop_request(self, f: int, tag: TagT) -> TagT | None:
        """A federate asks to stop at ``tag``. Returns the tag to ask everyone about, or
        None when a request is already under way (it is folded in)."""
        if self.stop_tag is not None:
            return None
        if self.stop_proposed is None:
            self.stop_proposed = tag
            self.stop_replies = {}
            return tag
        self.stop_proposed = max(self.stop_proposed, tag)
        return None

    def on_stop_reply(self, f: int, tag: TagT) -> TagT | None:
        """Returns the agreed stop tag once every live federate has answered."""
        if self.stop_proposed is None or self.stop_tag is not None:
            return None
        self.stop_replies[f] = tag
        live = [i for i, st in enumerate(self.feds) if not st.resigned]
        if all(i in self.stop_replies for i in live):
            self.stop_tag = stop = max([self.stop_proposed, *self.stop_replies.values()])
            # The grants so far were computed from NETs reported before the stop was
            # known: they may cover the stop tag, at which every federate now has an event.
            # A federate caps what it holds at the agreement (FederateCore.on_stop_granted);
            # grants are computed afresh from here on (next_event), and may be sent again:
            # every next event may have changed, and every grant.
            last = pred(stop)
            for st in self.feds:
                if st.granted > last:
                    st.granted = last
                if st.ptag > last:
                    st.ptag = last
            self.bounds.recompute_all()
            return stop
        return None

    def all_resigned(self) -> bool:
        return all(st.resigned for st in self.feds)

    # -- what the bounds and the membership ask of the core -----------------------------
    def next_event(self, u: int) -> TagT:
        return self.bounds.next_event(u)

    def eimt(self, f: int) -> tuple[TagT, set[int]]:
        """The earliest tag anything could still reach ``f``, and who could send it
        (:meth:`.RtiBounds.eimt`)."""
        return self.bounds.eimt(f)

    def refresh(self, u: int) -> None:
        """``u``'s next event may have changed (its membership did)."""
        self._refresh(u)

    def admit(self, m: int, tag: TagT) -> None:
        """Slot ``m``'s incarnation starts at ``tag`` (:meth:`.RtiMembership.request_join`),
        with the counts its slot starts from (:meth:`.Flight.start`)."""
        self.flight.start(m, tag)
        st = self.feds[m]
        st.resigned = False
        st.net, st.ltc = tag, NEVER_T
        st.granted = st.ptag = NEVER_T
        self.lead.restarted(m)
        g = self._group[m]
        if g is not None:
            g.members.add(m)
            self._stale.add(m)
        self._refresh(m)

    def fail(self, m: int) -> None:
        """Member ``m``'s process is gone (:meth:`.RtiMembership.on_failed`): it gets no
        grants and holds nobody back, and what is in flight to or from it is dropped."""
        self._resign(m)
        st = self.feds[m]
        st.net = st.ltc = FOREVER_T
        self.flight.drop_to(m)
        for d in self.flight.drop_from(m):
            self._refresh(d)
            if self._group[d] is not None and not self.feds[d].resigned:
                self._stale.add(d)
        self._refresh(m)
