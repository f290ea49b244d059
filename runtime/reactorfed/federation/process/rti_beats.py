"""The RTI's periodic sends over the federates' heartbeat connections: the :class:`RtiBeats`
part of :class:`.rti_server.RtiServer`'s receive loop. A heartbeat every period (a
federate that hears none judges the RTI lost) and, with clock synchronization ``on``, its
rounds of exchanges while the federation runs (:class:`.clock_sync.RtiClockSync`).
"""

from __future__ import annotations

from ...time.clock import Clock
from ..coordination.admission import Admission
from ..io.transport import Server
from ..wire import protocol as P
from .clock_sync import RtiClockSync

__all__ = ["RtiBeats"]

#: the RTI's receive loop waits for messages at most this long (ms) between its checks
_POLL_MS = 50


class RtiBeats:
    """When the next heartbeat and clock synchronization round are due, and their sends."""

    def __init__(
        self,
        server: Server,
        admission: Admission,
        heartbeat_ns: int,
        sync: RtiClockSync | None,
        clock: Clock,
    ) -> None:
        self._server = server
        self._admission = admission
        self._heartbeat_ns = heartbeat_ns
        self._sync = sync
        self._clock = clock
        self._next_beat = 0

    def wait_ms(self) -> int:
        """How long the loop may wait for messages before a check or a round is due."""
        sync = self._sync
        return _POLL_MS if sync is None else min(_POLL_MS, sync.wait_ms(self._clock.now()))

    def tick(self, now: int, running: bool) -> None:
        """The loop's check at ``now`` (``running``: the federation started and runs):
        whatever is due goes out."""
        peers = self._admission.heartbeat
        if now >= self._next_beat:
            self._next_beat = now + self._heartbeat_ns
            beat = P.Heartbeat().pack()
            for peer in peers:
                self._server.send(peer, [beat])
        if self._sync is not None and running:
            self._sync.tick(now, peers)
