"""Elastic banks in the scheduler (issue 19): which members are present at each tag, and
what that does to a run (see :mod:`reactorfed.model.elastic` for the rules).

A change takes effect at the start of its tag, before any reaction runs there: a member
that leaves has its reactions turned into no-ops and every event still queued for its own
slots dropped (a message sent to it before it left and arriving after); one that joins
gets those back, in one process the events queued for it before then dropped (they were
sent to an incarnation that left, or while it was absent; in a federation the senders
and the core see to that, and what is queued at a join is the joiner's own:
``senders_filter``), its state as constructed if it was present before, its startup
reactions run, and its timers restarted from the tag. Messages dropped are counted
(``messages_dropped``). A leave with a ``quiet`` tag (a member whose process failed: the
RTI's record) turns the member's reactions into no-ops from that tag, as a leave does,
while it stays present until its leave (every federate saw it so). Every
change puts an event on the queue, so its tag is processed (in every federate of a
federated run alike, which all get the changes).

The scheduler hooks in at two points: :meth:`Membership.start` once the start events are
queued, and :meth:`Membership.apply` at the start of each tag that has a change
(``due``). A federated run feeds the changes the RTI agrees with :meth:`Membership.post`.
"""

from __future__ import annotations

import copy
import heapq
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..model.bank import Bank
from ..model.elastic import MemberChange, elastic_banks, elastic_width, is_transient
from ..model.port import MultiPort, Port
from ..model.reaction import Reaction
from ..model.reactor import Reactor
from ..model.timer import TimerSlot
from ..model.trigger import Element, OwnedSlot, Slot
from ..time.tag import FOREVER_T, TagT

if TYPE_CHECKING:
    from ..assembly.program import Program
    from .scheduler import Scheduler

__all__ = ["Membership"]

log = logging.getLogger("reactorfed.execution.membership")

_NONE = object()  # (an event's value may be None)
#: what a reactor's instance dict holds that is the runtime's, not the user's state
_RUNTIME_KEYS = frozenset({"name", "fqn", "bank_index"})


def _absent() -> None:
    """The body of an absent member's reactions."""


class _Member:
    """One slot of an elastic bank, as this program runs it (its reactors may be elsewhere:
    then it has no reactions, timers or slots here)."""

    def __init__(self, prog: Program, reactor: Reactor, shared: set[Slot]) -> None:
        self.reactor = reactor
        tree: set[int] = set()
        todo = [reactor]
        self.reactors: list[Reactor] = []
        while todo:
            r = todo.pop()
            tree.add(id(r))
            self.reactors.append(r)
            todo.extend(r.children)
        self.reactions: list[Reaction] = [rx for rx in prog.reactions if id(rx.reactor) in tree]
        self.timers: list[TimerSlot] = [t for t in prog.timers if id(t.reactor) in tree]
        #: its own slots (of its ports, actions and timers, shared with no port elsewhere):
        #: what is queued for them is for this member alone
        self.slots: set[Slot] = set()
        self.inputs: set[Slot] = set()  # those of its ports: what is queued there is a message
        for key, slot in prog.slots.items():
            owner = key.reactor if isinstance(key, (Port, Element)) else None
            if owner is not None and id(owner) in tree and slot not in shared:
                self.slots.add(slot)
                if isinstance(key, Port):
                    self.inputs.add(slot)
        self.startup = Slot(f"{reactor.fqn}.startup")  # its startup reactions alone, at a join
        self.startup.reactions = sorted((rx for rx in prog.startup.reactions if id(rx.reactor) in tree),
                                        key=lambda rx: rx.rank)
        self.calls: dict[Reaction, Any] = {}  # while absent: each reaction's own call
        self.state: list[tuple[Reactor, dict[str, Any]]] | None = None  # as constructed (a rejoin)
        self.present = True
        self.was_present = False
        #: the tag its present incarnation joined at (None: present from the start)
        self.joined_at: TagT | None = None


class Membership:
    """The elastic banks of one program and their members' presence, tag by tag."""

    def __init__(self, prog: Program) -> None:
        self.program = prog
        shared = self._shared_slots(prog)
        #: bank name -> its members, by bank index
        self.banks: dict[str, list[_Member]] = {}
        self._initial: dict[str, int] = {}
        for name, b in elastic_banks(prog.main).items():
            self.banks[name] = [_Member(prog, m, shared) for m in b]
            self._initial[name] = elastic_width(b).start
        #: changes to come: (tag, bank, index, joined), earliest first
        self._todo: list[tuple[TagT, str, int, bool]] = []
        #: members that fall quiet (their process failed) to come: (tag, bank, index)
        self._quiet: list[tuple[TagT, str, int]] = []
        self._schedule: list[MemberChange] = []
        #: every change applied: (tag, bank, index, joined), in order
        self.applied: list[tuple[TagT, str, int, bool]] = []
        #: the earliest tag with a change to apply (the scheduler looks at it every tag)
        self.due: TagT = FOREVER_T
        self._marker = Slot("membership")  # an event at each change's tag, so it is processed
        self._last_change: dict[str, TagT] = {}
        #: set by a federate's driver: its senders send only to the members present at the
        #: sender's tag, and its core drops what is not for this incarnation (before or
        #: after its tags), so what is queued for a joiner's own slots at its join is its
        #: own (a replayed joiner that connects late reads its first inputs before it
        #: processes its join tag): a join keeps it. In one process every sender sends to
        #: every slot, and a join drops what was sent while the member was absent.
        self.senders_filter = False
        #: the members absent at the start, when not the banks' initial widths (a federate's:
        #: the RTI's word, its own slot absent if its process joins: :meth:`set_initial`)
        self._absent_at_start: set[tuple[str, int]] | None = None
        #: the first tag this run processes, when not the start tag: a joiner's ADMIT tag
        #: (its effective start tag; :meth:`begin_at`)
        self.first: TagT | None = None
        #: messages dropped, queued for a member's ports at a tag where the incarnation
        #: they were sent to is not there (one process: sent while it was absent, or in
        #: flight at its leave; federated: in flight at its leave, which the core counts
        #: too, in ``FederateMembership.dropped``)
        self.messages_dropped = 0

    @staticmethod
    def _shared_slots(prog: Program) -> set[Slot]:
        """The slots of ports outside every elastic member (a member's port joined to one
        of them by a zero-delay connection shares its slot: not the member's alone)."""
        inside: set[int] = set()
        for b in elastic_banks(prog.main).values():
            todo: list[Reactor] = list(b)
            while todo:
                r = todo.pop()
                inside.add(id(r))
                todo.extend(r.children)
        return {slot for key, slot in prog.slots.items()
                if isinstance(key, Port) and id(key.reactor) not in inside}

    # -- what a reaction sees ---------------------------------------------------------
    def members(self, bank: str) -> list[int]:
        """The bank indices of ``bank``'s present members (now)."""
        return [i for i, m in enumerate(self.banks[bank]) if m.present]

    def changed(self, bank: str, tag: TagT) -> bool:
        return self._last_change.get(bank) == tag

    def joined_at(self, reactor: Reactor) -> TagT | None:
        """The tag the incarnation of the elastic member ``reactor`` is in (or is inside)
        joined at: its effective start tag (None: present from the start, or not in an
        elastic member)."""
        r: Reactor | None = reactor
        while r is not None:
            for members in self.banks.values():
                for m in members:
                    if m.reactor is r:
                        return m.joined_at
            r = r.parent
        return None

    def transient_member(self, reactor: Reactor) -> tuple[str, int] | None:
        """The (bank, index) of the transient federate (``transient(...)``) that
        ``reactor`` is or is inside (None: it is in none)."""
        r: Reactor | None = reactor
        while r is not None:
            for name, members in self.banks.items():
                for i, m in enumerate(members):
                    if m.reactor is r:
                        return (name, i) if is_transient(r) else None
            r = r.parent
        return None

    # -- the schedule -------------------------------------------------------------------
    def leave_requested(self, sched: Scheduler, reactor: Reactor) -> bool:
        """From a reaction of ``reactor``, its stop request: if ``reactor`` is (or is inside)
        a transient federate, that federate leaves (LF: ``lf.stop()`` in a ``@transient``
        federate ends its own participation, not the federation's) and this returns True;
        otherwise False (the request stops the run). Federated, the federate asks the RTI to
        leave (agreed at a tag in a round, as any leave); in one process it leaves at the
        next microstep (:meth:`request_leave`)."""
        who = self.transient_member(reactor)
        if who is None:
            return False
        if sched.coordinator is not None:
            sched.coordinator.leave_requested(sched)
        else:
            self.request_leave(sched, *who)
        return True

    def request_leave(self, sched: Scheduler, bank: str, index: int) -> None:
        """In one process, from a reaction: member ``index`` of ``bank`` leaves at the next
        microstep, unless it is absent or has a leave to come already (the schedule's: a
        federated run's record, replayed, whose leave was agreed at a later tag; or a
        request earlier at this tag)."""
        if not self.banks[bank][index].present:
            return
        if any((b, i, j) == (bank, index, False) for _t, b, i, j in self._todo):
            return
        t, m = sched.current_tag
        self.post(sched, (t, m + 1), bank, index, False)

    def load(self, changes: Iterable[MemberChange]) -> None:
        """A membership schedule to apply (before the run starts): checked against the
        banks' widths."""
        todo = sorted(changes)
        present = {name: set(range(self._initial[name])) for name in self.banks}
        last: dict[tuple[str, int], tuple[int, int]] = {}
        for i, ch in enumerate(todo):
            where = f"membership schedule, change {i} ({ch})"
            if ch.bank not in self.banks:
                raise ValidationError(f"{where}: the program has no elastic bank {ch.bank!r}")
            if not 0 <= ch.index < len(self.banks[ch.bank]):
                raise ValidationError(f"{where}: bank {ch.bank} has no member {ch.index}")
            if ch.time < 0 or ch.microstep < 0:
                raise ValidationError(f"{where}: a change before the start")
            if (ch.index in present[ch.bank]) == ch.joined:
                raise ValidationError(f"{where}: member {ch.index} is {'already' if ch.joined else 'not'} present")
            if last.get((ch.bank, ch.index)) == (ch.time, ch.microstep):
                raise ValidationError(f"{where}: a member changes twice at one tag")
            if ch.quiet is not None and (ch.joined or not last.get((ch.bank, ch.index), (0, 0)) <= ch.quiet
                                         < (ch.time, ch.microstep)):
                raise ValidationError(f"{where}: a quiet tag is of a leave, from the member's join to the leave")
            last[(ch.bank, ch.index)] = (ch.time, ch.microstep)
            (present[ch.bank].add if ch.joined else present[ch.bank].discard)(ch.index)
            if i + 1 == len(todo) or (todo[i + 1].time, todo[i + 1].microstep) != (ch.time, ch.microstep):
                for name, b in elastic_banks(self.program.main).items():  # once a tag's changes are in
                    w, n = elastic_width(b), len(present[name])
                    if not w.min <= n <= w.max:
                        raise ValidationError(f"{where}: bank {name} has width {n}, outside [{w.min}, {w.max}]")
        self._schedule = todo

    def set_initial(self, absent: Iterable[tuple[str, int]]) -> None:
        """The members (bank, bank index) absent at the start, instead of those past each
        bank's initial width (before the run starts: a federate's driver, from the RTI's
        START). Applied at the start itself, before anything is queued for them, not as a
        change at the start tag (a joiner that connects late may have inputs of its own
        queued by the time it processed that tag, and a leave there would drop them)."""
        self._absent_at_start = set(absent)

    def begin_at(self, sched: Scheduler, tag: TagT) -> None:
        """This run processes no tag before ``tag`` (a joiner's ADMIT tag, before its run
        starts): the changes posted for earlier tags (the record's, before it joined) apply
        at ``tag``, in their order, and its startup events are queued there
        (:meth:`reactorfed.execution.scheduler.Scheduler.run`)."""
        assert sched.current_tag < tag, f"{tag}: the run is at {sched.current_tag} already"
        self.first = tag
        if sched.queue.take_before(self._marker, tag):
            self._mark(sched, tag)

    def start(self, sched: Scheduler, start: int) -> None:
        """The run starts at ``start`` (its start events are queued): members past each
        bank's initial width (or :meth:`set_initial`'s) are absent from the start; the
        schedule's changes queued."""
        rejoin = {(ch.bank, ch.index) for ch in self._schedule if ch.joined}
        absent = self._absent_at_start
        for name, ms in self.banks.items():
            for i, m in enumerate(ms):
                if (i >= self._initial[name]) if absent is None else ((name, i) in absent):
                    self._leave(sched, m, (start, 0))
                else:
                    m.was_present = True
                if (name, i) in rejoin:
                    m.state = self._snapshot(m)
        for ch in self._schedule:
            self.post(sched, (start + ch.time, ch.microstep), ch.bank, ch.index, ch.joined)
            if ch.quiet is not None:
                q = (start + ch.quiet[0], ch.quiet[1])
                heapq.heappush(self._quiet, (q, ch.bank, ch.index))
                self.due = min(self.due, q)
                self._mark(sched, q)

    def post(self, sched: Scheduler, tag: TagT, bank: str, index: int, joined: bool) -> None:
        """Member ``index`` of ``bank`` joins (or leaves) at ``tag``, a tag not processed
        yet (a federated run: the RTI's Change, given before the tag is reached)."""
        assert tag > sched.current_tag, f"a membership change at {tag}, after {sched.current_tag}"
        heapq.heappush(self._todo, (tag, bank, index, joined))
        self.due = min(self.due, tag)
        first = self.first
        self._mark(sched, tag if first is None or tag > first else first)

    def _mark(self, sched: Scheduler, tag: TagT) -> None:
        """An event at ``tag``, so that it is processed (and its changes applied)."""
        evs = sched.queue.at(tag)
        if evs is None or self._marker not in evs:
            sched.queue.post(tag, self._marker, None)

    # -- applying changes ---------------------------------------------------------------
    def apply(self, sched: Scheduler, tag: TagT, events: dict[Slot, Any]) -> None:
        """At the start of ``tag`` (its events ``events`` not yet fired): apply the changes
        due, in the order of their tags (several, at a joiner's first tag: the record's
        before it), leaves first at each."""
        due: list[tuple[TagT, str, int, bool]] = []
        while self._todo and self._todo[0][0] <= tag:
            due.append(heapq.heappop(self._todo))
        events.pop(self._marker, None)
        for at, bank, index, joined in sorted(due, key=lambda c: (c[0], c[3])):
            m = self.banks[bank][index]
            self._last_change[bank] = at
            self.applied.append((at, bank, index, joined))
            if joined:
                self._join(sched, m, tag, events)
            else:
                self._leave(sched, m, tag, events)
        while self._quiet and self._quiet[0][0] <= tag:  # (after a join at the tag: its process failed there)
            _at, bank, index = heapq.heappop(self._quiet)
            m = self.banks[bank][index]
            self._mute(m)
            self._drop(sched, m, tag, events)
        self.due = min(self._todo[0][0] if self._todo else FOREVER_T, self._quiet[0][0] if self._quiet else FOREVER_T)

    def _leave(self, sched: Scheduler, m: _Member, tag: TagT, events: dict[Slot, Any] | None = None) -> None:
        m.present = False
        self._mute(m)
        self._drop(sched, m, tag, events)

    @staticmethod
    def _mute(m: _Member) -> None:
        """``m``'s reactions do nothing (until it joins again; once, if it fell quiet before)."""
        if not m.calls:
            for rx in m.reactions:
                m.calls[rx] = rx.call
                rx.call = _absent

    def _join(self, sched: Scheduler, m: _Member, tag: TagT, events: dict[Slot, Any]) -> None:
        if not self.senders_filter:
            self._drop(sched, m, tag, events)
        if m.was_present and m.state is not None:
            for r, state in m.state:  # a new incarnation: as constructed
                d = r.__dict__
                for k in [k for k in d if _user_key(k, d[k]) and k not in state]:
                    del d[k]
                d.update(copy.deepcopy(state, self._memo(m)))
        m.present = m.was_present = True
        m.joined_at = tag
        for rx in m.reactions:
            rx.call = m.calls.pop(rx, rx.call)
        if m.startup.reactions:
            events[m.startup] = None
        t, _ = tag
        for tm in m.timers:  # restarted from the join: first at its time plus the offset
            first = tag if tm.offset == 0 else (t + tm.offset, 0)
            if first == tag:
                events[tm] = None
            elif first <= sched.stop_tag:
                sched.queue.post(first, tm, None)

    def _drop(self, sched: Scheduler, m: _Member, tag: TagT, events: dict[Slot, Any] | None) -> None:
        """Every event queued for ``m``'s own slots at ``tag`` or later is for an
        incarnation that is not there: dropped (a tag left without events goes too)."""
        own = m.slots
        if not own:
            return
        inputs = m.inputs
        n = 0  # messages (a timer's or an action's event is the member's own business)
        if events is not None:
            for s in own:
                if events.pop(s, _NONE) is not _NONE and s in inputs:
                    n += 1
        n += sched.queue.drop_from(own, tag, inputs)
        if n:
            self.messages_dropped += n
            log.debug("%s: %d messages queued for it at %s or later dropped (not for this incarnation)",
                      m.reactor.fqn, n, tag)

    def _snapshot(self, m: _Member) -> list[tuple[Reactor, dict[str, Any]]]:
        """The user state of ``m``'s reactors as constructed (before the run)."""
        memo = self._memo(m)
        return [(r, copy.deepcopy({k: v for k, v in vars(r).items() if _user_key(k, v)}, memo)) for r in m.reactors]

    def _memo(self, m: _Member) -> dict[int, Any]:
        """deepcopy's memo: the tree's own objects (reactors, ports, elements) are kept, not
        copied, wherever user state refers to them."""
        memo: dict[int, Any] = {}
        for r in self.program.reactors:
            memo[id(r)] = r
            for v in vars(r).values():
                if _is_runtime(v):
                    memo[id(v)] = v
        return memo


def _user_key(k: str, v: Any) -> bool:
    return not k.startswith("_") and k not in _RUNTIME_KEYS and not _is_runtime(v)


def _is_runtime(v: Any) -> bool:
    return isinstance(v, (Reactor, Port, MultiPort, Element, Bank, OwnedSlot))
