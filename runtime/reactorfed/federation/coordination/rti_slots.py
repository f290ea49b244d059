"""The elastic slots' incarnations as the RTI's core knows them: the :class:`Slots` part of
its membership (:mod:`.rti_membership` decides when a slot joins or leaves; this keeps
what follows and applies it to the core).

An incarnation of a slot starts at the tag it joins at and ends at the tag its leave was
agreed at, once it has resigned (or failed): absent from then on, resigned as far as
grants go. Until then a member whose leave is agreed still runs the tags before it, and
sends nothing at or after it. An absent slot whose join is under way (or replayed) holds
grants back to the join's tag: that tag is its next event (its *floor*).
"""

from __future__ import annotations

from typing import Protocol

from ...time.tag import TagT, succ
from .layout import Layout
from .membership import Change
from .rti_flight import Flight
from .rti_state import NEVER_T, FederateState

__all__ = ["Slots"]


class Core(Protocol):
    """What the slots need of the RTI's core (:class:`.rti_core.RtiCore`)."""

    @property
    def feds(self) -> list[FederateState]: ...
    def next_event(self, u: int) -> TagT: ...
    def refresh(self, u: int) -> None:
        """``u``'s next event may have changed (its floor or its leave did)."""

    def admit(self, m: int, tag: TagT) -> None:
        """Slot ``m``'s incarnation starts at ``tag``: present for the grants."""

    def fail(self, m: int) -> None:
        """Member ``m``'s process is gone: resigned for the grants, its messages dropped."""


class Slots:
    """Which slots are present, their agreed leaves and floors (the core reads
    :attr:`leave_at` and :attr:`floor` for its next events), what each slot's last
    incarnation completed and when it left."""

    def __init__(self, layout: Layout, core: Core, flight: Flight) -> None:
        self._core = core
        self._flight = flight
        initial = layout.initial_members()
        #: whether each federate is present (a member that agreed to leave is, until it resigns)
        self.present = [f in initial for f in range(len(layout.names))]
        #: agreed leaves not yet done: a member sends nothing at or after its tag
        self.leave_at: dict[int, TagT] = {}
        #: absent slots' next event: a join under way or replayed
        self.floor: dict[int, TagT] = {}
        #: what a slot's last incarnation completed (its last LTC when it resigned or failed)
        self.last_ltc: dict[int, TagT] = {}
        self._left: dict[int, TagT] = {}  # the tag each absent slot's last incarnation left at
        self._since: dict[int, TagT] = {}  # the tag each slot's last incarnation joined at (after the start)
        #: failed members (their last incarnations): the tag after the last one each
        #: completed (what their leave's :attr:`.membership.Change.quiet` says)
        self.quiet: dict[int, TagT] = {}
        #: each slot's direct upstream federates (the senders a rejoin waits for: settled)
        self._direct = {f: layout.direct_upstream(f) for g in layout.elastic for f in g.slots}

    def admit(self, m: int, tag: TagT, leave: TagT | None = None) -> None:
        """Slot ``m``'s incarnation starts at ``tag`` (replayed: and leaves at ``leave``)."""
        self.floor.pop(m, None)
        self.quiet.pop(m, None)  # (of its last incarnation)
        self._since[m] = tag
        if leave is not None:  # (its leave counts from the start)
            self.leave_at[m] = leave
        self.present[m] = True
        self._core.admit(m, tag)

    def hold(self, m: int, tag: TagT | None) -> None:
        """Absent slot ``m`` joins at ``tag`` (under way, or replayed): no grant passes
        it until it is admitted. None: it does not (any more)."""
        if tag is None:
            self.floor.pop(m, None)
        else:
            self.floor[m] = tag
        self._core.refresh(m)

    def leave(self, m: int, tag: TagT, rejoin: TagT | None) -> None:
        """Member ``m``'s leave is agreed at ``tag``; done at once if it has resigned
        (:meth:`left`), else when it does."""
        self.leave_at[m] = tag
        if self._core.feds[m].resigned:  # failed, or resigned since it asked
            self.left(m, rejoin)
        else:
            self._core.refresh(m)

    def schedule(self, m: int, leave: TagT | None, join: TagT | None) -> None:
        """Replayed: ``m`` present from the start leaves at ``leave``; absent, it joins at ``join``."""
        if leave is not None:
            self.leave_at[m] = leave
        if join is not None:
            self.floor[m] = join
        self._core.refresh(m)

    def resigned(self, m: int, ltc: TagT, rejoin: TagT | None) -> None:
        """``m`` resigned (the core has it resigned already) after completing ``ltc``."""
        self.last_ltc[m] = ltc
        if m in self.leave_at:
            self.left(m, rejoin)

    def failed(self, m: int, start: TagT) -> None:
        """Member ``m``'s process is gone: it holds nothing back from now on. It did
        nothing after the last tag it completed (the federation's ``start`` tag: none, if
        it joined there), whatever tag its leave is agreed at (:meth:`change`)."""
        ltc = self._core.feds[m].ltc
        self.last_ltc[m] = ltc
        self.quiet[m] = succ(ltc) if ltc != NEVER_T else self._since.get(m, start)
        self._core.fail(m)

    def heard(self, m: int, tag: TagT) -> None:
        """A federate took a message failed member ``m`` sent at ``tag``: it did that tag's
        work, though it had not reported so (it runs ahead on its promises, its reports
        batched): its quiet tag is after it."""
        q = self.quiet.get(m)
        if q is not None and tag >= q:
            self.quiet[m] = succ(tag)

    def change(self, tag: TagT, m: int, joined: bool) -> Change:
        """The record's change of ``m`` at ``tag``. A failed member's leave says from which
        tag it did nothing (the others may have run tags before ``tag`` with it present and
        silent: a replay repeats that)."""
        quiet = None if joined else self.quiet.get(m)
        return Change(tag, m, joined, quiet if quiet is not None and quiet < tag else None)

    def left(self, m: int, rejoin: TagT | None) -> None:
        """``m`` resigned with its leave agreed: absent from now on (replayed: until it
        joins again at ``rejoin``)."""
        self._left[m] = self.leave_at.pop(m)
        self.present[m] = False
        self._flight.drop_to(m)
        if rejoin is not None:
            self.floor[m] = rejoin
        self._core.refresh(m)

    def settled(self, m: int) -> bool:
        """Whether every federate that may still send to slot ``m``'s previous incarnation
        (the one that left at ``L``) has no tag before ``L`` left to process, so that
        every message it sent to that incarnation is reported. A joiner is admitted only
        then, at a tag after all of them: a message for the incarnation that left is then
        told from one for the joiner by its tag (before or after the join tag), and is
        not counted in the joiner's grants (it never arrives: it is dropped)."""
        left = self._left.get(m)
        if left is None:
            return True  # never present: nothing was sent to it
        feds, core = self._core.feds, self._core
        return all(feds[u].resigned or core.next_event(u) >= left for u in self._direct[m])
