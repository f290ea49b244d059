"""A federate: one part of a federated program, coordinated by the RTI.

:class:`FederateCoordinator` plugs into the scheduler (see
:class:`reactorfed.execution.scheduler.Coordinator`) and does the federate's I/O: it joins the RTI
(:mod:`.join`), connects to its downstream peers, waits for messages (one poller over the
RTI link, the data port and the Unix socket), decodes what the RTI sends, sends its
outputs (:mod:`.outputs`, through :mod:`.outbound`), hands what peers send to
:mod:`.inbound`, runs the heartbeat thread (:mod:`.heartbeat`), and closes everything at
the end. Every decision (grants, peer promises, when to report, zero-delay cycles, stop
agreement) is the pure :class:`..coordination.federate_core.FederateCore`'s: the driver
feeds it what arrives and what the scheduler does, with the time read from the clock,
and sends what it queues. Its configuration is :class:`.federate_config.FederateConfig`.

The receiver never processes a tag before everything sent to it for that tag has
arrived: every report to the RTI carries how many messages this federate has sent to
each peer, and every grant carries how many messages the grantee must have received
from each upstream peer before using it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from ...assembly.program import Program
from ...execution.scheduler import Scheduler
from ...execution.tracing import Tracer
from ...observe.trace.records import PROMISE
from ...time.clock import Clock, Wakeup
from ...time.tag import NEVER, TagT
from ..coordination.federate_core import WAIT, FederateCore, Message
from ..coordination.layout import Layout
from ..errors import FederationError, LinkDownError, SendError
from ..io.local import LocalClient, split_endpoint
from ..io.transport import Client, Poller, TransportError
from ..wire import protocol as P
from .federate_config import FederateConfig
from .federate_members import FROM_RTI_ELASTIC, FederateMembers
from .heartbeat import Heartbeat, Liveness, WakeSource
from .inbound import Inbound
from .join import colocated, join
from .links import AwaitingLink, DataLink, DataPort, connect_downstream
from .outbound import Outbound
from .outputs import Outputs
from .release import await_release

__all__ = ["FederateCoordinator", "FederationError"]

log = logging.getLogger("reactorfed.federate")

#: the longest one pump spends reading the data port
_DATA_SLICE_NS = 20_000_000


class FederateCoordinator:
    def __init__(self, program: Program, layout: Layout, cfg: FederateConfig, clock: Clock) -> None:
        part = program.partition
        assert part is not None
        self.program = program
        self.layout = layout
        self.cfg = cfg
        self.clock = clock
        self.name = part.federate
        self.me = layout.index(part.federate)
        self.core = FederateCore(layout, self.me, peer_grants=cfg.peer_grants)
        self._inbound = Inbound(program, layout, self.me, self.core, secret=cfg.secret,
                                trusted_pickle=cfg.trusted_pickle, ring_token=self._ring_token)
        self.session = b""
        self.peers: dict[int, str] = {}
        self._next_look = 0  # when acquire looks for messages next, waiting or not
        self._rti: Client | None = None
        self._port: DataPort | None = None  # where upstream peers connect (read in _pump)
        self._clients: dict[int, DataLink] = {}
        self._poller: Poller | None = None
        self._wake: WakeSource | None = None  # the scheduler's wakeup, once it waits for physical time
        self._woken = False  # the poller saw the wakeup (see _pump)
        self._live: Liveness | None = None
        self._hb: Heartbeat | None = None
        #: called once joined, in the thread that runs reactions, when every other thread
        #: of the federate exists (the runner lowers that thread's priority there)
        self.on_joined: list[Callable[[], None]] = []
        self._rti_rejected = 0  # bad messages from the RTI (the inbound side counts the data port's)
        self._downstream = sorted(layout.downstream(self.me))
        self._out = Outbound(self._clients, self._downstream, layout.names, clock,
                             shm_bytes=cfg.shm_bytes, shm_min=cfg.shm_min, before_wait=self._report_held)
        self._outputs = Outputs(self.core, self._out, cfg)
        #: elastic banks only (issue 19): the membership messages, and what parses the RTI's
        self._members = FederateMembers(self.core, layout, self.name) if self.core._elastic else None
        if self._members is not None:
            self._members.on_joiner = self._connect_joiner
        self._sched: Scheduler | None = None  # (install's: a joiner takes CHANGEs before the run)
        self._tracer: Tracer | None = None  # (install's: the scheduler's, in a traced run)
        self._endpoint = ""  # this federate's data address
        self._peer_eps: dict[int, str] = {}  # downstream peer -> the address its link went to
        self._link_joins: dict[int, TagT] = {}  # elastic downstream peer -> the join its link is for
        self._from_rti = FROM_RTI_ELASTIC if self._members is not None else _FROM_RTI

    # -- joining ---------------------------------------------------------------------
    def start_time(self, proposed: int) -> int:
        """Open the data port, join the RTI, connect to the downstream peers, start the
        heartbeat; the federation's start time."""
        port = self._port = DataPort(self.cfg, self.layout, self.me)
        endpoint, advertised = port.addresses()
        self._endpoint = endpoint
        self._rti = Client(self.cfg.rti, max_message=P.RTI_MAX_MESSAGE, curve=self.cfg.curve())
        cfg = self.cfg
        self._live = Liveness(cfg.rti, cfg.liveness_ns, self.clock.now(), cfg.silence_ns)
        self._hb = Heartbeat(self.name, cfg.heartbeat_ns, self._live, self.clock, curve=cfg.curve())
        joined = join(self._rti, self.cfg, self.name, self.layout.digest, advertised, self.clock)
        if joined.index != self.me:
            raise FederationError(f"the RTI numbers this federate {joined.index}, the program says {self.me}: "
                                  "different programs?")
        self.session = joined.session
        if self._members is not None:  # (before the core begins: the RTI's membership at the start)
            assert self._sched is not None
            self._members.begin(self._sched, joined.start, joined.absent, joined.join)
        self.core.begin(joined.start)
        self._inbound.begin(self.session)
        self.peers = {d: split_endpoint(ep)[0] for d, ep in joined.peers.items()}
        self._out.colocated = colocated(endpoint, self.peers)
        self._out.ring_token = lambda d: self._ring_token(self.me, d)
        self._clients.update(connect_downstream(self.cfg, self.layout, self.me, self.session, joined.peers,
                                                self._out.colocated))
        self._peer_eps = {d: joined.peers[d] for d in self._clients if d in joined.peers}
        port.watch(self._clients)  # until their encrypted handshakes succeed
        self._poller = Poller(self._rti, port.tcp, port.monitor)
        # the heartbeat thread's news (an ABORT on its connection, the RTI's connection
        # lost) wakes a wait for grants that will not come; the next look raises it
        self._poller.add(WakeSource(self._live.aborted))
        if port.local is not None:
            self._poller.add(port.local)
        for c in self._clients.values():
            if isinstance(c, LocalClient):
                self._poller.add_sender(c)
        self._start_heartbeat()
        if self._members is not None and self._members.joiner:
            rti, live, sched = self._rti, self._live, self._sched
            assert rti is not None and live is not None and sched is not None
            self._members.await_admit(rti, live, self.clock, self.cfg.join_timeout_ns,
                                      lambda frames: self._on_rti(sched, frames))
        for hook in self.on_joined:
            hook()
        return joined.start

    @property
    def start(self) -> int:
        """The federation's start time (ns)."""
        return self.core.start

    def request_leave(self) -> None:
        """This elastic bank member asks the RTI to leave; it runs the tags before the one
        agreed, then resigns. Callable from any thread (a reaction's too): the request
        leaves at the driver's next look at its sockets."""
        if self._members is None:
            raise FederationError(f"{self.name} is not a member of an elastic bank: it cannot leave")
        self._members.ask_to_leave()

    def _connect_joiner(self, d: int, endpoint: str, joins: TagT) -> None:
        """Downstream slot ``d``'s incarnation joining at ``joins`` has its data address (its
        CHANGE or PEER): open a link to it."""
        if self._peer_eps.get(d) == endpoint and self._link_joins.setdefault(d, joins) == joins:
            return  # linked already: its address came with START, or with its CHANGE before
        self._out.flush()  # what waits for an earlier incarnation's process goes to it
        old = self._clients.pop(d, None)
        if old is not None and not isinstance(old, AwaitingLink):  # an earlier process: its link and ring go
            if isinstance(old, LocalClient) and self._poller is not None:
                self._poller.remove_sender(old)
            old.close(0)
            ring = self._out._rings.pop(d, None)
            if ring is not None:
                ring.close()
        self._link_joins[d] = joins
        peers = {d: endpoint}
        self.peers[d] = split_endpoint(endpoint)[0]
        self._out.colocated |= colocated(self._endpoint, peers)
        links = connect_downstream(self.cfg, self.layout, self.me, self.session, peers, self._out.colocated, only=[d])
        self._clients.update(links)
        self._peer_eps[d] = endpoint
        if self._port is not None:
            self._port.watch(links)
        c = links[d]
        if isinstance(c, LocalClient) and self._poller is not None:
            self._poller.add_sender(c)
        if isinstance(old, AwaitingLink):  # what was sent before its address came, after the AUTH
            for frames in old.waiting:
                c.send(frames)
        promised = self.core.promised
        if promised[0] != NEVER:
            # The latest promise may have been made while the joiner was absent (not sent
            # to it), and only a later one goes out: without this one the joiner and this
            # federate could each wait for the other's next promise (a loop over a delay).
            self._out.post(d, P.Promise(promised).item())

    def _start_heartbeat(self) -> None:
        cfg = self.cfg
        nonce = os.urandom(16)
        hello = P.HbHello(cfg.federation_id, self.name, nonce, P.mac(cfg.secret, "hb", self.session, self.name, nonce)).pack()
        assert self._hb is not None
        self._hb.begin(hello)

    def install(self, sched: Scheduler) -> None:
        """Prepare the scheduler: output senders and, for zero-delay cycles, checkpoints."""
        program, layout, outputs = self.program, self.layout, self._outputs
        self._sched = sched
        self._tracer = sched.tracer
        if sched.tracer is not None:  # (a traced run: messages and promises recorded)
            outputs.trace = (sched.tracer, layout.names)
            self._inbound.tracer = sched.tracer
        part = program.partition
        assert part is not None
        cyclic_outs = outputs.add_links(program, layout, self.me)
        cyclic_ins: list[tuple[int, int]] = []  # (needed before this level, link id)
        for lk in layout.links:
            # never one of its outputs: the two ends of a cyclic link differ (Layout.cyclic)
            if lk.dst == self.me and layout.cyclic(lk):
                readers = program.readers_of(part.links[lk.id].dst)  # (sources too)
                if readers:
                    cyclic_ins.append((min(rx.level for rx in readers), lk.id))
        self.core.fast = sched.fast
        sched.checkpoints = self.core.checkpoints(cyclic_outs, cyclic_ins)
        if outputs.at_tag_end:
            # with elastic banks, only to the peers present at the tag (a second loop: the
            # usual one checks nothing per message)
            sched.tag_hooks.append(outputs.send_at_tag_end if self._members is None else outputs.send_present)

    # -- the scheduler's hooks ------------------------------------------------------------
    def acquire(self, sched: Scheduler, head: TagT | None) -> TagT | None:
        # Runs before every tag: one clock read unless it waits, one call into the core.
        core = self.core
        clock = self.clock
        now = clock.now()
        if now >= self._next_look:
            # Look for messages every 1 ms, not at every tag (a poll costs more than a small
            # tag): a tag already granted needs nothing more (whatever was sent for it was
            # read before the promise or counted in the grant), and a federate that must
            # wait reads as it waits, below.
            self._next_look = now + 1_000_000
            self._pump(sched, 0, now)
            head = sched.next_event_tag()  # what arrived included
        members = self._members
        while True:
            if members is not None and core.leaves is not None and members.gone(head):
                return head  # its leave: its last tag, where nothing of its own runs
            tag = core.acquire(head, sched.stop_tag, now)
            if core.outbox:
                self._send(core.outbox)
            if tag is not WAIT:
                return tag
            self._pump(sched, core.wait_ms, now)
            now = clock.now()
            self._next_look = now + 1_000_000  # it just looked
            head = sched.next_event_tag()

    def wait_until(self, sched: Scheduler, t: int, wakeup: Wakeup) -> bool:
        """Wait for physical time ``t`` on the sockets too, so that what the RTI and the
        peers send is handled while this federate waits (a stop request answered at once,
        not after the tag it waits for). Returns False, for the scheduler to ask
        :meth:`acquire` again, when ``wakeup`` is set or what arrived changed the next
        event, the stop tag or the stop limit; True at ``t``. One clock read a wakeup; the
        last fraction of a millisecond (what a poll's timeout cannot measure) is waited
        on the clock alone."""
        wake = self._wake
        if wake is None or wake.event is not wakeup:
            assert self._poller is not None
            wake = self._wake = WakeSource(wakeup)
            self._poller.add(wake)
        core = self.core
        clock = self.clock
        head, stop, limit = sched.next_event_tag(), sched.stop_tag, core.stop_limit
        barrier = core.member_limit  # (a membership round that begins meanwhile holds the tag back)
        self._woken = False
        while True:
            if wakeup.is_set() or self._woken:
                wakeup.clear()
                return False
            now = clock.now()
            ms = (t - now) // 1_000_000
            if ms <= 0:
                return t <= now or clock.wait_until(t, wakeup)
            self._pump(sched, ms if ms < 100 else 100, now)  # 100 ms: the liveness check's pace
            if (sched.next_event_tag() != head or sched.stop_tag != stop or core.stop_limit != limit
                    or core.member_limit != barrier):
                return False
            if core.outbox:
                self._send(core.outbox)

    def at_level(self, sched: Scheduler, level: int) -> None:
        tag = sched.current_tag
        core = self.core
        self._outputs.send_cyclic(tag, core.outputs_due(tag, level))
        if tag <= core.grant:
            return  # a full grant: every input of this tag is already here
        inb = self._inbound
        inb.mid_tag = True
        try:
            while not core.inputs_ready(tag, level):
                self._pump(sched, 100, self.clock.now())
        finally:
            inb.mid_tag = False

    def completed(self, sched: Scheduler, tag: TagT, next_tag: TagT | None) -> None:
        core = self.core
        core.completed(tag, next_tag, sched.stop_tag, self.clock.now())
        if core.outbox:
            self._send(core.outbox)
        if core.ltc_pending is None or self._out.holds_payloads():
            self._out.flush()
        # else: running ahead with its report held back, this federate holds back its small
        # items too (peers cannot use them before the promise in that report; each send
        # costs a wakeup of ZeroMQ's I/O thread): they leave with the report, within the
        # core's batching interval. No pump here: acquire, which the scheduler calls next,
        # begins with one.

    def stop_requested(self, sched: Scheduler, tag: TagT) -> TagT:
        core = self.core
        core.request_stop(tag, sched.next_event_tag(), sched.current_tag, self.clock.now())
        self._send(core.outbox)
        self._out.flush()
        deadline = self.clock.now() + self.cfg.join_timeout_ns
        while core.stop_granted is None:
            if self.clock.now() > deadline:
                raise FederationError("the RTI did not agree on a stop tag in time")
            self._pump(sched, 100, self.clock.now())
        return core.stop_granted

    def finish(self, sched: Scheduler, error: BaseException | None) -> None:
        """Resign (or report the failure) and close every socket."""
        try:
            if self._rti is not None:
                if error is None:
                    if self._live is not None:
                        self._live.resigned = True  # the RTI may end, and close, once all resigned
                    self.core.resign(sched.current_tag)
                    self._send(self.core.outbox)
                    self._out.flush()
                    if self._poller is not None and self._port is not None and self._live is not None:
                        await_release(self.name, self._rti, self._poller, self._port, self._live, self.clock,
                                      self.cfg.join_timeout_ns)
                elif not isinstance(error, FederationError) or isinstance(error, LinkDownError | SendError):
                    # what only this federate knows (the RTI's own verdicts it need not hear)
                    self._rti.send([P.Fail(f"{type(error).__name__}: {error}"[:2000]).pack()])
                time.sleep(0.05)  # let the last message leave before the socket closes
        finally:
            if self._hb is not None:
                self._hb.stop()
                self._hb.close_unstarted()
            # After a clean resignation, what is still queued for peers (a fast sender's
            # last payloads) and the RTI must arrive: close with a bounded linger.
            linger = self.cfg.liveness_ns // 1_000_000 if error is None else 0
            for s in (self._rti, *self._clients.values()):
                if s is not None:
                    s.close(linger)
            if self._port is not None:
                self._port.close()
            if self._poller is not None:
                self._poller.close()
            self._close_shm(error is None)

    def _close_shm(self, drain: bool) -> None:
        if self.shm_messages:
            log.info("%d of %d payloads went through shared memory", self.shm_messages, self.messages_sent)
        self._out.close_rings(self.cfg.liveness_ns if drain else 0)
        self._inbound.close()

    @property
    def messages_sent(self) -> int:
        """Data messages sent to peers."""
        return self._outputs.messages_sent

    @property
    def bytes_sent(self) -> int:
        """Payload bytes sent to peers."""
        return self._outputs.bytes_sent

    @property
    def shm_messages(self) -> int:
        """Payloads sent through shared memory."""
        return self._out.shm_payloads

    @property
    def messages_received(self) -> int:
        """Data messages received from peers."""
        return self.core.messages_received

    @property
    def local_grants(self) -> int:
        """Grants taken from upstream peers' promises."""
        return self.core.local_grants

    @property
    def rejected_messages(self) -> int:
        """Messages dropped as malformed or unauthenticated: from the RTI and at the data
        port (a Unix socket connection that sent what is not a message counts as one, and
        so does a message in pieces the transport could not put together)."""
        port = self._port
        local = port.local if port is not None else None
        return (self._rti_rejected + self._inbound.rejected + (local.dropped if local is not None else 0)
                + (port.tcp.dropped if port is not None else 0))

    @property
    def data_port(self) -> DataPort | None:
        """Where the upstream peers connect (its TCP endpoint, its Unix socket), once open."""
        return self._port

    @property
    def authenticated_upstream(self) -> list[int]:
        """The upstream peers authenticated on their data connections, sorted."""
        return self._inbound.authenticated

    @property
    def unix_links(self) -> int:
        """Downstream peers this federate sends to over their Unix sockets (not TCP)."""
        return sum(isinstance(c, LocalClient) for c in self._clients.values())

    # -- sending ---------------------------------------------------------------------
    def _send(self, outbox: list[Message]) -> None:
        """Send what the core queued, in order, and empty its queue: promises go into the
        peers' batches (they leave at the next flush), the rest to the RTI at once."""
        rti = self._rti
        assert rti is not None
        members = self._members
        for m in outbox:
            if isinstance(m, (P.Promise, P.StopMark)):
                if self._tracer is not None:
                    for d in self._downstream:
                        self._tracer.record(PROMISE, m.tag, self.layout.names[d])
                if members is None:
                    self._out.post_all(m.item())
                else:  # only to the peers present (an absent slot may have no link at all)
                    item = m.item()
                    for d in members.promise_peers(self._downstream, m.tag):
                        self._out.post(d, item)
            else:
                try:
                    rti.send([m.pack()])
                except TransportError as e:  # the RTI's word, if it said why (an ABORT), else this
                    assert self._live is not None
                    raise FederationError(self._live.lost(self.clock.now()) or f"lost the RTI: {e}") from None
        outbox.clear()

    def _report_held(self) -> None:
        """Report a completed tag held back now: a receiver may need it (the outbound side
        is about to wait for a peer)."""
        core = self.core
        core.report_held(self.clock.now())
        if core.outbox:
            self._send(core.outbox)

    # -- receiving -------------------------------------------------------------------
    def _pump(self, sched: Scheduler, timeout_ms: int, now: int) -> None:
        """Handle what arrived, waiting up to ``timeout_ms`` for the first message (``now``:
        the clock, read just before). Runs at every wait: kept in one piece for speed."""
        port = self._port
        assert self._poller is not None and self._rti is not None and port is not None
        live = self._live
        assert live is not None
        if timeout_ms:
            self._out.flush()  # nothing may wait in a batch while this federate waits
        lost = live.lost(now)
        if lost is not None:
            raise FederationError(lost)
        if self._members is not None and self._members.leave_asked:
            req = self._members.take_request()
            if req is not None:
                self._rti.send([req])
        ready = self._poller.wait(timeout_ms)
        if not ready:
            return
        wake = self._wake
        if wake is not None and wake in ready:
            # A physical action or a stop from another thread: the scheduler takes it once
            # this federate stops waiting (wait_until returns at once; acquire, as before,
            # once the tag is granted). Cleared so that the poller does not wake at once again.
            wake.event.clear()
            self._woken = True
        # Read only the sockets the poll reported (a read that finds nothing costs an
        # exception); what arrives meanwhile on the other is read at the next pump.
        if self._rti in ready:
            while True:
                frames = self._rti.recv()
                if frames is None:
                    break
                live.heard_data = self.clock.now()
                self._on_rti(sched, frames)
        inb = self._inbound
        local = port.local
        if local is not None and local in ready:
            q = local.received()  # one bounded read of each connection
            on_data = inb.on_data
            while q:
                peer, frames = q.popleft()
                on_data(sched, peer, frames)
            inb.newly_authed = None  # a Unix socket: the process's end is the RTI's to see
        data = port.tcp
        if data in ready:
            # Bounded, so that a flood on the data port cannot hold the scheduler here:
            # what is left is read at the next pump.
            until = self.clock.now() + _DATA_SLICE_NS
            recv, on_data = data.recv, inb.on_data
            for i in range(1, 1 << 30):
                got = recv()
                if got is None:
                    break
                on_data(sched, got[0], got[1])
                if inb.newly_authed is not None:
                    port.authenticated(inb.newly_authed)
                    inb.newly_authed = None
                if i % 64 == 0 and self.clock.now() > until:
                    break
        if port.monitor in ready:
            port.closed(now, self.core.finished)
        if port.down or port.opening:
            port.judge(now, self.core.finished, self.name, self.core.failed_peers)
        core = self.core
        if core.promises_in:
            core.grant_from_promises()
            if not inb.mid_tag and core.passes_promises:
                # A federate with nothing to do passes its upstream's progress on. Its
                # next event: the head of its queue now (what just arrived included).
                core.pass_on(sched.next_event_tag(), sched.stop_tag, sched.current_tag)
                if core.outbox:
                    self._send(core.outbox)
                if timeout_ms:
                    self._out.flush()

    def _on_rti(self, sched: Scheduler, frames: list[memoryview]) -> None:
        try:
            msg = P.parse(frames[0], self._from_rti)
        except P.ProtocolError as e:
            self._rti_rejected += 1
            log.warning("ignoring a bad message from the RTI: %s", e)
            return
        core = self.core
        if isinstance(msg, P.Tag):
            core.on_tag(msg.tag, msg.counts)
        elif isinstance(msg, P.Ptag):
            core.on_ptag(msg.tag, msg.counts)
        elif isinstance(msg, P.StopRequest):
            core.on_stop_request(msg.tag, sched.current_tag)
            self._send(core.outbox)
            self._out.flush()  # the Mark: a peer may wait for it at the stop tag
        elif isinstance(msg, P.StopGranted):
            sched.lower_stop_tag(core.on_stop_granted(msg.tag), "stop requested")
        elif isinstance(msg, P.Abort):
            raise FederationError(f"the federation was aborted: {msg.reason}")
        elif isinstance(msg, P.Reject):
            raise FederationError(f"the RTI dropped federate {self.name}: {msg.reason}")
        elif self._members is not None:
            try:
                self._members.on_message(sched, msg)
            except P.ProtocolError as e:  # (it names what is not there)
                self._rti_rejected += 1
                log.warning("ignoring a bad message from the RTI: %s", e)
            if core.outbox:
                self._send(core.outbox)  # (a QUERY_REPLY)

    def _ring_token(self, src: int, dst: int) -> bytes:
        """The token of the shared-memory ring from federate ``src`` to ``dst``."""
        return P.mac(self.cfg.secret, "shm", self.session, src, dst)


_FROM_RTI = P.FROM_RTI
