"""The event queue: the events still to come, by tag, in superdense time.

Events are kept as a heap of tags and, for each tag, the events of that tag by slot
(one value per slot). A second event for a slot at a tag where it has one already
never overwrites it: it piles up at the next free microstep (reactor-c's
``lf_schedule_trigger`` without a ``min_spacing``), unless that lies past the stop tag.
The scheduler owns one queue and reads :attr:`EventQueue.heap` and
:attr:`EventQueue.events` directly in its loop (a hot path); everyone else posts and
removes events through the methods here.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Set
from typing import Any

from ..assembly.program import Program
from ..model.action import ActionSlot, Policy
from ..model.trigger import Slot
from ..time.tag import TagT, delay_tag

__all__ = ["EventQueue"]

log = logging.getLogger("reactorfed.execution.scheduler")

_heappush = heapq.heappush
_NONE = object()


class EventQueue:
    """Events by tag. ``stop_tag`` returns the run's stop tag (an event piled up past it
    is dropped)."""

    __slots__ = ("events", "heap", "stop_tag")

    def __init__(self, stop_tag: Callable[[], TagT]) -> None:
        #: the tags that have events, a heap
        self.heap: list[TagT] = []
        #: each tag's events: slot -> value
        self.events: dict[TagT, dict[Slot, Any]] = {}
        self.stop_tag = stop_tag

    def head(self) -> TagT | None:
        """The earliest tag with an event (None: none)."""
        heap = self.heap
        return heap[0] if heap else None

    def at(self, tag: TagT) -> dict[Slot, Any] | None:
        """The events queued at ``tag`` (None: none)."""
        return self.events.get(tag)

    def post(self, tag: TagT, slot: Slot, value: Any) -> None:
        """Queue an event for ``slot`` at ``tag`` (the caller checked ``tag <= stop_tag``).

        A second event for one slot at one tag never overwrites the first: it goes to the
        next microstep, and the next if that is taken too (reactor-c's ``lf_schedule_trigger``
        without a ``min_spacing``: "let events pile up in super dense time"), so a logical
        action scheduled twice for one tag, or a burst on an ``after d`` connection, keeps
        every value, in order. The common cases cost what they did before the pile-up: a
        tag without events is one lookup, a tag with events of other slots one lookup and
        one containment test; only a collision takes the slower :meth:`pile_up`."""
        evs = self.events.get(tag)
        if evs is None:
            self.events[tag] = {slot: value}
            _heappush(self.heap, tag)
        elif slot in evs:
            self.pile_up(tag, slot, value)
        else:
            evs[slot] = value

    def pile_up(self, tag: TagT, slot: Slot, value: Any) -> TagT | None:
        """``slot`` has an event at ``tag``: queue this one at the first later microstep
        free for it. Past the stop tag it is dropped, as reactor-c does (events past the
        last tag are dropped); returns where it went, None when dropped."""
        t, m = tag
        events = self.events
        stop = self.stop_tag()
        while True:
            m += 1
            tag = (t, m)
            if tag > stop:
                log.debug("%s: an event piled up past the stop tag %s is dropped", slot.fqn, stop)
                return None
            evs = events.get(tag)
            if evs is None:
                events[tag] = {slot: value}
                _heappush(self.heap, tag)
                return tag
            if slot not in evs:
                evs[slot] = value
                return tag

    def post_exact(self, tag: TagT, slot: Slot, value: Any) -> bool:
        """Queue an event at exactly ``tag``; False (nothing queued) when ``slot`` already
        has an event there (no pile-up)."""
        evs = self.events.get(tag)
        if evs is None:
            self.events[tag] = {slot: value}
            _heappush(self.heap, tag)
        elif slot in evs:
            return False
        else:
            evs[slot] = value
        return True

    def place(self, action: ActionSlot, value: Any, tag: TagT, stop: TagT) -> None:
        """Queue an event of an action with a declared min_spacing (0 included) at ``tag``,
        or where its policy puts it (see :mod:`reactorfed.model.action`; reactor-c's
        ``lf_schedule_trigger``, lib/schedule.c); ``stop``: the stop tag. Tags of such an
        action strictly grow, so it never collides with itself (but with ``update``, whose
        event may come before the one it cancels: a collision then piles up, as ever)."""
        spacing = action.min_spacing
        assert spacing is not None
        last = action.last_tag
        if last is not None and (tag <= last if spacing == 0 else tag[0] < last[0] + spacing):
            policy = action.decl.policy
            if policy is Policy.DROP:
                return
            pending = self.events.get(last) if policy is not Policy.DEFER else None
            if pending is not None and action in pending and policy is Policy.REPLACE:
                pending[action] = value  # the previous event is still queued: it takes the value
                return
            if pending is not None and action in pending and policy is Policy.UPDATE:
                self._cancel(last, action)  # the previous event is still queued: this one replaces it, at its own tag
            else:
                # defer (and replace or update once the previous event has happened): the earliest tag allowed
                tag = delay_tag(last, spacing)
        if tag > stop:
            return  # past the last tag: dropped, and not the previous event for the spacing
        action.last_tag = tag
        self.post(tag, action, value)

    def _cancel(self, tag: TagT, slot: Slot) -> None:
        """Remove ``slot``'s event at ``tag`` (the tag goes too when nothing else is there)."""
        evs = self.events[tag]
        del evs[slot]
        if not evs:
            del self.events[tag]
            self.heap.remove(tag)
            heapq.heapify(self.heap)

    def pop_at(self, tag: TagT) -> dict[Slot, Any]:
        """The events at ``tag`` (none: an empty dict), taken out of the queue wherever
        ``tag`` is in the heap."""
        evs = self.events.pop(tag, {})
        if tag in self.heap:
            self.heap.remove(tag)
            heapq.heapify(self.heap)
        return evs

    def take_before(self, slot: Slot, tag: TagT) -> bool:
        """Remove ``slot``'s events at tags before ``tag`` (a tag left without events goes
        too); True when there was one."""
        events = self.events
        moved = False
        for t in [t for t in events if t < tag]:
            evs = events[t]
            if evs.pop(slot, _NONE) is not _NONE:
                moved = True
                if not evs:
                    del events[t]
                    self.heap.remove(t)
        if moved:
            heapq.heapify(self.heap)
        return moved

    def take(self, slots: Set[Slot]) -> list[tuple[TagT, Slot, Any]]:
        """Remove every event of ``slots`` (a tag left without events goes too); returns
        them, (tag, slot, value), in tag order (a mode's events held while it is inactive)."""
        events = self.events
        out: list[tuple[TagT, Slot, Any]] = []
        for t in sorted(events):
            evs = events[t]
            if slots.isdisjoint(evs):
                continue
            for s in [s for s in evs if s in slots]:
                out.append((t, s, evs.pop(s)))
            if not evs:
                del events[t]
                self.heap.remove(t)
        if out:
            heapq.heapify(self.heap)
        return out

    def drop_from(self, slots: Set[Slot], tag: TagT, counted: Set[Slot]) -> int:
        """Remove every event of ``slots`` at ``tag`` or later (a tag left without events
        goes too); returns how many of those were events of ``counted`` slots."""
        events = self.events
        n = 0
        emptied = False
        for t, evs in list(events.items()):
            if t >= tag and not slots.isdisjoint(evs):
                for s in slots:
                    if evs.pop(s, _NONE) is not _NONE and s in counted:
                        n += 1
                if not evs:
                    del events[t]
                    self.heap.remove(t)
                    emptied = True
        if emptied:
            heapq.heapify(self.heap)
        return n

    def post_start(self, prog: Program, start: int, first: TagT, stop: TagT) -> None:
        """The run's first events: the startup reactions at ``first`` (the start tag, or a
        joiner's effective start tag: its ADMIT's, elastic banks) and each timer's first
        firing on its schedule from ``start``, at ``first`` or later (a joiner's own timers,
        its member's, are restarted from its join tag by the join: :mod:`.membership`);
        ``stop``: the stop tag."""
        if first <= stop:
            self.post(first, prog.startup, None)
        for tm in prog.timers:
            t = start + tm.offset
            if (t, 0) < first:
                if not tm.period:
                    continue
                t += -(-(first[0] - t) // tm.period) * tm.period
                if (t, 0) < first:  # (first is at a later microstep of that time)
                    t += tm.period
            if t <= stop[0]:
                self.post((t, 0), tm, None)

    def clear(self) -> None:
        self.heap.clear()
        self.events.clear()
