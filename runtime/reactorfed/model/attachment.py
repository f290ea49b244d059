"""Which scheduler runs a reactor: the binding of a reactor to the scheduler executing its
program (set when the program is bound, cleared when its run ends) and what the reactor
reported in that run.

Kept in the reactor's instance dict under names no attribute of a reactor takes; these
functions are the way in. The model reads it (a reactor's ``tag()``, a physical action's
``schedule``), execution sets it. Functions, not methods: a user's reactor owns its
attribute names, so the runtime adds no public name to every reactor. This module
imports no other part of the model, so every part of it may use this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..errors import ValidationError

if TYPE_CHECKING:
    from ..execution.scheduler import Scheduler
    from .reactor import Reactor

__all__ = [
    "attach_scheduler",
    "detach_scheduler",
    "has_ended",
    "record_result",
    "running_scheduler",
    "scheduler_of",
    "unattached",
]


def unattached(r: Reactor) -> None:
    """A new reactor: no scheduler runs it."""
    r.__dict__["_env"] = None


def scheduler_of(r: Reactor) -> Scheduler | None:
    """The scheduler running ``r``'s program, None when none does."""
    return cast("Scheduler | None", r.__dict__["_env"])


def running_scheduler(r: Reactor) -> Scheduler:
    """The scheduler running ``r``'s program; a ValidationError when none does."""
    env = r.__dict__["_env"]
    if env is None:
        raise ValidationError(f"{r.fqn}: the program is not running")
    return cast("Scheduler", env)


def has_ended(r: Reactor) -> bool:
    """Whether the last run of ``r``'s program is over (a physical action scheduled now
    is dropped with a warning)."""
    return bool(r.__dict__.get("_ended"))


def attach_scheduler(r: Reactor, env: Scheduler) -> None:
    """Bind ``r`` to the scheduler about to run its program (until the run ends)."""
    d = r.__dict__
    d["_env"] = env
    d["_ended"] = False


def record_result(r: Reactor, values: Mapping[str, Any]) -> None:
    """Keep what ``r`` reports in this run (:meth:`Reactor.report_result`)."""
    r.__dict__["_result"] = dict(values)


def detach_scheduler(r: Reactor) -> Mapping[str, Any] | None:
    """The run of ``r``'s program ended: unbind ``r`` and take what it reported (None
    when nothing)."""
    d = r.__dict__
    d["_env"] = None
    d["_ended"] = True
    return cast("Mapping[str, Any] | None", d.pop("_result", None))
