"""What a federate receives from its upstream peers: their data connections, the batches
that arrive on them, and the items in those batches, delivered to the scheduler.

Each upstream peer connects once per session and proves who it is (AUTH) before anything
else it sends is read. Its batches (see :mod:`.outbound`) carry data (inside the batch,
as a payload frame after it, or through a shared-memory ring the peer opened with
SHM_OPEN), absent ports of zero-delay cycles, and promises: the earliest tag the peer
could still send here (a STOP_MARK is a promise made knowing of a stop). Values go to the scheduler; what coordination needs (each message
counted, absent ports, promises) goes to the federate's :class:`..coordination.federate_core.FederateCore`.

The driver (:mod:`.federate`) calls :meth:`Inbound.on_data` for each message from its
data port.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ...assembly.program import Program
from ...execution.scheduler import Scheduler
from ...execution.tracing import Tracer
from ...model.trigger import Slot
from ...observe.trace.records import RECV
from ...time.tag import FOREVER_T, TagT
from ..coordination.federate_core import FederateCore
from ..coordination.flow import FLOW_MIN, CreditLedger
from ..coordination.layout import Layout
from ..errors import FederationError
from ..io.shm import ShmError, ShmReader
from ..wire import protocol as P
from ..wire.codec import CUSTOM, NUMPY, CodecError, decode, decode_custom, flat_array
from .throttle import Throttle

__all__ = ["Inbound"]

log = logging.getLogger("reactorfed.federate")

_DATA_KINDS = frozenset({P.DATA, P.DATA_INLINE, P.ABSENT, P.PROMISE, P.SHM_OPEN, P.SHM_DATA, P.STOP_MARK})
_AUTH_ONLY = frozenset({P.AUTH})
_METAS_MAX = 256


class Inbound:
    """The receiving side of one federate's data port (see the module docstring)."""

    def __init__(self, program: Program, layout: Layout, me: int, core: FederateCore, *, secret: bytes,
                 trusted_pickle: bool, ring_token: Callable[[int, int], bytes]) -> None:
        self._me = me
        # the core's methods, bound once (they run for every message)
        self._counted = core.on_data
        self._absent = core.cycles.on_absent
        self._promised = core.promises.on_promise
        self._marked = core.on_mark
        self._names = layout.names
        self._secret = secret
        self._session = b""  # set by begin
        self._trusted_pickle = trusted_pickle
        self._ring_token = ring_token  # (src, dst) -> the ring's token; the coordinator's, for one definition
        part = program.partition
        assert part is not None
        ins = [lk for lk in [*layout.links, *layout.physical] if lk.dst == me]
        self._in: dict[int, Slot] = {lk.id: program.slot_of(part.links[lk.id].dst) for lk in ins}
        self._in_links = {lk.id: lk for lk in ins}
        #: physical links in (LF's ``~>``): link id -> its delay (ns); what arrives on one is
        #: stamped here, at arrival, and not counted (no grant waits for it)
        self._physical = {lk.id: lk.delay or 0 for lk in ins if lk.physical}
        #: links with their own serializer (connect(..., serializer=...)): link id -> it
        self._serializers = {lk.id: s for lk in ins if (s := part.links[lk.id].serializer) is not None}
        #: links on a zero-delay cycle into an input no reaction here reads: this federate
        #: does not wait for them within a tag, so their values may come after it
        self._unread = frozenset(lk.id for lk in layout.links if lk.dst == me and layout.cyclic(lk)
                                 and not program.readers_of(part.links[lk.id].dst))
        self._tick = Slot(f"{part.federate}.<network tick>")  # an event with no reactions
        self._authed: dict[bytes, int] = {}  # connection -> the upstream peer it proved to be
        #: the upstream peer the last message authenticated, until the driver takes it (it
        #: knows which connection the message came over: see federate_receiver.Receiver.pump)
        self.newly_authed: int | None = None
        self._warn = Throttle(log)  # for what strangers send to the data port
        self._shm_in: dict[int, ShmReader] = {}
        self._upstream = frozenset(layout.data_upstream(me))  # the peers that may connect
        self._coordinated_up = frozenset(layout.direct_upstream(me))
        self._physical_up = frozenset(lk.src for lk in ins if lk.physical)
        self._physical_ended: set[int] = set()  # physical upstream peers whose last Mark came
        #: upstream elastic slots: each new process of one connects anew (its next incarnation)
        self._elastic = frozenset(f for g in layout.elastic for f in g.slots) & self._upstream
        self._peer_connected = core.peer_connected
        self._metas: dict[bytes, tuple[Any, tuple[np.dtype[Any], int] | None]] = {}  # see _meta
        self.rejected = 0  # data messages dropped as malformed or unauthenticated
        #: set by the driver inside a tag (at_level): a message for the current tag may still come
        self.mid_tag = False
        #: records each message received in a traced run
        self.tracer: Tracer | None = None
        #: decentralized coordination: a message for a tag passed is tardy, not an error
        self.decentralized = False
        #: cyclic input link -> the level of its first reader; the level the driver waits
        #: before (at_level): under decentralized coordination, a message for the current
        #: tag is on time only if its readers have not run
        self.read_level: dict[int, int] = {}
        self.mid_level = 0
        #: tardy messages received (decentralized coordination), and those dropped
        #: because they came after the stop tag
        self.tardy = 0
        self.dropped_late = 0
        #: why the TCP connection of the AUTH just read may not be the peer it claims (its
        #: key is another member's; :meth:`.links.DataPort.key_refusal`), None: it may
        self.key_check: Callable[[int], str | None] | None = None
        #: the messages being read came over a Unix socket (no key to check: see the docs)
        self.over_local = False
        #: large payloads over ZeroMQ not processed yet, for the senders' windows (see credits_due)
        self._ledger = CreditLedger()
        self._routes: dict[int, bytes] = {}  # upstream peer -> its connection (for its credits)

    @property
    def authenticated(self) -> list[int]:
        """The upstream peers that proved who they are, one per connection, sorted."""
        return sorted(self._authed.values())

    def begin(self, session: bytes, mac_key: bytes) -> None:
        """The federation started: ``mac_key`` keys the peers' proofs over ``session``."""
        self._session = session
        self._secret = mac_key

    def close(self) -> None:
        for r in self._shm_in.values():
            r.close()

    def credits_due(self, tag: TagT) -> list[bytes]:
        """Every tag up to ``tag`` is processed: the connections to send a CREDIT for it."""
        if not self._ledger.holding:
            return []
        return [self._routes[p] for p in self._ledger.processed(tag)]

    # -- per message ---------------------------------------------------------------------
    def on_data(self, sched: Scheduler, peer: bytes, frames: list[memoryview]) -> None:
        """One message from connection ``peer``: its AUTH, or a batch of items."""
        sender = self._authed.get(peer)
        f = frames[0]
        if sender is not None and len(frames) == 1 and P.is_compact(f):
            self._on_compact(sched, sender, f)
            return
        if sender is None:
            self._on_auth(peer, f)
            return
        try:
            items = P.parse_batch(f)
        except P.ProtocolError as e:
            self.rejected += 1
            log.debug("dropped a bad data message: %s", e)
            return
        i = 1  # the next payload frame
        for raw in items:
            try:
                item = P.check_item(raw, _DATA_KINDS)
            except P.ProtocolError as e:
                self.rejected += 1
                log.warning("dropped the rest of a batch from %s: %s", self._names[sender], e)
                return
            if type(item) is list:  # a data-plane item, positional (see protocol.parse_batch)
                kind = item[0]
                if kind == P.DATA:
                    if i >= len(frames):
                        self.rejected += 1
                        log.warning("dropped a DATA item without its payload from %s", self._names[sender])
                        return
                    frame = frames[i]
                    if frame.nbytes >= FLOW_MIN and not self.over_local and item[1] not in self._physical:
                        self._ledger.received(sender, (item[2], item[3]), frame.nbytes)
                        self._routes[sender] = peer
                    self._on_item(sched, sender, item, frame)
                    i += 1
                elif kind == P.DATA_INLINE:
                    self._on_item(sched, sender, item, item[6])
                else:
                    self._on_item(sched, sender, item, None)
            elif isinstance(item, P.Promise):
                self._promised(sender, item.tag)
            elif isinstance(item, P.StopMark):
                self._on_mark(sched, sender, item.tag)
            elif isinstance(item, P.ShmOpen):
                self._on_shm_open(sender, item.name)

    def _on_mark(self, sched: Scheduler, sender: int, tag: TagT) -> None:
        """A Mark: to the core from a coordinated upstream peer. A peer's last Mark (its end)
        also counts for the physical links: once every physical upstream peer has ended,
        this federate stops waiting for arrivals (Scheduler.awaits_arrivals)."""
        if sender in self._coordinated_up:
            self._marked(sender, tag)
        if tag >= FOREVER_T and sender in self._physical_up:
            self._physical_ended.add(sender)
            if self._physical_ended >= self._physical_up:
                sched.awaits_arrivals = False

    def _on_auth(self, peer: bytes, frame: memoryview) -> None:
        """The first message on a connection: the upstream peer's proof of who it is."""
        try:
            auth = P.parse(frame, _AUTH_ONLY)
        except P.ProtocolError as e:
            self.rejected += 1
            log.debug("dropped a bad data message: %s", e)
            return
        assert isinstance(auth, P.Auth)
        claimed = auth.sender
        again = claimed in self._authed.values()
        if (again and claimed not in self._elastic) or claimed not in self._upstream:
            # Each upstream peer connects once per session (an elastic slot once per process:
            # per incarnation), and a federate this one has no link from never sends it
            # data: a second AUTH is a replay.
            self.rejected += 1
            self._warn.warning("refused a data connection claiming to be federate %s: %s", claimed,
                        "it is already connected" if claimed in self._authed.values() else "it sends nothing here")
        elif (not self.over_local and self.key_check is not None
              and (why := self.key_check(claimed)) is not None):
            # (a key per member: a member's key opens its own links, and no other's)
            self.rejected += 1
            self._warn.warning("refused a data connection claiming to be federate %s: %s", self._names[claimed], why)
        elif P.mac_equal(auth.mac, P.mac(self._secret, "data", self._session, claimed, self._me)):
            self._authed[peer] = claimed
            self.newly_authed = claimed
            if claimed in self._elastic:  # (a new process for the slot: its next incarnation)
                self._peer_connected(claimed)
                self._ledger.forget(claimed)
                ring = self._shm_in.pop(claimed, None) if again else None
                if ring is not None:
                    ring.close()  # the last process's: the new one opens its own
        else:
            self.rejected += 1
            self._warn.warning("refused a data connection that failed authentication")

    def _on_compact(self, sched: Scheduler, sender: int, frame: memoryview) -> None:
        """A compact message (see :func:`.protocol.pack_compact`): a value, a promise, or both."""
        try:
            flags, link, t, m, codec, mb, payload, pt, pm = P.parse_compact(frame)
            entry = (self._metas.get(mb) or self._meta(mb)) if flags & 1 else None
        except P.ProtocolError as e:
            self.rejected += 1
            log.warning("dropped a message from %s: %s", self._names[sender], e)
            return
        if entry is not None:
            lk = self._link(sender, link)
            if lk is not None:
                meta, flat = entry
                if codec == NUMPY and flat is not None and len(payload) == flat[1]:
                    # an array header seen before: what decode would return, without its checks
                    value = np.frombuffer(payload, flat[0])
                    self._accept(sched, sender, lk, (t, m), value if value.flags.aligned else value.copy())
                else:
                    self._deliver(sched, sender, lk, (t, m), codec, meta, payload, True)
        if flags & 2:
            self._promised(sender, (pt, pm))

    def _meta(self, mb: bytes) -> tuple[Any, tuple[np.dtype[Any], int] | None]:
        """A compact message's meta from its bytes, with its array plan (see flat_array);
        kept for the next message with the same bytes (a few distinct ones recur)."""
        meta = P.compact_meta(mb)
        entry = (meta, flat_array(meta))
        if len(self._metas) < _METAS_MAX:
            self._metas[mb] = entry
        return entry

    def _link(self, sender: int, link: int) -> Any:
        """The link ``link`` into this federate, if ``sender`` is its source (else None, counted)."""
        lk = self._in_links.get(link)
        if lk is None or lk.src != sender:
            self.rejected += 1
            log.warning("dropped a message for link %s from %s", link, self._names[sender])
            return None
        return lk

    def _on_item(self, sched: Scheduler, sender: int, msg: list[Any], frame: Any) -> None:
        """A DATA, DATA_INLINE, SHM_DATA or ABSENT item (positional: see protocol.parse_batch)."""
        kind = msg[0]
        lk = self._link(sender, msg[1])
        if lk is None:
            return
        tag = (msg[2], msg[3])
        if kind == P.ABSENT:
            self._absent(lk.id, tag)
            if tag > sched.current_tag:
                # In a zero-delay cycle every member processes every tag one of them does,
                # if only to announce its own outputs absent at it.
                sched.post_remote(tag, self._tick, None)  # False when already there: fine
            return
        if kind == P.SHM_DATA:
            r = self._shm_in.get(sender)
            if r is None:
                raise FederationError(f"{self._names[sender]} sent a payload through shared memory it never opened")
            try:
                frame = r.lend(msg[6], msg[7])
            except ShmError as e:
                raise FederationError(f"the shared memory from {self._names[sender]} is out of step: {e}") from e
        self._deliver(sched, sender, lk, tag, msg[4], msg[5], frame, kind != P.DATA_INLINE)

    def _deliver(self, sched: Scheduler, sender: int, lk: Any, tag: TagT, codec: int, meta: Any, frame: Any,
                 realign: bool) -> None:
        """Decode a value for link ``lk`` at ``tag`` and post it to the scheduler. With
        ``realign``, an array over ``frame`` at an odd offset (of a ring, of a frame ZeroMQ
        placed) is copied: numpy math on it may round differently."""
        ser = self._serializers.get(lk.id)
        if ser is not None or codec == CUSTOM:
            # The program's own serializer: a value it cannot read ends the run, naming the
            # link (dropped, it would leave this federate waiting for its count).
            if ser is None or codec != CUSTOM:
                raise FederationError(f"{lk.src_port} -> {lk.dst_port}: the two ends disagree on the link's serializer")
            try:
                value = decode_custom(ser, frame)
            except CodecError as e:
                raise FederationError(f"{lk.src_port} -> {lk.dst_port}: {e}") from e
            self._accept(sched, sender, lk, tag, value)
            return
        try:
            value = decode(codec, meta, [frame], self._trusted_pickle)
        except CodecError as e:
            self.rejected += 1
            log.warning("dropped an undecodable value on %s: %s", lk.dst_port, e)
            return
        if realign and isinstance(value, np.ndarray) and not value.flags.aligned:
            value = value.copy()
        self._accept(sched, sender, lk, tag, value)

    def _accept(self, sched: Scheduler, sender: int, lk: Any, tag: TagT, value: Any) -> None:
        """Count a value received from ``sender`` for link ``lk`` at ``tag`` and post it.
        With elastic banks, a value the core drops (this incarnation is not present at
        ``tag``, or it is for a tag done, from a sender that failed) is counted, not posted;
        without, the core says deliver (one branch, no call more per message)."""
        if lk.physical:
            if self.tracer is not None:
                self.tracer.record(RECV, tag, lk.id, self._names[sender], getattr(value, "nbytes", 0))
            sched.post_arrival(self._in[lk.id], value, self._physical[lk.id])
            return
        if not self._counted(sender, lk.id, tag):
            # (the membership part counts it: FederateMembership.dropped, per sender)
            self._warn.warning("dropped a message for %s at %s from %s: for a tag done, or outside the "
                               "sender's or this incarnation's tags", lk.dst_port, tag, self._names[sender])
            return
        if self.tracer is not None:
            self.tracer.record(RECV, tag, lk.id, self._names[sender], getattr(value, "nbytes", 0))
        cur = sched.current_tag
        slot = self._in[lk.id]
        if self.decentralized:
            self._decentralized(sched, sender, lk, slot, tag, value)
            return
        if tag > cur:
            if not sched.post_remote(tag, slot, value):
                # Senders pile a burst up themselves (one tag per message on a link), so
                # this is a broken peer: say so rather than lose a value.
                raise FederationError(
                    f"two messages for {lk.dst_port} at {tag} from {self._names[sender]}: a link "
                    "carries one message per tag; refusing to drop either"
                )
        elif tag == cur and self.mid_tag:
            sched.fire_now(slot, value)
        elif lk.id in self._unread:
            return  # for a tag done, to an input nobody reads: counted, nothing to deliver
        else:
            raise FederationError(
                f"a message for {lk.dst_port} at {tag} from {self._names[sender]} arrived after that tag "
                f"was processed (now {cur}): the coordination was violated"
            )

    def _decentralized(self, sched: Scheduler, sender: int, lk: Any, slot: Slot, tag: TagT, value: Any) -> None:
        """Decentralized coordination: a value on time is posted at its tag (or set now,
        mid-tag, if its readers have not run); a tardy one at a later tag. Its physical
        time of arrival is kept for the readers."""
        cur = sched.current_tag
        tardy = sched.tardy
        assert tardy is not None
        if tag > cur and sched.post_remote(tag, slot, value):
            at: TagT | None = tag
        elif tag == cur and self.mid_tag and self.read_level.get(lk.id, -1) >= self.mid_level:
            sched.fire_now(slot, value)
            at = tag
        elif lk.id in self._unread:
            return
        else:  # late, or its place taken by an earlier tardy message: after it
            at = self._tardy(sched, sender, lk, slot, tag, value)
        if at is not None:
            tardy.arrived(at, slot, sched.clock.now())

    def _tardy(self, sched: Scheduler, sender: int, lk: Any, slot: Slot, tag: TagT, value: Any) -> TagT | None:
        """Decentralized coordination: a message for ``tag``, which this federate has
        passed, is processed at a later tag with ``tag`` as its intended tag (see
        :mod:`...execution.tardy`); after the stop tag it is dropped, as in reactor-c."""
        self.tardy += 1
        at = sched.post_tardy(slot, value, tag)
        if at is None:
            self.dropped_late += 1
            log.warning("a tardy message for %s at %s from %s came after the stop tag %s: dropped", lk.dst_port, tag,
                        self._names[sender], sched.stop_tag)
        else:
            log.info("a tardy message for %s meant for %s from %s is processed at %s", lk.dst_port, tag,
                     self._names[sender], at)
        return at

    def _on_shm_open(self, sender: int, name: str) -> None:
        if sender in self._shm_in:
            self.rejected += 1
            log.warning("ignored a second shared-memory ring from %s", self._names[sender])
            return
        try:
            self._shm_in[sender] = ShmReader(name, self._ring_token(sender, self._me))
        except ShmError as e:
            raise FederationError(
                f"cannot attach the shared memory federate {self._names[sender]} offers ({e}): the two "
                "share an address but not /dev/shm; run the federates with --no-shm"
            ) from e
