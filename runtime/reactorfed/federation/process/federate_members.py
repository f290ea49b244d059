"""The federate driver's part for elastic banks (issue 19): what it does with the RTI's
membership messages, and a member's request to leave. The decisions are the core's
(:mod:`..coordination.federate_membership`); this module feeds it and the scheduler.

- QUERY is answered by the core (its QUERY_REPLY goes out with the core's outbox), from
  the tag the scheduler is at; until ROUND_END the core processes nothing at or past its
  answer.
- CHANGE goes to the core and, with the member's bank and bank index, to the scheduler
  (:meth:`reactorfed.rescale.Membership.post`), before the ROUND_END that lets the core
  past its tag: at that tag an absent member's reactions are no-ops here as in one process.
  A member told of its own leave at ``L`` stops there: ``L`` becomes its stop tag, and
  processed with every reaction of its own a no-op (no shutdown reactions), it is its last
  (:meth:`FederateMembers.gone`); the driver then resigns.
- A joiner (a slot absent at the start) asks with JOIN_REQ once it has its START, and
  takes the record's CHANGEs, then its ADMIT (to the core: its tag and counts), before its
  scheduler starts. A join of a downstream peer opens a data link to it, at the address
  its CHANGE carries.
- REFUSED: a refused leave is logged and the member runs on; a refused join ends it.

A federation without elastic banks has none of this (the driver holds no
:class:`FederateMembers`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...clock import Clock
from ...scheduler import Scheduler
from ...tag import NEVER, TagT, succ
from ..coordination.federate_core import FederateCore
from ..coordination.layout import Layout
from ..errors import FederationError
from ..io.transport import Client, Poller
from ..wire import protocol as P
from .heartbeat import Liveness

__all__ = ["FROM_RTI_ELASTIC", "FederateMembers"]

log = logging.getLogger("reactorfed.federate")

#: what the RTI may send a federate of a federation with elastic banks
FROM_RTI_ELASTIC = P.FROM_RTI | frozenset({P.QUERY, P.CHANGE, P.ROUND_END, P.ADMIT, P.REFUSED})


class FederateMembers:
    """The membership messages of one federate (``core``'s, federate ``name`` of ``layout``)."""

    def __init__(self, core: FederateCore, layout: Layout, name: str) -> None:
        self.core = core
        self.name = name
        self.names = layout.names
        #: elastic slot -> (its bank, its bank index): what the scheduler's schedule names
        self._slot = {f: (g.name, i) for g in layout.elastic for i, f in enumerate(g.slots)}
        #: set by :meth:`ask_to_leave` (from any thread); the driver sends LEAVE_REQ at its next pump
        self.leave_asked = False
        #: a slot absent at the start: it asks to join once it has its START
        self.joiner = core.me in self._slot and core.me not in layout.initial_members()
        self._downstream = frozenset(layout.downstream(core.me))
        #: the driver's: open a data link to a downstream peer that joins, at its address
        self.on_joiner: Callable[[int, str], None] | None = None

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
        """A membership message from the RTI (what the core queues: the driver sends it)."""
        core = self.core
        if isinstance(msg, P.Query):
            core.on_query(msg.round, msg.tag, msg.changes, sched.current_tag)
        elif isinstance(msg, P.Change):
            self._change(sched, msg.tag, msg.member, msg.joined)
            if msg.joined and msg.member in self._downstream and msg.endpoint and self.on_joiner is not None:
                self.on_joiner(msg.member, msg.endpoint)
        elif isinstance(msg, P.RoundEnd):
            core.on_round_end(msg.round)
        elif isinstance(msg, P.Admit):
            core.admit(msg.tag, msg.sent, msg.received)
        elif isinstance(msg, P.Refused):
            if msg.joined:
                raise FederationError(f"the RTI refused {self.name}'s request to join: {msg.reason}")
            log.warning("the RTI refused %s's request to leave: %s", self.name, msg.reason)

    def _change(self, sched: Scheduler, tag: TagT, member: int, joined: bool) -> None:
        slot = self._slot.get(member)
        if slot is None:
            raise FederationError(f"the RTI changed the membership of {self.names[member]}, "
                                  "not a member of an elastic bank: different programs?")
        self.core.on_change(tag, member, joined)
        mem = sched.membership
        assert mem is not None  # (a program with elastic banks has one)
        mem.post(sched, tag, slot[0], slot[1], joined)
        if member == self.core.me and not joined:
            sched.lower_stop_tag(tag, "left the federation")

    def gone(self, head: TagT | None) -> bool:
        """Whether the scheduler's next tag ``head`` is this member's last, ``L``, where it
        processes nothing of its own: it needs no grant for it (its upstream peers' grants
        stop at its leave) once no round holds it back."""
        core = self.core
        return core.member_limit is None and core.gone(head)

    def promise_peers(self, peers: list[int], tag: TagT) -> list[int]:
        """The downstream ``peers`` a promise (or Mark) of ``tag`` goes to: those present at
        it or at the tag after the last this federate completed (a peer that leaves at
        ``L`` still needs promises past ``L`` while it runs the tags before)."""
        core = self.core
        now = succ(core.done)
        send_to = core.send_to
        return [d for d in peers if send_to(d, tag) or send_to(d, now)]

    def await_admit(self, rti: Client, live: Liveness, clock: Clock, timeout_ns: int,
                    on_rti: Callable[[list[memoryview]], None]) -> None:
        """A joiner: ask to join, then hand what the RTI sends to ``on_rti`` (the record's
        CHANGEs, posted into the scheduler before its run starts) until the ADMIT. The data
        port is not read meanwhile: what peers send waits in it for the run."""
        rti.send([P.JoinReq(clock.now()).pack()])
        deadline = clock.now() + timeout_ns
        with Poller(rti) as poller:
            while self.core.joined[0] == NEVER:
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
        log.info("%s joins at %s", self.name, self.core.joined)
