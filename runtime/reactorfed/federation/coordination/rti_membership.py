"""The RTI core's membership rounds (issue 19; :mod:`.membership` for the messages): its
:class:`RtiMembership` part (see :mod:`.rti_core`'s docstring for the rule).

The slots of an elastic bank may be absent: an absent slot is resigned as far as grants go
(it holds back nobody, gets no grant). A member joins or leaves at a tag agreed in a
*round*, as a stop is: the core proposes the earliest tag by Lingua Franca's rule for
transient federates, asks every present federate (:class:`.membership.Query`), agrees on
the latest of the proposal and the answers, then sends every federate the
:class:`.membership.Change` s and the federates asked a :class:`.membership.RoundEnd`.
Replayed (:meth:`RtiMembership.load_schedule`), the tags are given: its part
:class:`.rti_replay.Replay` holds the changes to come.

Each public method returns the grants it makes due (as a report does); what else goes out
(queries, changes, round ends, admissions, refusals) is in the outbox, and goes out before
those grants.

It owns its state and reaches the core only through :class:`Core` (the federates' states,
the stop, a change's operations on the core's own state, its grants). A round's state and
the rule for its proposal are in :mod:`.rti_round`; what follows for each slot (present,
agreed leaves, floors, incarnations) is its part :class:`.rti_slots.Slots`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from ...time.tag import TagT, succ
from .layout import ElasticGroup, Layout
from .membership import Admit, Change, MembershipError, Query, Refused, RoundEnd, check_schedule
from .rti_flight import Flight
from .rti_replay import Replay
from .rti_round import Round, normal, proposal
from .rti_slots import Core as SlotsCore
from .rti_slots import Slots
from .rti_state import FOREVER_T, NEVER_T, FederateState, Grant

__all__ = ["Out", "RtiMembership"]

#: what the core sends besides grants (:attr:`RtiMembership.outbox`)
Out = Query | Change | Admit | Refused | RoundEnd


class Core(SlotsCore, Protocol):
    """What the membership needs of the RTI's core (:class:`.rti_core.RtiCore`): what its
    slots do (:class:`.rti_slots.Core`), the stop, and the grants a change makes due."""

    @property
    def feds(self) -> list[FederateState]: ...
    @property
    def stop_tag(self) -> TagT | None: ...
    @property
    def stop_proposed(self) -> TagT | None: ...
    def regrant(self, changed: Iterable[int]) -> list[Grant]: ...


class RtiMembership:
    """The membership of the RTI's core (its part :attr:`.rti_core.RtiCore.members`): the
    requests, the round under way, the replayed schedule; what follows for each slot is
    its part :attr:`slots` (:class:`.rti_slots.Slots`). The core asks :meth:`progressed`
    when reports may have settled a round or a replayed join."""

    def __init__(self, layout: Layout, core: Core, flight: Flight) -> None:
        self.layout = layout
        self._core = core
        self._flight = flight
        self.slots = Slots(layout, core, flight)
        self.start_time: int | None = None
        #: what to send besides grants, in order: queries and changes (every federate),
        #: admissions and refusals (the member); the driver takes them (:meth:`take_outbox`)
        self.outbox: list[Out] = []
        #: every change, in order (tags never decrease)
        self.record: list[Change] = []
        #: replayed joiners connected, not admitted yet (Slots.settled)
        self.connected: set[int] = set()
        #: the round under way
        self.round: Round | None = None
        self._failed: set[int] = set()  # failed members whose leave is not agreed yet
        self._requests: list[tuple[int, bool, int | None]] = []  # (member, joined, physical time)
        self._rounds = 0
        self._replay: Replay | None = None  # a replayed schedule's changes to come

    @property
    def present(self) -> list[bool]:
        """Whether each federate is present (for reading: :attr:`.Slots.present`)."""
        return self.slots.present

    def start(self, start_time: int) -> list[Grant]:
        """The federation starts (the core's next events are there already): the joins
        asked before the start are present from the start tag, no round needed (nobody has
        run a tag yet). Returns the grants admitting them made due (each moved its
        federate's ``granted``: one dropped here would never be sent again)."""
        self.start_time = start_time
        # the driver takes the changes and admissions from the outbox
        for m, _j, _p in sorted(self._requests):
            ch = Change((start_time, 0), m, True)
            self.record.append(ch)
            self.outbox.append(ch)
        reqs, self._requests = self._requests, []
        out: list[Grant] = []
        for m, _j, _p in sorted(reqs):
            out += self._admit((start_time, 0), m)
        return out

    def on_resign(self, f: int, ltc: TagT) -> list[Grant]:
        """``f`` resigned (the core has it resigned already) after completing ``ltc``."""
        self.slots.resigned(f, ltc, self._rejoin(f))
        rnd = self.round
        if rnd is not None and f in rnd.waiting:
            # it answers nothing more (a member whose leave was agreed is asked in the
            # rounds after it until it resigns: that round must not wait for it)
            self._gone_from_round(f, ltc)
            return self._agree_if_answered()
        return []

    def progressed(self) -> list[Grant]:
        """Reports came (the core regrants): a round answered may have been waiting for
        the senders' progress (Slots.settled), and so may replayed joiners connected."""
        out: list[Grant] = []
        rnd = self.round
        if rnd is not None and not rnd.waiting:
            out = self._agree_if_answered()
        if self.connected and self._replay is not None:
            out += self._replay.progressed()
        return out

    # Each returns the grants it makes due (as a report does); what else it sends (queries,
    # changes, admissions, refusals) goes to the outbox.
    def take_outbox(self) -> list[Out]:
        out, self.outbox = self.outbox, []
        return out

    def width(self, bank: str) -> int:
        """How many of ``bank``'s slots are present (leaving ones included)."""
        return sum(1 for f in self._bank(bank).slots if self.slots.present[f])

    def _bank(self, name: str) -> ElasticGroup:
        for g in self.layout.elastic:
            if g.name == name:
                return g
        raise MembershipError(f"no elastic bank {name!r}")

    def _slot(self, m: int) -> ElasticGroup:
        g = self.layout.elastic_of(m) if 0 <= m < len(self._core.feds) else None
        if g is None:
            raise MembershipError(f"federate {m} is not a member of an elastic bank: it cannot join or leave")
        return g

    def leaving(self, m: int) -> bool:
        """Whether member ``m`` is present and on its way out: failed, or its leave asked
        or agreed (a new process for its slot can join once it has left)."""
        return self.slots.present[m] and (
            m in self._failed or m in self.slots.leave_at or any(r[0] == m and not r[1] for r in self._requests)
            or (self.round is not None and (m, False) in self.round.changes))

    def _pending(self, m: int) -> bool:
        return any(r[0] == m for r in self._requests) or (
            self.round is not None and any(c[0] == m for c in self.round.changes))

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
        if self._replay is not None:
            got = self._replay.request_join(m)
            if got is None:
                self.outbox.append(Refused(m, True, f"{name}: the replayed schedule has no join of it now"))
            return got or []
        if self.slots.present[m] or self._pending(m):
            raise MembershipError(f"{name} is already {'present' if self.slots.present[m] else 'joining or leaving'}")
        if self._core.stop_tag is not None or self._core.stop_proposed is not None:
            self.outbox.append(Refused(m, True, f"{name}: the federation is stopping"))
            return []
        self._requests.append((m, True, physical_time))
        return self._next_round() if self.start_time is not None else []

    def free_slot(self, bank: str) -> int:
        """The lowest slot of ``bank`` that is absent and not joining (for a new member)."""
        g = self._bank(bank)
        for f in g.slots:
            if not self.slots.present[f] and not self._pending(f):
                return f
        raise MembershipError(f"bank {g.name} is at its maximum width {g.max}: no slot for another member")

    def request_leave(self, m: int) -> list[Grant]:
        """Member ``m`` is asked to leave: at a tag agreed in a round; it runs the tags
        before it, then resigns (:meth:`on_resign` completes the leave)."""
        g = self._slot(m)
        name = self.layout.names[m]
        if self._replay is not None:
            raise MembershipError(f"{name}: membership is replayed from a schedule; no leave is asked")
        if not self.slots.present[m] or self._pending(m) or m in self.slots.leave_at:
            raise MembershipError(f"{name} is not present, or already leaving")
        self._check_min(g, f"{name} cannot leave")
        if self._core.stop_tag is not None or self._core.stop_proposed is not None:
            self.outbox.append(Refused(m, False, f"{name}: the federation is stopping"))
            return []
        self._requests.append((m, False, None))
        return self._next_round()

    def request_swap(self, m: int) -> list[Grant]:
        """A new process for transient federate ``m`` is here while ``m`` is present (LF's
        hot swap): the present incarnation leaves at a tag agreed in a round, as if it had
        asked to (nothing more if it is on its way out already); the new process then
        joins as a rejoin does, after the last tag the old one completed. Raises
        :class:`MembershipError`, changing nothing, when ``m`` is not a transient federate
        or not present, the membership is replayed, or the federation is stopping."""
        g = self._slot(m)
        name = self.layout.names[m]
        if not g.transient:
            raise MembershipError(f"{name} is a member of elastic bank {g.name}, not a transient federate: "
                                  "a second process for it is a duplicate")
        if self._replay is not None:
            raise MembershipError(f"{name}: membership is replayed from a schedule; no hot swap")
        if not self.slots.present[m]:
            raise MembershipError(f"{name} is not present: its new process joins, it swaps nothing")
        if self._core.stop_tag is not None or self._core.stop_proposed is not None:
            raise MembershipError(f"{name}: the federation is stopping")
        if self.leaving(m):
            return []
        self._requests.append((m, False, None))
        return self._next_round()

    def on_failed(self, m: int) -> list[Grant]:
        """Member ``m``'s process is gone: it holds nothing back from now on, and leaves at
        a tag agreed in a round (it is not asked); the record's leave says from which tag
        it did nothing (:meth:`.Slots.change`). Raises :class:`MembershipError`, changing
        nothing, when the federate is not an elastic member or its bank would fall below
        its minimum width (the federation cannot go on: the driver ends it)."""
        g = self._slot(m)
        name = self.layout.names[m]
        if self._replay is not None:
            raise MembershipError(f"{name} failed during a replay: the replay cannot follow its schedule")
        if not self.slots.present[m] and not self._pending(m):
            return []
        rnd = self.round
        leaving = m in self.slots.leave_at or (rnd is not None and (m, False) in rnd.changes)
        if self.slots.present[m] and not leaving and not self._pending(m):
            self._check_min(g, f"{name} failed")
        self._requests = [r for r in self._requests if r[0] != m]
        st = self._core.feds[m]
        if rnd is not None and m in rnd.waiting:
            self._gone_from_round(m, st.ltc)
        joining = rnd is not None and (m, True) in rnd.changes
        if not self.slots.present[m] and not joining:
            return []  # only its request was queued: forgotten
        if joining:  # gone before it was admitted: the round goes on without it
            assert rnd is not None
            rnd.changes = tuple(c for c in rnd.changes if c[0] != m)
            self.slots.hold(m, None)
            out = self._agree_if_answered()
            return out + self._core.regrant((m,))
        self.slots.failed(m, (self.start_time or 0, 0))  # no grants for it, none waits on it
        if m in self.slots.leave_at:  # its leave was agreed already: it did nothing from its quiet tag
            i = max(i for i, c in enumerate(self.record) if c.member == m)
            self.record[i] = self.slots.change(self.record[i].tag, m, False)
            self.slots.left(m, None)
            # (it may have been the last one a later round waited for)
            return self._agree_if_answered() + self._core.regrant((m,))
        self._failed.add(m)
        if not leaving:  # (a leave under way goes on: it is not asked any more)
            self._requests.append((m, False, None))
        out = self._agree_if_answered() if rnd is not None else self._next_round()
        return out + self._core.regrant((m,))

    def _check_min(self, g: ElasticGroup, what: str) -> None:
        leaving = sum(1 for f in g.slots if f in self.slots.leave_at or f in self._failed) + sum(
            1 for r in self._requests if not r[1] and self.layout.elastic_of(r[0]) == g)
        if self.width(g.name) - leaving - 1 < g.min:
            raise MembershipError(f"{what}: bank {g.name} would fall below its minimum width {g.min}")

    def _gone_from_round(self, f: int, last: TagT) -> None:
        """``f`` resigned or failed before it answered: its answer is the tag after
        ``last``, the last it completed (what it did at that tag stands, with the
        membership it had)."""
        assert self.round is not None
        self.round.gone(f, last)

    def on_membership_reply(self, f: int, round: int, tag: TagT, took: Mapping[int, TagT] | None = None) -> list[Grant]:
        """Federate ``f``'s answer to :class:`Query` ``round``: the earliest tag it can
        apply the round's changes at (it goes no further until it has them); ``took``: the
        last tag it took a message of each failed member at (:meth:`.Slots.heard`)."""
        rnd = self.round
        if rnd is None or rnd.id != round or f not in rnd.waiting:
            return []
        for m, t in (took or {}).items():
            self.slots.heard(m, t)
        rnd.answer(f, tag)
        return self._agree_if_answered()

    # the round
    def _proposal(self, m: int, joined: bool, physical_time: int | None) -> TagT:
        """LF's earliest tag for a change of ``m`` (:func:`.rti_round.proposal`)."""
        assert self.start_time is not None
        feds = self._core.feds
        last = self.slots.last_ltc.get(m, NEVER_T) if joined or m in self._failed else feds[m].ltc
        # A joiner: not at a tag granted to any federate downstream of it (reactor-c looks
        # at the immediate ones; a grant through a federate that only absent members feed
        # passes it, so here every one it has a path to). Its physical time: never for a
        # replayed join, admitted at its recorded tag (see request_join).
        down = [feds[f] for f in self.layout.path[m] if f != m and not feds[f].resigned] if joined else []
        return proposal(m, self.start_time, physical_time if joined else None, last, down,
                        self._flight.addressed[m], self.record)

    def _next_round(self) -> list[Grant]:
        if self.round is not None or not self._requests:
            return []
        reqs, self._requests = self._requests, []
        self._rounds += 1
        changes = tuple(sorted((m, j) for m, j, _p in reqs))
        tag = max(self._proposal(m, j, p) for m, j, p in reqs)
        if tag >= self._limit():
            return self._cancel(changes, "no tag left for it: the federation stops first")
        joining = {m for m, j in changes if j}
        waiting = {f for f in range(len(self._core.feds))
                   if self.slots.present[f] and not self._core.feds[f].resigned and f not in joining}
        self.round = Round(self._rounds, tag, changes, waiting, frozenset(waiting))
        for m in joining:  # no grant passes the proposal while the round is under way
            self.slots.hold(m, tag)
        if waiting:
            self.outbox.append(Query(self._rounds, tag, changes, frozenset(waiting)))
        out = self._agree_if_answered()
        return out + self._core.regrant(joining)

    def _agree_if_answered(self) -> list[Grant]:
        rnd = self.round
        if rnd is None or rnd.waiting or not all(self.slots.settled(m) for m, j in rnd.changes if j):
            return []
        self.round = None
        tag = rnd.tag
        for m, j in rnd.changes:
            if j and self._flight.addressed[m] != NEVER_T:  # (reported since the proposal: see Slots.settled)
                tag = max(tag, normal(succ(self._flight.addressed[m])))
        if tag >= self._limit():
            out = self._cancel(rnd.changes, "no tag left for it: the federation stops first")
        else:
            out = []
            for m, joined in rnd.changes:
                ch = self.slots.change(tag, m, joined)  # (a failed member's leave: quiet since)
                self.record.append(ch)
                self.outbox.append(ch)
            for m, joined in rnd.changes:
                if joined:
                    out += self._admit(tag, m)
                else:
                    self._failed.discard(m)
                    self.slots.leave(m, tag, self._rejoin(m))
            out += self._core.regrant(m for m, _j in rnd.changes)
        if rnd.asked:  # after its changes: the federates asked lift their barriers
            self.outbox.append(RoundEnd(rnd.id, rnd.asked))
        return out + self._next_round()

    def _limit(self) -> TagT:
        """No change at or past this: the stop tag, else the end of time (a federate
        granted FOREVER, which only absent members fed, has no tag left to meet a joiner)."""
        return self._core.stop_tag if self._core.stop_tag is not None else (FOREVER_T[0], 0)

    def _cancel(self, changes: tuple[tuple[int, bool], ...], why: str) -> list[Grant]:
        for m, joined in changes:
            if joined:
                self.slots.hold(m, None)
            if m in self._failed:  # gone: nobody to tell (not recorded: the run ends first)
                self._failed.discard(m)
                self.slots.quiet.pop(m, None)
            else:
                self.outbox.append(Refused(m, joined, f"{self.layout.names[m]}: {why}"))
        return self._core.regrant(m for m, _j in changes)

    def _admit(self, tag: TagT, m: int, leave: TagT | None = None) -> list[Grant]:
        """Slot ``m`` starts at ``tag`` (:meth:`.Slots.admit`)."""
        self.slots.admit(m, tag, leave)
        st = self._core.feds[m]
        self.outbox.append(Admit(m, tag, dict(st.sent), dict(st.received)))
        return self._core.regrant((m,))

    def _rejoin(self, m: int) -> TagT | None:
        """Replayed: the tag ``m`` joins at again after the leave it is to make next."""
        return self._replay.rejoin(m) if self._replay is not None else None

    def load_schedule(self, changes: list[Change]) -> None:
        """Replay: apply exactly ``changes`` (a run's :attr:`record`), at their tags,
        before the start. Every federate gets them all at once (the outbox); a slot that
        joins counts as having its next event at its tag until it connects and asks to join
        (:meth:`request_join`); a member that leaves at ``L`` resigns after the tags before
        ``L``. Live requests are refused from then on."""
        check_schedule(self.layout, changes)
        if self.start_time is not None or self.record or self._requests:  # (never twice)
            raise MembershipError("a membership schedule is loaded before the start, once")
        self._replay = Replay(self.layout, changes, self.slots, self.connected, self._admit)
        self.record = list(changes)
        self.outbox.extend(changes)
        self._replay.schedule()
