"""A federate: one part of a federated program, coordinated by the RTI.

:class:`FederateCoordinator` plugs into the scheduler (see
:class:`reactorfed.scheduler.Coordinator`). It joins the RTI (HMAC challenge-response),
agrees on the start time, asks for tag grants when it has upstream federates, sends its
outputs peer to peer, receives its inputs, and reports each completed tag. A heartbeat
thread keeps the RTI informed that this process is alive, and notices when the RTI is
not.

Joining is in :mod:`.join`; the data plane's two sides are in :mod:`.outbound` and
:mod:`.inbound`.

The receiver never processes a tag before everything sent to it for that tag has
arrived: every report to the RTI carries how many messages this federate has sent to
each peer, and every grant carries how many messages the grantee must have received
from each upstream peer before using it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..graph import Program
from ..scheduler import Scheduler
from ..tag import FOREVER, FOREVER_TAG, NEVER
from ..trigger import Slot
from . import protocol as P
from .codec import CodecError, encode
from .errors import FederationError
from .heartbeat import Heartbeat
from .inbound import Inbound
from .join import colocated, join
from .layout import Layout, Link, add_delay, link_delay
from .local import LocalClient, LocalServer, split_endpoint, with_local
from .outbound import Outbound
from .rti import FOREVER_T, pred
from .transport import Client, Poller, Server

__all__ = ["FederateConfig", "FederateCoordinator", "FederationError"]

log = logging.getLogger("reactorfed.federate")

TagT = tuple[int, int]
#: While a federate runs through tags it may already process, it reports completed tags
#: (LTC) at most this often; it reports at once when it is about to wait.
_LTC_BATCH_NS = 3_000_000
#: the longest one pump spends reading the data port
_DATA_SLICE_NS = 20_000_000
#: With peer-assisted grants, the RTI's copy of the reports (its grants are then a
#: backstop, and it serves status, metrics and stop agreement) goes at most this often.
#: Every report is a message the RTI answers: with 5 federates stepping a closed loop,
#: 50 ms instead of 10 gave ~5% more steps/s (4-agent inference, 3 alternating runs).
_RTI_REPORT_NS = 50_000_000


@dataclass
class FederateConfig:
    federation_id: str
    secret: bytes
    rti: str  # tcp://host:port
    bind_host: str = "127.0.0.1"
    advertise_host: str | None = None
    heartbeat_ns: int = 200_000_000
    liveness_ns: int = 3_000_000_000
    join_timeout_ns: int = 60_000_000_000
    trusted_pickle: bool = False
    max_message: int = 1 << 30
    #: Also tell downstream peers directly the earliest tag this federate could still send
    #: them (a promise, on the data link), so that they advance without waiting for the
    #: RTI's grants (see "Peer promises" in docs/federation.md).
    peer_grants: bool = True
    #: Large numpy/torch payloads to a peer on this host go through a shared-memory ring
    #: (one per peer, made at the first such payload: 4 times its size, at least 8 MiB, at
    #: most this many bytes); 0: never.
    shm_bytes: int = 256 << 20
    #: payloads smaller than this go inline (the notice costs a message either way)
    shm_min: int = 16 << 10
    #: Data to a peer on this host goes over a Unix socket, sent and read by the federates'
    #: own threads, instead of ZeroMQ over TCP (see :mod:`.local`); False: always TCP.
    unix_sockets: bool = True


class _Out:
    __slots__ = ("delay", "last", "link", "slot")

    def __init__(self, link: Link, slot: Slot) -> None:
        self.link = link
        self.slot = slot
        self.delay = link_delay(link.delay)
        #: the tag of the last message sent on the link (see _send_outputs)
        self.last: TagT = (NEVER, 0)


class FederateCoordinator:
    def __init__(self, program: Program, layout: Layout, cfg: FederateConfig, clock: Clock) -> None:
        assert program.federate is not None
        self.program = program
        self.layout = layout
        self.cfg = cfg
        self.clock = clock
        self.name = program.federate
        self.me = layout.index(program.federate)
        self.has_upstream = bool(layout.upstream(self.me))
        self.has_downstream = bool(layout.downstream(self.me))
        self.grant: TagT = (NEVER, 0)
        self.ptag: TagT | None = None
        self.required: dict[int, int] = {}
        self._counts_met = True  # see _counts_ok
        self._inbound = Inbound(program, layout, self.me, secret=cfg.secret, trusted_pickle=cfg.trusted_pickle,
                                ring_token=self._ring_token)
        self.received = self._inbound.received  # the same dict: reports carry the counts without a lookup
        # per downstream peer: [messages sent, earliest tag sent since the last report]
        self.sent: dict[int, list[int]] = {d: [0, FOREVER, 0] for d in layout.downstream(self.me)}
        self._net: TagT = (NEVER, 0)
        self._rti_dirty = False  # a report the RTI has not had yet
        self._last_rti_report = 0
        #: the latest NET reported, and the messages received when it was (see _report_net)
        self.reported: tuple[TagT, int] = ((NEVER, 0), -1)
        self.stop_limit: TagT | None = None  # agreed not to pass this until STOP_GRANTED
        self.stop_granted: TagT | None = None
        self.start: int = 0
        self.session = b""
        self.peers: dict[int, str] = {}
        self._outs: list[_Out] = []
        self._cyclic_outs: list[tuple[int, _Out]] = []  # (send after this level, out)
        self._cyclic_ins: list[tuple[int, int]] = []  # (needed before this level, link id)
        self._sent_this_tag: set[int] = set()
        self._next_look = 0  # federates without upstream: when to look for messages next
        self._rti: Client | None = None
        self._data: Server | None = None
        self._local: LocalServer | None = None
        self._clients: dict[int, Client | LocalClient] = {}
        self._poller: Poller | None = None
        self._hb: Heartbeat | None = None
        self._last_rti = 0
        self._last_progress = 0
        self._ltc_pending: TagT | None = None  # a completed tag not yet reported (see completed)
        self._rti_rejected = 0  # bad messages from the RTI (the inbound side counts the data port's)
        self.messages_sent = 0
        self.bytes_sent = 0
        # Peer promises (null messages, as in Chandy and Misra's conservative simulation):
        # each federate tells its downstream peers the earliest tag it could still send
        # them, from its own next event and its upstream peers' promises. A federate may
        # process every tag before the earliest promise on its inputs (FIFO links: what was
        # sent before a promise has arrived). Around a zero-delay cycle promises cannot
        # advance, and the RTI's grants (PTAG) do that; the RTI's grants still come for
        # everyone, and whichever comes first is used. Promises received: see Inbound.
        self._promised_out: TagT = (NEVER, 0)  # the latest promise this federate made
        self._in_zero_cycle = len(layout.scc[self.me]) > 1
        self._ltc: TagT = (NEVER, 0)
        self.local_grants = 0
        self._out = Outbound(self._clients, sorted(layout.downstream(self.me)), layout.names, clock,
                             shm_bytes=cfg.shm_bytes, shm_min=cfg.shm_min, before_wait=self._send_held_report)

    # -- joining ---------------------------------------------------------------------
    def start_time(self, proposed: int) -> int:
        cfg = self.cfg
        self._data = Server(f"tcp://{cfg.bind_host}:0", max_message=cfg.max_message)
        port = self._data.endpoint.rsplit(":", 1)[1]
        endpoint = f"tcp://{cfg.advertise_host or cfg.bind_host}:{port}"
        advertised = endpoint
        if cfg.unix_sockets and self.layout.upstream(self.me):
            try:
                self._local = LocalServer(max_message=cfg.max_message)
            except OSError as e:
                log.warning("no Unix socket for peers on this host (%s): they send over TCP", e)
            else:
                advertised = with_local(endpoint, self._local.path)
        self._rti = Client(cfg.rti, max_message=P.RTI_MAX_MESSAGE)
        _, self.start, peers, self.session, index = join(self._rti, cfg, self.name, self.layout.digest, advertised,
                                                         self.clock)
        if index != self.me:
            raise FederationError(f"the RTI numbers this federate {index}, the program says {self.me}: different programs?")
        split = {d: split_endpoint(ep) for d, ep in peers.items()}
        self.peers = {d: tcp for d, (tcp, _) in split.items()}
        self._out.colocated = colocated(endpoint, self.peers)
        self._out.ring_token = lambda d: self._ring_token(self.me, d)
        self._inbound.begin(self.session, int(self.start))
        for d in self.layout.downstream(self.me):
            if d not in peers:
                raise FederationError(f"the RTI sent no address for federate {self.layout.names[d]}")
            c = self._connect(d, *split[d])
            c.send([P.pack(P.AUTH, self.me, P.mac(cfg.secret, "data", self.session, self.me, d))])
            self._clients[d] = c
        self._poller = Poller(self._rti, self._data)
        if self._local is not None:
            self._poller.add(self._local)
        for c in self._clients.values():
            if isinstance(c, LocalClient):
                self._poller.add_sender(c)
        self._last_rti = self.clock.now()
        self._hb = Heartbeat(self)
        self._hb.start()
        return int(self.start)

    def _connect(self, d: int, tcp: str, path: str | None) -> Client | LocalClient:
        """The data link to peer ``d``: its Unix socket if it is on this host and has one
        this process can reach (another pod's path does not exist here), else TCP."""
        if path is not None and self.cfg.unix_sockets and d in self._out.colocated:
            try:
                return LocalClient(path)
            except OSError as e:
                log.debug("sending to %s over TCP: its Unix socket %s: %s", self.layout.names[d], path, e)
        return Client(tcp, max_message=self.cfg.max_message)

    def install(self, sched: Scheduler) -> None:
        """Prepare the scheduler: output senders and, for zero-delay cycles, checkpoints."""
        levels_writing: dict[int, int] = {}
        for rx in self.program.reactions:
            for e in rx.effects:
                slot = getattr(e, "_slot", None)
                if slot is not None:
                    levels_writing[id(slot)] = max(levels_writing.get(id(slot), -1), rx.level)
        for lk in self.layout.links:
            if lk.src != self.me:
                continue
            out = _Out(lk, self.program.links[lk.id].src._slot)
            if self.layout.cyclic(lk):
                self._cyclic_outs.append((levels_writing.get(id(out.slot), -1) + 1, out))
            else:
                self._outs.append(out)
        for lk in self.layout.links:
            if lk.dst == self.me and self.layout.cyclic(lk):
                slot = self.program.links[lk.id].dst._slot
                need = min((rx.level for rx in slot.reactions), default=None)
                if need is not None:
                    self._cyclic_ins.append((need, lk.id))
        sched.checkpoints = sorted({lvl for lvl, _ in self._cyclic_outs} | {lvl for lvl, _ in self._cyclic_ins})
        if self._outs:
            sched.tag_hooks.append(self._send_outputs)

    # -- the scheduler's hooks ------------------------------------------------------------
    def acquire(self, sched: Scheduler, head: TagT | None) -> TagT | None:
        clock = self.clock
        now = clock.now()
        while True:
            # Look for messages every 1 ms, not at every tag (a poll costs more than a small
            # tag): a tag already granted needs nothing more (whatever was sent for it was
            # read before the promise or counted in the grant), and a federate that must
            # wait reads as it waits, below.
            if now >= self._next_look:
                self._next_look = now + 1_000_000
                self._pump(sched, 0, now)
            head = sched.next_event_tag()
            stop = sched.stop_tag
            if stop != FOREVER_TAG and (head is None or head > stop):
                head = stop  # the stop tag is processed (shutdown) once it is safe
            limit = self.stop_limit
            if limit is not None and self.stop_granted is None and (head is None or head > limit):
                pass  # wait for the stop to be agreed before going past it
            elif not self.has_upstream:
                if self._rti_dirty:
                    self._rti_report_wait(now)
                return head
            elif head is not None:
                if (head <= self.grant or head == self.ptag) and self._counts_ok():
                    return head
            elif self.grant >= FOREVER_TAG and self._counts_ok():
                return None
            if self._ltc_pending is not None:
                self._flush_ltc(head)
            self._report_net(head, now)
            self._pump(sched, self._rti_report_wait(now), now)
            now = clock.now()
            self._next_look = now + 1_000_000  # it just looked

    def at_level(self, sched: Scheduler, level: int) -> None:
        tag = sched.current_tag
        for lvl, out in self._cyclic_outs:
            if lvl <= level and out.link.id not in self._sent_this_tag:
                self._sent_this_tag.add(out.link.id)
                if out.slot.present:
                    self._send_data(out, tag, out.slot.value)
                else:
                    self._out.post(out.link.dst, [P.ABSENT, out.link.id, tag[0], tag[1]])
        if self._cyclic_outs:
            self._out.flush()  # peers in the cycle wait for these within this tag
        if tag <= self.grant:
            return  # a full grant: every input of this tag is already here
        inb = self._inbound
        inb.mid_tag = True
        try:
            for need, lid in self._cyclic_ins:
                if need > level:
                    continue
                while inb.status.get(lid, (NEVER, 0)) < tag and tag > self.grant:
                    self._pump(sched, 100, self.clock.now())
            while not self._counts_ok():
                self._pump(sched, 100, self.clock.now())
        finally:
            inb.mid_tag = False

    def completed(self, sched: Scheduler, tag: TagT, next_tag: TagT | None) -> None:
        self._sent_this_tag.clear()
        net = next_tag if next_tag is not None else FOREVER_TAG
        if sched.stop_tag != FOREVER_TAG and net > sched.stop_tag:
            net = sched.stop_tag if tag < sched.stop_tag else FOREVER_TAG
        now = self.clock.now()
        if self.has_downstream or self.stop_limit is not None or now - self._last_progress > 100_000_000:
            if self.has_downstream and now - self._last_progress < _LTC_BATCH_NS and self._goes_on(sched, net, now):
                # The next tag may be processed at once: report this one later, with the
                # tags that follow (one LTC, one grant downstream, for a run of tags). Only
                # a report is delayed, so downstream grants come later, never wrong.
                self._ltc_pending = tag
            else:
                self._send_ltc(tag, net, now)
        if self._ltc_pending is None or self._out.holds_payloads():
            self._out.flush()
        # else: running ahead with its report held back, this federate holds back its small
        # items too (peers cannot use them before the promise in that report; each send
        # costs a wakeup of ZeroMQ's I/O thread): they leave with the report, within _LTC_BATCH_NS.
        # No pump here: acquire, which the scheduler calls next, begins with one.

    def _goes_on(self, sched: Scheduler, net: TagT, now: int) -> bool:
        """Whether ``net``, the next tag, will be processed without waiting for anything."""
        return (
            net < FOREVER_TAG
            and self.stop_limit is None
            and not self._cyclic_outs
            and not self._cyclic_ins
            and (sched.fast or net[0] <= now)
            and (not self.has_upstream or (net <= self.grant and self._counts_ok()))
        )

    def _send_ltc(self, tag: TagT, net: TagT, now: int) -> None:
        self._last_progress = now
        self._ltc_pending = None
        if tag > self._ltc:
            self._ltc = tag
        self._report(net, now)

    def _report(self, net: TagT, now: int) -> None:
        """Report the latest tag complete and ``net``: a promise to the peers at once; to
        the RTI at once or, where promises advance this federate's peers (outside zero-delay
        cycles), at most every ``_RTI_REPORT_NS``: the RTI then serves as the backstop."""
        self._net = net
        self.reported = (net, self._inbound.messages_received)
        self._rti_dirty = True
        if (not self.cfg.peer_grants or self._in_zero_cycle or self.stop_limit is not None
                or now - self._last_rti_report >= _RTI_REPORT_NS):
            self._flush_rti(now)
        if self.cfg.peer_grants:
            self._promise(net)

    def _flush_rti(self, now: int) -> None:
        if not self._rti_dirty:
            return
        assert self._rti is not None
        self._rti_dirty = False
        self._last_rti_report = now
        ltc, net = self._ltc, self._net
        self._rti.send([P.pack(P.LTC, ltc[0], ltc[1], net[0], net[1], self._sent_report(), self.received)])

    def _rti_report_wait(self, now: int) -> int:
        """Send the RTI's report if it is due; how long (ms) a pump may wait meanwhile."""
        if not self._rti_dirty:
            return 100
        due = self._last_rti_report + _RTI_REPORT_NS
        if now >= due:
            self._flush_rti(now)
            return 100
        return max(1, (due - now) // 1_000_000)

    def _flush_ltc(self, head: TagT | None) -> None:
        """Report a delayed LTC before waiting."""
        if self._ltc_pending is not None:
            self._send_ltc(self._ltc_pending, head if head is not None else FOREVER_TAG, self.clock.now())

    def stop_requested(self, sched: Scheduler, tag: TagT) -> TagT:
        assert self._rti is not None
        self._flush_ltc(sched.next_event_tag())
        self._flush_rti(self.clock.now())
        self._out.flush()
        self._rti.send([P.pack(P.STOP_REQ, tag[0], tag[1])])
        self.stop_limit = tag if self.stop_limit is None else max(tag, self.stop_limit)
        deadline = self.clock.now() + self.cfg.join_timeout_ns
        while self.stop_granted is None:
            if self.clock.now() > deadline:
                raise FederationError("the RTI did not agree on a stop tag in time")
            self._pump(sched, 100, self.clock.now())
        return self.stop_granted

    def finish(self, sched: Scheduler, error: BaseException | None) -> None:
        """Resign (or report the failure) and close every socket."""
        try:
            if self._rti is not None:
                if error is None:
                    t, m = sched.current_tag
                    self._rti.send([P.pack(P.RESIGN, t, m, self._sent_report(), self.received)])
                    if self.cfg.peer_grants:
                        self._promise(FOREVER_T, resigned=True)
                    self._out.flush()
                elif not isinstance(error, FederationError):
                    self._rti.send([P.pack(P.FAIL, f"{type(error).__name__}: {error}"[:2000])])
                time.sleep(0.05)  # let the last message leave before the socket closes
        finally:
            if self._hb is not None:
                self._hb.stop()
            # After a clean resignation, what is still queued for peers (a fast sender's
            # last payloads) and the RTI must arrive: close with a bounded linger.
            linger = self.cfg.liveness_ns // 1_000_000 if error is None else 0
            for s in (self._rti, *self._clients.values()):
                if s is not None:
                    s.close(linger)
            if self._data is not None:
                self._data.close()
            if self._local is not None:
                self._local.close()
            if self._poller is not None:
                self._poller.close()
            self._close_shm(error is None)

    def _close_shm(self, drain: bool) -> None:
        if self.shm_messages:
            log.info("%d of %d payloads went through shared memory", self.shm_messages, self.messages_sent)
        self._out.close_rings(self.cfg.liveness_ns if drain else 0)
        self._inbound.close()

    @property
    def shm_messages(self) -> int:
        """Payloads sent through shared memory."""
        return self._out.shm_payloads

    @property
    def messages_received(self) -> int:
        """Data messages received from peers."""
        return self._inbound.messages_received

    @property
    def rejected_messages(self) -> int:
        """Messages dropped as malformed or unauthenticated: from the RTI and at the data
        port (a Unix socket connection that sent what is not a message counts as one)."""
        return self._rti_rejected + self._inbound.rejected + (self._local.dropped if self._local is not None else 0)

    @property
    def unix_links(self) -> int:
        """Downstream peers this federate sends to over their Unix sockets (not TCP)."""
        return sum(isinstance(c, LocalClient) for c in self._clients.values())

    # -- sending ---------------------------------------------------------------------
    def _send_outputs(self, tag: TagT, _set: list[Slot]) -> None:
        for out in self._outs:
            if out.slot.present:
                sent = add_delay(tag, out.delay)
                last = out.last
                if sent <= last:
                    # A burst on an "after d" link (sent at (t, 0), (t, 1), ... all for
                    # (t + d, 0)): piled up in superdense time here, at the sender, as one
                    # process piles it up at the destination (Scheduler._post). The sender
                    # knows its own earlier sends on the link, so the exact tag goes on the
                    # wire, and the grants, promises and message counts computed from it
                    # stay exact. Tags on a link only grow, so the next free microstep is
                    # the one after the last.
                    sent = (last[0], last[1] + 1)
                out.last = sent
                self._send_data(out, sent, out.slot.value)

    def _send_data(self, out: _Out, tag: TagT, value: Any) -> None:
        try:
            codec, meta, frames = encode(value, self.cfg.trusted_pickle)
        except CodecError as e:
            raise FederationError(f"{out.link.src_port} -> {out.link.dst_port}: {e}") from e
        size = memoryview(frames[0]).nbytes if len(frames) == 1 else sum(memoryview(f).nbytes for f in frames)
        self._out.post_value(out.link.dst, out.link.id, tag, codec, meta, frames, size)
        s = self.sent[out.link.dst]
        s[0] += 1
        if tag[0] < s[1] or (tag[0] == s[1] and tag[1] < s[2]):
            s[1], s[2] = tag
        self.messages_sent += 1
        self.bytes_sent += size

    def _send_held_report(self) -> None:
        """Report a completed tag held back (see completed) now: a receiver may need it."""
        self._flush_ltc(self._ltc_pending)

    def _sent_report(self) -> dict[int, list[int]]:
        """What was sent, for the RTI: counts, and the earliest tags since its last report."""
        rep = {d: list(v) for d, v in self.sent.items()}
        for v in self.sent.values():
            v[1], v[2] = FOREVER, 0
        return rep

    def _report_net(self, head: TagT | None, now: int) -> None:
        if not self.has_downstream:
            # Nobody's grant depends on this federate's next event (a federate on a cycle
            # has downstream), nor does its own, outside a zero-delay cycle: no NET needed.
            return
        net = head if head is not None else FOREVER_TAG
        if net != self.reported[0] or self._inbound.messages_received != self.reported[1]:
            self._report(net, now)

    # -- peer promises -------------------------------------------------------------------
    def _promise(self, net: TagT, resigned: bool = False) -> None:
        """Promise the downstream peers nothing more before min(this federate's next event
        ``net``, the earliest input it could still get): every message it sends later has a
        tag at least that (plus the link's delay)."""
        if resigned:
            base = FOREVER_T
        else:
            ltc = self._ltc
            after = ltc if ltc[0] >= FOREVER else (ltc[0], ltc[1] + 1)
            nxt = net if net > after else after  # its next event: never before the tag after its last
            bound = self._inbound.input_bound()
            base = nxt if nxt < bound else bound
        if base > self._promised_out:
            self._promised_out = base
            self._out.post_all([P.PROMISE, base[0], base[1]])

    def _grant_from_promises(self) -> None:
        g = pred(self._inbound.input_bound())
        if g > self.grant:
            self.grant = g
            self.local_grants += 1

    # -- receiving -------------------------------------------------------------------
    def _counts_ok(self) -> bool:
        """Whether every message the grants require has arrived. Counts only grow: once
        met, they stay met until a grant requires more (see _require)."""
        if self._counts_met:
            return True
        rec = self.received
        for u, n in self.required.items():
            if rec.get(u, 0) < n:
                return False
        self._counts_met = True
        return True

    def _require(self, counts: dict[int, int]) -> None:
        """A grant's counts: the messages from each upstream peer to have before using it."""
        req = self.required
        for u, n in counts.items():
            if n > req.get(u, 0):
                req[u] = n
                self._counts_met = False

    def _pump(self, sched: Scheduler, timeout_ms: int, now: int) -> None:
        """Handle what arrived, waiting up to ``timeout_ms`` for the first message (``now``:
        the clock, read just before)."""
        assert self._poller is not None and self._rti is not None and self._data is not None
        if timeout_ms:
            self._out.flush()  # nothing may wait in a batch while this federate waits
        hb = self._hb
        if hb is not None:
            if hb.abort_reason is not None:
                raise FederationError(hb.abort_reason)
            heard = hb.last_seen if hb.last_seen > self._last_rti else self._last_rti
        else:
            heard = self._last_rti
        if now - heard > self.cfg.liveness_ns:
            raise FederationError(f"lost the RTI: nothing heard from {self.cfg.rti} for {self.cfg.liveness_ns // 1_000_000} ms")
        ready = self._poller.wait(timeout_ms)
        if not ready:
            return
        # Read only the sockets the poll reported (a read that finds nothing costs an
        # exception); what arrives meanwhile on the other is read at the next pump.
        if self._rti in ready:
            while True:
                frames = self._rti.recv()
                if frames is None:
                    break
                self._last_rti = self.clock.now()
                self._on_rti(sched, frames)
        inb = self._inbound
        local = self._local
        if local is not None and local in ready:
            q = local.received()  # one bounded read of each connection
            on_data = inb.on_data
            while q:
                peer, frames = q.popleft()
                on_data(sched, peer, frames)
        if self._data in ready:
            # Bounded, so that a flood on the data port cannot hold the scheduler here:
            # what is left is read at the next pump.
            until = self.clock.now() + _DATA_SLICE_NS
            recv, on_data = self._data.recv, inb.on_data
            for i in range(1, 1 << 30):
                got = recv()
                if got is None:
                    break
                on_data(sched, got[0], got[1])
                if i % 64 == 0 and self.clock.now() > until:
                    break
        if inb.promises_in:
            inb.promises_in = False
            self._grant_from_promises()
            if not inb.mid_tag and self.cfg.peer_grants and self.has_downstream:
                # A federate with nothing to do passes its upstream's progress on. Its
                # next event: the head of its queue now (what just arrived included).
                nxt = sched.next_event_tag()
                head: TagT = nxt if nxt is not None else FOREVER_T
                stop = sched.stop_tag
                self._promise(head if head <= stop else (stop[0], stop[1]))
                if timeout_ms:
                    self._out.flush()

    def _on_rti(self, sched: Scheduler, frames: list[memoryview]) -> None:
        try:
            msg = P.parse(frames[0], _FROM_RTI)
        except P.ProtocolError as e:
            self._rti_rejected += 1
            log.warning("ignoring a bad message from the RTI: %s", e)
            return
        kind = msg[0]
        if kind == P.TAG:
            tag = (msg[1], msg[2])
            if tag > self.grant:
                self.grant = tag
            self._require(msg[3])
        elif kind == P.PTAG:
            tag = (msg[1], msg[2])
            if self.ptag is None or tag > self.ptag:
                # A late PTAG (a peer-assisted grant came first) must not take back a newer one.
                self.ptag = tag
            self._require(msg[3])
        elif kind == P.STOP_REQUEST:
            cur = sched.current_tag
            reply = max((msg[1], msg[2]), (cur[0], cur[1] + 1) if cur[0] != NEVER else (self.start, 0))
            self.stop_limit = reply if self.stop_limit is None else max(reply, self.stop_limit)
            self._rti_send(P.pack(P.STOP_REPLY, reply[0], reply[1]))
        elif kind == P.STOP_GRANTED:
            g = (msg[1], msg[2])
            self.stop_granted = g
            sched.lower_stop_tag(g, "stop requested")
        elif kind == P.ABORT:
            raise FederationError(f"the federation was aborted: {msg[1]}")
        elif kind == P.REJECT:
            raise FederationError(f"the RTI dropped federate {self.name}: {msg[1]}")

    def _rti_send(self, data: bytes) -> None:
        assert self._rti is not None
        self._rti.send([data])

    def _ring_token(self, src: int, dst: int) -> bytes:
        """The token of the shared-memory ring from federate ``src`` to ``dst``."""
        return P.mac(self.cfg.secret, "shm", self.session, src, dst)


_FROM_RTI = frozenset({P.TAG, P.PTAG, P.STOP_REQUEST, P.STOP_GRANTED, P.ABORT, P.HEARTBEAT, P.REJECT})
