"""A federate's output links: the values its output ports send its downstream peers.

:class:`Outputs` makes one sender per output link, at install, and sends: the links
outside zero-delay cycles at the end of each tag (a scheduler tag hook), those on a cycle
at the level checkpoint after their last writer (called from the driver's ``at_level``,
absent values included). Sending a value is encoding it, refusing one too large for the
receiver (:class:`..errors.SendError`, naming the link), posting it to the peer's batch
(:class:`.outbound.Outbound`) and telling the core, which counts it in its next report.
The driver (:mod:`.federate`) owns it and reads its counts.
"""

from __future__ import annotations

from typing import Any

from ...assembly.program import Program
from ...execution.tracing import Tracer
from ...model.port import Port
from ...model.trigger import Slot
from ...observe.trace.records import SEND
from ...time.tag import NEVER, TagT, add_delay, succ
from ..coordination.federate_core import FederateCore
from ..coordination.layout import Layout, Link, link_delay
from ..errors import SendError
from ..wire import protocol as P
from ..wire.codec import CodecError, encode, encode_custom
from .federate_config import FederateConfig
from .outbound import Outbound

__all__ = ["Outputs"]

#: room left in a message for its batch frame (the receiver counts both against its limit)
_HEADER_ROOM = 64 << 10


class _Out:
    __slots__ = ("delay", "last", "link", "serializer", "slot")

    def __init__(self, link: Link, slot: Slot, serializer: Any = None) -> None:
        self.link = link
        self.slot = slot
        self.serializer = serializer  # the connection's own (None: by the value's type)
        self.delay = link_delay(link.delay)
        #: the tag of the last message sent on the link (see Outputs.send_at_tag_end)
        self.last: TagT = (NEVER, 0)


def _last_writer_levels(program: Program) -> dict[Slot, int]:
    """slot -> the level of the last reaction that may write it."""
    levels: dict[Slot, int] = {}
    for rx in program.reactions:
        for e in rx.effects:
            if isinstance(e, Port):
                slot = program.slot_of(e)
                levels[slot] = max(levels.get(slot, -1), rx.level)
    return levels


class Outputs:
    """This federate's output links and what has been sent on them."""

    def __init__(self, core: FederateCore, out: Outbound, cfg: FederateConfig) -> None:
        self._core = core
        self._out = out
        self._trusted_pickle = cfg.trusted_pickle
        #: records each message sent in a traced run: (tracer, the federates' names)
        self.trace: tuple[Tracer, list[str]] | None = None
        #: the largest value sent
        self._max_value = cfg.max_message - _HEADER_ROOM if cfg.max_message > 0 else 1 << 62
        self._outs: list[_Out] = []  # links to peers outside zero-delay cycles: sent at the end of a tag
        self._cyclic_outs: dict[int, _Out] = {}  # link id -> a link on a zero-delay cycle (see send_cyclic)
        self._physical_outs: list[_Out] = []  # physical links (LF's ~>): sent at the end of a tag, uncounted
        self.messages_sent = 0
        self.bytes_sent = 0

    def add_links(self, program: Program, layout: Layout, me: int) -> list[tuple[int, int]]:
        """Make a sender for each link out of federate ``me``; its links on zero-delay
        cycles as (send after this level, link id), for the core's checkpoints."""
        part = program.partition
        assert part is not None
        writers = _last_writer_levels(program)
        cyclic: list[tuple[int, int]] = []
        for lk in layout.links:
            if lk.src == me:
                out = _Out(lk, program.slot_of(part.links[lk.id].src), part.links[lk.id].serializer)
                if layout.cyclic(lk):
                    self._cyclic_outs[lk.id] = out
                    cyclic.append((writers.get(out.slot, -1) + 1, lk.id))
                else:
                    self._outs.append(out)
        for lk in layout.physical:
            if lk.src == me:
                self._physical_outs.append(_Out(lk, program.slot_of(part.links[lk.id].src), part.links[lk.id].serializer))
        return cyclic

    @property
    def at_tag_end(self) -> bool:
        """Some links send at the end of a tag (:meth:`send_at_tag_end` is needed)."""
        return bool(self._outs or self._physical_outs)

    def send_at_tag_end(self, tag: TagT, _set: list[Slot]) -> None:
        """The scheduler's tag hook: send what the links outside cycles carry at ``tag``."""
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
                    sent = succ(last)
                out.last = sent
                self._send(out, sent, out.slot.value)
        if self._physical_outs:
            self._send_physical(tag, None)

    def _send_physical(self, tag: TagT, present: Any) -> None:
        """The physical links' values at ``tag`` (``present``: with elastic banks, whether
        the receiver is present at ``tag``). The tag travels for the record only: the
        receiver stamps the value with its own clock at arrival. Not counted in the
        reports: no grant waits for a physical link."""
        for out in self._physical_outs:
            if out.slot.present and (present is None or present(out.link.dst, tag)):
                self._send(out, tag, out.slot.value, counted=False)

    def send_present(self, tag: TagT, _set: list[Slot]) -> None:
        """:meth:`send_at_tag_end` in a federation with elastic banks: to the peers present
        at ``tag`` only (the sender's tag: see
        :meth:`..coordination.federate_membership.FederateMembership.send_to`). (Links on
        zero-delay cycles: :meth:`send_cyclic`.)"""
        send_to = self._core.membership.send_to
        for out in self._outs:
            if out.slot.present and send_to(out.link.dst, tag):
                sent = add_delay(tag, out.delay)
                if sent <= out.last:
                    sent = succ(out.last)  # (a burst: see send_at_tag_end)
                out.last = sent
                self._send(out, sent, out.slot.value)
        if self._physical_outs:
            self._send_physical(tag, send_to)

    def send_cyclic(self, tag: TagT, due: list[int]) -> None:
        """Send the links on zero-delay cycles that ``due`` names, at ``tag``: the value or
        its absence; with elastic banks, to the peers present at ``tag`` only (an elastic
        member is on a cycle while present)."""
        cyclic = self._cyclic_outs
        send_to = self._core.membership.send_to
        for lid in due:
            out = cyclic[lid]
            if not send_to(out.link.dst, tag):
                continue
            if out.slot.present:
                self._send(out, tag, out.slot.value)
            else:
                self._out.post(out.link.dst, [P.ABSENT, lid, tag[0], tag[1]])  # positional: see protocol.parse_batch
        if cyclic:
            self._out.flush()  # peers in the cycle wait for these within this tag

    def _send(self, out: _Out, tag: TagT, value: Any, counted: bool = True) -> None:
        try:
            if out.serializer is None:
                codec, meta, frames = encode(value, self._trusted_pickle)
            else:
                codec, meta, frames = encode_custom(out.serializer, value)
        except CodecError as e:
            raise SendError(f"{out.link.src_port} -> {out.link.dst_port}: {e}") from e
        size = memoryview(frames[0]).nbytes if len(frames) == 1 else sum(memoryview(f).nbytes for f in frames)
        if size > self._max_value:
            # The receiver would refuse the message whole (and then wait for it for ever):
            # refused here instead, naming the link.
            raise SendError(
                f"{out.link.src_port} -> {out.link.dst_port}: a value of {size:,} bytes is larger than a federate "
                f"takes in one message ({self._max_value:,} bytes, the message limit less room for its header)")
        if self.trace is not None:  # (before it leaves: the receiver may record it at once)
            tracer, names = self.trace
            tracer.record(SEND, tag, out.link.id, names[out.link.dst], size)
        self._out.post_value(out.link.dst, out.link.id, tag, codec, meta, frames, size)
        if counted:
            self._core.reports.sent_message(out.link.dst, tag)
        self.messages_sent += 1
        self.bytes_sent += size
