"""A federate's side of live rescaling (issue 19), pure: what :class:`.federate_core.FederateCore`
does with the RTI's membership rounds and changes (its :class:`FederateMembership` part).

* **Query** (:meth:`~FederateMembership.on_query`): answered with the earliest tag this
  federate can apply the round's changes at: at least the round's proposal, the tag after
  the one it is at, and the tag after the last tag it put on a link to a member the round
  changes (a join there would otherwise meet a message for its old incarnation). Until the
  round ends (:meth:`~FederateMembership.on_round_end`, after its changes) it goes no
  further than its answer, and reports and promises nothing past it (a change may give
  this federate an event there: the membership hook of :mod:`reactorfed.model.elastic`).
* **Change** (:meth:`~FederateMembership.on_change`), at its tag, which this federate has
  not passed: sends to absent members are not made (:meth:`~FederateMembership.send_to`);
  a member learning of its own leave at ``L`` drops (and counts) what arrived for ``L`` or
  later; the bound from an upstream slot follows its presence (an absent slot holds back
  nothing until it joins; one that joins at ``J`` sends nothing before ``J``).
* **Admit** (:meth:`~FederateMembership.admit`): a joiner starts at its tag, from the
  counts its slot had.
* **A peer that failed** (:meth:`~FederateMembership.on_peer_failed`; the driver calls it on
  the RTI's LOST): the grants no longer wait for what it sent
  and this federate has not received; what comes for a tag already completed is dropped.

Dropped messages are counted (:attr:`~FederateMembership.dropped`, per sender), never lost
silently; they count as received too (they arrived), so the RTI's counts stay exact.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from ...time.tag import FOREVER_T, NEVER, NEVER_T, TagT, pred, succ
from ..wire.protocol import Ltc, Promise, QueryReply, Resign, StopMark, StopReply, StopReq
from .layout import Delay, add_delay
from .presence import Presence

__all__ = ["FederateMembership", "Message", "earliest_arrival"]


#: what a federate's core queues for the RTI and its peers (see federate_core)
Message = Ltc | Promise | StopMark | StopReq | StopReply | Resign | QueryReply


def earliest_arrival(promise: TagT, delays: list[Delay]) -> TagT:
    """The earliest tag a message from a peer that promised ``promise`` can carry here,
    over the delays of its links to this federate."""
    return add_delay(promise, delays[0]) if len(delays) == 1 else min(add_delay(promise, d) for d in delays)


class FederateMembership:
    """The membership state of a federate's core (a part of :class:`.federate_core.FederateCore`:
    the attributes annotated below without a value are the core's)."""

    me: int
    start: int
    done: TagT
    ltc: TagT
    outbox: list[Message]
    received: dict[int, int]
    required: dict[int, int]
    grant: TagT
    ptag: TagT | None
    has_upstream: bool
    peer_grants: bool
    sent: dict[int, list[int]]
    finished: set[int]
    promises_in: bool
    _counts_met: bool
    _promise_links: dict[int, list[Delay]]
    _promised_in: dict[int, TagT]
    _bound_from: dict[int, TagT]
    _bound: TagT | None
    _marked: dict[int, TagT]

    if TYPE_CHECKING:  # (defined by the core)
        def counts_ok(self) -> bool: ...

    def _init_membership(self, presence: Presence) -> None:
        self.presence = presence
        self.member = self.me in presence.slots
        #: this incarnation runs the tags from ``joined`` (the start tag, or its Admit's)
        #: until ``leaves`` (when known): it processes nothing at or after that
        self.joined: TagT = NEVER_T
        self.leaves: TagT | None = None
        #: a membership round under way: its id, and this federate's answer (the tag it
        #: does not reach until the round ends)
        self.member_round: int | None = None
        self.member_limit: TagT | None = None
        #: upstream peer -> messages from it dropped here (see the module docstring)
        self.dropped: dict[int, int] = {}
        elastic = bool(presence.slots)
        self._elastic = elastic
        #: downstream peer -> the latest tag put on a link to it (elastic federations only)
        self._last_on: dict[int, TagT] = {}
        #: a member's inputs accepted and not processed yet: (tag, sender), earliest first
        self._ahead: list[tuple[TagT, int]] = []
        #: upstream slot -> the leave of the incarnation whose promises arrive now (they
        #: count up to it: a promise from its next incarnation may come before its last one)
        self._cap: dict[int, TagT] = {}
        #: upstream slots whose incarnation present now sent its last (its Mark of FOREVER,
        #: or it failed) before its leave was known: that leave then caps nothing
        self._over: set[int] = set()
        #: upstream slots whose present incarnation failed (the driver: on the RTI's LOST)
        self.failed_peers: set[int] = set()
        #: set by the driver before :meth:`begin`: this process asks to join (the RTI said so
        #: in its START), so it is not present from the start even if its slot is
        self.joining = False

    @property
    def messages_dropped(self) -> int:
        return sum(self.dropped.values())

    def _begin_membership(self) -> None:
        """At the start: the bound from each upstream slot absent at the start tag is its
        first known join, or nothing."""
        start = (self.start, 0)
        if self.presence.present(self.me, start) and not self.joining:
            self.joined = start
        for u in self._promise_links:
            if u in self.presence.slots and not self.presence.present(u, start):
                self._await_join(u, start)

    def _await_join(self, u: int, after: TagT) -> None:
        """Upstream slot ``u`` sends nothing until its next known join at or after ``after``."""
        j = self.presence.next_join(u, after)
        self._promised_in[u] = NEVER_T if j is None else j
        bound = self._bound_from[u] = FOREVER_T if j is None else earliest_arrival(j, self._promise_links[u])
        if self.peer_grants and self.grant >= bound:
            # A grant taken from the other peers' promises while this slot was absent may
            # reach past what it can now send: it holds no longer (the RTI's grants never
            # pass a join; this federate's own, from promises, may).
            self.grant = pred(bound)
        self._bound = None
        self.promises_in = True

    # -- the RTI's messages ---------------------------------------------------------------
    def on_query(self, round: int, tag: TagT, changes: tuple[tuple[int, bool], ...], current: TagT) -> TagT:
        """The RTI asks when round ``round`` can apply ``changes`` (at ``tag`` or later);
        this federate is at ``current``. Queues the answer and returns it; the federate
        goes no further than it until :meth:`on_round_end`."""
        answer = max(tag, succ(current) if current[0] != NEVER else (self.start, 0))
        last_on = self._last_on
        for m, _joined in changes:
            t = last_on.get(m)
            if t is not None and succ(t) > answer:
                answer = succ(t)
        self.member_round = round
        self.member_limit = answer
        self.outbox.append(QueryReply(round, answer))
        return answer

    def on_round_end(self, round: int) -> None:
        """Round ``round`` is over (its changes came before): the barrier lifts."""
        if self.member_round == round:
            self.member_round = None
            self.member_limit = None

    def on_change(self, tag: TagT, member: int, joined: bool) -> None:
        """From ``tag`` on, ``member`` is present (``joined``) or absent. This federate
        has not processed ``tag`` yet (the round's barrier sees to it)."""
        assert tag > self.done, f"a membership change at {tag} comes after tag {self.done} was processed"
        self.presence.add(tag, member, joined)
        if member == self.me:
            if not joined and self.joined != NEVER_T:  # (before its Admit: an earlier incarnation's)
                self._leaving(tag)
            return
        if member not in self._promise_links:
            return
        if not joined:
            if member in self._over:  # its last words came (or it failed) already
                self._over.discard(member)
                return
            # Its promises count up to its leave, not past: one from its next incarnation
            # may come before the last words of this one (another connection).
            self._cap[member] = tag
        elif member not in self._cap:  # nothing of an earlier incarnation is still coming
            self._marked.pop(member, None)  # (the last one's Mark: this one's promises are new)
            self._await_join(member, tag)

    def _leaving(self, tag: TagT) -> None:
        """This member leaves at ``tag``: what came for ``tag`` or later is dropped."""
        self.leaves = tag
        keep = []
        for t, u in self._ahead:
            if t >= tag:
                self.dropped[u] = self.dropped.get(u, 0) + 1
            else:
                keep.append((t, u))
        heapq.heapify(keep)
        self._ahead = keep

    def admit(self, tag: TagT, sent: dict[int, int], received: dict[int, int]) -> None:
        """This member joins at ``tag`` (the RTI's Admit, after the changes so far and
        :meth:`begin`): its slot's counts, and every upstream peer's bound from ``tag``."""
        self.joined = tag
        self.received = {u: received.get(u, 0) for u in self.received}
        for d, v in self.sent.items():
            v[0] = sent.get(d, 0)
        self.required = {}
        self._counts_met = True
        for u, ds in self._promise_links.items():
            if self.presence.present(u, tag):
                self._promised_in[u] = tag  # (nothing it sends here is before it)
                self._bound_from[u] = earliest_arrival(tag, ds)
            else:
                self._await_join(u, tag)
        self._bound = None
        self.promises_in = True
        leaves = self.presence.leaves_at(self.me, tag)
        if leaves is not None:  # (a replayed schedule: its leave came before its Admit)
            self._leaving(leaves)

    # -- peers ----------------------------------------------------------------------------
    def send_to(self, peer: int, tag: TagT) -> bool:
        """Whether a message this federate sends at ``tag`` goes to ``peer`` (present then)."""
        return not self._elastic or self.presence.present(peer, tag)

    def on_peer_failed(self, u: int) -> None:
        """Upstream ``u`` failed (the RTI's verdict, LOST: after every grant it computed
        before; its data link may have closed without its last promise, or not). What it
        sent and this federate has not received may be lost: no grant waits for it."""
        self.failed_peers.add(u)
        got = self.received.get(u, 0)
        if self.required.get(u, 0) > got:
            self.required[u] = got
            self._counts_met = False  # (look again: they may be met now)
        self._incarnation_done(u)

    def peer_connected(self, u: int) -> None:
        """A new process for upstream slot ``u`` opened its data connection (its next
        incarnation's): what is known of the last one's end is about that one."""
        self.failed_peers.discard(u)
        self.finished.discard(u)

    def _incarnation_done(self, u: int) -> None:
        """The incarnation of upstream slot ``u`` whose promises arrived sends nothing
        more: from now on its bound is its next join."""
        left = self._cap.pop(u, None)
        if left is None:  # its leave is not known yet: when it comes, it caps nothing
            self._over.add(u)
        self._await_join(u, left if left is not None else succ(self.done))
        if self._promised_in[u] == NEVER_T:
            self._marked[u] = FOREVER_T  # gone for good: its last promise knew of any stop
        else:
            self._marked.pop(u, None)  # its next incarnation's promises are new

    def _arrived(self, peer: int, tag: TagT) -> bool:
        """A data message from ``peer`` for ``tag`` arrived (and counts as received):
        whether it is delivered (elastic federations only)."""
        if (tag <= self.done or tag < self.joined or (self.leaves is not None and tag >= self.leaves)):
            # for a tag already processed (its sender failed: no grant waited for it), or
            # outside this incarnation's tags
            self.dropped[peer] = self.dropped.get(peer, 0) + 1
            return False
        if self.member:
            heapq.heappush(self._ahead, (tag, peer))
        return True

    def _processed(self, tag: TagT) -> None:
        """A member completed ``tag``: its inputs up to it are no longer ahead."""
        ahead = self._ahead
        while ahead and ahead[0][0] <= tag:
            heapq.heappop(ahead)

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
        leaves = self.leaves
        if leaves is None or (head is not None and head < leaves):
            return False
        last = pred(leaves)
        return (last <= self.done or not self.has_upstream
                or ((last <= self.grant or last == self.ptag) and self.counts_ok()))
