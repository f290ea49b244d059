"""The federate's heartbeat thread: tells the RTI this process lives (even while a
reaction runs for long) over a connection of its own, and notices when the RTI does not
answer or aborts the federation. It also carries the program's progress for a person
(:mod:`reactorfed.observe.progress`) to the RTI: off the thread that runs reactions, only
when it changed, at most once every :data:`PROGRESS_PERIOD_NS`.

The two threads share one :class:`Liveness`: each records when it last heard from the RTI
(each field is written by one thread only), and both ask it the one question whether the
RTI is lost.
"""

from __future__ import annotations

import logging
import os
import threading

from ...observe.progress import ProgressBoard
from ...time.clock import Clock, Wakeup
from ..io.transport import Client, CurveKeys, Monitor, Poller
from ..wire import protocol as P
from .clock_sync import FROM_RTI as CLOCK_SYNC
from .clock_sync import FederateClockSync

__all__ = ["PROGRESS_PERIOD_NS", "Heartbeat", "Liveness", "WakeSource"]

log = logging.getLogger("reactorfed.federate")

#: the program's progress goes to the RTI at most this often (when it changed)
PROGRESS_PERIOD_NS = 1_000_000_000

#: what the RTI sends on the heartbeat connection
_FROM_RTI = frozenset({P.HEARTBEAT, P.ABORT}) | CLOCK_SYNC


class WakeSource:
    """A :class:`~reactorfed.time.clock.Wakeup` as a source a poller watches (the scheduler's wakeup,
    the abort, the heartbeat's stop)."""

    __slots__ = ("event",)

    def __init__(self, event: Wakeup) -> None:
        self.event = event

    def fileno(self) -> int:
        return self.event.fileno()

    def buffered(self) -> bool:
        return False


class Liveness:
    """When the RTI was last heard from, over either connection, and why the federation
    ended if the RTI said so or its connection closed.

    ``limit_ns`` is the ZeroMQ heartbeat timeout of the heartbeat's connection (answered
    by ZeroMQ's I/O thread on both sides: a closed connection means the RTI's process
    ended or stopped); ``silence_ns``, if given, a backstop for an RTI whose program says
    nothing while its connection lives (off by default: silence cannot tell a hung program
    from a starved one)."""

    __slots__ = ("abort_reason", "aborted", "heard_data", "heard_hb", "limit_ns", "resigned", "rti", "silence_ns")

    def __init__(self, rti: str, limit_ns: int, now: int, silence_ns: int | None = None) -> None:
        self.rti = rti  # its address, for the message
        self.limit_ns = limit_ns
        self.silence_ns = None if silence_ns is None else max(limit_ns, silence_ns)
        self.heard_data = now  # on the coordination connection (the scheduler's thread writes it)
        self.heard_hb = now  # on the heartbeat's connection (the heartbeat thread writes it)
        self.abort_reason: str | None = None  # set by :meth:`abort`
        #: set with :attr:`abort_reason`: the federate's poller watches it, so that a main
        #: thread waiting on its sockets (for a grant that will never come) wakes to the news
        self.aborted = Wakeup()
        #: set by the scheduler's thread before it resigns: the RTI may close from then on
        self.resigned = False

    def abort(self, reason: str) -> None:
        """The federation is over for this federate, for ``reason`` (the first one given
        stands); wakes the federate's main thread."""
        if self.abort_reason is None:
            self.abort_reason = reason
            self.aborted.set()

    def lost(self, now: int) -> str | None:
        """Why this federate must give up at ``now`` (the RTI aborted, or has said nothing
        for longer than the limit), or None."""
        if self.abort_reason is not None:
            return self.abort_reason
        if self.silence_ns is None:
            return None
        heard = self.heard_hb if self.heard_hb > self.heard_data else self.heard_data
        if now - heard > self.silence_ns:
            return f"lost the RTI: nothing heard from {self.rti} for {self.silence_ns // 1_000_000} ms"
        return None


class Heartbeat(threading.Thread):
    """Once begun, sends the HB_HELLO that proves who this is, then a HEARTBEAT every
    ``period_ns`` to the RTI at ``live.rti``, and watches the RTI (see :class:`Liveness`);
    with ``sync``, answers the RTI's runtime clock synchronization (:mod:`.clock_sync`).
    With ``progress``, the board's latest report too (a PROGRESS), when it changed, at most
    every :data:`PROGRESS_PERIOD_NS` (and the last one when the heartbeat stops)."""

    def __init__(self, name: str, period_ns: int, live: Liveness, clock: Clock, *,
                 curve: CurveKeys | None = None, server_key: bytes | None = None, progress: ProgressBoard | None = None,
                 sync: FederateClockSync | None = None) -> None:
        super().__init__(name=f"reactorfed-heartbeat-{name}", daemon=True)
        self._hello = b""
        self._period_ns = period_ns
        self.live = live
        self._clock = clock
        self._stop_event = Wakeup()  # (watched by the thread's poller: a stop ends its wait at once)
        self._progress = progress
        self._progress_sent = 0  # how many reports the board had when one was last sent
        self._sync = sync  # answers the RTI's runtime clock synchronization
        # Connected now, before the federate joins: the connection's encrypted handshake
        # is done while the federation starts, not when its reactions begin to load the
        # CPU (hundreds of busy federates on a few cores delayed it past its time limit).
        # The thread that starts later owns the socket from then on.
        self._client = Client(live.rti, max_message=P.RTI_MAX_MESSAGE,
                              liveness_ms=max(1, live.limit_ns // 1_000_000), curve=curve, server_key=server_key)

    def begin(self, hello: bytes) -> None:
        """Start: send ``hello`` (the packed HB_HELLO that proves who this is, which needs
        the session the federate got by joining), then beat."""
        self._hello = hello
        self.live.heard_hb = self._clock.now()
        self.start()

    def reconnect(self) -> None:
        """Connect again before :meth:`begin`: the RTI refused this federate's key when the
        connection was made (its table had not caught up), and libzmq gave the connection up."""
        assert self.ident is None, "the heartbeat's thread owns its socket once started"
        self._client.reconnect()

    def close_unstarted(self) -> None:
        """Close the connection of a heartbeat that never started (its federate did not join)."""
        if not self.is_alive() and self.ident is None:
            self._client.close()

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=2)

    def run(self) -> None:
        live, clock = self.live, self._clock
        # Watched from now on: while the federate joined, the connection may have closed
        # and reconnected on its own (a proxy in front of an RTI not yet listening closes
        # it), which is no news; the join itself tells whether the RTI is there.
        client = self._client
        monitor = Monitor(client)
        poller = Poller(client, monitor, WakeSource(self._stop_event))
        last = False  # a last report was sent as the heartbeat stopped
        try:
            client.send([self._hello])
            period_ms = max(1, self._period_ns // 1_000_000)
            beat = P.Heartbeat().pack()
            next_beat = next_progress = 0
            while not self._stop_event.is_set():
                now = clock.now()
                if now >= next_beat:
                    client.send([beat])
                    next_beat = now + self._period_ns
                if now >= next_progress and self._send_progress(client):
                    next_progress = now + PROGRESS_PERIOD_NS
                if poller.wait(period_ms):
                    while (frames := client.recv()) is not None:
                        live.heard_hb = clock.now()
                        try:
                            msg = P.parse(frames[0], _FROM_RTI)
                        except P.ProtocolError:
                            continue
                        if self._sync is not None and P.KIND[type(msg)] in CLOCK_SYNC:
                            self._sync.on_message(msg, lambda b: client.send([b]), initial=False)
                        elif isinstance(msg, P.Abort) and live.abort_reason is None:
                            live.abort(f"the federation was aborted: {msg.reason}")
                            self._hard_exit_later()
                if monitor.disconnected() and live.abort_reason is None and not live.resigned:
                    live.abort(f"lost the RTI: the connection to {live.rti} closed (its process ended, "
                               f"or answered no heartbeat for {live.limit_ns // 1_000_000} ms)")
                    log.warning("%s", live.abort_reason)  # now, not when the main thread gets to it
                    self._hard_exit_later()
                if live.abort_reason is None:
                    reason = live.lost(clock.now())
                    if reason is not None:
                        live.abort(reason)
                        self._hard_exit_later()
            last = self._send_progress(client)  # the last report, if the latest did not go yet
        finally:
            poller.close()
            monitor.close()
            client.close(100 if last else 0)  # (a linger: the last report leaves)

    def _send_progress(self, client: Client) -> bool:
        """Send the board's latest report if it changed since the last one sent; whether it did."""
        board = self._progress
        if board is None:
            return False
        count, report = board.latest()
        if count == self._progress_sent or report is None:
            return False
        self._progress_sent = count
        client.send([P.Progress(report.done, report.total, dict(report.figures)).pack()])
        return True

    def _hard_exit_later(self) -> None:
        """If the main thread is stuck in a reaction and does not notice the abort, end
        the process anyway: a federation never hangs."""
        grace = 3 * self.live.limit_ns / 1e9

        def kill() -> None:
            if not self._stop_event.wait(grace):
                log.error("%s; the main thread did not stop in time, exiting", self.live.abort_reason)
                os._exit(3)

        threading.Thread(target=kill, daemon=True, name="reactorfed-hard-exit").start()
