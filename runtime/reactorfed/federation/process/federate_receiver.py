"""A federate's receiving side (:class:`Receiver`): one poller over the RTI link, the data
port (TCP and the Unix socket), the heartbeat's news and the scheduler's wakeup; the pump
that reads what arrived and hands it to the core (the RTI's messages) and to
:class:`.inbound.Inbound` (the peers'); and the wait for physical time on those sockets."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from ...execution.scheduler import Scheduler
from ...time.clock import Clock, Wakeup
from ...time.tag import TagT
from ..coordination.federate_core import FederateCore, Message
from ..errors import FederationError
from ..io.local import LocalClient
from ..io.transport import Client, Poller
from ..wire import protocol as P
from .federate_members import FederateMembers
from .heartbeat import Liveness, WakeSource
from .inbound import Inbound
from .links import DataLink, DataPort
from .outbound import Outbound

__all__ = ["Receiver"]

log = logging.getLogger("reactorfed.federate")

#: the longest one pump spends reading the data port
_DATA_SLICE_NS = 20_000_000


class Receiver:
    """What a federate reads, and when (see the module)."""

    def __init__(self, name: str, core: FederateCore, inbound: Inbound, out: Outbound,
                 send: Callable[[list[Message]], None], members: FederateMembers | None,
                 from_rti: frozenset[int], clock: Clock) -> None:
        self.name = name
        self.core = core
        self.inbound = inbound
        self.out = out
        self.send = send  # what the core queued, sent (OutboxSender.send)
        self.members = members
        self.from_rti = from_rti  # the messages the RTI may send
        self.clock = clock
        #: the sockets, once the federate joins (:meth:`open`)
        self.rti: Client | None = None
        self.port: DataPort | None = None
        self.live: Liveness | None = None
        self.poller: Poller | None = None
        self.rejected = 0  # bad messages from the RTI (the inbound side counts the data port's)
        self._wake: WakeSource | None = None  # the scheduler's wakeup, once it waits for physical time
        self._woken = False  # the poller saw the wakeup (see pump)

    def open(self, rti: Client, port: DataPort, live: Liveness, clients: Mapping[int, DataLink]) -> Poller:
        """Watch the RTI's connection, the data port and the links to peers on this host."""
        self.rti, self.port, self.live = rti, port, live
        poller = self.poller = Poller(rti, port.tcp, port.monitor)
        # the heartbeat thread's news (an ABORT on its connection, the RTI's connection
        # lost) wakes a wait for grants that will not come; the next look raises it
        poller.add(WakeSource(live.aborted))
        if port.local is not None:
            poller.add(port.local)
        for c in clients.values():
            if isinstance(c, LocalClient):
                poller.add_sender(c)
        return poller

    def wait_until(self, sched: Scheduler, t: int, wakeup: Wakeup) -> bool:
        """Wait for physical time ``t`` on the sockets too, so that what the RTI and the
        peers send is handled while this federate waits (a stop request answered at once,
        not after the tag it waits for). Returns False, for the scheduler to ask
        ``acquire`` again, when ``wakeup`` is set or what arrived changed the next
        event, the stop tag or the stop limit, or took a grant back; True at ``t``. One clock read a wakeup; the
        last fraction of a millisecond (what a poll's timeout cannot measure) is waited
        on the clock alone."""
        wake = self._wake
        if wake is None or wake.event is not wakeup:
            assert self.poller is not None
            wake = self._wake = WakeSource(wakeup)
            self.poller.add(wake)
        core = self.core
        clock = self.clock
        head, stop, limit = sched.next_event_tag(), sched.stop_tag, core.stop.limit
        awaits = sched.awaits_arrivals  # (its physical upstream peers all ended: see Inbound)
        barrier = core.membership.limit  # (a membership round that begins meanwhile holds the tag back)
        # A grant taken back (a joiner upstream whose round began and ended within one
        # pump: the barrier looks unchanged) may leave ``t`` no longer granted. (A stop
        # agreed lowers the scheduler's stop tag: seen below.)
        revoked = core.revoked
        self._woken = False
        while True:
            if wakeup.is_set() or self._woken:
                wakeup.clear()
                return False
            now = clock.now()
            ms = (t - now) // 1_000_000
            if ms <= 0:
                return t <= now or clock.wait_until(t, wakeup)
            cap = core.reports.longest_wait_ms  # (the liveness check's pace, or the advance interval)
            self.pump(sched, ms if ms < cap else cap, now)
            if (sched.next_event_tag() != head or sched.stop_tag != stop or core.stop.limit != limit
                    or core.membership.limit != barrier or sched.awaits_arrivals != awaits
                    or core.revoked != revoked):
                return False
            if core.reports.by_clock is not None:  # (its bound by physical time, renewed)
                core.reports.waiting(head, stop, clock.now())
            if core.outbox:
                self.send(core.outbox)

    def pump(self, sched: Scheduler, timeout_ms: int, now: int) -> None:
        """Handle what arrived, waiting up to ``timeout_ms`` for the first message (``now``:
        the clock, read just before). Runs at every wait: kept in one piece for speed."""
        port = self.port
        assert self.poller is not None and self.rti is not None and port is not None
        live = self.live
        assert live is not None
        if timeout_ms:
            self.out.flush()  # nothing may wait in a batch while this federate waits
        lost = live.lost(now)
        if lost is not None:
            raise FederationError(lost)
        if self.members is not None and self.members.leave_asked:
            req = self.members.take_request()
            if req is not None:
                self.rti.send([req])
        ready = self.poller.wait(timeout_ms)
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
        if self.rti in ready:
            while True:
                frames = self.rti.recv()
                if frames is None:
                    break
                live.heard_data = self.clock.now()
                self.on_rti(sched, frames)
        inb = self.inbound
        local = port.local
        if local is not None and local in ready:
            q = local.received()  # one bounded read of each connection
            on_data = inb.on_data
            inb.over_local = True
            try:
                while q:
                    peer, frames = q.popleft()
                    on_data(sched, peer, frames)
            finally:
                inb.over_local = False
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
        if port.down or port.opening or port.monitor in ready:
            # read again: ``now`` is from before the wait, and a link is down from when
            # its close is seen, not from when the wait began (its grace would run short)
            seen = self.clock.now()
            if port.monitor in ready:
                port.closed(seen, self.core.finished)
            port.judge(seen, self.core.finished, self.name, self.core.membership.failed_peers)
        core = self.core
        if core.promises.fresh:
            core.grant_from_promises()
            if not inb.mid_tag and core.passes_promises:
                # A federate with nothing to do passes its upstream's progress on. Its
                # next event: the head of its queue now (what just arrived included).
                core.pass_on(sched.next_event_tag(), sched.stop_tag, sched.current_tag)
                if core.outbox:
                    self.send(core.outbox)
                if timeout_ms:
                    self.out.flush()

    def credit(self, tag: TagT) -> None:
        """Tag ``tag`` is processed: credit the upstream peers whose payloads it consumed
        (flow control: see :mod:`..coordination.flow`)."""
        due = self.inbound.credits_due(tag)
        if due:
            assert self.port is not None
            frame = P.Credit(tag).pack()
            for conn in due:
                self.port.tcp.send(conn, [frame])

    def on_rti(self, sched: Scheduler, frames: list[memoryview]) -> None:
        """A message from the RTI."""
        try:
            msg = P.parse(frames[0], self.from_rti)
        except P.ProtocolError as e:
            self.rejected += 1
            log.warning("ignoring a bad message from the RTI: %s", e)
            return
        core = self.core
        if isinstance(msg, P.Tag):
            core.on_tag(msg.tag, msg.counts)
        elif isinstance(msg, P.Ptag):
            core.on_ptag(msg.tag, msg.counts)
        elif isinstance(msg, P.Lead):
            core.lead.widen(msg.tag)
        elif isinstance(msg, P.Keys):
            assert self.port is not None
            self.port.learn_keys(msg.keys)
        elif isinstance(msg, P.Watch):
            core.on_watch(msg.tag, sched.next_event_tag(), sched.stop_tag, sched.current_tag, self.clock.now())
            if core.outbox:
                self.send(core.outbox)
        elif isinstance(msg, P.StopRequest):
            core.on_stop_request(msg.tag, sched.current_tag)
            self.send(core.outbox)
            self.out.flush()  # the Mark: a peer may wait for it at the stop tag
        elif isinstance(msg, P.StopGranted):
            sched.lower_stop_tag(core.on_stop_granted(msg.tag), "stop requested")
        elif isinstance(msg, P.Abort):
            raise FederationError(f"the federation was aborted: {msg.reason}")
        elif isinstance(msg, P.Reject):
            raise FederationError(f"the RTI dropped federate {self.name}: {msg.reason}")
        elif self.members is not None:
            try:
                self.members.on_message(sched, msg)
            except P.ProtocolError as e:  # (it names what is not there)
                self.rejected += 1
                log.warning("ignoring a bad message from the RTI: %s", e)
            if core.outbox:
                self.send(core.outbox)  # (a QUERY_REPLY)
