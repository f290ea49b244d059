"""Clock synchronization's exchanges between the RTI and each federate (LF's
``clock-sync``, reactor-c's ``clock-sync.c`` and ``rti_remote.c``): the RTI's clock is
the reference; each federate estimates its own clock's error against it
(:class:`~reactorfed.federation.coordination.clock_sync.ClockSyncEstimator`) and
corrects its :class:`~reactorfed.time.clock.SyncedClock`.

``init``: before the start, the RTI makes ``exchanges`` exchanges with each federate that
joined, on its control connection, and fixes the start time once every federate's are
done; the federate applies the estimate whole. ``on``: besides, once running, one
exchange with each federate every ``period``, on its heartbeat connection, with a coded
probe after each T4; the federate applies each window's estimate attenuated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...time.clock import Clock, SyncedClock
from ..coordination.admission import Admission, PeerKind
from ..coordination.clock_sync import CLOCK_SYNC_MODES, ClockSyncEstimator
from ..io.transport import Server
from ..wire import protocol as P

if TYPE_CHECKING:
    from ..coordination.layout import Layout
    from .rti_config import RtiConfig

__all__ = ["CLOCK_SYNC_MODES", "ClockSyncOptions", "FederateClockSync", "RtiClockSync"]

log = logging.getLogger("reactorfed.federation")

#: what the RTI sends for clock synchronization
FROM_RTI = frozenset({P.CLOCK_T1, P.CLOCK_T4, P.CLOCK_PROBE})
#: how long the RTI waits for a runtime T3 before it begins another exchange with that federate
_T3_PATIENCE_NS = 1_000_000_000


@dataclass(frozen=True)
class ClockSyncOptions:
    """LF's ``clock-sync`` and ``clock-sync-options`` for a whole federation: what the
    RTI's configuration and every federate's get (:meth:`rti`, :meth:`federate`)."""

    mode: str = "on"
    period_ns: int = 5_000_000
    trials: int = 10
    attenuation: int = 10
    #: a runtime exchange whose coded probe arrives this much or more off its spacing at
    #: the RTI was disturbed and does not count; reactor-c's is 100 us, which Python's
    #: exchanges over ZeroMQ often exceed (probes off by up to 0.13 ms, some by ms, on 2 cores)
    guard_band_ns: int = 1_000_000
    #: an artificial error of each federate's clock: (1 + its index) times this
    test_offset_ns: int = 0

    def rti(self) -> dict[str, Any]:
        return {
            "clock_sync": self.mode,
            "clock_sync_period_ns": self.period_ns,
            "clock_sync_exchanges": self.trials,
        }

    def federate(self) -> dict[str, Any]:
        # (a test offset without synchronization: the error stays, as a control)
        return {
            "clock_sync": self.mode != "off" or self.test_offset_ns != 0,
            "clock_sync_exchanges": self.trials,
            "clock_sync_attenuation": self.attenuation,
            "clock_sync_guard_band_ns": self.guard_band_ns,
            "clock_sync_test_offset_ns": self.test_offset_ns,
        }


class RtiClockSync:
    """The RTI's side: it sends T1s and answers each T3 with its T4 (and, while running,
    a coded probe)."""

    def __init__(
        self, server: Server, clock: Clock, mode: str, period_ns: int, exchanges: int
    ) -> None:
        self._server = server
        self._clock = clock
        self.mode = mode
        self.period_ns = period_ns
        self.exchanges = exchanges
        #: federate -> its initial exchanges still to make (the start waits for none left)
        self.initial: dict[int, int] = {}
        self._next = 0  # when the next runtime round is due (0: at once)
        #: heartbeat connection -> when its runtime T1 went, until its T3 comes: no other
        #: T1 goes before (the federate pairs a T4 with the last T1 it got), unless that
        #: one has waited a second (its T3 is not coming)
        self._waiting: dict[bytes, int] = {}

    @classmethod
    def of(
        cls, cfg: RtiConfig, server: Server, clock: Clock, allowed: dict[PeerKind, frozenset[int]]
    ) -> tuple[RtiClockSync | None, dict[PeerKind, frozenset[int]]]:
        """The RTI's clock synchronization as ``cfg`` asks (None: off), and the messages
        each kind of connection may send, ``allowed`` with T3s where it goes on."""
        if cfg.clock_sync == "off":
            return None, allowed
        sync = cls(
            server, clock, cfg.clock_sync, cfg.clock_sync_period_ns, cfg.clock_sync_exchanges
        )
        t3 = frozenset({P.CLOCK_T3})
        kinds = (PeerKind.CONTROL, PeerKind.HEARTBEAT)
        return sync, {**allowed, **{k: allowed[k] | t3 for k in kinds}}

    def unfinished(self, layout: Layout) -> str:
        """The federates whose initial exchanges have not ended, for a message."""
        return ", ".join(
            f"{layout.names[f]} (its clock synchronization did not end)" for f in self.initial
        )

    def begin(self, f: int, peer: bytes) -> None:
        """Federate ``f`` joined over ``peer`` (its control connection): its initial exchanges begin."""
        self.initial[f] = self.exchanges
        self._t1(peer)

    def on_t3(self, peer: bytes, running: bool, admission: Admission) -> bool:
        """A T3 came over ``peer`` (a heartbeat connection if ``running``, else a control
        one): answer it. Whether this ended the last federate's initial exchanges."""
        t4 = self._clock.now()
        if running:
            if self._waiting.pop(peer, None) is None:
                return False  # (a T3 the RTI did not ask for: dropped)
            self._server.send(peer, [P.ClockT4(t4).pack()])
            self._server.send(peer, [P.ClockProbe(self._clock.now()).pack()])
            return False
        f = admission.control[peer]
        left = self.initial.get(f)
        if left is None:
            return False  # (not in its initial exchanges: dropped)
        self._server.send(peer, [P.ClockT4(t4).pack()])
        if left > 1:
            self.initial[f] = left - 1
            self._t1(peer)
            return False
        del self.initial[f]
        return not self.initial

    def wait_ms(self, now: int) -> int:
        """How long the RTI may wait for messages before the next runtime round is due."""
        if self.mode != "on":
            return 1 << 30
        return max(0, (self._next - now) // 1_000_000)

    def tick(self, now: int, peers: Iterable[bytes]) -> None:
        """While running (``on``): a round of exchanges every period, over ``peers`` (the
        federates' heartbeat connections)."""
        if self.mode != "on" or now < self._next:
            return
        self._next = now + self.period_ns
        waiting = self._waiting
        for peer in peers:
            if now - waiting.get(peer, now - _T3_PATIENCE_NS) >= _T3_PATIENCE_NS:
                waiting[peer] = now
                self._t1(peer)

    def _t1(self, peer: bytes) -> None:
        self._server.send(peer, [P.ClockT1(self._clock.now()).pack()])


class FederateClockSync:
    """A federate's side: it answers the RTI's T1s and corrects ``clock`` by the
    estimator's adjustments. Used by one thread at a time (the join's, then the
    heartbeat's)."""

    def __init__(self, clock: Clock, estimator: ClockSyncEstimator) -> None:
        self._clock = clock
        #: None: this federate does not correct its clock (it answers all the same, so that
        #: the RTI's exchanges end and the federation starts)
        self._synced = clock if isinstance(clock, SyncedClock) else None
        self.estimator = estimator
        self._t4: tuple[int, int] | None = None  # a runtime T4 waiting for its probe: (t4, arrival)
        self._warned = False

    def on_message(self, msg: P.Message, send: Callable[[bytes], None], initial: bool) -> None:
        """A clock synchronization message from the RTI (``initial``: before the start)."""
        now = self._clock.now()  # first: the arrival time is what the estimate needs
        est = self.estimator
        if isinstance(msg, P.ClockT1):
            est.on_t1(msg.time, now)
            # (T3 read before the send: a thread held up after it would count the hold-up
            # as local delay, possibly longer than the round trip itself)
            est.on_t3_sent(self._clock.now())
            send(P.ClockT3().pack())
        elif isinstance(msg, P.ClockT4):
            if initial:
                self._apply(est.on_t4(msg.time, True), initial)
            else:
                self._t4 = (msg.time, now)
        elif isinstance(msg, P.ClockProbe) and self._t4 is not None:
            t4, r4 = self._t4
            self._t4 = None
            self._apply(est.on_t4(t4, False, (r4, msg.time, now)), initial)

    def started(self) -> None:
        """START came: the initial exchanges are over; apply what they measured if an
        exchange that did not count left their window short."""
        self._apply(self.estimator.flush(True), True)

    def _apply(self, adjustment: int, initial: bool) -> None:
        if adjustment == 0:
            return
        if self._synced is None:
            if not self._warned:
                self._warned = True
                log.warning(
                    "the RTI synchronizes clocks, but this federate does not correct its own "
                    "(it was started without clock synchronization)"
                )
            return
        if initial:
            self._synced.settle(adjustment)
            log.info(
                "clock sync: this clock read %d ns ahead of the RTI's (to within %d ns); corrected",
                -adjustment,
                self.estimator.bound,
            )
        else:
            self._synced.adjust(adjustment)
        log.debug("clock sync: offset %d ns (adjusted by %d ns)", self._synced.offset, adjustment)
