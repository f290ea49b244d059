"""A federate's side of LF's clock synchronization with the RTI, pure (after reactor-c's
``clock-sync.c``): the estimate of how far this federate's clock is from the RTI's, from
PTP-like exchanges. No clock reads: the caller passes every timestamp, in ns.

One exchange: the RTI sends its time T1; the federate notes its own time T2 on arrival
and replies (T3, the local delay ``T3 - T2``); the RTI answers with its time T4 of the
reply's arrival. With a symmetric network, the round trip is ``(T4 - T1) - (T3 - T2)``
and this clock is ``rtt / 2 - (T2 - T1)`` behind the RTI's, an estimate off by at most
half the round trip whatever the asymmetry. Initial exchanges (before the start) apply a
window's estimate whole; runtime exchanges divide it by ``attenuation`` (no large jumps
while running) and come with a coded probe: the RTI sends a second message right after
T4, and an exchange whose two messages arrived spaced otherwise than they were sent (by
the guard band or more) was disturbed and does not count.

Where reactorfed departs from reactor-c: a window's estimate is that of its exchange with
the shortest round trip (NTP's clock filter), not the average of all, dropped when the
round trips spread by 100 us or more. Python's exchanges over ZeroMQ spread by far more
(round trips of 0.2 to 40 ms while the federates of one host start, measured on 2
cores), so reactor-c's rule would drop nearly every initial window and leave the clocks
unsynchronized; the shortest round trip bounds the error tightest. Integer arithmetic,
truncating as C does.
"""

from __future__ import annotations

__all__ = ["CLOCK_SYNC_MODES", "ClockSyncEstimator"]

#: LF's ``clock-sync`` target property: off, init (before the start only), on (also while running)
CLOCK_SYNC_MODES = ("off", "init", "on")

#: reactor-c's CLOCK_SYNC_GUARD_BAND
GUARD_BAND_NS = 100_000


def _cdiv(a: int, b: int) -> int:
    """C's integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class ClockSyncEstimator:
    """The estimate of one federate's clock error against the RTI's clock."""

    def __init__(
        self, exchanges: int = 10, attenuation: int = 10, guard_band: int = GUARD_BAND_NS
    ) -> None:
        if exchanges < 1 or attenuation < 1:
            raise ValueError("clock sync: exchanges and attenuation must be at least 1")
        self.exchanges = exchanges
        self.attenuation = attenuation
        self.guard_band = guard_band
        self._t1: int | None = None
        self._t2 = 0
        self._local_delay = 0
        self._window: list[tuple[int, int]] = []  # the current window's (round trip, error)
        #: estimates made (windows ended)
        self.windows = 0
        #: exchanges that did not count (a disturbed coded probe, an impossible round trip)
        self.disturbed = 0
        #: the last estimate of this clock's error (ns behind the RTI's), and its bound:
        #: half the round trip it came from
        self.last_error = 0
        self.bound = 0

    def on_t1(self, t1: int, t2: int) -> None:
        """The RTI's T1 (its time ``t1``) arrived at local time ``t2``."""
        self._t1, self._t2 = t1, t2

    def on_t3_sent(self, t3: int) -> None:
        """The reply left at local time ``t3``."""
        self._local_delay = t3 - self._t2

    def on_t4(self, t4: int, initial: bool, probe: tuple[int, int, int] | None = None) -> int:
        """The RTI's T4 (its time ``t4`` at the reply's arrival); ``probe``: (local arrival of
        T4, the probe's RTI time, its local arrival), runtime exchanges only. Returns the
        adjustment to add to the clock's offset now (0 until a window ends)."""
        if self._t1 is None:
            return 0  # a T4 without its T1 (the exchange began before this estimator)
        t1, self._t1 = self._t1, None
        if probe is not None:
            r4, t5, r5 = probe
            if abs((r5 - r4) - (t5 - t4)) >= self.guard_band:
                self.disturbed += 1
                return 0
        rtt = (t4 - t1) - self._local_delay
        if rtt < 0:  # impossible for one exchange: a T4 paired with another exchange's T1
            self.disturbed += 1
            return 0
        self._window.append((rtt, _cdiv(rtt, 2) - (self._t2 - t1)))
        if len(self._window) < self.exchanges:
            return 0
        return self.flush(initial)

    def flush(self, initial: bool) -> int:
        """End the window with the exchanges it has (the RTI's initial exchanges are over,
        and one of them did not count): the adjustment, or 0 if it has none."""
        if not self._window:
            return 0
        rtt, error = min(self._window)
        self._window = []
        self.windows += 1
        self.last_error, self.bound = error, _cdiv(rtt, 2)
        return error if initial else _cdiv(error, self.attenuation)
