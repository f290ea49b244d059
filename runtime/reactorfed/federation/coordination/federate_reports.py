"""What a federate tells, pure: the :class:`Reports` part of
:class:`.federate_core.FederateCore`: its reports to the RTI (LTC, the latest tag complete,
and NET, its next event, with what it sent and received), its promises to its downstream
peers, its StopMarks and its resignation, and what it sent, counted. The core decides when
a completed tag is reported (it holds one back while it runs through tags it may process
at once: :attr:`Reports.pending`, which this part holds); this part sends what the core
reports.

The core's outbox holds the wire's own messages (built, not yet packed): Ltc, StopReq,
StopReply, QueryReply and Resign for the RTI; Promise and StopMark (a promise made knowing
of a stop: see :mod:`.federate_stop`) for every downstream peer (the present ones, in a
federation with elastic banks: see :meth:`.federate_membership.FederateMembership.send_to`).

**Promises.** After each report, a federate promises its downstream peers it will send
nothing more before ``min(its next event, the earliest tag any input could still reach
it)`` (:meth:`Reports.promise`): its next event is the later of its NET and the tag after
the last it completed (saturating at FOREVER); the second term is its own upstream peers'
(:meth:`.federate_promises.PeerPromises.bound`).

**To the RTI.** With peer promises, the RTI's copy of a report goes at most every
``_RTI_REPORT_NS`` (the RTI's grants are then a backstop), except around zero-delay cycles,
while a stop or a membership round is being agreed, and once the next event reaches the
RTI's WATCH (an upstream federate waits at the edge of its lead window): then at once. While either is, what
is reported and promised goes no further than the tag this federate asked or answered
(:meth:`Reports.held`).

**Physical time.** Where a physical action (or an arrival on a physical link) can reach
an output, an event not queued yet can come at any time from now on: what is reported
and promised goes no further than physical time plus the least delay of such a path
(:meth:`Reports.bound_by_clock`; reactor-c's bounded NET). The physical time of the
latest such bound is :attr:`Reports.floor`: the scheduler stamps no physical action
before it (so an event scheduled on another thread before a bound was made, and queued
after, cannot come before it). While waiting, the federate renews the bound every
advance interval (LF's ``advance-message-interval``), on that interval's grid, so that
it is news at most once an interval.
"""

from __future__ import annotations

from typing import Protocol

from ...time.tag import FOREVER, FOREVER_T, NEVER, NEVER_T, TagT, succ
from ..wire.protocol import Ltc, Promise, Resign, StopMark
from .federate_membership import FederateMembership, Message
from .federate_promises import PeerPromises
from .federate_stop import StopAgreement
from .layout import Layout

__all__ = ["NO_WATCH", "Counted", "Reports"]

#: No WATCH: a tag past every next event (FOREVER_T included)
NO_WATCH: TagT = (FOREVER + 1, 0)

#: With peer-assisted grants, the RTI's copy of the reports (its grants are then a
#: backstop, and it serves status, metrics and stop agreement) goes at most this often.
#: Every report is a message the RTI answers: with 5 federates stepping a closed loop,
#: 50 ms instead of 10 gave ~5% more steps/s (4-agent inference, 3 alternating runs).
_RTI_REPORT_NS = 50_000_000


class Counted(Protocol):
    """What the reports read of their core: what arrived from the upstream peers."""

    #: upstream peer -> data messages received from it (cumulative)
    received: dict[int, int]
    #: all of them
    messages_received: int
    #: the latest tag completed
    done: TagT


class Reports:
    """What federate ``me`` of ``layout`` reports and promises (see the module docstring).
    It reads what arrived of ``core``, the bound from its upstream peers (``promises``),
    and the tags it may not report past (``stop``'s and ``membership``'s limits)."""

    def __init__(self, layout: Layout, me: int, outbox: list[Message], core: Counted, promises: PeerPromises,
                 stop: StopAgreement, membership: FederateMembership, *, peer_grants: bool) -> None:
        self._outbox = outbox
        self._core = core
        self._promises = promises
        self._stop = stop
        self._membership = membership
        self._elastic = membership.elastic
        self._peer_grants = peer_grants
        self._has_downstream = bool(layout.downstream(me))
        self._passes_promises = peer_grants and self._has_downstream
        self._in_zero_cycle = len(layout.scc[me]) > 1
        #: downstream peer -> [messages sent, earliest tag sent since the last report (t, m)]
        self.sent: dict[int, list[int]] = {d: [0, FOREVER, 0] for d in layout.downstream(me)}
        self.ltc: TagT = NEVER_T  # the latest tag complete, reported
        #: a completed tag not reported yet (the core's batching sets it: see send_held)
        self.pending: TagT | None = None
        self.net: TagT = NEVER_T  # the latest next event reported
        self.promised: TagT = NEVER_T  # the latest promise made
        #: the latest NET reported, and the messages received when it was (see report_net)
        self._reported: tuple[TagT, int] = (NEVER_T, -1)
        self.dirty = False  # a report the RTI has not had yet
        self._last_rti_report = 0
        #: decentralized coordination: a message that comes after this federate passed its
        #: tag is processed later, never before the tag after the last completed (see promise)
        self.decentralized = False
        #: when the latest LTC was reported (the core's batching reads it)
        self.last_progress = 0
        #: the RTI's WATCH: report at once when the next event reaches it (an upstream
        #: federate waits at the edge of its lead window: :mod:`.rti_lead`)
        self.watch: TagT = NO_WATCH
        #: (the least delay from physical time to an output, the advance interval), ns;
        #: None: no physical action reaches an output
        self.by_clock: tuple[int, int] | None = None
        #: the longest a wait may last (ms): the liveness check's pace, or the advance
        #: interval where the bound by the clock is renewed then (see waiting)
        self.longest_wait_ms = 100
        #: the physical time of the latest bound made (the scheduler stamps no physical
        #: action before it)
        self.floor = NEVER

    # -- counts --------------------------------------------------------------------------
    def sent_message(self, peer: int, tag: TagT) -> None:
        """A data message to downstream ``peer`` at ``tag`` left."""
        s = self.sent[peer]
        s[0] += 1
        if tag[0] < s[1] or (tag[0] == s[1] and tag[1] < s[2]):
            s[1], s[2] = tag
        if self._elastic:
            self._membership.sent(peer, tag)

    def restart(self, sent: dict[int, int]) -> None:
        """This member joins: the messages its slot sent before, per downstream peer."""
        for d, v in self.sent.items():
            v[0] = sent.get(d, 0)

    def _sent_report(self) -> dict[int, list[int]]:
        """What was sent, for the RTI: counts, and the earliest tags since its last report."""
        rep = {d: list(v) for d, v in self.sent.items()}
        for v in self.sent.values():
            v[1], v[2] = FOREVER, 0
        return rep

    # -- reports and promises (hot: at every report) ---------------------------------------
    def send_ltc(self, tag: TagT, net: TagT, now: int) -> None:
        """``tag`` is complete, and the next event is ``net``: report them."""
        self.last_progress = now
        if tag > self.ltc:
            self.ltc = tag
        self.report(net, now)

    def send_held(self, net: TagT | None, now: int) -> None:
        """Report the completed tag held back (:attr:`pending`, if any) now, with ``net``
        as the next event (None: itself)."""
        pending = self.pending
        if pending is not None:
            self.pending = None
            self.send_ltc(pending, pending if net is None else net, now)

    def watched(self, tag: TagT, net: TagT, done: TagT, now: int) -> None:
        """WATCH for ``tag`` (see :meth:`.federate_core.FederateCore.on_watch`); the next
        event is ``net``, the latest tag complete ``done``: report at once if it reached
        ``tag``, else as soon as it does (see :meth:`report`)."""
        if net >= tag:
            self.pending = None
            self.send_ltc(done, net, now)
            self.flush_rti(now)
        else:
            self.watch = tag

    def report_net(self, head: TagT | None, now: int) -> None:
        """Before waiting: report the next event ``head`` (None: none) if it is news."""
        if not self._has_downstream and self.watch is NO_WATCH:
            # Nobody's grant depends on this federate's next event (a federate on a cycle
            # has downstream), nor does its own, outside a zero-delay cycle: no NET needed
            # (but for an upstream federate's lead window: WATCH).
            return
        net = self.held(head if head is not None else FOREVER_T)
        if self.by_clock is not None:
            net = self._clocked(net, now)
        if net != self._reported[0] or self._core.messages_received != self._reported[1]:
            self.report(net, now)

    def held(self, net: TagT) -> TagT:
        """The next event ``net`` as reported and promised: while a stop is being agreed,
        no later than the tag this federate asked or answered (the stop tag may be that
        one, and what its shutdown reactions send goes out at it); during a membership
        round, no later than its answer."""
        stop = self._stop
        limit = stop.limit
        if limit is not None and stop.granted is None and net > limit:
            net = limit
        limit = self._membership.limit
        if limit is not None and net > limit:
            return limit
        return net

    def report(self, net: TagT, now: int) -> None:
        """Report the latest tag complete and ``net``: a promise to the peers at once; to
        the RTI at once or, where promises advance this federate's peers (outside zero-delay
        cycles), at most every ``_RTI_REPORT_NS``: the RTI then serves as the backstop."""
        agreeing = self._stop.limit is not None or self._membership.limit is not None
        if agreeing:
            net = self.held(net)
        if self.by_clock is not None:
            net = self._clocked(net, now)
        self.net = net
        self._reported = (net, self._core.messages_received)
        self.dirty = True
        if net >= self.watch:
            self.watch = NO_WATCH
            self.flush_rti(now)
        elif not self._peer_grants or self._in_zero_cycle or agreeing or now - self._last_rti_report >= _RTI_REPORT_NS:
            self.flush_rti(now)
        if self._peer_grants:
            self.promise(net)

    def bound_by_clock(self, delay: int, interval: int) -> None:
        """Physical actions reach this federate's outputs, at least ``delay`` ns after
        the clock's reading: bound what it reports and promises by physical time, with a
        new bound at most every ``interval`` ns (see the module docstring)."""
        assert delay >= 0 and interval >= 1_000_000
        if self._has_downstream:
            self.by_clock = (delay, interval)
            self.longest_wait_ms = min(self.longest_wait_ms, interval // 1_000_000)

    def waiting(self, head: TagT | None, stop: TagT, now: int) -> None:
        """The federate waits for physical time (its earliest event at ``head``, None:
        none; its stop tag ``stop``): with a bound by the clock, report it if it moved."""
        if self.by_clock is None:
            return
        net = head if head is not None else FOREVER_T
        if stop != FOREVER_T and net > stop:
            net = stop if self._core.done < stop else FOREVER_T
        if self.pending is not None:
            self.send_held(net, now)
        else:
            self.report_net(net, now)

    def _clocked(self, net: TagT, now: int | None) -> TagT:
        """``net`` no later than what physical time ``now`` allows (None: the latest
        bound's time), on the advance interval's grid; never before the tag after the
        last completed (a physical action comes after it, the scheduler's current tag)."""
        assert self.by_clock is not None
        delay, step = self.by_clock
        if now is not None and now > self.floor:
            self.floor = now
        t = (self.floor + delay) // step * step
        bound = (t, 0)
        after = succ(self._core.done)
        if bound < after:
            bound = after
        return net if net < bound else bound

    def flush_rti(self, now: int) -> None:
        """Send the RTI what it has not had yet."""
        if not self.dirty:
            return
        self.dirty = False
        self._last_rti_report = now
        self._outbox.append(Ltc(self.ltc, self.net, self._sent_report(), dict(self._core.received)))

    def rti_report_wait(self, now: int) -> int:
        """Send the RTI's report if it is due; how long (ms) a wait may last meanwhile (with
        a bound by the clock, no longer than the advance interval: see :meth:`waiting`)."""
        cap = self.longest_wait_ms
        if not self.dirty:
            return cap
        due = self._last_rti_report + _RTI_REPORT_NS
        if now >= due:
            self.flush_rti(now)
            return cap
        return max(1, min(cap, (due - now) // 1_000_000))

    def promise(self, net: TagT) -> None:
        """Promise the downstream peers nothing more before min(this federate's next event
        ``net``, the earliest input it could still get): every message it sends later has a
        tag at least that (plus the link's delay)."""
        if self.by_clock is not None:
            net = self._clocked(net, None)
        after = succ(self.ltc)
        nxt = net if net > after else after  # its next event: never before the tag after its last
        bound = self._promises.bound()
        if self.decentralized and bound < after:
            bound = after  # (a tardy input is processed after the last tag completed)
        base = nxt if nxt < bound else bound
        if base > self.promised:
            self.promised = base
            self._outbox.append(Promise(base))

    # -- a stop, and the last words --------------------------------------------------------
    def mark_stop(self) -> None:
        """This federate now knows of a stop: tell the downstream peers, once, with the most
        it can promise now (see :meth:`.federate_stop.StopAgreement.mark`)."""
        if self._passes_promises:
            mark = self._stop.mark(self.promised)
            if mark is not None:
                self.promised = mark
                self._outbox.append(StopMark(mark))

    def resign(self, tag: TagT) -> None:
        """This federate is done at ``tag``: the final counts for the RTI, and a promise of
        nothing more for the peers (a Mark: it holds whatever stop comes)."""
        self._outbox.append(Resign(tag, self._sent_report(), dict(self._core.received)))
        if self._peer_grants:
            self._stop.resigned()
            self.promised = FOREVER_T
        # With RTI grants only, the Mark is no promise the peers use, but it still tells
        # them this federate is done: its data links to them may close now, while a link
        # that closes before it is a fault (messages on it may be lost).
        if self._peer_grants or self._has_downstream:
            self._outbox.append(StopMark(FOREVER_T))
