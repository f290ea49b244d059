"""A federate: one part of a federated program, coordinated by the RTI.

:class:`FederateCoordinator` plugs into the scheduler (see
:class:`reactorfed.execution.scheduler.Coordinator`) and does the federate's I/O: it joins the RTI
(:mod:`.join`), connects to its downstream peers (:mod:`.federate_links`), waits for
messages and decodes what the RTI sends (:mod:`.federate_receiver`: one poller over the
RTI link, the data port and the Unix socket), sends its outputs (:mod:`.outputs`, through
:mod:`.outbound`) and what its core queues (:mod:`.federate_sender`), hands what peers
send to :mod:`.inbound`, runs the heartbeat thread (:mod:`.heartbeat`, which also carries
the program's progress to the RTI), and closes
everything at the end. Every decision (grants, peer promises, when to report, zero-delay cycles, stop
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

from ...assembly.physical_paths import physical_output_delay
from ...assembly.program import Program
from ...execution.scheduler import Scheduler
from ...time.clock import Clock, Wakeup
from ...time.tag import TagT
from ..coordination.clock_sync import ClockSyncEstimator
from ..coordination.federate_core import WAIT, FederateCore
from ..coordination.layout import Layout
from ..errors import FederationError, LinkDownError, SendError
from ..io.transport import Client
from ..wire import protocol as P
from .clock_sync import FederateClockSync
from .federate_config import FederateConfig
from .federate_links import DownstreamLinks
from .federate_members import FROM_RTI_ELASTIC, FederateMembers
from .federate_receiver import Receiver
from .federate_sender import OutboxSender
from .heartbeat import Heartbeat, Liveness
from .inbound import Inbound
from .join import join
from .links import DataLink, DataPort
from .outbound import Outbound
from .outputs import Outputs
from .release import await_release

__all__ = ["FederateCoordinator", "FederationError"]

log = logging.getLogger("reactorfed.federate")


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
        self._next_look = 0  # when acquire looks for messages next, waiting or not
        #: the outputs and inputs on zero-delay cycles, (level, link id) each (see install)
        self._checkpoints: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
        #: the other inputs with an absent_after (waited for at their readers' level when decentralized)
        self._late_ins: list[tuple[int, int]] = []
        self._rti: Client | None = None
        self._port: DataPort | None = None  # where upstream peers connect (read by the receiver)
        self._live: Liveness | None = None
        self._hb: Heartbeat | None = None
        #: called once joined, in the thread that runs reactions, when every other thread
        #: of the federate exists (the runner lowers that thread's priority there)
        self.on_joined: list[Callable[[], None]] = []
        self._downstream = sorted(layout.downstream(self.me))
        clients: dict[int, DataLink] = {}
        tx: OutboxSender  # (the Outbound's wait calls it: made just below)
        data_only = sorted(layout.data_downstream(self.me) - set(self._downstream))  # (physical links only)
        self._out = Outbound(clients, self._downstream, layout.names, clock, shm_bytes=cfg.shm_bytes,
                             shm_min=cfg.shm_min, before_wait=lambda: tx.report_held(), data_only=data_only,
                             physical=frozenset(lk.id for lk in layout.physical if lk.src == self.me))
        self._outputs = Outputs(self.core, self._out, cfg)
        #: elastic banks only (issue 19): the membership messages, and what parses the RTI's
        self._members = FederateMembers(self.core, layout, self.name) if self.core.membership.presence.slots else None
        #: the parts: what sends the core's messages, what reads (and waits), the links downstream
        tx = self._tx = OutboxSender(self.core, self._out, self._downstream, layout.names, self._members, clock)
        self._send = tx.send  # (bound here: called at every tag)
        self._rx = Receiver(self.name, self.core, self._inbound, self._out, tx.send, self._members,
                            FROM_RTI_ELASTIC if self._members is not None else _FROM_RTI, clock)
        self._pump = self._rx.pump  # (bound here: called at every wait)
        self._links = DownstreamLinks(cfg, layout, self.me, self.core, clients, self._out)
        if self._members is not None:
            self._members.on_joiner = self._links.connect_joiner
        self._sched: Scheduler | None = None  # (install's: a joiner takes CHANGEs before the run)

    # -- joining ---------------------------------------------------------------------
    def start_time(self, proposed: int) -> int:
        """Open the data port, join the RTI, connect to the downstream peers, start the
        heartbeat; the federation's start time."""
        port = self._port = DataPort(self.cfg, self.layout, self.me)
        endpoint, advertised = port.addresses()
        # (watched from before it connects: with a key per member, a refusal of this
        # member's key may come before the join looks, and is retried: see join)
        self._rti = self._tx.rti = Client(self.cfg.rti, max_message=P.RTI_MAX_MESSAGE, curve=self.cfg.curve(),
                                          server_key=self.cfg.rti_key, watch=self.cfg.credentials is not None)
        cfg = self.cfg
        self._live = self._tx.live = Liveness(cfg.rti, cfg.liveness_ns, self.clock.now(), cfg.silence_ns)
        sync = FederateClockSync(self.clock, ClockSyncEstimator(cfg.clock_sync_exchanges, cfg.clock_sync_attenuation,
                                                                     cfg.clock_sync_guard_band_ns))
        self._hb = Heartbeat(self.name, cfg.heartbeat_ns, self._live, self.clock, curve=cfg.curve(), server_key=cfg.rti_key,
                             progress=self._sched.progress if self._sched is not None else None, sync=sync)
        joined = join(self._rti, self.cfg, self.name, self.layout.digest, advertised, self.clock, sync,
                      on_keys=port.learn_keys if cfg.credentials is not None else None)
        if joined.index != self.me:
            raise FederationError(f"the RTI numbers this federate {joined.index}, the program says {self.me}: "
                                  "different programs?")
        self.session = joined.session
        if joined.key_refused:  # (the heartbeat's connection was refused as well, and given up)
            self._hb.reconnect()
        if self.cfg.credentials is not None:
            self._inbound.key_check = port.key_refusal
        if self._members is not None:  # (before the core begins: the RTI's membership at the start)
            assert self._sched is not None
            self._members.begin(self._sched, joined.start, joined.absent, joined.join)
        self.core.begin(joined.start, joined.window)
        if joined.decentralized:
            assert self._sched is not None
            self.core.decentralize(self.layout)
            self._inbound.decentralized = True
            self._sched.enable_tardy()
            self._sched.fed_maxwait = self.core.maxwait
            if self._late_ins:
                # LF's absent_after: an input with one is waited for, up to the tag's time +
                # maxwait + its absent_after, before the first reaction that reads it (the
                # tag itself begins at its time + maxwait)
                self._sched.checkpoints = self._set_checkpoints(self._checkpoints[1] + self._late_ins)
        self._inbound.begin(self.session, cfg.mac_key(self.session))
        self._out.ring_token = lambda d: self._ring_token(self.me, d)
        self._links.connect(endpoint, self.session, joined.peers, port)
        self._links.poller = self._rx.open(self._rti, port, self._live, self._links.clients)
        self._start_heartbeat()
        if self._members is not None and self._members.joiner:
            rti, live, sched = self._rti, self._live, self._sched
            assert rti is not None and live is not None and sched is not None
            self._members.await_admit(rti, live, self.clock, self.cfg.join_timeout_ns,
                                      lambda frames: self._rx.on_rti(sched, frames))
        for hook in self.on_joined:
            hook()
        return joined.start

    @property
    def floor(self) -> int:
        """Physical time this federate promised no physical action comes before (see
        :class:`~reactorfed.execution.coordinator.Coordinator`)."""
        return self.core.reports.floor

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

    def _start_heartbeat(self) -> None:
        cfg = self.cfg
        nonce = os.urandom(16)
        hello = P.HbHello(cfg.federation_id, self.name, nonce,
                          P.mac(cfg.mac_key(self.session), "hb", self.session, self.name, nonce)).pack()
        assert self._hb is not None
        self._hb.begin(hello)

    def _set_checkpoints(self, ins: list[tuple[int, int]]) -> list[int]:
        """The scheduler's checkpoints for the outputs on zero-delay cycles and the inputs
        ``ins`` (waited for before their first reader)."""
        for level, lid in ins:
            self._inbound.read_level[lid] = level
        return self.core.checkpoints(self._checkpoints[0], ins)

    def install(self, sched: Scheduler) -> None:
        """Prepare the scheduler: output senders and, for zero-delay cycles, checkpoints."""
        program, layout, outputs, cfg = self.program, self.layout, self._outputs, self.cfg
        self._sched = sched
        self._tx.tracer = sched.tracer
        if sched.tracer is not None:  # (a traced run: messages and promises recorded)
            outputs.trace = (sched.tracer, layout.names)
            self._inbound.tracer = sched.tracer
        part = program.partition
        assert part is not None
        cyclic_outs = outputs.add_links(program, layout, self.me)
        cyclic_ins: list[tuple[int, int]] = []  # (needed before this level, link id)
        self._late_ins.clear()
        for lk in layout.links:
            # never one of its outputs: the two ends of a cyclic link differ (Layout.cyclic)
            if lk.dst == self.me and (layout.cyclic(lk) or lk.absent_after > 0):
                readers = program.readers_of(part.links[lk.id].dst)  # (sources too)
                if readers:
                    need = (min(rx.level for rx in readers), lk.id)
                    (cyclic_ins if layout.cyclic(lk) else self._late_ins).append(need)
        self.core.fast = sched.fast
        if (delay := physical_output_delay(program)) is not None:
            self.core.reports.bound_by_clock(delay, cfg.advance_message_interval_ns)
        # A federate with physical inputs (LF's ~>) waits for them, as LF's federates keep alive
        sched.awaits_arrivals = any(lk.dst == self.me for lk in layout.physical)
        self._checkpoints = (cyclic_outs, cyclic_ins)
        sched.checkpoints = self._set_checkpoints(cyclic_ins)
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
        # Look for messages at most every 1 ms (a poll costs more than a small tag), and
        # only before a tag granted at once: a federate that must wait reads as it waits,
        # so on a closed loop a look first would find nothing at every tag.
        look = now >= self._next_look
        members = self._members
        while True:
            if members is not None and core.membership.leaves is not None and members.gone(head):
                return head  # its leave: its last tag, where nothing of its own runs
            tag = core.acquire(head, sched.stop_tag, now)
            if core.outbox:
                self._send(core.outbox)
            if tag is not WAIT:
                if not look:
                    return tag
                self._pump(sched, 0, now)
            else:
                self._pump(sched, core.wait_ms, now)
                now = clock.now()
            look = False
            self._next_look = now + 1_000_000  # it just looked
            head = sched.next_event_tag()  # what arrived included: asked again

    def wait_until(self, sched: Scheduler, t: int, wakeup: Wakeup) -> bool:
        """Wait for physical time ``t`` on the sockets too (:meth:`.federate_receiver.Receiver.wait_until`)."""
        return self._rx.wait_until(sched, t, wakeup)

    def at_level(self, sched: Scheduler, level: int) -> None:
        tag = sched.current_tag
        core = self.core
        self._outputs.send_cyclic(tag, core.cycles.outputs_due(tag, level))
        if tag <= core.grant:
            return  # a full grant: every input of this tag is already here
        inb = self._inbound
        inb.mid_tag = True
        inb.mid_level = level
        mw = core.maxwait
        try:
            while not core.inputs_ready(tag, level, now := self.clock.now()):
                self._pump(sched, 100 if mw is None else mw.wait_ms(tag, now), now)
        finally:
            inb.mid_tag = False

    def completed(self, sched: Scheduler, tag: TagT, next_tag: TagT | None) -> None:
        core = self.core
        core.completed(tag, next_tag, sched.stop_tag, self.clock.now())
        self._rx.credit(tag)
        if core.outbox:
            self._send(core.outbox)
        if core.reports.pending is None or self._out.holds_payloads():
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
        while core.stop.granted is None:
            if self.clock.now() > deadline:
                raise FederationError("the RTI did not agree on a stop tag in time")
            self._pump(sched, 100, self.clock.now())
        return core.stop.granted

    def leave_requested(self, sched: Scheduler) -> None:
        self.request_leave()

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
                    poller = self._rx.poller
                    if poller is not None and self._port is not None and self._live is not None:
                        await_release(self.name, self._rti, poller, self._port, self._live, self.clock,
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
            for s in (self._rti, *self._links.clients.values()):
                if s is not None:
                    s.close(linger)
            if self._port is not None:
                self._port.close()
            if self._rx.poller is not None:
                self._rx.poller.close()
            self._close_shm(error is None)

    def _close_shm(self, drain: bool) -> None:
        if self.shm_messages:
            log.info("%d of %d payloads went through shared memory", self.shm_messages, self.messages_sent)
        self._out.close(self.cfg.liveness_ns if drain else 0)
        self._inbound.close()

    @property
    def flow_waits(self) -> int:
        """Waits for a downstream peer's credit (flow control on data links)."""
        return self._out.flow_waits

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
    def lead_waits(self) -> int:
        """How often this federate waited at the edge of its lead window."""
        return self.core.lead.waits

    @property
    def local_grants(self) -> int:
        """Grants taken from upstream peers' promises."""
        return self.core.local_grants

    @property
    def rejected_messages(self) -> int:
        """Messages dropped as malformed or unauthenticated: from the RTI, at the data port,
        back on the links to downstream peers (a Unix socket connection that sent what is not
        a message counts as one, and so does a message in pieces the transport could not join)."""
        port = self._port
        local = port.local if port is not None else None
        return (self._rx.rejected + self._inbound.rejected + self._out.rejected
                + (local.dropped if local is not None else 0)
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
        return self._links.unix_links

    def _ring_token(self, src: int, dst: int) -> bytes:
        """The token of the shared-memory ring from federate ``src`` to ``dst``."""
        return P.mac(self.cfg.mac_key(self.session), "shm", self.session, src, dst)


_FROM_RTI = P.FROM_RTI
