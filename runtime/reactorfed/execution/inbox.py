"""What other threads hand the scheduler: physical actions scheduled off its thread
(stamped with physical time there) and stop requests, with the wakeup that interrupts
its wait; and that wait: the next tag to process, once physical time has reached it (and
the network has granted it, in a federation); and the tag of an event stamped by the clock
(:func:`clock_tag`)."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ..model.action import ActionSlot
from ..time.clock import Wakeup
from ..time.tag import FOREVER, FOREVER_TAG, NEVER, TagT, succ

if TYPE_CHECKING:
    from .coordinator import Coordinator
    from .scheduler import Scheduler

__all__ = ["Inbox", "clock_tag"]


def clock_tag(now: int, extra: int, coordinator: Coordinator | None, current: TagT) -> TagT:
    """The tag of an event stamped by the clock (a physical action; an arrival over a
    physical link between federates): the clock's reading ``now`` plus ``extra`` (a
    min_delay and delay; a link's delay), microstep 0; at or before the ``current`` tag,
    its next microstep (reactor-c's ``lf_schedule_trigger``). In a federation, the reading
    is never before the ``coordinator``'s ``floor``: the physical time up to which it promised
    that nothing comes (an event scheduled on another thread before that promise, and
    placed after it, comes at the floor instead; a clock stepped back, likewise)."""
    if coordinator is not None and now < (floor := coordinator.floor):
        now = floor
    tag = (now + extra, 0)
    return tag if tag > current else succ(current)


class Inbox:
    """Filled from any thread, drained by the scheduler's thread before it picks a tag."""

    __slots__ = ("items", "stop_asked", "wakeup")

    def __init__(self) -> None:
        #: physical actions: (action, value, physical time, its min_delay + delay)
        self.items: deque[tuple[ActionSlot, Any, int, int]] = deque()
        #: a stop was requested from outside the program
        self.stop_asked = False
        self.wakeup = Wakeup()

    def put(self, action: ActionSlot, value: Any, now: int, extra: int) -> None:
        self.items.append((action, value, now, extra))
        self.wakeup.set()

    def ask_stop(self) -> None:
        self.stop_asked = True
        self.wakeup.set()

    def drain(self, sched: Scheduler) -> None:
        """On the scheduler's thread: place the physical actions received, and a stop
        requested from outside at the next microstep (the start tag before the first)."""
        self.place(sched)
        if self.stop_asked:
            self.stop_asked = False
            cur = sched.current_tag
            sched.stop_at(succ(cur) if cur[0] != NEVER else (sched.start_time, 0), "stop requested from outside")

    def place(self, sched: Scheduler) -> None:
        """On the scheduler's thread: place the physical actions received."""
        items = self.items
        while items:
            action, value, now, extra = items.popleft()
            sched.place_physical(action, value, now, extra)

    def next_tag(self, sched: Scheduler) -> TagT | None:
        """The next tag ``sched`` processes, waiting as needed; None when the program is
        over."""
        coord = sched.coordinator
        wakeup = self.wakeup
        clock = sched.clock
        eq = sched.queue.heap
        while True:
            if self.items or self.stop_asked:
                self.drain(sched)
            head = eq[0] if eq else None
            if head is not None and head > sched.stop_tag:
                head = None
            if head is None and sched.keepalive and sched.stop_tag == FOREVER_TAG and coord is None:
                wakeup.wait()
                wakeup.clear()
                continue
            # Keepalive with a stop time: wait for a physical action until then.
            if (head is None and sched.keepalive and coord is None and sched.stop_tag[0] < FOREVER
                    and not sched.fast and not clock.wait_until(sched.stop_tag[0], wakeup)):
                continue
            if coord is not None:
                # May post events that arrived from the network (so re-read the head).
                head = coord.acquire(sched, head)
                if self.items or self.stop_asked:
                    continue
                if head is None and sched.awaits_arrivals and sched.stop_tag == FOREVER_TAG:
                    coord.wait_until(sched, FOREVER, wakeup)  # an arrival, a stop, a wakeup
                    continue
            if head is None:
                return None
            if not sched.fast and head[0] > clock.now() and not (
                    clock.wait_until(head[0], wakeup) if coord is None
                    else coord.wait_until(sched, head[0], wakeup)):
                continue  # woken by a physical action or a stop request (or the network)
            return head
