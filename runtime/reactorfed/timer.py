"""Timers and the startup/shutdown triggers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .duration import check_duration
from .trigger import OwnedSlot

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["SHUTDOWN", "STARTUP", "Timer"]


class Timer:
    """Fires first at start + ``offset``, then every ``period``; a period of 0 fires once."""

    def __init__(self, offset: int = 0, period: int = 0) -> None:
        check_duration(offset, "timer offset")
        check_duration(period, "timer period")
        self.offset = offset
        self.period = period
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        t = TimerSlot(obj, self)
        obj.__dict__[self.name] = t
        return t

    def __repr__(self) -> str:
        return f"Timer(offset={self.offset}, period={self.period}, name={self.name!r})"


class TimerSlot(OwnedSlot):
    __slots__ = ("offset", "period")

    def __init__(self, reactor: Reactor, decl: Timer) -> None:
        super().__init__(reactor, decl.name)
        self.offset = decl.offset
        self.period = decl.period


class _Builtin:
    """``STARTUP`` and ``SHUTDOWN``: triggers every reactor has."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name.upper()


STARTUP = _Builtin("startup")
SHUTDOWN = _Builtin("shutdown")
