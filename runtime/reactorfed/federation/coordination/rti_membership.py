"""The RTI core's membership rounds (issue 19; :mod:`.membership` for the messages): its
:class:`RtiMembership` part (see :mod:`.rti_core`'s docstring for the rule).

The slots of an elastic bank may be absent: an absent slot is resigned as far as grants go
(it holds back nobody, gets no grant). A member joins or leaves at a tag agreed in a
*round*, as a stop is: the core proposes the earliest tag by Lingua Franca's rule for
transient federates, asks every present federate (:class:`.membership.Query`), agrees on
the latest of the proposal and the answers, then sends every federate the
:class:`.membership.Change` s and the federates asked a :class:`.membership.RoundEnd`.
Replayed (:meth:`RtiMembership.load_schedule`), the tags are given.

Each public method returns the grants it makes due (as a report does); what else goes out
(queries, changes, round ends, admissions, refusals) is in the outbox, and goes out before
those grants.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...time.tag import TagT, succ
from .layout import ElasticGroup, Layout
from .membership import Admit, Change, MembershipError, Query, Refused, RoundEnd, check_schedule
from .rti_state import FOREVER_T, MAX_MICROSTEP, NEVER_T, EimtGroup, FederateState, Grant

__all__ = ["Out", "RtiMembership"]

#: what the core sends besides grants (:attr:`RtiMembership.outbox`)
Out = Query | Change | Admit | Refused | RoundEnd


class RtiMembership:
    """The membership state of the RTI's core (a part of :class:`.rti_core.RtiCore`: the
    attributes annotated below without a value are the core's, and so are the two
    methods it overrides)."""

    layout: Layout
    feds: list[FederateState]
    stop_tag: TagT | None
    stop_proposed: TagT | None
    _flight: list[dict[int, list[tuple[int, TagT]]]]
    _flight_min: list[TagT]
    _group: list[EimtGroup | None]
    _direct: list[set[int]]
    _next: list[TagT]
    _stale: set[int]

    def regrant(self, changed: Iterable[int]) -> list[Grant]:
        raise NotImplementedError  # the core's

    def _refresh(self, u: int) -> None:
        raise NotImplementedError  # the core's

    def _init_membership(self) -> None:
        n = len(self.feds)
        self.start_time: int | None = None
        #: whether each federate is present (a member that agreed to leave is, until it resigns)
        self.present = [True] * n
        #: what to send besides grants, in order: queries and changes (every federate),
        #: admissions and refusals (the member); the driver takes them (:meth:`take_outbox`)
        self.outbox: list[Out] = []
        #: every change, in order (tags never decrease)
        self.record: list[Change] = []
        self._leave_at: dict[int, TagT] = {}  # agreed leaves not yet done
        self._left: dict[int, TagT] = {}  # the tag each absent slot's last incarnation left at
        self._connected: set[int] = set()  # replayed joiners connected, not admitted yet (_settled)
        self._floor: dict[int, TagT] = {}  # absent slots' next event: a join under way or replayed
        self._failed: set[int] = set()  # failed members whose leave is not agreed yet
        self._last_ltc: dict[int, TagT] = {}  # what a slot's last incarnation completed
        self._addressed = [NEVER_T] * n  # the latest tag reported sent to each federate
        self._since: dict[int, TagT] = {}  # the tag each rejoined slot's incarnation started at
        self._requests: list[tuple[int, bool, int | None]] = []  # (member, joined, physical time)
        self._round: _Round | None = None
        self._rounds = 0
        self._schedule: dict[int, list[Change]] | None = None  # replay: each slot's changes to come
        initial = self.layout.initial_members()
        for f in range(n):
            if f not in initial:
                self.present[f] = False
                self.feds[f].resigned = True
                grp = self._group[f]
                if grp is not None:
                    grp.members.discard(f)

    # Each returns the grants it makes due (as a report does); what else it sends (queries,
    # changes, admissions, refusals) goes to the outbox.
    def take_outbox(self) -> list[Out]:
        out, self.outbox = self.outbox, []
        return out

    def width(self, bank: str) -> int:
        """How many of ``bank``'s slots are present (leaving ones included)."""
        return sum(1 for f in self._bank(bank).slots if self.present[f])

    def _bank(self, name: str) -> ElasticGroup:
        for g in self.layout.elastic:
            if g.name == name:
                return g
        raise MembershipError(f"no elastic bank {name!r}")

    def _slot(self, m: int) -> ElasticGroup:
        g = self.layout.elastic_of(m) if 0 <= m < len(self.feds) else None
        if g is None:
            raise MembershipError(f"federate {m} is not a member of an elastic bank: it cannot join or leave")
        return g

    def leaving(self, m: int) -> bool:
        """Whether member ``m`` is present and on its way out: failed, or its leave asked
        or agreed (a new process for its slot can join once it has left)."""
        return self.present[m] and (
            m in self._failed or m in self._leave_at or any(r[0] == m and not r[1] for r in self._requests)
            or (self._round is not None and (m, False) in self._round.changes))

    def _pending(self, m: int) -> bool:
        return any(r[0] == m for r in self._requests) or (
            self._round is not None and any(c[0] == m for c in self._round.changes))

    def request_join(self, m: int, physical_time: int | None = None) -> list[Grant]:
        """Slot ``m`` asks to join (its process connected; ``physical_time``: its clock
        at the request, LF's first term). Live: a round (or, before the start, the start
        tag). Replayed: admitted at its recorded tag, if the schedule has it join next.

        A replay is exempt from the physical-time term (decided): it honours the recorded
        tags exactly, whenever the process asks. Its join's tag held every grant back
        until now (``load_schedule``), so no federate is past it, and nothing but the tag
        decides what the joiner sees. Live, the term stays, ``--fast`` or not (the RTI does
        not know how its federates run): a federation whose logical time lags physical
        time (rounds ``after 0`` under ``--fast``, all at the start time) gets its joins at
        or after the request's physical time, possibly after its training ended."""
        self._slot(m)
        name = self.layout.names[m]
        if self._schedule is not None:
            todo = self._schedule.get(m)
            if not todo or not todo[0].joined or self.present[m]:
                self.outbox.append(Refused(m, True, f"{name}: the replayed schedule has no join of it now"))
                return []
            if m in self._connected:
                raise MembershipError(f"{name} is already joining")
            if not self._settled(m):  # admitted once it is (regrant), as a live join is
                self._connected.add(m)
                return []
            return self._replayed_join(m)
        if self.present[m] or self._pending(m):
            raise MembershipError(f"{name} is already {'present' if self.present[m] else 'joining or leaving'}")
        if self.stop_tag is not None or self.stop_proposed is not None:
            self.outbox.append(Refused(m, True, f"{name}: the federation is stopping"))
            return []
        self._requests.append((m, True, physical_time))
        return self._next_round() if self.start_time is not None else []

    def _replayed_join(self, m: int) -> list[Grant]:
        todo = self._schedule[m] if self._schedule is not None else []
        ch = todo.pop(0)
        if todo:  # its next change is a leave: from the start it counts
            self._leave_at[m] = todo.pop(0).tag
        out = self._admit(ch.tag, m)
        if todo:  # and the join after it holds grants back already
            self._floor[m] = todo[0].tag
            self._refresh(m)
        return out

    def free_slot(self, bank: str) -> int:
        """The lowest slot of ``bank`` that is absent and not joining (for a new member)."""
        g = self._bank(bank)
        for f in g.slots:
            if not self.present[f] and not self._pending(f):
                return f
        raise MembershipError(f"bank {g.name} is at its maximum width {g.max}: no slot for another member")

    def request_leave(self, m: int) -> list[Grant]:
        """Member ``m`` is asked to leave: at a tag agreed in a round; it runs the tags
        before it, then resigns (:meth:`on_resign` completes the leave)."""
        g = self._slot(m)
        name = self.layout.names[m]
        if self._schedule is not None:
            raise MembershipError(f"{name}: membership is replayed from a schedule; no leave is asked")
        if not self.present[m] or self._pending(m) or m in self._leave_at:
            raise MembershipError(f"{name} is not present, or already leaving")
        self._check_min(g, f"{name} cannot leave")
        if self.stop_tag is not None or self.stop_proposed is not None:
            self.outbox.append(Refused(m, False, f"{name}: the federation is stopping"))
            return []
        self._requests.append((m, False, None))
        return self._next_round()

    def on_failed(self, m: int) -> list[Grant]:
        """Member ``m``'s process is gone: it holds nothing back from now on, and leaves at
        a tag agreed in a round (it is not asked). Raises :class:`MembershipError`, changing
        nothing, when the federate is not an elastic member or its bank would fall below
        its minimum width (the federation cannot go on: the driver ends it)."""
        g = self._slot(m)
        name = self.layout.names[m]
        if self._schedule is not None:
            raise MembershipError(f"{name} failed during a replay: the replay cannot follow its schedule")
        if not self.present[m] and not self._pending(m):
            return []
        rnd = self._round
        leaving = m in self._leave_at or (rnd is not None and (m, False) in rnd.changes)
        if self.present[m] and not leaving and not self._pending(m):
            self._check_min(g, f"{name} failed")
        self._requests = [r for r in self._requests if r[0] != m]
        st = self.feds[m]
        if rnd is not None and m in rnd.waiting:
            self._last_ltc[m] = st.ltc
            self._gone_from_round(m)
        joining = rnd is not None and (m, True) in rnd.changes
        if not self.present[m] and not joining:
            return []  # only its request was queued: forgotten
        if joining:  # gone before it was admitted: the round goes on without it
            assert rnd is not None
            rnd.changes = tuple(c for c in rnd.changes if c[0] != m)
            self._floor.pop(m, None)
            self._refresh(m)
            out = self._agree_if_answered()
            return out + self.regrant((m,))
        self._last_ltc[m] = st.ltc
        st.resigned = True  # no grants for it, none waits on it (_next_event)
        st.net = st.ltc = FOREVER_T
        grp = self._group[m]
        if grp is not None:
            grp.members.discard(m)
        self._drop_flight_to(m)
        self._drop_flight_from(m)
        self._refresh(m)
        if m in self._leave_at:  # its leave was agreed already
            self._leave_done(m)
            # (it may have been the last one a later round waited for)
            return self._agree_if_answered() + self.regrant((m,))
        self._failed.add(m)
        if not leaving:  # (a leave under way goes on: it is not asked any more)
            self._requests.append((m, False, None))
        out = self._agree_if_answered() if rnd is not None else self._next_round()
        return out + self.regrant((m,))

    def _check_min(self, g: ElasticGroup, what: str) -> None:
        leaving = sum(1 for f in g.slots if f in self._leave_at or f in self._failed) + sum(
            1 for r in self._requests if not r[1] and self.layout.elastic_of(r[0]) == g)
        if self.width(g.name) - leaving - 1 < g.min:
            raise MembershipError(f"{what}: bank {g.name} would fall below its minimum width {g.min}")

    def _gone_from_round(self, f: int) -> None:
        """``f`` resigned or failed before it answered: its answer is the tag after the
        last it completed (what it did at that tag stands, with the membership it had)."""
        rnd = self._round
        assert rnd is not None
        rnd.waiting.discard(f)
        last = self._last_ltc.get(f, NEVER_T)
        if last != FOREVER_T:
            rnd.tag = max(rnd.tag, _normal(succ(last)))

    def on_membership_reply(self, f: int, round: int, tag: TagT) -> list[Grant]:
        """Federate ``f``'s answer to :class:`Query` ``round``: the earliest tag it can
        apply the round's changes at (it goes no further until it has them)."""
        rnd = self._round
        if rnd is None or rnd.id != round or f not in rnd.waiting:
            return []
        rnd.waiting.discard(f)
        if tag > rnd.tag:
            rnd.tag = _normal(tag)
        return self._agree_if_answered()

    # the round
    def _proposal(self, m: int, joined: bool, physical_time: int | None) -> TagT:
        return _normal(self._lf_rule(m, joined, physical_time))

    def _lf_rule(self, m: int, joined: bool, physical_time: int | None) -> TagT:
        """LF's earliest tag for a change of ``m`` (reactor-c, ``handle_timestamp``), from
        what the core knows; the answers to the round cover what it does not."""
        assert self.start_time is not None
        t: TagT = (self.start_time, 0)
        # (never for a replayed join, admitted at its recorded tag: see request_join)
        if joined and physical_time is not None and (physical_time, 0) > t:
            t = (physical_time, 0)
        # not before what the slot's last incarnation (or, leaving, this one) completed
        last = self._last_ltc.get(m, NEVER_T) if joined or m in self._failed else self.feds[m].ltc
        if last != FOREVER_T and succ(last) > t:
            t = succ(last)
        if joined:
            # not at a tag granted to any federate downstream of it (reactor-c looks at
            # the immediate ones; a grant through a federate that only absent members feed
            # passes it, so here every one it has a path to)
            for f in self.layout.path[m]:
                st = self.feds[f]
                if f != m and not st.resigned:
                    t = max(t, succ(st.granted), succ(st.ptag))
        # after every message addressed to it (reported so far)
        if self._addressed[m] != NEVER_T:
            t = max(t, succ(self._addressed[m]))
        if self.record:  # the record's tags never decrease; a member's own increase
            t = max(t, self.record[-1].tag)
            mine = [ch.tag for ch in self.record if ch.member == m]
            if mine:
                t = max(t, succ(mine[-1]))
        return t

    def _next_round(self) -> list[Grant]:
        if self._round is not None or not self._requests:
            return []
        reqs, self._requests = self._requests, []
        self._rounds += 1
        changes = tuple(sorted((m, j) for m, j, _p in reqs))
        tag = max(self._proposal(m, j, p) for m, j, p in reqs)
        if tag >= self._limit():
            return self._cancel(changes, "no tag left for it: the federation stops first")
        joining = {m for m, j in changes if j}
        waiting = {f for f in range(len(self.feds))
                   if self.present[f] and not self.feds[f].resigned and f not in joining}
        self._round = _Round(self._rounds, tag, changes, waiting, frozenset(waiting))
        for m in joining:  # no grant passes the proposal while the round is under way
            self._floor[m] = tag
            self._refresh(m)
        if waiting:
            self.outbox.append(Query(self._rounds, tag, changes, frozenset(waiting)))
        out = self._agree_if_answered()
        return out + self.regrant(joining)

    def _agree_if_answered(self) -> list[Grant]:
        rnd = self._round
        if rnd is None or rnd.waiting or not all(self._settled(m) for m, j in rnd.changes if j):
            return []
        self._round = None
        tag = rnd.tag
        for m, j in rnd.changes:
            if j and self._addressed[m] != NEVER_T:  # (reported since the proposal: see _settled)
                tag = max(tag, _normal(succ(self._addressed[m])))
        if tag >= self._limit():
            out = self._cancel(rnd.changes, "no tag left for it: the federation stops first")
        else:
            out = []
            for m, joined in rnd.changes:
                self.record.append(Change(tag, m, joined))
                self.outbox.append(Change(tag, m, joined))
            for m, joined in rnd.changes:
                if joined:
                    out += self._admit(tag, m)
                else:
                    self._failed.discard(m)
                    self._leave_at[m] = tag
                    if self.feds[m].resigned:  # failed, or resigned since it asked
                        self._leave_done(m)
                    else:
                        self._refresh(m)
            out += self.regrant(m for m, _j in rnd.changes)
        if rnd.asked:  # after its changes: the federates asked lift their barriers
            self.outbox.append(RoundEnd(rnd.id, rnd.asked))
        return out + self._next_round()

    def _settled(self, m: int) -> bool:
        """Whether every federate that may still send to slot ``m``'s previous incarnation
        (the one that left at ``L``) has no tag before ``L`` left to process, so that
        every message it sent to that incarnation is reported. A joiner is admitted only
        then, at a tag after all of them: a message for the incarnation that left is then
        told from one for the joiner by its tag (before or after the join tag), and is
        not counted in the joiner's grants (it never arrives: it is dropped)."""
        left = self._left.get(m)
        if left is None:
            return True  # never present: nothing was sent to it
        for u in self._direct[m]:
            if not self.feds[u].resigned and self._next[u] < left:
                return False
        return True

    def _limit(self) -> TagT:
        """No change at or past this: the stop tag, else the end of time (a federate
        granted FOREVER, which only absent members fed, has no tag left to meet a joiner)."""
        return self.stop_tag if self.stop_tag is not None else (FOREVER_T[0], 0)

    def _cancel(self, changes: tuple[tuple[int, bool], ...], why: str) -> list[Grant]:
        for m, joined in changes:
            if joined:
                self._floor.pop(m, None)
                self._refresh(m)
            if m in self._failed:  # gone: nobody to tell (not recorded: the run ends first)
                self._failed.discard(m)
            else:
                self.outbox.append(Refused(m, joined, f"{self.layout.names[m]}: {why}"))
        return self.regrant(m for m, _j in changes)

    def _admit(self, tag: TagT, m: int) -> list[Grant]:
        """Slot ``m`` starts at ``tag``: present, with the counts its slot starts from."""
        st = self.feds[m]
        self._floor.pop(m, None)
        # What was sent to the slot for before ``tag`` is for an incarnation that is gone
        # (taken); what is for ``tag`` on (a replayed member connecting late) is its own.
        self._since[m] = tag
        mine = self._flight[m]
        for u in list(mine):
            old = [c for c, t in mine[u] if t < tag]
            if old:
                st.received[u] = max(st.received.get(u, 0), old[-1])
                mine[u] = [(c, t) for c, t in mine[u] if t >= tag]
                if not mine[u]:
                    del mine[u]
        self._flight_min[m] = min((t for lst in mine.values() for _c, t in lst), default=FOREVER_T)
        for d in self.layout.downstream(m):
            st.sent[d] = max(st.sent.get(d, 0), self.feds[d].received.get(m, 0))
        st.resigned = False
        st.net, st.ltc = tag, NEVER_T
        st.granted = st.ptag = NEVER_T
        self.present[m] = True
        g = self._group[m]
        if g is not None:
            g.members.add(m)
            self._stale.add(m)
        self._refresh(m)
        self.outbox.append(Admit(m, tag, dict(st.sent), dict(st.received)))
        return self.regrant((m,))

    def _leave_done(self, m: int) -> None:
        """``m`` resigned with its leave agreed: absent from now on."""
        self._left[m] = self._leave_at.pop(m)
        self.present[m] = False
        self._drop_flight_to(m)
        if self._schedule is not None:
            todo = self._schedule.get(m)
            if todo and todo[0].joined:
                self._floor[m] = todo[0].tag  # replayed: it joins again there
        self._refresh(m)

    def _drop_flight_to(self, m: int) -> None:
        """What was sent to ``m`` and not received is for an incarnation that is gone."""
        for u, lst in self._flight[m].items():
            self.feds[m].received[u] = max(self.feds[m].received.get(u, 0), lst[-1][0])
        self._flight[m] = {}
        self._flight_min[m] = FOREVER_T

    def _drop_flight_from(self, m: int) -> None:
        """``m`` failed: what it reported sending that has not been received may be lost
        with it, so no grant waits for it (a receiver drops it if it comes too late)."""
        for d in self.layout.downstream(m):
            got = self.feds[d].received.get(m, 0)
            if self.feds[m].sent.get(d, 0) > got:
                self.feds[m].sent[d] = got
            if self._flight[d].pop(m, None) is not None:
                self._flight_min[d] = min((t for lst in self._flight[d].values() for _c, t in lst), default=FOREVER_T)
                self._refresh(d)
                grp = self._group[d]
                if grp is not None and not self.feds[d].resigned:
                    self._stale.add(d)

    def load_schedule(self, changes: list[Change]) -> None:
        """Replay: apply exactly ``changes`` (a run's :attr:`record`), at their tags,
        before the start. Every federate gets them all at once (the outbox); a slot that
        joins counts as having its next event at its tag until it connects and asks to join
        (:meth:`request_join`); a member that leaves at ``L`` resigns after the tags before
        ``L``. Live requests are refused from then on."""
        check_schedule(self.layout, changes)
        if self.start_time is not None or self.record or self._requests:  # (never twice)
            raise MembershipError("a membership schedule is loaded before the start, once")
        self._schedule = {}
        for ch in changes:
            self._schedule.setdefault(ch.member, []).append(ch)
        self.record = list(changes)
        self.outbox.extend(changes)
        for m, todo in self._schedule.items():
            if not todo[0].joined:
                self._leave_at[m] = todo.pop(0).tag
            if todo:
                self._floor[m] = todo[0].tag
            self._refresh(m)


def _normal(tag: TagT) -> TagT:
    """``tag``, or the next tag a federate can be at if its microstep is past the wire's
    32 bits (``succ`` of a grant ``(t, 2**32 - 1)``, ``pred`` of ``(t + 1, 0)``)."""
    return (tag[0] + 1, 0) if tag[1] > MAX_MICROSTEP and tag[0] < FOREVER_T[0] else tag


@dataclass
class _Round:
    """A round of membership changes: the tag so far (the proposal, raised by answers),
    and the federates that have not answered yet."""

    id: int
    tag: TagT
    changes: tuple[tuple[int, bool], ...]
    waiting: set[int]
    #: the federates asked (they hold their answers' barriers until the RoundEnd)
    asked: frozenset[int]
