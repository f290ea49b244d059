"""The RTI process: authenticates federates, fixes the start time, grants tags,
agrees on stop tags, watches heartbeats, and ends the federation cleanly (or with an
error that names the federate at fault). It carries no payloads: those go peer to peer.
Elastic banks' members that join and leave while it runs: :mod:`.rti_members`; which
connection is whose (a hot swap's held new process too): :mod:`.rti_connections`; the
heartbeats and clock synchronization rounds it sends: :mod:`.rti_beats`; strangers' join
handshakes: :mod:`.rti_handshake`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from typing import Any, NoReturn

from ...execution.tracing import Tracer
from ...observe.progress import ProgressHistory, ProgressReport
from ...time.clock import Clock
from ..coordination.admission import Admission, Departures, PeerKind
from ..coordination.layout import Layout
from ..coordination.rti_core import RtiCore
from ..errors import FederationError
from ..io.curve import warn_plaintext
from ..io.transport import Monitor, Server
from ..wire import protocol as P
from .clock_sync import RtiClockSync
from .rti_beats import RtiBeats
from .rti_config import RtiConfig, RtiPhase, RtiSummary
from .rti_connections import Connections
from .rti_grants import RtiGrants
from .rti_handshake import RtiHandshake
from .rti_members import RtiMembers, load_schedule
from .rti_silence import check_silence
from .rti_status import elapsed_of, metrics_of, status_of
from .throttle import Throttle

__all__ = ["RtiConfig", "RtiPhase", "RtiServer", "RtiSummary"]

log = logging.getLogger("reactorfed.rti")
#: how often the RTI looks whether the issuer changed the members' keys
KEYS_CHECK_NS = 1_000_000_000

#: the messages each kind of connection may send (anything else is dropped and counted)
_ALLOWED = {
    PeerKind.CONTROL: frozenset({P.LTC, P.STOP_REQ, P.STOP_REPLY, P.RESIGN, P.HEARTBEAT, P.FAIL}),
    PeerKind.HEARTBEAT: frozenset({P.HEARTBEAT, P.PROGRESS}),
    PeerKind.PENDING: frozenset({P.PROOF}),
    PeerKind.HELD: frozenset(),  # (a hot swap's new process says nothing until its START)
    PeerKind.STRANGER: frozenset({P.HELLO, P.HB_HELLO}),
}
#: a federation with elastic banks: its federates' membership messages too
_ALLOWED_ELASTIC = {**_ALLOWED, PeerKind.CONTROL: _ALLOWED[PeerKind.CONTROL] | {P.JOIN_REQ, P.LEAVE_REQ, P.QUERY_REPLY}}


class RtiServer:
    def __init__(self, layout: Layout, cfg: RtiConfig, clock: Clock) -> None:
        self.layout = layout
        self.cfg = cfg
        self.clock = clock
        self.core = RtiCore(layout, cfg.lead_window)
        self.phase = RtiPhase.JOINING
        self.start_time: int | None = None
        self.session = os.urandom(16)
        self.endpoint = ""
        self._server: Server | None = None
        self._monitor: Monitor | None = None
        # (a key per member: the transport says whose key each connection has; no secret)
        self.admission = Admission(layout, cfg.federation_id, None if cfg.credentials is not None else cfg.secret)
        #: what the RTI sends besides the handshake's answers: grants, RELEASE, stop agreements
        self._out = RtiGrants(self.core, layout, self.admission, decentralized=cfg.coordination == "decentralized")
        self._dirty = self._out.dirty  # (its set: every report adds to it)
        self._final: dict[int, tuple[int, int]] = {}  # the tag each federate resigned at
        #: when each federate's program last said something (physical time)
        self.last_seen: dict[int, int] = {}
        #: each federate's latest progress report (its heartbeat connection's PROGRESS), for /status
        self.progress: dict[int, P.Progress] = {}
        #: every federate's reports over its logical time, bounded (the live page's curves)
        self.progress_history = ProgressHistory()
        #: whose each connection is (a hot swap's new process: held on its own)
        self.connections = Connections(layout, self.admission)
        self.handshake = RtiHandshake(layout, self.admission, self.connections, cfg.credentials, clock, self._joined)
        self.departures = Departures(cfg.liveness_ns)
        self._drained = True  # the last receive loop read everything that had arrived
        self.messages = 0
        #: per federate, its processes admitted (at the start, and an elastic member's every
        #: later join) and those that resigned: the metrics' joins and leaves
        self.joins = [0] * len(layout.names)
        self.resigns = [0] * len(layout.names)
        self._rejected = 0  # see the rejected property
        self.error: str | None = None
        self._warn = Throttle(log)
        #: elastic banks' joins and leaves (None without elastic banks: nothing of it runs)
        self.members: RtiMembers | None = None
        self._allowed = _ALLOWED
        self.clock_sync: RtiClockSync | None = None  # (None: off; made with the socket, by bind)
        if layout.elastic:
            self.members = self._out.members = self.handshake.members = RtiMembers(
                self, self._out, load_schedule(layout, cfg.membership))
            self._allowed = _ALLOWED_ELASTIC
        elif cfg.membership is not None:
            raise FederationError("a membership schedule was given, but the program has no elastic bank")

    @property
    def tracer(self) -> Tracer | None:
        """Records grants, stop agreements, joins and leaves in a traced run (None: untraced)."""
        return self._out.tracer

    @tracer.setter
    def tracer(self, tracer: Tracer | None) -> None:
        self._out.tracer = tracer

    @property
    def grants(self) -> int:
        """Grants sent (TAG and PTAG)."""
        return self._out.sent

    @property
    def handshakes_refused(self) -> int:
        """Connections whose CurveZMQ handshake failed."""
        return self._monitor.handshake_failures if self._monitor is not None else 0

    @property
    def rejected(self) -> int:
        """Messages and joins refused: by the RTI, and messages in pieces the transport
        could not put together (malformed, or too large in all)."""
        return (self._rejected + self.handshake.rejected
                + (self._server.dropped if self._server is not None else 0))

    def bind(self) -> str:
        self._server = Server(f"tcp://{self.cfg.host}:{self.cfg.port}", max_message=self.cfg.max_message,
                              liveness_ms=max(1, self.cfg.liveness_ns // 1_000_000), curve=self.cfg.curve(),
                              admit=self.cfg.credentials.admit if self.cfg.credentials is not None else None)
        if self.cfg.credentials is not None:
            self.cfg.credentials.warn_missing(self.layout.names)
        self._monitor = Monitor(self._server)
        self._out.socket = self.handshake.server = self._server
        self.clock_sync, self._allowed = RtiClockSync.of(self.cfg, self._server, self.clock, self._allowed)
        self.endpoint = self._server.endpoint
        log.info("RTI for federation %r listening on %s (%s); waiting for %d federates: %s",
                 self.cfg.federation_id, self.endpoint,
                 "CurveZMQ" if self._server.encrypted else "PLAIN TEXT: trusted single host only",
                 len(self.layout.names), ", ".join(self.layout.names))
        if not self._server.encrypted:
            warn_plaintext(f"the RTI of federation {self.cfg.federation_id!r}")
        return self.endpoint

    def run(self) -> RtiSummary:
        """Serve until every federate resigned; raises FederationError when it fails."""
        if self._server is None:
            self.bind()
        server = self._server
        assert server is not None
        from ..io.transport import Poller

        monitor = self._monitor
        assert monitor is not None
        poller = Poller(server, monitor)
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        joined_by = self.clock.now() + self.cfg.join_timeout_ns
        sync = self.clock_sync
        beats = RtiBeats(server, self.admission, self.cfg.heartbeat_ns, sync, self.clock)
        next_keys = 0
        try:
            while True:
                if poller.wait(beats.wait_ms()):
                    # Bounded in time too: under a flood (hostile or not), heartbeats still
                    # go out and liveness is still checked every few tens of milliseconds.
                    budget = time.monotonic_ns() + 20_000_000
                    self._drained = False
                    for _ in range(10_000):
                        got = server.recv()
                        if got is None:
                            self._drained = True
                            break
                        self._on_message(got[0], got[1])
                        if self.phase == RtiPhase.DONE or time.monotonic_ns() > budget:
                            break
                    self._out.flush()
                if self.phase == RtiPhase.DONE:
                    break
                now = self.clock.now()
                # After the messages: what a federate sent before its connection closed
                # (a RESIGN) has been read by now.
                for fd in monitor.disconnected():
                    self._connection_closed(fd, now)
                for reason in monitor.refused():  # a wrong key, a stranger, altered bytes
                    self.departures.refused(now, reason)
                    self._warn.warning("refused a connection to the RTI: %s", reason, kind=reason)
                if self.departures:
                    self._check_departures(now)
                beats.tick(now, self.phase == RtiPhase.RUNNING)
                if now >= next_keys:
                    next_keys = now + KEYS_CHECK_NS
                    self._send_keys()
                if self.phase == RtiPhase.JOINING and now > joined_by:
                    missing = ", ".join(self.admission.missing()) or (sync.unfinished(self.layout) if sync else "")
                    self.fail(f"federates did not join within {self.cfg.join_timeout_ns // 10**9} s: {missing}")
                if self.phase == RtiPhase.RUNNING and self.cfg.silence_ns is not None:
                    check_silence(self, now, self.cfg.silence_ns)
        finally:
            poller.close()
            self.close()
        wall, cpu = time.perf_counter_ns() - t0, time.process_time_ns() - c0
        last = max(self._final.values(), default=(0, 0))
        start = self.start_time or 0
        return RtiSummary(len(self._final), self.grants, self.messages, self.rejected, wall,
                          (last[0] - start if last[0] > start else 0, last[1]), cpu,
                          self.members.record() if self.members is not None else ())

    def close(self) -> None:
        """Close the RTI's socket and its monitor (done by :meth:`run` when it ends)."""
        if self._monitor is not None:
            self._monitor.close()
        if self._server is not None:
            # the last RELEASEs leave with a bounded linger (while the process's context lives)
            self._server.close(1000 if self.phase == RtiPhase.DONE else 0)

    def _connection_closed(self, fd: int, now: int) -> None:
        """A connection closed: if it was a federate's that has not resigned, the federate
        is dead unless its RESIGN (on its other connection) comes within a moment. (An
        elastic slot's process that left, or waited to join, is forgotten at once.)"""
        f = self.connections.closed(fd)
        if f is None:
            return  # (a held new process's: its swap is dropped)
        if self.members is not None and self.layout.elastic_of(f) is not None and self.members.closed(f, fd):
            return  # (a process that left, or waited to join: nothing to judge)
        if not self.core.feds[f].resigned:
            self.departures.closed(f, now)

    def _check_departures(self, now: int) -> None:
        while (dead := self.departures.judge(now, self._drained, lambda f: self.core.feds[f].resigned)) is not None:
            if self.phase not in (RtiPhase.JOINING, RtiPhase.RUNNING):
                return
            why = ("stopped responding (its connection to the RTI closed: the process ended, or answered no "
                   f"heartbeat for {self.cfg.liveness_ns // 1_000_000} ms){self.departures.refused_then(now)}")
            if self.members is None or self.phase is RtiPhase.JOINING or self.layout.elastic_of(dead) is None:
                self.fail(f"federate {self.layout.names[dead]} {why}")
            self.members.failed(dead, why)  # an elastic member: it leaves, the others go on
            if self.core.all_resigned():
                self.phase = RtiPhase.DONE

    def refused_request(self, reason: str) -> None:
        """A federate's request refused (counted as rejected, and warned of)."""
        self._rejected += 1
        self._warn.warning("refused a membership request: %s", reason, kind="membership")

    def forget_connections(self, f: int) -> None:
        """Federate ``f``'s process is gone: its connections no longer name it."""
        self.connections.forget(f)

    def take_over(self, f: int) -> None:
        """Federate ``f``'s process is forgotten: a new process held for it (a hot swap), if
        any, joins now, over its connection."""
        held = self.connections.take_over(f)
        if held is not None:
            self._joined(f, *held)

    def refuse_swap(self, f: int, reason: str) -> None:
        """The hot swap of ``f`` cannot be: its held new process is told ``reason``."""
        peer = self.connections.refuse(f)
        if peer is not None:
            self.handshake.answer(peer, P.Reject(f"hot swap refused: {reason}"))

    def fail(self, reason: str) -> NoReturn:
        """End the federation: every connection is told why (ABORT); raises FederationError."""
        self.error = reason
        self.phase = RtiPhase.FAILED
        log.error("federation failed: %s", reason)
        assert self._server is not None
        abort = P.Abort(reason).pack()
        for peer in self.admission.peers():
            self._server.send(peer, [abort])
        time.sleep(0.1)  # let the aborts leave before the socket closes
        raise FederationError(reason)

    # -- messages ----------------------------------------------------------------------
    def _on_message(self, peer: bytes, frames: list[memoryview]) -> None:
        self.messages += 1
        adm = self.admission
        kind = adm.kind(peer)
        if len(frames) != 1:
            self._rejected += 1
            return
        try:
            msg = P.parse(frames[0], self._allowed[kind])
        except P.ProtocolError as e:
            self._rejected += 1
            log.debug("rejected a message: %s", e)
            return
        if isinstance(msg, P.ClockT3):  # (allowed with clock synchronization only)
            assert self.clock_sync is not None
            if self.clock_sync.on_t3(peer, kind is PeerKind.HEARTBEAT, adm) and self.admission.complete:
                self._start()  # (the last federate's initial exchanges ended)
        elif kind is PeerKind.CONTROL:
            f = adm.control[peer]
            self.last_seen[f] = self.clock.now()
            self._on_control(f, msg)
        elif kind is PeerKind.HEARTBEAT:
            f = adm.heartbeat[peer]
            self.last_seen[f] = self.clock.now()
            if isinstance(msg, P.Progress):
                self.progress[f] = msg
                self.progress_history.add(self.layout.names[f], elapsed_of(self, f), ProgressReport(*msg))
        else:  # (a stranger's, or a pending one's: HELLO, PROOF, HB_HELLO)
            if isinstance(msg, P.Hello):  # (its key may be new: its peers learn it before it starts)
                self._send_keys()
            self.handshake.on_message(peer, msg, open_=self.phase == RtiPhase.JOINING,
                                      running=self.phase == RtiPhase.RUNNING, session=self.session)

    def _send_keys(self) -> None:
        """The members' keys, to every federate joined when the issuer changed them (a slot's
        fresh key reaches its peers before the slot opens again)."""
        if self.phase != RtiPhase.RUNNING:
            return  # (before the start: with the STARTs, see _start)
        news = self.handshake.keys_news()
        if news is None:
            return
        data = P.Keys(news).pack()
        for f in self.admission.control_of:
            self._out.send(f, data)
        log.info("the members' keys changed: the %d federates joined learn them", len(self.admission.control_of))

    def _joined(self, joined: int, fd: int, peer: bytes) -> None:
        """Federate ``joined`` passed the handshake over connection ``fd`` (``peer``)."""
        self.connections.joined(fd, joined)
        self.joins[joined] += 1
        self.last_seen[joined] = self.clock.now()
        log.info("federate %s joined (%d/%d)", self.layout.names[joined], len(self.admission.control_of),
                 len(self.layout.names))
        if self.members is not None:
            self.members.connected(joined, fd)  # (running: an elastic member's START, now)
        if self.clock_sync is not None and self.phase is RtiPhase.JOINING:
            self.clock_sync.begin(joined, peer)  # (the start waits for its exchanges: on_t3)
        elif self.phase is RtiPhase.JOINING and self.admission.complete:
            self._start()

    def _start(self) -> None:
        self.start_time = start = self.clock.now() + self.cfg.start_delay_ns
        if self.members is not None:
            self.members.before_start(start)
        grants = self.core.start(start)  # (the server asks the core for early joins after the start: none)
        self.phase = RtiPhase.RUNNING
        assert self._server is not None
        members = self.members
        # the keys, if the table changed while they joined: before START, so before any link opens
        news = self.handshake.keys_news()
        keys = None if news is None else P.Keys(news).pack()
        for f, peer in self.admission.control_of.items():
            if keys is not None:
                self._server.send(peer, [keys])
            start_msg = (P.Start(start, self.admission.endpoints, self.session, f, decentralized=self._out.decentralized,
                                 window=self.cfg.lead_window)
                         if members is None else members.start_of(f))
            self._server.send(peer, [start_msg.pack()])
        log.info("all %d federates joined; the federation starts", len(self.admission.control_of))
        if members is not None:
            members.after_start()
        for g in grants:
            self._out.send_grant(g)

    def _on_control(self, f: int, msg: P.Message) -> None:
        core = self.core
        # Reports only update the state here; the grants they make due are sent once the
        # messages waiting in the socket are all read (_flush_grants).
        if isinstance(msg, P.Ltc):
            core.on_ltc(f, msg.tag, msg.net, msg.sent, msg.received, regrant=False)
            self._dirty.add(f)
        elif isinstance(msg, P.Resign):
            self._final[f] = msg.tag
            self.resigns[f] += 1
            agreed = core.on_resign(f, msg.sent, msg.received, regrant=False)
            self._dirty.add(f)
            log.info("federate %s resigned", self.layout.names[f])
            if self.members is not None:  # (a round it was the last to answer: agreed)
                self.members.resigned(f, agreed)
            if core.stop_proposed is not None and core.stop_tag is None:
                self._out.stop_if_agreed(core.on_stop_reply(f, msg.tag))
            if core.all_resigned():
                self.phase = RtiPhase.DONE
        elif isinstance(msg, P.StopReq):
            ask = core.on_stop_request(f, msg.tag)
            if ask is not None:
                self._out.broadcast(P.StopRequest(ask).pack())
        elif isinstance(msg, P.StopReply):
            self._out.stop_if_agreed(core.on_stop_reply(f, msg.tag))
        elif isinstance(msg, P.Fail):
            self.fail(f"federate {self.layout.names[f]} failed: {msg.reason}")
        elif self.members is not None:  # (JOIN_REQ, LEAVE_REQ, QUERY_REPLY: parsed only then)
            self.members.on_message(f, msg)

    # -- observability -----------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """``/status``'s document: the phase, each federate's progress, the counts."""
        return status_of(self)

    def collect(self) -> Iterator[Any]:
        """The Prometheus metrics (the server is a collector)."""
        return metrics_of(self)

    def describe(self) -> list[Any]:
        return []
