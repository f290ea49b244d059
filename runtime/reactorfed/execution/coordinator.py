"""The hooks federated execution plugs into the scheduler (:class:`Coordinator`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..time.clock import Wakeup
from ..time.tag import TagT

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["Coordinator"]


class Coordinator(Protocol):
    """The hooks federated execution plugs into the scheduler."""

    @property
    def floor(self) -> int:
        """Physical time (ns) the federation was promised no physical action comes before:
        the scheduler stamps none earlier (the clock's reading is raised to it)."""
        ...

    def start_time(self, proposed: int) -> int:
        """Agree on the start time with the rest of the federation."""
        ...

    def acquire(self, scheduler: Scheduler, tag: TagT | None) -> TagT | None:
        """Block until the earliest local event ``tag`` (None: none) may be processed and
        return the tag to process: the head of the event queue after posting what
        arrived from the network (through :meth:`Scheduler.post_remote`), never past the
        stop tag; None when nothing is left to do anywhere (starvation)."""
        ...

    def at_level(self, scheduler: Scheduler, level: int) -> None:
        """Called before the first reaction of each level in ``scheduler.checkpoints``."""
        ...

    def completed(self, scheduler: Scheduler, tag: TagT, next_tag: TagT | None) -> None:
        """``tag`` is complete (its outputs are sent); ``next_tag``: the earliest event
        queued after it (None: none; it may lie past the stop tag)."""
        ...

    def stop_requested(self, scheduler: Scheduler, tag: TagT) -> TagT:
        """A local request to stop at ``tag``; returns the agreed stop tag."""
        ...

    def leave_requested(self, scheduler: Scheduler) -> None:
        """A transient federate's own stop request: it asks to leave the federation (it
        runs the tags before the leave's agreed tag, then resigns)."""
        ...

    def wait_until(self, scheduler: Scheduler, t: int, wakeup: Wakeup) -> bool:
        """Wait for physical time ``t`` before the tag :meth:`acquire` returned, as
        :meth:`Clock.wait_until` does, and also for the network: returns False early when
        ``wakeup`` is set or something arrived that may change the tag to process (an
        earlier event, a stop request); the scheduler then asks :meth:`acquire` again."""
        ...
