"""The RTI server's part for elastic banks (issue 19): members that join and leave a
running federation. The rule is the core's (:class:`..coordination.rti_core.RtiCore`, its
rounds in :mod:`..coordination.rti_membership`); this module carries its messages. A
federation without elastic banks has none of it (the server holds no :class:`RtiMembers`).

- **Joining.** The handshake admits a slot's process at any time
  (:meth:`..coordination.admission.Admission.hello`). While the federation runs, the
  process gets START at once (the start time, the data addresses of the federates connected
  now, the session, its index, the slots absent at the start and ``join``: the RTI says
  who joins, see :meth:`RtiMembers.start_of`), then every CHANGE made so far (the record), and from then
  on every CHANGE as the others do, so that it knows the membership at its join tag. It asks
  with JOIN_REQ and gets its ADMIT once the core agrees on a tag. A slot that connects
  before the start gets START with the others; its request goes to the core after the
  start, through a round as a later one does (a replayed schedule must be loaded before any
  request). A new process for a slot whose last one failed or leaves, asking before that
  leave is agreed, is held and asked for once it is (not refused "already present").
- **Hot swap.** A new process for a transient federate (LF's ``@transient``) that is
  present, once it proved itself, is held (:class:`..coordination.admission.Swap`) and the
  present one leaves at a tag the core agrees on (:meth:`RtiMembers.swap`); once that
  one's process is forgotten, the new one takes its slot (:meth:`RtiHost.take_over`): it
  gets its START and joins as any later process of a slot does. A bank member's second
  process is a duplicate, refused.
- **The outbox** goes out in the core's order, before the grants of the same call: QUERY
  to the federates asked, CHANGE to every connected federate that has not resigned (the
  joiners waiting included), ROUND_END to the federates asked, ADMIT and REFUSED to the
  member.
- **Leaving and failing.** LEAVE_REQ asks the core. A member whose connection dies (the
  server's :class:`..coordination.admission.Departures` verdict) fails in the core instead
  of ending the federation, unless its bank would fall below its minimum width; so does one
  silent for ``--silence-timeout`` (it is told so). Its downstream federates get LOST, after
  every grant made before and before the grants after: they stop waiting for what it
  sent (the data plane cannot tell a dead process from a cut link; the RTI can). A slot's
  process is forgotten once its control connection closes (after it left, or while it
  waited to join): its slot can be joined again. A request the program's declaration or
  the federation's state refuses gets REFUSED with the reason; nothing else changes.
- **The record** is in ``/status`` and the run's summary (:class:`MemberRecord`, tags after
  the start), and a schedule in that format is replayed (``RtiConfig.membership``).

A joiner's CHANGE carries its data address (from its HELLO) for the federates connected
before it (START gave them the addresses of those connected then); a replayed join's
CHANGE, sent at the start before its process connects, carries none: its upstream
federates get PEER (its address, its join tag) when the core admits it, before its ADMIT
(see docs/federation.md, Live rescaling).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeAlias

from ...model.elastic import MemberChange
from ...observe.trace.records import JOIN, LEAVE
from ...time.tag import FOREVER_T
from ..coordination.admission import Admission
from ..coordination.layout import Layout
from ..coordination.membership import (
    Admit,
    Change,
    MembershipError,
    Query,
    RoundEnd,
    check_schedule,
    record_of,
)
from ..coordination.rti_core import Grant, RtiCore
from ..wire import protocol as P

if TYPE_CHECKING:
    from .rti_grants import RtiGrants

__all__ = ["MemberRecord", "RtiHost", "RtiMembers", "Schedule", "load_schedule"]

log = logging.getLogger("reactorfed.rti")

#: ``RtiConfig.membership``: the bank changes to replay, or a JSON file of them (a list
#: of :meth:`MemberRecord.json` entries, or a saved ``/status`` document holding one)
Schedule: TypeAlias = Sequence[MemberChange] | str | os.PathLike[str]


@dataclass(frozen=True)
class MemberRecord:
    """One change of the record: from ``tag`` (ns after the start, microstep) on,
    ``member`` (slot ``index`` of elastic bank ``bank``) is present (``joined``) or absent.
    ``quiet``: the leave of a member whose process failed, which did nothing from that tag
    on (:class:`..coordination.membership.Change`); in the JSON only then."""

    tag: tuple[int, int]
    member: str
    bank: str
    index: int
    joined: bool
    quiet: tuple[int, int] | None = None

    def json(self) -> dict[str, Any]:
        out = {"tag": list(self.tag), "member": self.member, "bank": self.bank, "index": self.index,
               "joined": self.joined}
        if self.quiet is not None:
            out["quiet"] = list(self.quiet)
        return out

    def change(self) -> MemberChange:
        """As a schedule's entry (for ``RtiConfig.membership``, or one process's scheduler)."""
        return MemberChange(self.tag[0], self.tag[1], self.bank, self.index, self.joined, self.quiet)

    @classmethod
    def of_json(cls, layout: Layout, e: Any, where: str) -> MemberRecord:
        """An entry of a schedule file: ``member`` names the slot (else ``bank`` and ``index``)."""
        if not isinstance(e, dict):
            raise MembershipError(f"{where}: expected an object, got {type(e).__name__}")
        tag, joined = e.get("tag"), e.get("joined")
        if not (isinstance(tag, list) and len(tag) == 2 and all(type(v) is int and v >= 0 for v in tag)):
            raise MembershipError(f"{where}: 'tag' must be [ns after the start, microstep], got {tag!r}")
        if type(joined) is not bool:
            raise MembershipError(f"{where}: 'joined' must be true or false, got {joined!r}")
        q = e.get("quiet")
        if q is not None and not (isinstance(q, list) and len(q) == 2 and all(type(v) is int and v >= 0 for v in q)):
            raise MembershipError(f"{where}: 'quiet' must be [ns after the start, microstep], got {q!r}")
        quiet = None if q is None else (q[0], q[1])
        name = e.get("member")
        if isinstance(name, str):
            f = layout.index(name) if name in layout.names else -1
            g = layout.elastic_of(f) if f >= 0 else None
            if g is None:
                raise MembershipError(f"{where}: {name!r} is not a member of an elastic bank")
            return cls((tag[0], tag[1]), name, g.name, g.slots.index(f), joined, quiet)
        bank, index = e.get("bank"), e.get("index")
        slots = {g.name: g.slots for g in layout.elastic}.get(bank) if isinstance(bank, str) else None
        if slots is None or type(index) is not int or not 0 <= index < len(slots):
            raise MembershipError(f"{where}: no 'member', and no slot {index!r} of an elastic bank {bank!r}")
        return cls((tag[0], tag[1]), layout.names[slots[index]], str(bank), index, joined, quiet)


def load_schedule(layout: Layout, spec: Schedule | None) -> list[MemberChange] | None:
    """``RtiConfig.membership`` as the changes to replay, checked against the program
    (tags after the start: the start time only shifts them), or None."""
    if spec is None:
        return None
    if isinstance(spec, str | os.PathLike):
        path = Path(spec)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise MembershipError(f"membership schedule {path}: {e}") from None
        if isinstance(data, dict):  # a saved /status document
            data = data.get("membership")
        if not isinstance(data, list):
            raise MembershipError(f"membership schedule {path}: expected a list of changes, or /status's document")
        changes = [MemberRecord.of_json(layout, e, f"membership schedule {path}, entry {i}").change()
                   for i, e in enumerate(data)]
    else:
        changes = list(spec)
        for c in changes:
            if c.time < 0 or c.microstep < 0:
                raise MembershipError(f"membership schedule: {c} is before the start (tags count from it)")
    check_schedule(layout, record_of(layout, changes, 0))
    quiet = [c for c in changes if c.quiet is not None]
    if quiet:  # (its process would have to do nothing from there: none is made to)
        raise MembershipError(f"membership schedule: {quiet[0]} is the leave of a member whose process failed "
                              "(its 'quiet' tag): such a record replays in one process, not federated")
    return changes


class RtiHost(Protocol):
    """What :class:`RtiMembers` uses of its server (:class:`.rti_server.RtiServer`)."""

    @property
    def core(self) -> RtiCore: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def admission(self) -> Admission: ...
    @property
    def phase(self) -> str: ...
    @property
    def start_time(self) -> int | None: ...
    @property
    def session(self) -> bytes: ...

    def refused_request(self, reason: str) -> None:
        """Count and warn of a request refused."""

    def forget_connections(self, f: int) -> None:
        """Federate ``f``'s process is gone: its connections no longer name it."""

    def take_over(self, f: int) -> None:
        """Federate ``f``'s process is forgotten: a new process held for it (a hot swap),
        if any, joins now."""

    def refuse_swap(self, f: int, reason: str) -> None:
        """The hot swap of ``f`` cannot be: its held new process is told ``reason``."""

    def fail(self, reason: str) -> NoReturn:
        """End the federation with ``reason``."""
        raise NotImplementedError


class RtiMembers:
    """The elastic banks' messages of one :class:`.rti_server.RtiServer` (see the module):
    the server is its ``server`` (:class:`RtiHost`), and it sends through the server's
    ``out`` (:class:`.rti_grants.RtiGrants`)."""

    def __init__(self, server: RtiHost, out: RtiGrants, schedule: list[MemberChange] | None) -> None:
        self.server = server
        self.out = out
        self.core = server.core
        self.layout = server.layout
        self.admission = server.admission
        self.schedule = schedule
        #: slots connected and not admitted yet: they get the CHANGEs, not the grants
        self.joiners: set[int] = set()
        self._asked: set[int] = set()  # joiners whose request the core has, unanswered
        self._early: dict[int, int] = {}  # requests before the start: member -> physical time
        self._control_fd: dict[int, int] = {}  # each connected slot's control connection
        self._closed: set[int] = set()  # members whose control connection closed before they resigned
        #: joins asked by a new process while its slot's last incarnation is still on its way
        #: out (failed or leaving, not yet left): member -> physical time; asked once it left
        self._held: dict[int, int | None] = {}
        #: each slot's processes that failed (left without a RESIGN): leaves, for the metrics
        self.failures = [0] * len(self.layout.names)
        #: the elastic slots absent at the start (what every START says)
        self._absent = tuple(f for g in self.layout.elastic for f in g.slots[g.initial:])

    # -- joining -----------------------------------------------------------------------
    def connected(self, f: int, fd: int) -> None:
        """Federate ``f`` passed the handshake over connection ``fd``."""
        if self.layout.elastic_of(f) is None:
            return
        self._control_fd[f] = fd
        self._closed.discard(f)
        srv = self.server
        if srv.start_time is None:
            if not self.core.members.present[f]:
                self.joiners.add(f)  # (its START comes with the others')
            return
        self.route()  # (empty between messages: the record is what the others had)
        self.joiners.add(f)
        self._send(f, self.start_of(f).pack())
        for ch in self.core.members.record:  # the membership so far
            self._send(f, P.Change(ch.tag, ch.member, ch.joined, self._endpoint(ch.member, ch.joined)).pack())

    def start_of(self, f: int) -> P.Start:
        """Federate ``f``'s START: with the slots absent at the start, and whether it is to
        ask to join. The RTI decides, not the process (a pod started later may have been
        given another width: the program's digest does not cover it): a slot absent at the
        start, or any slot's process that connects once the federation runs (a new process
        for a slot present before, too), joins: :attr:`joiners`."""
        srv = self.server
        assert srv.start_time is not None
        return P.Start(srv.start_time, dict(self.admission.endpoints), srv.session, f, self._absent, f in self.joiners,
                       self.out.decentralized, window=srv.core.lead.window)

    def before_start(self, start: int) -> None:
        """The start time is fixed: a schedule is loaded now (the core takes it before its
        start; its tags count from the start)."""
        if self.schedule is not None:
            self.core.members.load_schedule(record_of(self.layout, self.schedule, start))

    def after_start(self) -> None:
        """START went to every federate connected: the schedule's CHANGEs follow, then the
        requests made before the start go to the core."""
        self.route()
        early, self._early = self._early, {}
        for m, physical_time in sorted(early.items()):
            self._request(m, True, physical_time)

    # -- requests ----------------------------------------------------------------------
    def on_message(self, f: int, msg: P.Message) -> None:
        """A membership message from federate ``f`` (the server's other messages are its own)."""
        if isinstance(msg, P.QueryReply):
            self._send_out(self.core.members.on_membership_reply(f, msg.round, msg.tag, msg.took))
        elif isinstance(msg, P.JoinReq):
            self._request(f, True, msg.physical_time)
        elif isinstance(msg, P.LeaveReq):
            self._request(f, False, None)

    def _request(self, f: int, joined: bool, physical_time: int | None) -> None:
        name = self.layout.names[f]
        if self.layout.elastic_of(f) is None:
            self._refuse(f, joined, f"{name} is not a member of an elastic bank: it cannot "
                         f"{'join' if joined else 'leave'}")
        elif self.server.start_time is None:
            if joined:
                self._early.setdefault(f, physical_time or 0)  # (to the core after the start)
            else:
                self._refuse(f, joined, f"{name}: the federation has not started")
        elif joined and self.core.members.leaving(f):
            # a new process for a slot whose last incarnation has not left yet (it failed a
            # moment ago): asked for it once that leave is agreed (retry_held)
            log.info("%s asks to join: held until its last incarnation has left", name)
            self._held[f] = physical_time
        else:
            try:
                grants = self.core.members.request_join(f, physical_time) if joined else self.core.members.request_leave(f)
            except MembershipError as e:
                self._refuse(f, joined, str(e))
                return
            if joined:
                self._asked.add(f)
            log.info("%s asks to %s", name, "join" if joined else "leave")
            self._send_out(grants)

    def swap(self, f: int) -> None:
        """A new process for transient federate ``f`` proved itself while ``f``'s present
        process runs, and is held: the present one leaves at a tag the core agrees on (it
        is told by that CHANGE, as for a leave it asked), and the new one takes its slot
        once it is forgotten (:meth:`_forget`)."""
        try:
            grants = self.core.members.request_swap(f)
        except MembershipError as e:
            self.server.refuse_swap(f, str(e))
            return
        log.info("hot swap of %s: its present process leaves, the new one joins after it", self.layout.names[f])
        self._send_out(grants)

    def _refuse(self, f: int, joined: bool, reason: str) -> None:
        self.server.refused_request(reason)
        self._send(f, P.Refused(joined, reason).pack())

    # -- the core's output -------------------------------------------------------------
    def _send_out(self, grants: list[Grant]) -> None:
        """What a call to the core made due: its outbox first, then its grants (a joiner's
        first grant after its ADMIT, a grant past a change's tag after the CHANGE)."""
        self.route()
        for g in grants:
            self.out.send_grant(g)
        if self._held:
            self.retry_held()

    def retry_held(self) -> None:
        """Ask the core for the joins held (see :meth:`_request`) whose slot has left now."""
        if not self._held:
            return
        core = self.core
        for f in [f for f in sorted(self._held) if not core.members.present[f]]:
            self._request(f, True, self._held.pop(f))

    def route(self) -> None:
        """Send what the core put in its outbox, in its order."""
        core = self.core
        if not core.members.outbox:
            return
        for out in core.members.take_outbox():
            if isinstance(out, Query):
                data = P.Query(out.round, out.tag, out.changes).pack()
                for f in sorted(out.to):
                    self._send(f, data)
            elif isinstance(out, Change):
                data = P.Change(out.tag, out.member, out.joined, self._endpoint(out.member, out.joined)).pack()
                feds, joiners = core.feds, self.joiners
                for f in [f for f in self.admission.control_of if not feds[f].resigned or f in joiners]:
                    self._send(f, data)
                log.info("%s %s at %s", self.layout.names[out.member], "joins" if out.joined else "leaves", out.tag)
                if self.out.tracer is not None:
                    self.out.tracer.record(JOIN if out.joined else LEAVE, out.tag, self.layout.names[out.member])
            elif isinstance(out, RoundEnd):
                data = P.RoundEnd(out.round).pack()
                for f in sorted(out.to):
                    self._send(f, data)
            elif isinstance(out, Admit):
                self.joiners.discard(out.member)
                self._asked.discard(out.member)
                if self.schedule is not None:  # (a replayed join's CHANGE went out without its address)
                    self._peer(out.member, out.tag)
                self._send(out.member, P.Admit(out.tag, out.sent, out.received).pack())
            else:  # Refused
                if out.joined:
                    self._asked.discard(out.member)
                self._refuse(out.member, out.joined, out.reason)

    def _peer(self, m: int, tag: tuple[int, int]) -> None:
        """A replayed joiner ``m`` (joining at ``tag``) is admitted: its data address to every
        connected federate upstream of it, before its ADMIT (they open their links to it)."""
        endpoint = self.admission.endpoints.get(m)
        if endpoint is None:
            return  # (its process is gone: it fails in the core)
        data = P.Peer(tag, m, endpoint).pack()
        feds, joiners = self.core.feds, self.joiners
        for u in sorted(self.layout.direct_upstream(m)):
            if u in self.admission.control_of and (not feds[u].resigned or u in joiners):
                self._send(u, data)

    def _endpoint(self, member: int, joined: bool) -> str:
        """The data address a CHANGE carries: a joiner's, from its HELLO, when its process is
        connected (a replayed join's CHANGE goes out at the start, before it is: then none)."""
        return self.admission.endpoints.get(member, "") if joined else ""

    def _send(self, f: int, data: bytes) -> None:
        self.out.send(f, data)  # (nothing when its process is gone)

    # -- processes that end ------------------------------------------------------------
    def closed(self, f: int, fd: int) -> bool:
        """A connection of elastic slot ``f`` closed. False when the server's Departures
        are to judge it (a member running: its RESIGN may still come); True when done here:
        a process that left or waited to join is forgotten once its control connection
        closes (a join it asked for fails in the core)."""
        if not self.core.feds[f].resigned:
            if fd == self._control_fd.get(f):
                self._closed.add(f)
            return False
        if fd != self._control_fd.get(f):
            return True  # (its heartbeat's: the control connection tells)
        grants = self._fail_in_core(f, "went away before it was admitted") if f in self._asked else []
        self._forget(f)
        self._send_out(grants)
        self.server.take_over(f)
        return True

    def resigned(self, f: int, grants: list[Grant]) -> None:
        """Federate ``f`` resigned; ``grants``: what the core's ``on_resign`` returned (a
        round it was the last one to answer)."""
        self._send_out(grants)
        if f in self._closed:  # (its close was read before its RESIGN: a backlog)
            self._forget(f)
            self.server.take_over(f)

    def failed(self, f: int, why: str) -> None:
        """Member ``f``'s connection died without its RESIGN: it leaves at a tag the core
        agrees on, or the federation ends (its bank would fall below its minimum width)."""
        grants = self._fail_in_core(f, why)
        self.failures[f] += 1
        log.warning("elastic member %s %s: it leaves the federation", self.layout.names[f], why)
        # Its downstream peers stop waiting for what it sent (FederateCore.on_peer_failed):
        # told after every grant computed before its failure, and before the grants after
        # (their counts no longer hold what it may have lost).
        lost = P.Lost(f, self.core.members.slots.quiet.get(f, FOREVER_T)).pack()
        feds, joiners = self.core.feds, self.joiners
        for d in sorted(self.layout.downstream(f)):
            if d in self.admission.control_of and (not feds[d].resigned or d in joiners):
                self._send(d, lost)
        self._forget(f)
        self._send_out(grants)
        self.out.dirty.add(f)  # its peers may be released now (they need not wait for it)
        self.out.flush()
        self.server.take_over(f)

    def superseded(self, name: str) -> None:
        """A HELLO for slot ``name``: if its process's control connection closed without a
        RESIGN, that process is gone (the grace waits only for a RESIGN on its other
        connection, and this one is the only one it has): it fails now, so that the new
        process is not refused as a duplicate."""
        f = self.layout.index(name) if name in self.layout.names else -1
        if f in self._closed and not self.core.feds[f].resigned and self.server.phase == "running":  # (RtiPhase.RUNNING)
            self.failed(f, "ended (its connection to the RTI closed; a new process for its slot is here)")

    def silent(self, f: int, why: str) -> None:
        """Member ``f`` said nothing for the silence timeout: it fails as if its process had
        ended, and its process, if it still runs, is told so (it ends: its slot may take a
        new one)."""
        self._send(f, P.Reject(f"{self.layout.names[f]} {why}: failed by the RTI").pack())
        self.failed(f, why)

    def _fail_in_core(self, f: int, why: str) -> list[Grant]:
        try:
            return self.core.members.on_failed(f)
        except MembershipError as e:
            self.server.fail(f"federate {self.layout.names[f]} {why}, and the federation cannot go on "
                              f"without it: {e}")

    def _forget(self, f: int) -> None:
        """Slot ``f``'s process is gone: its connections are strangers from now on."""
        self.admission.forget(f)
        for s in (self.joiners, self._asked, self._closed):
            s.discard(f)
        self._early.pop(f, None)
        self._held.pop(f, None)
        self._control_fd.pop(f, None)
        self.server.forget_connections(f)

    # -- the record --------------------------------------------------------------------
    def record(self) -> tuple[MemberRecord, ...]:
        """Every change so far (replayed: the whole schedule), tags after the start."""
        start = self.server.start_time or 0
        out = []
        for ch in list(self.core.members.record):  # (a copy: /status reads it from another thread)
            g = self.layout.elastic_of(ch.member)
            assert g is not None
            quiet = None if ch.quiet is None else (ch.quiet[0] - start, ch.quiet[1])
            out.append(MemberRecord((ch.tag[0] - start, ch.tag[1]), self.layout.names[ch.member], g.name,
                                    g.slots.index(ch.member), ch.joined, quiet))
        return tuple(out)
