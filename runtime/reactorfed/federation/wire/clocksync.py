"""The messages of clock synchronization (LF's ``clock-sync``), typed as the control
messages of :mod:`.messages` are: the RTI's time T1, the federate's reply T3, the RTI's
time T4 at the reply's arrival and, in runtime exchanges, a coded probe right after T4
(coordination/clock_sync.py estimates the clock error from them). Initial exchanges go
on the control connection before START; runtime ones on the heartbeat connection.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .kinds import CLOCK_PROBE, CLOCK_T1, CLOCK_T3, CLOCK_T4, packb

__all__ = ["ClockProbe", "ClockT1", "ClockT3", "ClockT4"]

_new = tuple.__new__  # see messages.py


class ClockT1(NamedTuple):
    """RTI -> federate: an exchange begins; ``time`` is the RTI's clock at sending."""

    time: int

    def pack(self) -> bytes:
        return packb([CLOCK_T1, self.time])

    @classmethod
    def _of(cls, m: list[Any]) -> ClockT1:
        return _new(cls, (m[1],))


class ClockT3(NamedTuple):
    """federate -> RTI: the reply to T1 (the RTI notes its arrival time, T4)."""

    def pack(self) -> bytes:
        return packb([CLOCK_T3])

    @classmethod
    def _of(cls, m: list[Any]) -> ClockT3:
        return _new(cls, ())


class ClockT4(NamedTuple):
    """RTI -> federate: ``time`` is the RTI's clock when the reply T3 arrived."""

    time: int

    def pack(self) -> bytes:
        return packb([CLOCK_T4, self.time])

    @classmethod
    def _of(cls, m: list[Any]) -> ClockT4:
        return _new(cls, (m[1],))


class ClockProbe(NamedTuple):
    """RTI -> federate, right after a runtime T4: ``time`` is the RTI's clock at sending
    (a coded probe: its spacing from T4 shows whether the exchange was disturbed)."""

    time: int

    def pack(self) -> bytes:
        return packb([CLOCK_PROBE, self.time])

    @classmethod
    def _of(cls, m: list[Any]) -> ClockProbe:
        return _new(cls, (m[1],))
