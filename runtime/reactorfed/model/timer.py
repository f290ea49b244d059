"""Timers and the startup/shutdown triggers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..time.duration import DurationParam, check_duration, check_param, resolve_param
from .mode import declaring_mode
from .trigger import Element, OwnedSlot

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["RESET", "SHUTDOWN", "STARTUP", "Timer"]


class Timer:
    """Fires first at start + ``offset``, then every ``period``; a period of 0 fires once.

    ``offset`` and ``period`` are ns, or (as LF's ``timer t(offset, period)`` with
    parameters) the name of an attribute the reactor's ``__init__`` sets, or a function of
    the reactor: ``Timer(offset="start", period=lambda r: r.every)``. Those are resolved for
    each instance when the program is assembled."""

    def __init__(self, offset: DurationParam = 0, period: DurationParam = 0) -> None:
        check_param(offset, "timer offset")
        check_param(period, "timer period")
        self.offset = offset
        self.period = period
        self.name = "?"
        #: the mode whose ``with`` block declares it (None: none; :mod:`.mode`)
        self.mode = declaring_mode()

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        t = TimerElement(obj, self)
        obj.__dict__[self.name] = t
        return t

    def __repr__(self) -> str:
        return f"Timer(offset={self.offset}, period={self.period}, name={self.name!r})"


class TimerElement(Element):
    """The timer of one reactor instance, as declared (``self.t``); its offset and period,
    resolved, live in the :class:`TimerSlot` each assembly makes for it."""

    __slots__ = ("decl",)

    def __init__(self, reactor: Reactor, decl: Timer) -> None:
        super().__init__(reactor, decl.name)
        self.decl = decl

    def __repr__(self) -> str:
        return f"<timer {self.fqn}>"


class TimerSlot(OwnedSlot):
    """A timer's runtime state in one program (made at assembly): its offset and period,
    taken from the reactor's parameters where the timer names them."""

    __slots__ = ("decl", "offset", "period")

    def __init__(self, timer: TimerElement) -> None:
        super().__init__(timer)
        decl = self.decl = timer.decl
        r = timer.reactor
        what = f"{self.fqn}: timer offset"
        self.offset = check_duration(resolve_param(decl.offset, r, what), what)
        what = f"{self.fqn}: timer period"
        self.period = check_duration(resolve_param(decl.period, r, what), what)


class _Builtin:
    """``STARTUP``, ``SHUTDOWN`` and ``RESET``: triggers every reactor has (``RESET``: its
    mode was entered with a reset transition, :mod:`.mode`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name.upper()


STARTUP = _Builtin("startup")
SHUTDOWN = _Builtin("shutdown")
RESET = _Builtin("reset")
