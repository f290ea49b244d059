"""Deadlines: the check before a reaction runs, and the checks a reaction body makes.

A reaction with ``deadline=D`` is checked just before it runs: when physical time is past
its tag's time + D, or D is 0 (reactor-c: ``deadline == 0 || physical > logical +
deadline``, reactor.c and reactor_threaded.c), its deadline handler runs instead of the
body (the body, with a warning, when it has none), and the miss is counted.

Inside the body, :meth:`Reactor.check_deadline` and :meth:`Reactor.update_deadline` are
LF's ``self.check_deadline(invoke_handler)`` and ``self.update_deadline(d)`` (reactor-c's
``lf_check_deadline`` / ``lf_update_deadline``, lib/schedule.c, through the Python
target's pythontarget.c): the check compares physical time with the tag's time + the
reaction's current deadline (no special case for 0 there, as in reactor-c) and, when it
has passed and ``invoke_handler`` (the default, as in LF's Python target), runs the
deadline handler then and there; the update changes the deadline of this and every
later invocation of the reaction. A reaction's rank (inferred deadline first, see
:func:`reactorfed.assembly.assemble.rank`) is fixed at assembly, as in reactor-c: an update does not
move it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..time.duration import check_duration
from .tracing import record_deadline_miss

if TYPE_CHECKING:
    from ..model.reaction import Reaction
    from ..model.reactor import Reactor
    from .scheduler import Scheduler

__all__ = ["check_deadline", "update_deadline", "with_deadline"]

log = logging.getLogger("reactorfed.execution.scheduler")


def with_deadline(sched: Scheduler, rx: Reaction, body: Callable[[], Any]) -> Callable[[], Any]:
    """``rx``'s call: the deadline check, then the handler or the body. Reads the deadline
    at each call (update_deadline may change it)."""
    now = sched.clock.now

    def run() -> Any:
        d = rx.deadline
        assert d is not None
        if d == 0 or now() > sched.current_tag[0] + d:
            sched.deadline_misses += 1
            record_deadline_miss(sched.tracer, sched.current_tag, rx.fqn)
            late = rx.handler
            if late is not None:
                return late()
            log.warning("deadline of %s missed at %s (no handler: running the body)", rx.fqn, sched.current_tag)
        return body()

    return run


def _running(sched: Scheduler, reactor: Reactor, what: str) -> Reaction:
    """The reaction of ``reactor`` running on this thread; a ValidationError otherwise."""
    rx = sched.running_reaction()
    if rx is None or rx.reactor is not reactor:
        where = f" (called from {rx.fqn})" if rx is not None else ""
        raise ValidationError(f"{reactor.fqn}.{what}() can only be called inside a reaction of {reactor.fqn}{where}")
    return rx


def check_deadline(sched: Scheduler, reactor: Reactor, invoke_handler: bool) -> bool:
    rx = _running(sched, reactor, "check_deadline")
    d = rx.deadline
    if d is None or sched.clock.now() <= sched.current_tag[0] + d:
        return False
    if invoke_handler and rx.handler is not None:
        sched.deadline_misses += 1
        rx.handler()
    return True


def update_deadline(sched: Scheduler, reactor: Reactor, deadline: int) -> None:
    rx = _running(sched, reactor, "update_deadline")
    check_duration(deadline, f"{rx.fqn}: deadline")
    if rx.deadline is None:
        raise ValidationError(
            f"{rx.fqn}: update_deadline() on a reaction without a deadline: declare one "
            "(@reaction(..., deadline=...)) and a deadline handler to update it"
        )
    rx.deadline = deadline
