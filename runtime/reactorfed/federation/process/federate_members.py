"""The federate driver's part for elastic banks (issue 19): what it does with the RTI's
membership messages, and a member's request to leave. The decisions are the core's
(:mod:`..coordination.federate_membership`); this module feeds it and the scheduler.

- START (:meth:`FederateMembers.begin`): the RTI says which elastic slots are absent at
  the start and whether this process is to join (the scheduler takes that presence at
  the start itself: :meth:`reactorfed.execution.membership.Membership.set_initial`); its view wins
  over this program's own initial widths (the digest does not cover them: a pod started
  later may have been given another width), and is logged when they differ. A process that connects while the
  federation runs is a joiner, whether its slot was present before or not (a new process
  for a slot whose process failed or left).
- QUERY is answered by the core (its QUERY_REPLY goes out with the core's outbox), from
  the tag the scheduler is at; until ROUND_END the core processes nothing at or past its
  answer.
- CHANGE goes to the core and, with the member's bank and bank index, to the scheduler
  (:meth:`reactorfed.execution.membership.Membership.post`), before the ROUND_END that lets the core
  past its tag: at that tag an absent member's reactions are no-ops here as in one process.
  A member told of its own leave at ``L`` stops there: ``L`` becomes its stop tag, and
  processed with every reaction of its own a no-op (no shutdown reactions), it is its last
  (:meth:`FederateMembers.gone`); the driver then resigns. A joiner's own slot's changes
  before its ADMIT are its earlier incarnations': the core knows them, the scheduler does
  not (it has the slot absent from the start until the ADMIT's tag).
- A joiner asks with JOIN_REQ once it has its START, and takes the record's CHANGEs, then
  its ADMIT (to the core: its tag and counts), before its scheduler starts. Its scheduler
  starts at the ADMIT's tag, its effective start tag (LF's transient federates): it
  processes no tag before, its startup reactions and timers begin there, and the record's
  changes before it apply there in order. A join of a downstream peer opens a data link
  to it, at the address its CHANGE carries, or (a replayed join, whose CHANGE went out at
  the start) its PEER.
- LOST: an upstream member's process failed (the RTI's verdict, after every grant it made
  before): the core stops waiting for what it sent (:meth:`..coordination.federate_core.FederateCore.on_peer_failed`).
- REFUSED: a refused leave is logged and the member runs on; a refused join ends it.

What the RTI sends is checked here too (a member that is not an elastic slot, an address
that is not one): :class:`..wire.protocol.ProtocolError`, which the driver counts and logs.
A federation without elastic banks has none of this (the driver holds no
:class:`FederateMembers`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...execution.scheduler import Scheduler
from ...time.clock import Clock
from ...time.tag import NEVER, NEVER_T, TagT, succ
from ..coordination.federate_core import FederateCore
from ..coordination.layout import Layout
from ..errors import FederationError
from ..io.transport import Client, Poller
from ..wire import protocol as P
from .heartbeat import Liveness

__all__ = ["FROM_RTI_ELASTIC", "FederateMembers"]

log = logging.getLogger("reactorfed.federate")

#: what the RTI may send a federate of a federation with elastic banks
FROM_RTI_ELASTIC = P.FROM_RTI | frozenset({P.QUERY, P.CHANGE, P.ROUND_END, P.ADMIT, P.REFUSED, P.PEER, P.LOST})


class FederateMembers:
    """The membership messages of one federate (``core``'s, federate ``name`` of ``layout``)."""

    def __init__(self, core: FederateCore, layout: Layout, name: str) -> None:
        self.core = core
        self.name = name
        self.names = layout.names
        #: elastic slot -> (its bank, its bank index): what the scheduler's schedule names
        self._slot = {f: (g.name, i) for g in layout.elastic for i, f in enumerate(g.slots)}
        #: this program's own view: the elastic slots absent at the start
        self._absent = frozenset(f for g in layout.elastic for f in g.slots[g.initial:])
        #: set by :meth:`ask_to_leave` (from any thread); the driver sends LEAVE_REQ at its next pump
        self.leave_asked = False
        #: this process asks to join once it has its START (the RTI's word: see begin)
        self.joiner = core.me in self._absent
        self._downstream = frozenset(layout.downstream(core.me))
        self._upstream = frozenset(layout.direct_upstream(core.me))
        #: the driver's: open a data link to downstream peer ``d`` (its incarnation joining
        #: at ``tag``) at ``endpoint``
        self.on_joiner: Callable[[int, str, TagT], None] | None = None

    def begin(self, sched: Scheduler, start: int, absent: tuple[int, ...], join: bool) -> None:
        """The RTI's START: ``absent``, the elastic slots absent at the start; ``join``,
        whether this process asks to join. Before the core begins: the core's and the
        scheduler's membership at the start tag become the RTI's."""
        core, me = self.core, self.core.me
        rti_absent = frozenset(absent)
        if not rti_absent <= self._slot.keys() or (join and me not in self._slot):
            raise FederationError(f"the RTI's START for {self.name} names elastic slots this program does not "
                                  f"have (absent: {sorted(absent)}, join: {join}): different programs?")
        if rti_absent != self._absent:
            log.warning("%s: the RTI's initial widths differ from this program's (absent at the start: %s by the "
                        "RTI, %s here): the RTI's hold", self.name, self._names(rti_absent), self._names(self._absent))
            core.membership.presence.set_initial(rti_absent)
        if join != self.joiner:
            log.info("%s: the RTI says this process %s", self.name,
                     "joins a running federation (a new process for its slot)" if join else "is present from the start")
        self.joiner = core.membership.joining = join
        # The scheduler has this program's widths, and its own slot present if within them:
        # it takes the RTI's instead, from the start itself (before anything can be queued
        # for its slots). A joiner's slot is absent until its ADMIT (it runs no tag of an
        # earlier incarnation).
        mem = sched.membership
        assert mem is not None  # (a program with elastic banks has one)
        # Sends go only to the members present at the sender's tag (Outputs.send_present),
        # and the core drops what arrives outside this incarnation's tags: what waits for
        # this joiner's own slots when it reaches its join tag is its own (its first weights,
        # read before it processed that tag), not to be dropped there as in one process.
        mem.senders_filter = True
        mem.set_initial(slot for f, slot in sorted(self._slot.items()) if f in rti_absent or (f == me and join))

    def _names(self, slots: frozenset[int]) -> str:
        return ", ".join(self.names[f] for f in sorted(slots)) or "none"

    def ask_to_leave(self) -> None:
        """Ask the RTI for this member to leave (it does at a tag agreed in a round).
        Thread-safe: only a flag is set here; the driver's thread sends the request."""
        if self.core.me not in self._slot:
            raise FederationError(f"{self.name} is not a member of an elastic bank: it cannot leave")
        self.leave_asked = True

    def take_request(self) -> bytes | None:
        """The LEAVE_REQ to send, once per :meth:`ask_to_leave`."""
        if not self.leave_asked:
            return None
        self.leave_asked = False
        log.info("%s asks to leave", self.name)
        return P.LeaveReq().pack()

    def on_message(self, sched: Scheduler, msg: P.Message) -> None:
        """A membership message from the RTI (what the core queues: the driver sends it).
        Raises :class:`..wire.protocol.ProtocolError` for one that names what is not there."""
        core = self.core
        if isinstance(msg, P.Query):
            core.membership.on_query(msg.round, msg.tag, msg.changes, sched.current_tag)
        elif isinstance(msg, P.Change):
            link = msg.joined and msg.member in self._downstream and msg.endpoint != ""
            if link:  # (its address is checked before anything changes)
                _check_address(self.names[msg.member], msg.endpoint, "CHANGE")
            self._change(sched, msg.tag, msg.member, msg.joined)
            if link and self.on_joiner is not None:
                self.on_joiner(msg.member, msg.endpoint, msg.tag)
        elif isinstance(msg, P.RoundEnd):
            core.membership.on_round_end(msg.round)
        elif isinstance(msg, P.Admit):
            core.admit(msg.tag, msg.sent, msg.received)
            if self.joiner:  # its own join, kept from the scheduler until now (see _change)
                mem = sched.membership
                assert mem is not None
                bank, i = self._slot[core.me]
                # Its scheduler starts at this tag, its effective start tag: no tag before
                # it is processed (the record's changes so far apply there, in order).
                mem.begin_at(sched, msg.tag)
                mem.post(sched, msg.tag, bank, i, True)
                if core.membership.leaves is not None:  # its leave, known already (a replayed schedule)
                    mem.post(sched, core.membership.leaves, bank, i, False)
                    sched.lower_stop_tag(core.membership.leaves, "left the federation")
        elif isinstance(msg, P.Peer):
            self._member(msg.member, "PEER")
            if msg.member in self._downstream:
                _check_address(self.names[msg.member], msg.endpoint, "PEER")
                if self.on_joiner is not None:
                    self.on_joiner(msg.member, msg.endpoint, msg.tag)
        elif isinstance(msg, P.Lost):
            self._member(msg.member, "LOST")
            if msg.member in self._upstream:
                log.warning("%s: the RTI says %s failed: nothing more it sent is waited for", self.name,
                            self.names[msg.member])
                core.on_peer_failed(msg.member, msg.quiet)
                owed = core.membership.lost.get(msg.member, 0)
                if owed:  # (not in the record: a replay of it gets them)
                    log.warning("%s: %d messages %s was counted as sending have not come: lost with it, unless "
                                "they still come", self.name, owed, self.names[msg.member])
        elif isinstance(msg, P.Refused):
            if msg.joined:
                raise FederationError(f"the RTI refused {self.name}'s request to join: {msg.reason}")
            log.warning("the RTI refused %s's request to leave: %s", self.name, msg.reason)

    def _member(self, member: int, what: str) -> tuple[str, int]:
        """``member`` as an elastic slot: its bank and bank index (else ProtocolError)."""
        slot = self._slot.get(member)
        if slot is None:
            raise P.ProtocolError(f"{what} for federate {member}, not a member of an elastic bank here: "
                                  "different programs?")
        return slot

    def _change(self, sched: Scheduler, tag: TagT, member: int, joined: bool) -> None:
        bank, i = self._member(member, "CHANGE")
        core = self.core
        core.membership.on_change(tag, member, joined)
        if member == core.me and core.membership.joined == NEVER_T:
            return  # before its ADMIT: an earlier incarnation's (its own join is posted at its ADMIT)
        mem = sched.membership
        assert mem is not None  # (a program with elastic banks has one)
        mem.post(sched, tag, bank, i, joined)
        if member == core.me and not joined:
            sched.lower_stop_tag(tag, "left the federation")

    def gone(self, head: TagT | None) -> bool:
        """Whether the scheduler's next tag ``head`` is this member's last, ``L``, where it
        processes nothing of its own: it needs no grant of ``L`` (its upstream peers' grants
        stop at its leave) once no round holds it back, but every tag before ``L`` granted
        (what is still on its way for them is waited for: the core's ``gone``)."""
        core = self.core
        return core.membership.limit is None and core.membership.gone(head)

    def promise_peers(self, peers: list[int], tag: TagT) -> list[int]:
        """The downstream ``peers`` a promise (or Mark) of ``tag`` goes to: those present at
        it or at the tag after the last this federate completed (a peer that leaves at
        ``L`` still needs promises past ``L`` while it runs the tags before)."""
        core = self.core
        now = succ(core.done)
        send_to = core.membership.send_to
        return [d for d in peers if send_to(d, tag) or send_to(d, now)]

    def await_admit(self, rti: Client, live: Liveness, clock: Clock, timeout_ns: int,
                    on_rti: Callable[[list[memoryview]], None]) -> None:
        """A joiner: ask to join, then hand what the RTI sends to ``on_rti`` (the record's
        CHANGEs, posted into the scheduler before its run starts) until the ADMIT. The data
        port is not read meanwhile: what peers send waits in it for the run."""
        rti.send([P.JoinReq(clock.now()).pack()])
        deadline = clock.now() + timeout_ns
        with Poller(rti) as poller:
            while self.core.membership.joined[0] == NEVER:
                now = clock.now()
                lost = live.lost(now)
                if lost is not None:
                    raise FederationError(lost)
                if now > deadline:
                    raise FederationError(f"{self.name} asked to join and was not admitted within the join timeout")
                if rti in poller.wait(100):
                    while (frames := rti.recv()) is not None:
                        live.heard_data = clock.now()
                        on_rti(frames)
        log.info("%s joins at %s", self.name, self.core.membership.joined)


def _check_address(name: str, endpoint: str, what: str) -> None:
    """A data address from the RTI (``what`` gave it, for federate ``name``): tcp://host:port,
    with a Unix socket's path perhaps (else ProtocolError)."""
    tcp, _, port = endpoint.partition("#")[0].rpartition(":")
    if not tcp.startswith("tcp://") or len(tcp) <= 6 or not port.isdigit() or not 0 < int(port) < 65536:
        raise P.ProtocolError(f"{what} for {name}: {endpoint[:100]!r} is not a data address")
