"""The federate's heartbeat thread: tells the RTI this process lives (even while a
reaction runs for long) over a connection of its own, and notices when the RTI does not
answer or aborts the federation."""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from . import protocol as P
from .transport import Client, Poller

if TYPE_CHECKING:
    from .federate import FederateCoordinator

__all__ = ["Heartbeat"]

log = logging.getLogger("reactorfed.federate")



class Heartbeat(threading.Thread):
    """Tells the RTI this process lives (even during a long reaction) and watches the RTI."""

    def __init__(self, fed: FederateCoordinator) -> None:
        super().__init__(name=f"reactorfed-heartbeat-{fed.name}", daemon=True)
        self.fed = fed
        self.last_seen = fed.clock.now()
        self.abort_reason: str | None = None
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=2)

    def run(self) -> None:
        fed = self.fed
        cfg = fed.cfg
        client = Client(cfg.rti, max_message=P.RTI_MAX_MESSAGE)
        try:
            nonce = os.urandom(16)
            client.send([P.pack(P.HB_HELLO, cfg.federation_id, fed.name, nonce, P.mac(cfg.secret, "hb", fed.session, fed.name, nonce))])
            poller = Poller(client)
            period_ms = max(1, cfg.heartbeat_ns // 1_000_000)
            next_beat = 0
            while not self._stop_event.is_set():
                now = fed.clock.now()
                if now >= next_beat:
                    client.send([P.pack(P.HEARTBEAT)])
                    next_beat = now + cfg.heartbeat_ns
                if poller.wait(period_ms):
                    while (frames := client.recv()) is not None:
                        self.last_seen = fed.clock.now()
                        try:
                            msg = P.parse(frames[0])
                        except P.ProtocolError:
                            continue
                        if msg[0] == P.ABORT and self.abort_reason is None:
                            self.abort_reason = f"the federation was aborted: {msg[1]}"
                            self._hard_exit_later()
                if fed.clock.now() - max(self.last_seen, fed._last_rti) > cfg.liveness_ns and self.abort_reason is None:
                    self.abort_reason = f"lost the RTI: nothing heard from {cfg.rti} for {cfg.liveness_ns // 1_000_000} ms"
                    self._hard_exit_later()
        finally:
            client.close()

    def _hard_exit_later(self) -> None:
        """If the main thread is stuck in a reaction and does not notice the abort, end
        the process anyway: a federation never hangs."""
        grace = 3 * self.fed.cfg.liveness_ns / 1e9

        def kill() -> None:
            if not self._stop_event.wait(grace):
                log.error("%s; the main thread did not stop in time, exiting", self.abort_reason)
                os._exit(3)

        threading.Thread(target=kill, daemon=True, name="reactorfed-hard-exit").start()
