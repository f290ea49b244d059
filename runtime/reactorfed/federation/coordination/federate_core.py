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
``min(its next event, the earliest tag any input could still reach it)``, where its next
event is the later of its NET and the tag after the last it completed (saturating at
FOREVER), and the second term comes from its own upstream peers' promises plus each link's
delay. Links are FIFO: what was sent before a promise has arrived when the promise does.
A federate with nothing to do passes its upstream's progress on as it arrives.

**LTC batching.** While a federate runs through tags it may process at once, it reports a
completed tag (LTC) at most every ``_LTC_BATCH_NS``, with the tags that follow; it reports
at once when it is about to wait. With peer promises, the RTI's copy of a report goes at
most every ``_RTI_REPORT_NS`` (the RTI's grants are then a backstop), except around
zero-delay cycles and while a stop is being agreed.

**Zero-delay cycles.** Promises cannot advance around a zero-delay cycle: its members
report to the RTI at once and advance on its PTAG. Within a tag, a member sends each of
its outputs on the cycle as soon as the reactions that could write it have run, and waits,
before the first reaction that reads an input on the cycle, until that input's value or
absence at the tag has arrived: the scheduler stops at those levels (the checkpoints).

**Stop agreement**, with the StopMarks that tell the peers of a stop: see :mod:`.federate_stop`.

**Membership** (elastic banks, issue 19): a membership round is answered and held to as a
stop is, and changes apply at their tags; see :mod:`.federate_membership`. A federation
without elastic banks takes none of its paths.
"""

from __future__ import annotations

from ...time.tag import FOREVER, NEVER, TagT, pred, succ
from ..wire.protocol import Ltc, Promise, Resign, StopMark, StopReply, StopReq
from .federate_membership import FederateMembership, Message
from .federate_promises import PeerPromises
from .federate_stop import StopAgreement
from .layout import Layout
from .presence import Presence
from .rti_core import FOREVER_T, NEVER_T

__all__ = [
    "WAIT", "FederateCore", "Message",
]

#: What :meth:`FederateCore.acquire` returns when the tag may not be processed yet (a tag
#: no event has: compared by identity).
WAIT: TagT = (NEVER, -1)
#: While a federate runs through tags it may already process, it reports completed tags
#: (LTC) at most this often; it reports at once when it is about to wait.
_LTC_BATCH_NS = 3_000_000
#: With peer-assisted grants, the RTI's copy of the reports (its grants are then a
#: backstop, and it serves status, metrics and stop agreement) goes at most this often.
#: Every report is a message the RTI answers: with 5 federates stepping a closed loop,
#: 50 ms instead of 10 gave ~5% more steps/s (4-agent inference, 3 alternating runs).
_RTI_REPORT_NS = 50_000_000
#: A federate without downstream peers reports its progress at most this often (the RTI
#: shows it; nobody's grant depends on it).
_PROGRESS_NS = 100_000_000


# -- what comes out ----------------------------------------------------------------------
# The core's outbox holds the wire's own messages (built, not yet packed): Ltc, StopReq,
# StopReply, QueryReply and Resign for the RTI; Promise and StopMark (a promise made
# knowing of a stop: see federate_stop) for every downstream peer (the present ones, in a
# federation with elastic banks: see send_to).
# (Message: see federate_membership, where QueryReply joins them.)


class FederateCore:
    """The coordination state of federate ``me`` of ``layout`` (see the module docstring).
    Its parts, each owning its state: :attr:`promises`, what its upstream peers promised
    (:class:`.federate_promises.PeerPromises`); :attr:`stop`, where its stop agreement is
    (:class:`.federate_stop.StopAgreement`); :attr:`membership`, for elastic banks
    (:class:`.federate_membership.FederateMembership`, which reads :attr:`done` and calls
    :meth:`hold_below`)."""

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
        self.required: dict[int, int] = {}  # upstream peer -> messages to have before using the grants
        self._counts_met = True  # see counts_ok
        self.local_grants = 0  # grants taken from promises
        #: what the upstream peers promised: the earliest tag anything could still arrive at
        self.promises = PeerPromises(layout, me)
        # -- what arrived from upstream peers
        #: upstream peer -> data messages received from it (cumulative)
        self.received: dict[int, int] = {u: 0 for u in layout.direct_upstream(me)}
        self.messages_received = 0
        #: link id -> the latest tag whose value or absence arrived on it (for cycles)
        self.link_status: dict[int, TagT] = {}
        #: upstream peers that sent their last (resigned): their data links may close now
        self.finished: set[int] = set()
        # -- what this federate sent, and reported
        #: downstream peer -> [messages sent, earliest tag sent since the last report (t, m)]
        self.sent: dict[int, list[int]] = {d: [0, FOREVER, 0] for d in layout.downstream(me)}
        self.ltc: TagT = NEVER_T  # the latest tag complete, reported
        self.done: TagT = NEVER_T  # the latest tag complete (reported or not)
        self.ltc_pending: TagT | None = None  # a completed tag not reported yet (batching)
        self.net: TagT = NEVER_T  # the latest next event reported
        self.promised: TagT = NEVER_T  # the latest promise made
        #: the latest NET reported, and the messages received when it was (see _report_net)
        self._reported: tuple[TagT, int] = (NEVER_T, -1)
        self._rti_dirty = False  # a report the RTI has not had yet
        self._last_rti_report = 0
        self._last_progress = 0
        # -- zero-delay cycles
        self._cyclic_outs: list[tuple[int, int]] = []  # (send after this level, link id)
        self._cyclic_ins: list[tuple[int, int]] = []  # (needed before this level, link id)
        self._sent_this_tag: set[int] = set()  # links whose value or absence went at _sent_at
        self._sent_at: TagT = NEVER_T
        self.stop = StopAgreement()
        self.membership = FederateMembership(me, Presence(layout), self.promises, self.outbox, self)
        self._elastic = self.membership.elastic

    def begin(self, start: int) -> None:
        """The federation started at ``start``: before its first promise, a peer might send
        at the start tag."""
        self.start = start
        self.promises.begin(start)
        if self._elastic:
            self.membership.begin(start)

    def checkpoints(self, outs: list[tuple[int, int]], ins: list[tuple[int, int]]) -> list[int]:
        """This federate's links on zero-delay cycles: ``outs``, (the level after the last
        reaction that may write it, link id); ``ins``, (the level of the first reaction
        that reads it, link id). The levels the scheduler must stop at, in order."""
        self._cyclic_outs = list(outs)
        self._cyclic_ins = list(ins)
        return sorted({lvl for lvl, _ in outs} | {lvl for lvl, _ in ins})

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
        elif not self.has_upstream:
            if self._rti_dirty:
                self._rti_report_wait(now)
            return head
        elif head is not None:
            if (head <= self.grant or head == self.ptag) and (self._counts_met or self.counts_ok()):
                return head
        elif self.grant >= FOREVER_T and self.counts_ok():
            return None
        pending = self.ltc_pending
        if pending is not None:
            self._send_ltc(pending, head if head is not None else FOREVER_T, now)
        self._report_net(head, now)
        self.wait_ms = self._rti_report_wait(now)
        return WAIT

    def completed(self, tag: TagT, next_tag: TagT | None, stop: TagT, now: int) -> None:
        """``tag`` is complete; the earliest event queued is at ``next_tag`` (None: none)
        and the stop tag is ``stop``. Reports it, or holds the report back (``ltc_pending``)
        while the next tag can be processed at once."""
        self.done = tag
        if self._elastic and self.membership.ahead:
            self.membership.processed(tag)
        net = next_tag if next_tag is not None else FOREVER_T
        if stop != FOREVER_T and net > stop:
            net = stop if tag < stop else FOREVER_T
        if self.has_downstream or self.stop.limit is not None or now - self._last_progress > _PROGRESS_NS:
            if self.has_downstream and now - self._last_progress < _LTC_BATCH_NS and self._goes_on(net, now):
                # The next tag may be processed at once: report this one later, with the
                # tags that follow (one LTC, one grant downstream, for a run of tags). Only
                # a report is delayed, so downstream grants come later, never wrong.
                self.ltc_pending = tag
            else:
                self._send_ltc(tag, net, now)

    def _goes_on(self, net: TagT, now: int) -> bool:
        """Whether ``net``, the next tag, will be processed without waiting for anything."""
        return (
            net < FOREVER_T
            and self.stop.limit is None
            and self.membership.limit is None
            and not self._cyclic_outs
            and not self._cyclic_ins
            and (self.fast or net[0] <= now)
            and (not self.has_upstream or (net <= self.grant and (self._counts_met or self.counts_ok())))
        )

    def report_held(self, now: int) -> None:
        """Report a completed tag held back (see completed) now, with itself as the next
        event (the next event is not known here): a peer may need it before this federate
        waits next (the driver is about to wait for a peer to free ring space)."""
        pending = self.ltc_pending
        if pending is not None:
            self._send_ltc(pending, pending, now)

    def outputs_due(self, tag: TagT, level: int) -> list[int]:
        """At a checkpoint before ``level`` of ``tag``: the links on a zero-delay cycle whose
        value (or absence) can go now, each once a tag."""
        done = self._sent_this_tag
        if tag != self._sent_at:
            self._sent_at = tag
            done.clear()
        due = [lid for lvl, lid in self._cyclic_outs if lvl <= level and lid not in done]
        done.update(due)
        return due

    def inputs_ready(self, tag: TagT, level: int) -> bool:
        """At a checkpoint before ``level`` of ``tag``: whether every input on a zero-delay
        cycle read from this level on is known at ``tag`` (its value or its absence
        arrived, or ``tag`` is fully granted), and every message the grants require is here."""
        if tag > self.grant:
            status = self.link_status
            for need, lid in self._cyclic_ins:
                if need <= level and status.get(lid, NEVER_T) < tag:
                    return False
        return self.counts_ok()

    # -- what arrives from upstream peers ------------------------------------------------
    def on_data(self, peer: int, link: int, tag: TagT) -> bool:
        """A data message from ``peer`` on ``link`` at ``tag`` arrived (it counts).
        Whether to deliver it: always, but in a federation with elastic banks (see
        :meth:`.federate_membership.FederateMembership.arrived`)."""
        rec = self.received
        rec[peer] = rec.get(peer, 0) + 1
        self.messages_received += 1
        status = self.link_status
        if tag > status.get(link, NEVER_T):
            status[link] = tag
        return self.membership.arrived(peer, tag) if self._elastic else True

    def on_absent(self, link: int, tag: TagT) -> None:
        """``link`` (on a zero-delay cycle) carries nothing at ``tag``."""
        if tag > self.link_status.get(link, NEVER_T):
            self.link_status[link] = tag

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
        self._promise(self._held(h))

    # -- what arrives from the RTI -------------------------------------------------------
    def on_tag(self, tag: TagT, counts: dict[int, int]) -> None:
        """TAG: every tag up to ``tag`` may be processed once ``counts`` (messages per
        upstream peer) have arrived."""
        if tag > self.grant:
            self.grant = tag
        self._require(counts)

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
        self._require(counts)

    # -- the stop agreement (its state: the stop part, see federate_stop) ----------------
    def on_stop_request(self, tag: TagT, current: TagT) -> None:
        """The RTI asks to stop at ``tag``; this federate is at ``current``. Answers with
        the earliest tag it can stop at, and does not reach it until the stop is agreed."""
        reply = self.stop.answer(tag, current, self.start)
        self._mark_stop()
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
        self._mark_stop()
        self.flush_reports(head, current, now)
        self.outbox.append(StopReq(tag))

    def _mark_stop(self) -> None:
        """This federate now knows of a stop: tell the downstream peers, once."""
        if self.passes_promises:
            mark = self.stop.mark(self.promised)
            if mark is not None:
                self.promised = mark
                self.outbox.append(StopMark(mark))

    def resign(self, tag: TagT) -> None:
        """This federate is done at ``tag``: the final counts for the RTI, and a promise of
        nothing more for the peers (a Mark: it holds whatever stop comes)."""
        self.outbox.append(Resign(tag, self._sent_report(), dict(self.received)))
        if self.peer_grants:
            self.stop.resigned()
            self.promised = FOREVER_T
        # With RTI grants only, the Mark is no promise the peers use, but it still tells
        # them this federate is done: its data links to them may close now, while a link
        # that closes before it is a fault (messages on it may be lost).
        if self.peer_grants or self.has_downstream:
            self.outbox.append(StopMark(FOREVER_T))

    # -- membership: its grants and counts (the rest: the membership part) -----------------
    def admit(self, tag: TagT, sent: dict[int, int], received: dict[int, int]) -> None:
        """This member joins at ``tag`` (the RTI's Admit, after the changes so far and
        :meth:`begin`): its slot's counts, and every upstream peer's bound from ``tag``."""
        self.received = {u: received.get(u, 0) for u in self.received}
        for d, v in self.sent.items():
            v[0] = sent.get(d, 0)
        self.required = {}
        self._counts_met = True
        self.membership.admitted(tag)

    def on_peer_failed(self, u: int) -> None:
        """Upstream ``u`` failed (the RTI's verdict, LOST: after every grant it computed
        before; its data link may have closed without its last promise, or not). What it
        sent and this federate has not received may be lost: no grant waits for it."""
        got = self.received.get(u, 0)
        if self.required.get(u, 0) > got:
            self.required[u] = got
            self._counts_met = False  # (look again: they may be met now)
        self.membership.peer_failed(u)

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

    def gone(self, head: TagT | None) -> bool:
        """Whether this incarnation has nothing more to process: its next tag ``head``
        (None: none) is at or past its leave ``L``, and nothing can still arrive for a tag
        before ``L`` (those tags are done, or granted with every message the grants
        count). The driver then processes ``L`` without a grant of ``L`` (nothing of its
        own runs there) and resigns.

        An empty queue before ``L`` says nothing about inputs still on their way: a
        member told of its leave early (a replayed schedule: at its ADMIT) whose next
        event is ``L`` would otherwise skip every tag before ``L`` whose input had not
        arrived yet (the learner's weights over a delay: it then sent no fragment for
        them, and the learner counted incomplete rounds)."""
        leaves = self.membership.leaves
        if leaves is None or (head is not None and head < leaves):
            return False
        last = pred(leaves)
        return (last <= self.done or not self.has_upstream
                or ((last <= self.grant or last == self.ptag) and self.counts_ok()))

    # -- before a stop request: what is held back, now -----------------------------------
    def flush_reports(self, head: TagT | None, current: TagT, now: int) -> None:
        """Report everything held back now (a completed tag, a report for the RTI); the
        earliest queued event is at ``head`` (None: none), the scheduler's current tag is
        ``current`` (in progress if it is later than the last completed: then it is the
        next event, since its outputs are still to come)."""
        net = head if head is not None else FOREVER_T
        if current > self.done and net > current:
            net = current
        pending = self.ltc_pending
        if pending is not None:
            self._send_ltc(pending, net, now)
        elif net < self.net:
            self._report(net, now)  # an event came before the one last reported
        self._flush_rti(now)

    # -- counts --------------------------------------------------------------------------
    def sent_message(self, peer: int, tag: TagT) -> None:
        """A data message to downstream ``peer`` at ``tag`` left."""
        s = self.sent[peer]
        s[0] += 1
        if tag[0] < s[1] or (tag[0] == s[1] and tag[1] < s[2]):
            s[1], s[2] = tag
        if self._elastic:
            self.membership.sent(peer, tag)

    def counts_ok(self) -> bool:
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

    def _sent_report(self) -> dict[int, list[int]]:
        """What was sent, for the RTI: counts, and the earliest tags since its last report."""
        rep = {d: list(v) for d, v in self.sent.items()}
        for v in self.sent.values():
            v[1], v[2] = FOREVER, 0
        return rep

    # -- reports and promises ------------------------------------------------------------
    def _send_ltc(self, tag: TagT, net: TagT, now: int) -> None:
        self._last_progress = now
        self.ltc_pending = None
        if tag > self.ltc:
            self.ltc = tag
        self._report(net, now)

    def _report_net(self, head: TagT | None, now: int) -> None:
        if not self.has_downstream:
            # Nobody's grant depends on this federate's next event (a federate on a cycle
            # has downstream), nor does its own, outside a zero-delay cycle: no NET needed.
            return
        net = self._held(head if head is not None else FOREVER_T)
        if net != self._reported[0] or self.messages_received != self._reported[1]:
            self._report(net, now)

    def _held(self, net: TagT) -> TagT:
        """The next event ``net`` as reported and promised: while a stop is being agreed,
        no later than the tag this federate asked or answered (the stop tag may be that
        one, and what its shutdown reactions send goes out at it)."""
        limit = self.stop.limit
        if limit is not None and self.stop.granted is None and net > limit:
            net = limit
        limit = self.membership.limit
        if limit is not None and net > limit:
            return limit
        return net

    def _report(self, net: TagT, now: int) -> None:
        """Report the latest tag complete and ``net``: a promise to the peers at once; to
        the RTI at once or, where promises advance this federate's peers (outside zero-delay
        cycles), at most every ``_RTI_REPORT_NS``: the RTI then serves as the backstop."""
        if self.stop.limit is not None or self.membership.limit is not None:
            net = self._held(net)
        self.net = net
        self._reported = (net, self.messages_received)
        self._rti_dirty = True
        if (not self.peer_grants or self.in_zero_cycle or self.stop.limit is not None
                or self.membership.limit is not None or now - self._last_rti_report >= _RTI_REPORT_NS):
            self._flush_rti(now)
        if self.peer_grants:
            self._promise(net)

    def _flush_rti(self, now: int) -> None:
        if not self._rti_dirty:
            return
        self._rti_dirty = False
        self._last_rti_report = now
        self.outbox.append(Ltc(self.ltc, self.net, self._sent_report(), dict(self.received)))

    def _rti_report_wait(self, now: int) -> int:
        """Send the RTI's report if it is due; how long (ms) a wait may last meanwhile."""
        if not self._rti_dirty:
            return 100
        due = self._last_rti_report + _RTI_REPORT_NS
        if now >= due:
            self._flush_rti(now)
            return 100
        return max(1, (due - now) // 1_000_000)

    def _promise(self, net: TagT) -> None:
        """Promise the downstream peers nothing more before min(this federate's next event
        ``net``, the earliest input it could still get): every message it sends later has a
        tag at least that (plus the link's delay)."""
        ltc = self.ltc
        after = succ(ltc)
        nxt = net if net > after else after  # its next event: never before the tag after its last
        bound = self.promises.bound()
        base = nxt if nxt < bound else bound
        if base > self.promised:
            self.promised = base
            self.outbox.append(Promise(base))
