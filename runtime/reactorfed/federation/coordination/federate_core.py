"""A federate's coordination logic, pure: no sockets, no clock, no threads. It is to the
federate's driver (:mod:`..process.federate`) what :class:`.rti_core.RtiCore` is to the RTI server.

What goes in: the RTI's grants (:meth:`FederateCore.on_tag`, :meth:`~FederateCore.on_ptag`)
and stop messages, what upstream peers send (their promises, and each message they send,
counted), and the scheduler's events: it is about to take the next tag
(:meth:`~FederateCore.acquire`), a tag is complete and what the next event is
(:meth:`~FederateCore.completed`), a local stop request. Physical time comes in as an
argument (ns), read by the driver. What comes out: whether a tag may be processed now
(the return value of :meth:`~FederateCore.acquire`), the checkpoints of zero-delay cycles,
and messages, queued in :attr:`~FederateCore.outbox` in the order they must leave (reports
and stop messages for the RTI, promises for every downstream peer); the driver sends them
after each call.

**Grants.** A federate with upstream peers processes a tag only when it is granted: up to
the RTI's latest TAG, at exactly its latest PTAG (zero-delay cycles), or up to the tag
before the earliest promise on its inputs (a peer-assisted grant, below); whichever is
further ahead. Every grant from the RTI also says how many messages from each upstream
peer must have arrived before it is used (the peers reported them sent): the grant waits
for them.

**Peer promises** (null messages, as in Chandy and Misra's conservative simulation). After
each report, a federate promises its downstream peers it will send nothing more before
``min(its next event, the earliest tag any input could still reach it)``; the second term
comes from its own upstream peers' promises plus each link's delay. Links are FIFO: what
was sent before a promise has arrived when the promise does. A federate with nothing to do
passes its upstream's progress on as it arrives (:meth:`~FederateCore.pass_on`).

**LTC batching.** While a federate runs through tags it may process at once, it reports a
completed tag (LTC) at most every ``_LTC_BATCH_NS``, with the tags that follow
(``reports.pending``); it reports at once when it is about to wait.

**Its parts**, each owning its state. The core holds a reference to each: on its hot paths
(``acquire``, ``completed``) it reads their state as attributes, and calls into a part only
for that part's work (a report, a promise):

* :attr:`~FederateCore.promises` (:mod:`.federate_promises`): what the upstream peers
  promised, and the earliest tag anything could still arrive at (the grants from promises);
* :attr:`~FederateCore.reports` (:mod:`.federate_reports`): what this federate reports to
  the RTI (at most every ``_RTI_REPORT_NS`` with peer promises) and promises downstream,
  and what it sent, counted; it reads what arrived of the core (``received``);
* :attr:`~FederateCore.cycles` (:mod:`.federate_cycles`): zero-delay cycles, whose members
  report at once and advance on the RTI's PTAG, and within a tag stop at checkpoints for
  their inputs on the cycle;
* :attr:`~FederateCore.counts` (:mod:`.federate_counts`): the messages the grants
  require from each upstream peer, against what arrived (``received``, counted here);
* :attr:`~FederateCore.lead` (:mod:`.federate_lead`): where the lead window ends, which
  the RTI's LEAD widens (a WATCH is the reports' to answer);
* :attr:`~FederateCore.stop` (:mod:`.federate_stop`): where the stop agreement is; the
  core's stop methods apply it to the grants, and StopMarks tell the peers of a stop;
* :attr:`~FederateCore.membership` (:mod:`.federate_membership`, elastic banks, issue 19):
  a membership round is answered and held to as a stop is, and changes apply at their
  tags; it reads of the core how far it got and what is granted, and asks it to hold its
  grants back (:class:`.federate_membership.Progress`). A federation without elastic banks
  takes none of its paths.
"""

from __future__ import annotations

from ...errors import ValidationError
from ...time.tag import NEVER, TagT, pred
from ..wire.protocol import StopReply, StopReq
from .federate_counts import GrantCounts
from .federate_cycles import CycleLinks
from .federate_lead import FederateLead
from .federate_maxwait import MaxWait
from .federate_membership import FederateMembership, Message
from .federate_promises import PeerPromises
from .federate_reports import Reports
from .federate_stop import StopAgreement
from .layout import Layout
from .presence import Presence
from .rti_core import FOREVER_T, NEVER_T

__all__ = ["WAIT", "FederateCore", "Message"]

#: What :meth:`FederateCore.acquire` returns when the tag may not be processed yet (a tag
#: no event has: compared by identity).
WAIT: TagT = (NEVER, -1)
#: While a federate runs through tags it may already process, it reports completed tags
#: (LTC) at most this often; it reports at once when it is about to wait.
_LTC_BATCH_NS = 3_000_000
#: A federate without downstream peers reports its progress at most this often (the RTI
#: shows it; nobody's grant depends on it).
_PROGRESS_NS = 100_000_000


class FederateCore:
    """The coordination state of federate ``me`` of ``layout``, and its parts (see the
    module docstring)."""

    def __init__(self, layout: Layout, me: int, *, peer_grants: bool = True, fast: bool = False) -> None:
        self.me = me
        self.has_upstream = bool(layout.upstream(me))
        self.has_downstream = bool(layout.downstream(me))
        self.peer_grants = peer_grants
        #: the scheduler does not wait for physical time (a tag whose time is ahead of the
        #: clock is then processed at once)
        self.fast = fast
        #: promises go to downstream peers as they are due (see pass_on)
        self.passes_promises = peer_grants and self.has_downstream
        self.in_zero_cycle = len(layout.scc[me]) > 1
        self.start = 0
        #: messages for the RTI and the peers, in order; the driver sends and clears them
        self.outbox: list[Message] = []
        #: after acquire returned WAIT: how long (ms) the driver may wait for messages
        #: before asking again (a report to the RTI may be due then)
        self.wait_ms = 100
        # -- grants
        self.grant: TagT = NEVER_T  # every tag up to this one may be processed
        self.ptag: TagT | None = None  # this one may be processed (provisionally)
        self.local_grants = 0  # grants taken from promises
        self.revoked = 0  # grants taken back (hold_below): a tag waited for may be no more
        #: what the upstream peers promised: the earliest tag anything could still arrive at
        self.promises = PeerPromises(layout, me)
        # -- what arrived from upstream peers
        #: upstream peer -> data messages received from it (cumulative)
        self.received: dict[int, int] = {u: 0 for u in layout.direct_upstream(me)}
        #: what the grants require of it
        self.counts = GrantCounts(self.received)
        self.messages_received = 0
        #: upstream peers that sent their last (resigned): their data links may close now
        self.finished: set[int] = set()
        self.done: TagT = NEVER_T  # the latest tag complete (reported or not)
        #: this federate's links on zero-delay cycles, and what arrived on them
        self.cycles = CycleLinks()
        self._cyclic = False  # it has some (see checkpoints)
        self.stop = StopAgreement()
        self.membership = FederateMembership(me, Presence(layout), self.promises, self.outbox, self)
        self._elastic = self.membership.elastic
        self._src_of = {lk.id: lk.src for lk in layout.links if lk.dst == me}  # input link -> its sender
        #: what this federate reports and promises, and what it sent
        self.reports = Reports(layout, me, self.outbox, self, self.promises, self.stop, self.membership,
                               peer_grants=peer_grants)
        #: decentralized coordination's maxwait (None: centralized, the RTI grants)
        self.maxwait: MaxWait | None = None
        #: where the lead window ends (the RTI's LEAD widens it: ``lead.widen``)
        self.lead = FederateLead()

    def decentralize(self, layout: Layout) -> None:
        """The federation (``layout``) is decentralized: no RTI grant; see :mod:`.federate_maxwait`."""
        if not self.peer_grants:  # (nothing else would tell a federate its inputs are complete)
            raise ValidationError("decentralized coordination advances on the peers' promises: not with --no-peer-grants")
        self.maxwait = MaxWait(layout, self.me, fast=self.fast)
        self.reports.decentralized = True
        if self.has_upstream:  # (no RTI grant will come: what the start bound allows already)
            self.grant_from_promises()

    def begin(self, start: int, window: int | None = None) -> None:
        """The federation started at ``start``, with a lead window of ``window`` ns (None:
        none): before its first promise, a peer might send at the start tag."""
        self.start = start
        # (in real time physical time bounds how far a federate runs ahead, and a federate
        # held at the window's edge would see its physical actions late: the window is for
        # --fast runs only)
        if window is not None and self.has_downstream and self.fast:
            self.lead.begin(start, window)
        self.promises.begin(start)
        if self._elastic:
            self.membership.begin(start)

    def checkpoints(self, outs: list[tuple[int, int]], ins: list[tuple[int, int]]) -> list[int]:
        """This federate's links on zero-delay cycles (decentralized: and its inputs with an
        absent_after): the levels the scheduler must stop at (see
        :meth:`.federate_cycles.CycleLinks.checkpoints`)."""
        self._cyclic = bool(outs or ins)
        if self._elastic and ins:
            src = self._src_of
            present = self.membership.presence.present
            self.cycles.absent = lambda lid, tag: not present(src[lid], tag)
        return self.cycles.checkpoints(outs, ins)

    # -- the scheduler's events ----------------------------------------------------------
    # acquire and completed run at every tag: hot paths, written for speed.
    def acquire(self, head: TagT | None, stop: TagT, now: int) -> TagT | None:
        """The scheduler's earliest event is at ``head`` (None: none), its stop tag ``stop``.
        Returns the tag it may process now (``head``, or ``stop`` when that comes first;
        None: nothing is left anywhere), or :data:`WAIT`: then :attr:`wait_ms` says how long
        to wait for messages before asking again, and what must be reported before
        waiting is in the outbox."""
        if stop != FOREVER_T and (head is None or head > stop):
            head = stop  # the stop tag is processed (shutdown) once it is safe
        p = self.ptag
        if p is not None and p > self.done and (head is None or p < head):
            # A PTAG for a tag with no event here: processed all the same, so that this
            # federate's outputs on a zero-delay cycle are announced absent at it (a peer
            # granted it waits for them; reactor-c's handle_provisional_tag_advance_grant).
            head = p
        agreement = self.stop
        limit = agreement.limit
        if limit is not None and agreement.granted is None and (head is None or head >= limit):
            pass  # wait for the stop to be agreed before reaching the tag it may come at
        elif (barrier := self.membership.limit) is not None and (head is None or head >= barrier):
            pass  # wait for the membership round to end before reaching the tag answered
        elif head is not None and head > self.lead.limit:
            pass  # at the edge of the lead window: wait for the RTI to widen it (LEAD)
        elif not self.has_upstream:
            if self.reports.dirty:
                self.reports.rti_report_wait(now)
            return head
        elif head is not None:
            if (head <= self.grant or head == self.ptag) and (self.counts.met or self.counts.ok()):
                return head
            if self.maxwait is not None and self.maxwait.passed(head, now):
                return head  # decentralized: what has not arrived for it by now is absent
        elif self.grant >= FOREVER_T and self.counts.ok():
            return None
        reports = self.reports
        if reports.pending is not None:
            reports.send_held(head if head is not None else FOREVER_T, now)
        reports.report_net(head, now)
        if head is not None and head > self.lead.limit:
            # The RTI widens the window only for a federate it knows waits there: now, not
            # at the reports' usual period.
            self.lead.waits += 1
            reports.flush_rti(now)
        self.wait_ms = reports.rti_report_wait(now)
        if self.maxwait is not None and head is not None:
            self.wait_ms = min(self.wait_ms, self.maxwait.wait_ms(head, now))
        return WAIT

    def completed(self, tag: TagT, next_tag: TagT | None, stop: TagT, now: int) -> None:
        """``tag`` is complete; the earliest event queued is at ``next_tag`` (None: none)
        and the stop tag is ``stop``. Reports it, or holds the report back (``reports.pending``)
        while the next tag can be processed at once."""
        self.done = tag
        if self._elastic and self.membership.ahead:
            self.membership.processed(tag)
        net = next_tag if next_tag is not None else FOREVER_T
        if stop != FOREVER_T and net > stop:
            net = stop if tag < stop else FOREVER_T
        reports = self.reports
        if (self.has_downstream or self.stop.limit is not None or now - reports.last_progress > _PROGRESS_NS
                or net >= reports.watch):
            if self.has_downstream and now - reports.last_progress < _LTC_BATCH_NS and self._goes_on(net, now):
                # The next tag may be processed at once: report this one later, with the
                # tags that follow (one LTC, one grant downstream, for a run of tags). Only
                # a report is delayed, so downstream grants come later, never wrong.
                reports.pending = tag
            else:
                reports.pending = None
                reports.send_ltc(tag, net, now)

    def _goes_on(self, net: TagT, now: int) -> bool:
        """Whether ``net``, the next tag, will be processed without waiting for anything."""
        return (
            net < FOREVER_T
            and self.stop.limit is None
            and self.membership.limit is None
            and not self._cyclic
            and (self.fast or net[0] <= now)
            and net <= self.lead.limit
            and (not self.has_upstream or (net <= self.grant and (self.counts.met or self.counts.ok())))
        )

    def report_held(self, now: int) -> None:
        """Report a completed tag held back (see completed) now, with itself as the next
        event (the next event is not known here): a peer may need it before this federate
        waits next (the driver is about to wait for a peer to free ring space)."""
        self.reports.send_held(None, now)

    def inputs_ready(self, tag: TagT, level: int, now: int = 0) -> bool:
        """At a checkpoint before ``level`` of ``tag``: whether every input on a zero-delay
        cycle read from this level on is known at ``tag`` (its value or its absence
        arrived, or ``tag`` is fully granted), and every message the grants require is here;
        under decentralized coordination, or ``now`` is past their maxwait."""
        if self.maxwait is not None and self.cycles.passed(tag, level, self.maxwait, now):
            return True
        return (tag <= self.grant or self.cycles.known(tag, level)) and self.counts.ok()

    # -- what arrives from upstream peers ------------------------------------------------
    def on_data(self, peer: int, link: int, tag: TagT) -> bool:
        """A data message from ``peer`` on ``link`` at ``tag`` arrived (it counts). Whether to deliver
        it: always, but with elastic banks (:meth:`.federate_membership.FederateMembership.arrived`)."""
        rec = self.received
        rec[peer] = rec.get(peer, 0) + 1
        self.messages_received += 1
        status = self.cycles.status
        if tag > status.get(link, NEVER_T):
            status[link] = tag
        return self.membership.arrived(peer, tag) if self._elastic else True

    def on_mark(self, peer: int, tag: TagT) -> None:
        """``peer`` promises nothing more before ``tag``, knowing of a stop (or resigned),
        and so are its promises from now on (see :class:`..wire.protocol.StopMark`)."""
        if tag >= FOREVER_T:
            self.finished.add(peer)
            if peer in self.membership.presence.slots:  # an incarnation's last words: its next counts
                self.membership.incarnation_done(peer)
                return
        if self.peer_grants:  # (with RTI grants only, a Mark says only that the peer is done)
            self.promises.on_mark(peer, tag)

    # (A promise goes to the promises part: :meth:`.federate_promises.PeerPromises.on_promise`.)
    def grant_from_promises(self) -> None:
        """Promises arrived: every tag before the earliest tag anything could still
        arrive at is granted."""
        g = pred(self.promises.looked())
        if g > self.grant:
            self.grant = g
            self.local_grants += 1

    def pass_on(self, head: TagT | None, stop: TagT, current: TagT) -> None:
        """After promises arrived: promise the downstream peers what this federate can now
        (its next event is ``head``, None: none; its stop tag ``stop``; the scheduler's
        current tag ``current``, in progress if it is later than the last completed)."""
        h = head if head is not None else FOREVER_T
        if h > stop:
            h = (stop[0], stop[1])
        if current > self.done and h > current:
            # A tag in progress (a reaction waits for a stop agreement inside it): its
            # outputs are still to come.
            h = current
        self.reports.promise(self.reports.held(h))

    # -- what arrives from the RTI -------------------------------------------------------
    def on_tag(self, tag: TagT, counts: dict[int, int]) -> None:
        """TAG: every tag up to ``tag`` may be processed once ``counts`` (messages per
        upstream peer) have arrived."""
        if tag > self.grant:
            self.grant = tag
        self.counts.require(counts)

    def on_ptag(self, tag: TagT, counts: dict[int, int]) -> None:
        """PTAG: ``tag`` may be processed (provisionally: inputs on a zero-delay cycle may
        still come within it) once ``counts`` have arrived."""
        if self.ptag is None or tag > self.ptag:
            # A late PTAG (a peer-assisted grant came first) must not take back a newer one.
            self.ptag = tag
        # Every tag before it is granted too: nothing can reach this federate before its
        # EIMT, which is ``tag`` (a PTAG's counts cover all that was sent before it). So a
        # PTAG that comes before an earlier one was used does not strand the earlier tag.
        before = pred(tag)
        if before > self.grant:
            self.grant = before
        self.counts.require(counts)

    def on_watch(self, tag: TagT, head: TagT | None, stop: TagT, current: TagT, now: int) -> None:
        """WATCH: an upstream federate waits at the edge of its lead window for this one's
        next event (``head``, None: none; no later than the stop tag ``stop``, as acquire
        reports it; the scheduler is at ``current``) to reach ``tag``. Reports at once if it
        has, else as soon as it does (:meth:`.federate_reports.Reports.report`)."""
        net = min(head if head is not None else FOREVER_T, stop)  # (past it: undone by the next report)
        if current > self.done and net > current:
            net = current  # (a tag in progress: its outputs are still to come)
        self.reports.watched(tag, net, self.done, now)

    # -- the stop agreement (its state: the stop part, see federate_stop) ----------------
    def on_stop_request(self, tag: TagT, current: TagT) -> None:
        """The RTI asks to stop at ``tag``; this federate is at ``current``. Answers with
        the earliest tag it can stop at, and does not reach it until the stop is agreed."""
        reply = self.stop.answer(tag, current, self.start)
        self.reports.mark_stop()
        self.outbox.append(StopReply(reply))

    def on_stop_granted(self, tag: TagT) -> TagT:
        """The federation stops at ``tag`` (the driver lowers the scheduler's stop tag).
        Grants made before the agreement stop short of it: the RTI computed them, and the
        peers made the promises they came from, without knowing of the stop, which gives
        peers an event at ``tag``. The RTI's grants from here on, and the peers' promises
        since their Marks, know of it (see PeerPromises)."""
        self.stop.agreed(tag)
        if self.grant >= tag:
            self.grant = pred(tag)
        if self.ptag is not None and self.ptag >= tag:
            self.ptag = None
        self.promises.agreed(tag)
        if self.peer_grants and self.has_upstream:
            self.grant_from_promises()
        return tag

    def request_stop(self, tag: TagT, head: TagT | None, current: TagT, now: int) -> None:
        """Ask the federation to stop at ``tag`` (the scheduler's earliest event is at
        ``head``, its current tag ``current``): the RTI gets everything held back first.
        This federate goes no further than ``tag`` until the stop is agreed
        (``stop.granted``), and promises nothing past it meanwhile."""
        self.stop.ask(tag)
        self.reports.mark_stop()
        self.flush_reports(head, current, now)
        self.outbox.append(StopReq(tag))

    def resign(self, tag: TagT) -> None:
        """This federate is done at ``tag``: the final counts for the RTI, and a promise of
        nothing more for the peers (a Mark: it holds whatever stop comes)."""
        self.reports.resign(tag)

    # -- membership: its grants and counts (the rest: the membership part) -----------------
    def admit(self, tag: TagT, sent: dict[int, int], received: dict[int, int]) -> None:
        """This member joins at ``tag`` (the RTI's Admit, after the changes so far and
        :meth:`begin`): its slot's counts, and every upstream peer's bound from ``tag``."""
        rec = self.received  # (in place: the counts part reads it)
        for u in rec:
            rec[u] = received.get(u, 0)
        self.reports.restart(sent)
        self.counts.clear()
        self.membership.admitted(tag)

    def on_peer_failed(self, u: int, quiet: TagT = FOREVER_T) -> None:
        """Upstream ``u`` failed (the RTI's verdict, LOST: after every grant it computed
        before; its data link may have closed without its last promise, or not). What it
        sent and this federate has not received may be lost: no grant waits for it. What it
        sent at or after ``quiet`` (the tag after its last completed one) is dropped."""
        self.membership.peer_failed(u, quiet, self.counts.forgive(u))

    def peer_connected(self, u: int) -> None:
        """A new process for upstream slot ``u`` opened its data connection (its next
        incarnation's): what is known of the last one's end is about that one."""
        self.finished.discard(u)
        self.membership.peer_connected(u)

    def hold_below(self, bound: TagT) -> None:
        """An upstream slot can now send from ``bound`` on (the membership part: it joins):
        a grant taken from the other peers' promises that reaches it no longer holds."""
        if self.peer_grants and self.grant >= bound:
            self.grant = pred(bound)
            self.revoked += 1

    def granted(self, tag: TagT) -> bool:
        """Whether ``tag`` is granted, with every message the grants count here."""
        return not self.has_upstream or ((tag <= self.grant or tag == self.ptag) and self.counts.ok())

    # -- before a stop request: what is held back, now -----------------------------------
    def flush_reports(self, head: TagT | None, current: TagT, now: int) -> None:
        """Report everything held back now (a completed tag, a report for the RTI); the
        earliest queued event is at ``head`` (None: none), the scheduler's current tag is
        ``current`` (in progress if it is later than the last completed: then it is the
        next event, since its outputs are still to come)."""
        net = head if head is not None else FOREVER_T
        if current > self.done and net > current:
            net = current
        reports = self.reports
        if reports.pending is not None:
            reports.send_held(net, now)
        elif net < reports.net:
            reports.report(net, now)  # an event came before the one last reported
        reports.flush_rti(now)
