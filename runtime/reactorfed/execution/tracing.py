"""What a traced run records from the scheduler: each reaction's start and end, each
action scheduled, each deadline missed, and the user events of LF's tracing API
(``register_user_trace_event``, ``tracepoint_user_event``, ``tracepoint_user_value``).

The scheduler records through a :class:`Tracer` (the trace recorder of
:mod:`reactorfed.observe.trace`). Tracing costs nothing when off: the reactions' calls and
the schedule functions are wrapped at binding only when a tracer is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..observe.trace.records import ACTION, DEADLINE_MISS, REACTION_END, REACTION_START, USER
from ..time.tag import TagT

if TYPE_CHECKING:  # (annotations only: model.reactor reaches this module through deadlines)
    from ..assembly.program import Program
    from ..model.action import ActionSlot

__all__ = ["Tracer", "UserEvents", "record_deadline_miss", "trace_reactions", "traced_schedule"]


class Tracer(Protocol):
    def record(self, kind: int, tag: TagT, *fields: Any) -> None: ...


class _Now(Protocol):
    current_tag: TagT


def trace_reactions(prog: Program, now: _Now, tracer: Tracer) -> None:
    """Wrap every reaction's call to record its start and end at the current tag."""
    record = tracer.record
    for rx in prog.reactions:
        rx.call = _traced(rx.call, rx.fqn, rx.level, now, record)


def _traced(call: Callable[[], Any], name: str, level: int, now: _Now,
            record: Callable[..., None]) -> Callable[[], Any]:
    def run() -> Any:
        tag = now.current_tag
        record(REACTION_START, tag, name, level)
        try:
            return call()
        finally:
            record(REACTION_END, tag, name, level)

    return run


def traced_schedule(schedule: Callable[[ActionSlot, Any, int], None], now: _Now,
                    tracer: Tracer) -> Callable[[ActionSlot, Any, int], None]:
    """``schedule`` recording each action scheduled (its name and extra delay)."""
    record = tracer.record

    def run(action: ActionSlot, value: Any, delay: int) -> None:
        record(ACTION, now.current_tag, action.fqn, delay)
        schedule(action, value, delay)

    return run


def record_deadline_miss(tracer: Tracer | None, tag: TagT, reaction: str) -> None:
    if tracer is not None:
        tracer.record(DEADLINE_MISS, tag, reaction)


class UserEvents:
    """LF's user trace events: a description registered for a handle (never 0, which LF
    returns for a failure), then events and values recorded against it."""

    def __init__(self) -> None:
        self._names: list[str] = [""]

    def register(self, description: str) -> int:
        self._names.append(str(description))
        return len(self._names) - 1

    def record(self, tracer: Tracer | None, tag: TagT, handle: int, value: Any = None) -> None:
        if not 0 < handle < len(self._names):
            raise ValueError(f"no user trace event has the handle {handle!r}: register_user_trace_event gives them")
        if tracer is not None:
            if value is not None and not isinstance(value, (int, float, str, bool)):
                value = repr(value)
            tracer.record(USER, tag, self._names[handle], value)
