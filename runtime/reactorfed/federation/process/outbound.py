"""What a federate sends its downstream peers: one batch per peer, and for peers on this
host, shared-memory rings for large payloads.

What goes to one peer between two waits (data, absent ports, promises) leaves as one
message: a BATCH frame listing the items (small payloads inside), then the payload frames
of the large DATA items, in order. One send, one receive, one decode. A batch of one small
value and a promise (what a closed loop sends each step), or of one of them, goes in the
compact form instead (see :func:`.protocol.pack_compact`).

A numpy/torch payload of at least ``shm_min`` bytes to a peer on this host goes through a
ring (:mod:`..io.shm`) made at the first such payload and announced with SHM_OPEN; the item
is then an SHM_DATA notice. A full ring makes the sender wait a little (the receiver paces
it, as a full TCP buffer would), then the payload goes inline.

A large payload over a ZeroMQ link counts against the link's window
(:mod:`..coordination.flow`): with the window full of what the receiver has not processed
for earlier tags, the sender waits for the receiver's CREDIT before posting it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ...time.clock import Clock
from ..coordination.flow import FLOW_MIN, PATIENCE_NS, SendWindow
from ..io.shm import ShmError, ShmWriter
from ..io.transport import Client
from ..wire import protocol as P
from ..wire.codec import NUMPY, TORCH

__all__ = ["Outbound"]

log = logging.getLogger("reactorfed.federate")

#: the longest a sender waits for room in a full shared-memory ring before sending inline
_SHM_WAIT_NS = 100_000_000
#: payloads up to this size travel inside the batch frame (copied once; saves a frame)
_INLINE_MAX = 4096
_CREDIT = frozenset({P.CREDIT})
assert FLOW_MIN > _INLINE_MAX  # (an inline payload never counts against a window: the receiver could not tell)


class Sender(Protocol):
    """A data link to one peer: ZeroMQ over TCP, or a Unix socket on this host."""

    def send(self, frames: Sequence[Any]) -> None: ...


class Outbound:
    def __init__(self, clients: Mapping[int, Sender], downstream: Sequence[int], names: Sequence[str], clock: Clock, *,
                 shm_bytes: int, shm_min: int, before_wait: Callable[[], None], data_only: Sequence[int] = (),
                 physical: frozenset[int] = frozenset()) -> None:
        self._clients = clients  # filled in when the federation starts
        self._names = names
        self._clock = clock
        self._shm_bytes = shm_bytes
        self._shm_min = shm_min
        # Before waiting for a receiver to free ring space: it may need this federate's
        # held-back report (and what is batched for it) to process, and so free, what it holds.
        self._before_wait = before_wait
        # (``data_only``: peers linked only physically: values, never promises or marks)
        self._batch: dict[int, list[list[Any]]] = {d: [] for d in [*downstream, *data_only]}
        self._payloads: dict[int, list[Any]] = {d: [] for d in self._batch}
        self._coordinated = list(downstream)  # the peers post_all reaches
        self._data_only = [d for d in data_only if d not in self._coordinated]
        self._posted = False  # something posted since the last flush
        self.colocated: set[int] = set()  # peers on this host
        self.ring_token: Callable[[int], bytes] = lambda d: b""  # the ring's token for peer d
        self._rings: dict[int, ShmWriter | None] = {}  # None: tried, not available
        self._stuck: set[int] = set()  # rings that stayed full: inline until they drain
        self.shm_payloads = 0
        self._physical = physical  # this federate's physical links out: never paced (see flow)
        self._windows: dict[int, SendWindow] = {}  # ZeroMQ links: peer -> what it has not processed
        self._unpaced: set[int] = set()  # peers that sent no credit within the patience: not waited for
        #: waits for a receiver's credit, and their time (ns)
        self.flow_waits = 0
        self.flow_wait_ns = 0
        self.rejected = 0  # bad messages back from downstream peers

    def drop_ring(self, d: int) -> None:
        """Peer ``d``'s process was replaced: its ring, if any, is closed (the next large
        payload to its new process makes a new one)."""
        ring = self._rings.pop(d, None)
        if ring is not None:
            ring.close()
        self._windows.pop(d, None)
        self._unpaced.discard(d)

    # -- batches -------------------------------------------------------------------------
    def post(self, d: int, item: list[Any], *payload: Any) -> None:
        self._batch[d].append(item)
        self._posted = True
        if payload:
            self._payloads[d].extend(payload)

    def post_all(self, item: list[Any]) -> None:
        for d in self._coordinated:
            self.post(d, item)

    def post_data_only(self, item: list[Any]) -> None:
        """To the peers linked only physically: this federate's last Mark (its end), so that
        one waiting for its arrivals stops waiting."""
        for d in self._data_only:
            self.post(d, item)

    def holds_payloads(self) -> bool:
        return any(self._payloads.values())

    def flush(self) -> None:
        """Send every peer its batch: before this federate waits, and at the end of a tag."""
        if not self._posted:
            return
        self._posted = False
        for d, items in self._batch.items():
            if items:
                payloads = self._payloads[d]
                # A closed loop's usual message (a small value and a promise) in the compact form
                frame = P.pack_compact(items) if len(items) <= 2 and not payloads else None
                self._clients[d].send([frame] if frame is not None else [P.pack(P.BATCH, items), *payloads])
                self._batch[d] = []
                self._payloads[d] = []

    # -- values --------------------------------------------------------------------------
    def post_value(self, d: int, link: int, tag: tuple[int, int], codec: int, meta: Any, frames: list[Any],
                   size: int) -> None:
        """Post one encoded value for link ``link`` at ``tag``: through shared memory,
        inside the batch, or as a payload frame after it."""
        rec = None
        if size >= self._shm_min and codec in (NUMPY, TORCH) and d in self.colocated and self._shm_bytes > 0:
            w = self._ring(d, size)
            if w is not None:
                rec = w.put(frames)
                if rec is None and size <= w.max_record:
                    rec = self._wait_for_room(d, w, frames)
        # The data plane's items stay positional lists (see protocol.parse_batch).
        if rec is not None:
            self.shm_payloads += 1
            self.post(d, [P.SHM_DATA, link, tag[0], tag[1], codec, meta, rec[0], rec[1]])
        elif size <= _INLINE_MAX:
            self.post(d, [P.DATA_INLINE, link, tag[0], tag[1], codec, meta, b"".join(frames)])
        else:
            if size >= FLOW_MIN and link not in self._physical:
                self._pace(d, tag, size)
            self.post(d, [P.DATA, link, tag[0], tag[1], codec, meta], *frames)

    # -- flow control --------------------------------------------------------------------
    def _pace(self, d: int, tag: tuple[int, int], size: int) -> None:
        """Count a payload for ``tag`` against the window of the link to ``d`` (a ZeroMQ
        link: others have no way back), waiting first if the window is full."""
        client = self._clients.get(d)
        if not isinstance(client, Client):
            return
        w = self._windows.get(d)
        if w is None:
            w = self._windows[d] = SendWindow()
        if w.full():
            self._take_credits(d, client, w)
            if w.blocks(tag) and d not in self._unpaced:
                self._wait_for_credit(d, client, w, tag)
        w.sent(tag, size)

    def _take_credits(self, d: int, client: Client, w: SendWindow) -> None:
        """Read what peer ``d`` sent back: its credits."""
        while (frames := client.recv()) is not None:
            try:
                credit = P.parse(frames[0], _CREDIT)
            except P.ProtocolError as e:
                self.rejected += 1
                log.warning("ignoring a bad message from %s on its data link: %s", self._names[d], e)
                continue
            assert isinstance(credit, P.Credit)
            w.credit(credit.tag)
        if d in self._unpaced and w.outstanding < w.window // 2:
            self._unpaced.discard(d)  # (it credits again: waited for again)

    def _wait_for_credit(self, d: int, client: Client, w: SendWindow, tag: tuple[int, int]) -> None:
        """Wait until ``d`` has processed enough for ``tag``'s payload to fit its window.
        It may need this federate's held-back report, or what is batched for it, to get
        there: both leave first. No credit within the patience: send past the window."""
        self._before_wait()
        self.flush()
        clock = self._clock
        start = clock.now()
        deadline = start + PATIENCE_NS
        self.flow_waits += 1
        try:
            while w.blocks(tag):
                now = clock.now()
                if now >= deadline:
                    self._unpaced.add(d)
                    log.info("%s processed nothing for %.1f s of what it was sent: payloads go past the "
                             "window until it does", self._names[d], PATIENCE_NS / 1e9)
                    return
                if client.poll(max(1, (deadline - now) // 1_000_000)):
                    before = w.outstanding
                    self._take_credits(d, client, w)
                    if w.outstanding < before:
                        deadline = clock.now() + PATIENCE_NS  # (it goes on: patience anew)
        finally:
            self.flow_wait_ns += clock.now() - start

    def _wait_for_room(self, d: int, w: ShmWriter, frames: list[Any]) -> tuple[int, int] | None:
        """The ring to ``d`` is full: wait a little for the receiver to give space back, then
        send inline. A receiver that keeps what it got keeps its space: then stop waiting
        until the ring drains."""
        if d in self._stuck:
            if w.pending() > w.capacity // 2:
                return None
            self._stuck.discard(d)
        self._before_wait()
        self.flush()
        deadline = self._clock.now() + _SHM_WAIT_NS
        while self._clock.now() < deadline:
            time.sleep(0.0002)
            rec = w.put(frames)
            if rec is not None:
                return rec
        self._stuck.add(d)
        log.info("the shared memory to %s stays full (its reactions keep what they receive?): "
                 "payloads go over TCP until it drains", self._names[d])
        return None

    def _ring(self, d: int, size: int) -> ShmWriter | None:
        """The ring to peer ``d``, made (and announced to it) at the first use."""
        if d in self._rings:
            return self._rings[d]
        w = None
        # Sized from the first payload: room for a few in flight (a full ring paces the
        # sender), and reserving it costs time (zeroing pages) inside the run.
        capacity = min(self._shm_bytes, max(8 << 20, -(-4 * size // 4096) * 4096))
        try:
            w = ShmWriter(capacity, self.ring_token(d))
        except ShmError as e:
            log.warning("payloads to %s go over TCP: %s", self._names[d], e)
        else:
            self.post(d, P.ShmOpen(w.name).item())
        self._rings[d] = w
        return w

    def close(self, drain_ns: int) -> None:
        """The federate ends: say how long it waited for credits, and close its rings."""
        if self.flow_waits:
            log.info("waited %d times, %.2f s in all, for peers to process what they were sent (flow control)",
                     self.flow_waits, self.flow_wait_ns / 1e9)
        # A reader attaches when the ring's announcement reaches it: unlinking before then
        # could leave it nothing to attach to. Wait (bounded) for that, not for it to give
        # back what it keeps: a receiver may hold a lent record to its end.
        deadline = self._clock.now() + drain_ns
        for w in self._rings.values():
            if w is None:
                continue
            while w.reader_needs_name() and self._clock.now() < deadline:
                time.sleep(0.001)
            w.close()
