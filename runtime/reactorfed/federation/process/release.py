"""After resigning: a federate keeps its links open until the RTI's RELEASE.

Its last payloads may still be queued in this process (megabytes behind an encrypted TCP
link, or a Unix socket to a receiver busy in a long reaction); closing the links would
drop them, and the receiver would then wait for ever for messages the counts say were
sent. The RTI sends RELEASE once everything the federate sent has been reported received,
or its receivers resigned or failed (see Release in :mod:`..coordination.rti_core`).
"""

from __future__ import annotations

import logging

from ...time.clock import Clock
from ..io.transport import Client, Monitor, Poller
from ..wire import protocol as P
from .heartbeat import Liveness
from .links import DataPort

__all__ = ["await_release"]

log = logging.getLogger("reactorfed.federate")

#: what the RTI may still send a federate that resigned: what it sent before, then RELEASE
_AFTER_RESIGN = P.FROM_RTI | {P.RELEASE}
#: after this long, the wait is said in the log
_SAY_AFTER_NS = 2_000_000_000


def await_release(name: str, rti: Client, poller: Poller, port: DataPort, live: Liveness, clock: Clock,
                  timeout_ns: int) -> None:
    """Wait for the RTI's RELEASE, the federate's poller flushing its Unix-socket output
    meanwhile. Given up, with a warning that messages may be lost, if the RTI aborts or
    closes the connection, or after ``timeout_ns``."""
    t0 = clock.now()
    deadline = t0 + timeout_ns
    said = False
    monitor = Monitor(rti)
    try:
        while True:
            now = clock.now()
            why = live.abort_reason
            if why is None and monitor.disconnected():
                why = "the RTI closed the connection"
            if why is None and now > deadline:
                why = f"no release within {timeout_ns // 10**9} s (the join timeout)"
            if why is not None:
                if not _released(rti, live):  # (a release read just before the close)
                    log.warning("%s: closing its links before the RTI confirmed that its peers received "
                                "everything it sent (%s); messages still on their way may be lost", name, why)
                return
            if not said and now - t0 > _SAY_AFTER_NS:
                said = True
                log.info("%s: waiting until its peers have received everything it sent", name)
            ready = poller.wait(100)
            if rti in ready and _released(rti, live):
                return
            # What still arrives is for tags after this federate's last: read and dropped
            # (a port left unread would wake the poller at once, every time).
            if port.tcp in ready:
                while port.tcp.recv() is not None:
                    pass
            if port.local is not None and port.local in ready:
                port.local.received().clear()
            if port.monitor in ready:
                port.monitor.disconnected()
                port.monitor.refused()
    finally:
        monitor.close()


def _released(rti: Client, live: Liveness) -> bool:
    """Read what the RTI sent: was a RELEASE among it? An ABORT is noted in ``live`` (the
    wait then ends, as when the heartbeat's thread hears one)."""
    released = False
    while (frames := rti.recv()) is not None:
        try:
            msg = P.parse(frames[0], _AFTER_RESIGN)
        except P.ProtocolError:
            continue
        if isinstance(msg, P.Release):
            released = True
        elif isinstance(msg, P.Abort):
            live.abort(f"the federation was aborted: {msg.reason}")
    return released
