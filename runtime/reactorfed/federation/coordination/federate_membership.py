"""A federate's side of live rescaling (issue 19), pure: the :class:`FederateMembership`
part of :class:`.federate_core.FederateCore`: what it does with the RTI's membership rounds
and changes. It owns who is present when (its :class:`.presence.Presence`), this
incarnation's tags and the round under way; it sets the bounds from upstream slots in the
core's :class:`.federate_promises.PeerPromises`, and reads of the core only how far it got
and what is granted, and asks it to hold its grants back (:class:`Progress`).

* **Query** (:meth:`~FederateMembership.on_query`): answered with the earliest tag this
  federate can apply the round's changes at: at least the round's proposal, the tag after
  the one it is at, and the tag after the last tag it put on a link to a member the round
  changes (a join there would otherwise meet a message for its old incarnation). Until the
  round ends (:meth:`~FederateMembership.on_round_end`, after its changes) it goes no
  further than its answer (:attr:`~FederateMembership.limit`), and reports and promises
  nothing past it (a change may give this federate an event there: the membership hook of
  :mod:`reactorfed.model.elastic`).
* **Change** (:meth:`~FederateMembership.on_change`), at its tag, which this federate has
  not passed: sends to absent members are not made (:meth:`~FederateMembership.send_to`);
  a member learning of its own leave at ``L`` drops (and counts) what arrived for ``L`` or
  later; the bound from an upstream slot follows its presence (an absent slot holds back
  nothing until it joins; one that joins at ``J`` sends nothing before ``J``).
* **Admit** (:meth:`.federate_core.FederateCore.admit`, then :meth:`~FederateMembership.admitted`):
  a joiner starts at its tag, from the counts its slot had.
* **A peer that failed** (:meth:`.federate_core.FederateCore.on_peer_failed`; the driver
  calls it on the RTI's LOST): the grants no longer wait for what it sent and this federate
  has not received; what comes for a tag already completed is dropped, and so is what it
  sent at or after its *quiet* tag: the one after the last tag the RTI knew it completed,
  or after the last tag taken from it here (this federate runs ahead of its reports on its
  promises), which the answer to its leave's round tells the RTI (``heard``): the record
  has the latest, and a replay has it do nothing from there. Over a link without a delay
  in time only (over one with, the arrival's tag does not tell the sending one).

Dropped messages are counted (:attr:`~FederateMembership.dropped`, per sender), never lost
silently; they count as received too (they arrived), so the RTI's counts stay exact.
"""

from __future__ import annotations

import heapq
from typing import Protocol

from ...time.tag import FOREVER_T, NEVER, NEVER_T, TagT, pred, succ
from ..wire.protocol import Ltc, Promise, QueryReply, Resign, StopMark, StopReply, StopReq
from .federate_promises import PeerPromises
from .layout import add_delay
from .presence import Presence

__all__ = ["FederateMembership", "Message", "Progress"]


#: what a federate's core and its parts queue for the RTI and its peers (see federate_reports)
Message = Ltc | Promise | StopMark | StopReq | StopReply | Resign | QueryReply


class Progress(Protocol):
    """What the membership part reads of its core (how far it got, what is granted), and
    asks of it."""

    #: the latest tag complete
    done: TagT
    #: decentralized coordination's maxwait (None: centralized): a late message is tardy
    @property
    def maxwait(self) -> object | None: ...

    def hold_below(self, bound: TagT) -> None:
        """An upstream slot can now send from ``bound`` on: a grant at or past it no longer holds."""
        ...

    def granted(self, tag: TagT) -> bool:
        """Whether ``tag`` is granted, with every message the grants count here."""
        ...


class FederateMembership:
    """The membership state of federate ``me`` (see the module docstring): who is present
    when (``presence``), the bounds from upstream slots (in ``promises``), its answers to
    the RTI (queued in ``outbox``)."""

    def __init__(self, me: int, presence: Presence, promises: PeerPromises, outbox: list[Message],
                 core: Progress) -> None:
        self.me = me
        self.presence = presence
        self._promises = promises
        self._outbox = outbox
        self._core = core
        self.member = me in presence.slots
        #: a federation with elastic banks (without, none of this part's paths is taken)
        self.elastic = bool(presence.slots)
        self._start = 0
        #: this incarnation runs the tags from ``joined`` (the start tag, or its Admit's)
        #: until ``leaves`` (when known): it processes nothing at or after that
        self.joined: TagT = NEVER_T
        self.leaves: TagT | None = None
        #: a membership round under way: its id, and this federate's answer (the tag it
        #: does not reach until the round ends)
        self.round: int | None = None
        self.limit: TagT | None = None
        #: upstream peer -> messages from it dropped here (see the module docstring)
        self.dropped: dict[int, int] = {}
        #: downstream peer -> the latest tag put on a link to it (elastic federations only)
        self.last_on: dict[int, TagT] = {}
        #: a member's inputs accepted and not processed yet: (tag, sender), earliest first
        self.ahead: list[tuple[TagT, int]] = []
        #: upstream slots whose incarnation present now sent its last (its Mark of FOREVER,
        #: or it failed) before its leave was known: that leave then caps nothing
        self._over: set[int] = set()
        #: upstream slots whose present incarnation failed (the driver: on the RTI's LOST)
        self.failed_peers: set[int] = set()
        #: of those, the earliest arrival here of what they sent at their quiet tag or later
        self.quiet: dict[int, TagT] = {}
        #: of those, the tag each sent the last message taken here at (told in the answer
        #: to the round of its leave: the record's quiet tag is after it)
        self.heard: dict[int, TagT] = {}
        #: upstream peer -> the arrival tag of the last message taken from it
        self._took: dict[int, TagT] = {}
        #: failed upstream peer -> messages the grants counted that have not come (yet):
        #: lost with its process, unless they still come (the record does not say so: a
        #: replay has them)
        self.lost: dict[int, int] = {}
        #: set by the driver before the core's ``begin``: this process asks to join (the RTI
        #: said so in its START), so it is not present from the start even if its slot is
        self.joining = False

    @property
    def messages_dropped(self) -> int:
        return sum(self.dropped.values())

    def begin(self, start: int) -> None:
        """At the start: the bound from each upstream slot absent at the start tag is its
        first known join, or nothing."""
        self._start = start
        tag = (start, 0)
        if self.presence.present(self.me, tag) and not self.joining:
            self.joined = tag
        for u in self._promises.links:
            if u in self.presence.slots and not self.presence.present(u, tag):
                self._await_join(u, tag)

    def _await_join(self, u: int, after: TagT) -> None:
        """Upstream slot ``u`` sends nothing until its next known join at or after ``after``."""
        bound = self._promises.expect(u, self.presence.next_join(u, after))
        # A grant taken from the other peers' promises while this slot was absent may reach
        # past what it can now send: it holds no longer (the RTI's grants never pass a
        # join; this federate's own, from promises, may).
        self._core.hold_below(bound)

    # -- the RTI's messages ---------------------------------------------------------------
    def on_query(self, round: int, tag: TagT, changes: tuple[tuple[int, bool], ...], current: TagT) -> TagT:
        """The RTI asks when round ``round`` can apply ``changes`` (at ``tag`` or later);
        this federate is at ``current``. Queues the answer and returns it; the federate
        goes no further than it until :meth:`on_round_end`."""
        answer = max(tag, succ(current) if current[0] != NEVER else (self._start, 0))
        last_on, heard = self.last_on, self.heard
        took = {m: heard[m] for m, joined in changes if not joined and m in heard and m in self.failed_peers}
        for m, _joined in changes:
            t = last_on.get(m)
            if t is not None and succ(t) > answer:
                answer = succ(t)
        for t in took.values():  # (its leave after what it did here)
            answer = max(answer, succ(t))
        self.round = round
        self.limit = answer
        self._outbox.append(QueryReply(round, answer, took))
        return answer

    def on_round_end(self, round: int) -> None:
        """Round ``round`` is over (its changes came before): the barrier lifts."""
        if self.round == round:
            self.round = None
            self.limit = None

    def on_change(self, tag: TagT, member: int, joined: bool) -> None:
        """From ``tag`` on, ``member`` is present (``joined``) or absent. This federate
        has not processed ``tag`` yet (the round's barrier sees to it)."""
        done = self._core.done
        assert tag > done, f"a membership change at {tag} comes after tag {done} was processed"
        self.presence.add(tag, member, joined)
        if member == self.me:
            if not joined and self.joined != NEVER_T:  # (before its Admit: an earlier incarnation's)
                self._leaving(tag)
            return
        promises = self._promises
        if member not in promises.links:
            return
        if not joined:
            if member in self._over:  # its last words came (or it failed) already
                self._over.discard(member)
                return
            # Its promises count up to its leave, not past: one from its next incarnation
            # may come before the last words of this one (another connection).
            promises.cap(member, tag)
        elif member not in promises.caps:  # nothing of an earlier incarnation is still coming
            promises.new_incarnation(member)  # (the last one's Mark: this one's promises are new)
            self._await_join(member, tag)

    def _leaving(self, tag: TagT) -> None:
        """This member leaves at ``tag``: what came for ``tag`` or later is dropped."""
        self.leaves = tag
        keep = []
        for t, u in self.ahead:
            if t >= tag:
                self.dropped[u] = self.dropped.get(u, 0) + 1
            else:
                keep.append((t, u))
        heapq.heapify(keep)
        self.ahead = keep

    def admitted(self, tag: TagT) -> None:
        """This member joins at ``tag`` (the core took its slot's counts): every upstream
        peer's bound from ``tag``."""
        self.joined = tag
        promises = self._promises
        for u in promises.links:
            if self.presence.present(u, tag):
                promises.expect(u, tag)  # (nothing it sends here is before it)
            else:
                self._await_join(u, tag)
        promises.renew()
        leaves = self.presence.leaves_at(self.me, tag)
        if leaves is not None:  # (a replayed schedule: its leave came before its Admit)
            self._leaving(leaves)

    # -- peers ----------------------------------------------------------------------------
    def send_to(self, peer: int, tag: TagT) -> bool:
        """Whether a message this federate sends at ``tag`` goes to ``peer`` (present then)."""
        return not self.elastic or self.presence.present(peer, tag)

    def sent(self, peer: int, tag: TagT) -> None:
        """A data message to downstream ``peer`` at ``tag`` left (elastic federations only)."""
        if tag > self.last_on.get(peer, NEVER_T):
            self.last_on[peer] = tag

    def peer_failed(self, u: int, quiet: TagT = FOREVER_T, owed: int = 0) -> None:
        """Upstream ``u`` failed (see :meth:`.federate_core.FederateCore.on_peer_failed`);
        ``owed``: messages the grants counted that have not come."""
        self.failed_peers.add(u)
        if owed:
            self.lost[u] = self.lost.get(u, 0) + owed
        ds = self._promises.links.get(u, [])
        if quiet != FOREVER_T and ds and all(d[0] == 0 for d in ds):  # (same time: the microsteps tell)
            last = self._took.get(u)
            if last is not None:  # it did the work of the tag it sent that at (not reported yet)
                self.heard[u] = sent = (last[0], last[1] - min(d[1] for d in ds))
                quiet = max(quiet, succ(sent))
            self.quiet[u] = min(add_delay(quiet, d) for d in ds)
        self.incarnation_done(u)

    def peer_connected(self, u: int) -> None:
        """A new process for upstream slot ``u`` opened its data connection (its next
        incarnation's): what is known of the last one's failure is about that one."""
        self.failed_peers.discard(u)
        for d in (self.quiet, self.heard, self._took):
            d.pop(u, None)

    def incarnation_done(self, u: int) -> None:
        """The incarnation of upstream slot ``u`` whose promises arrived sends nothing
        more: from now on its bound is its next join."""
        promises = self._promises
        left = promises.uncap(u)
        if left is None:  # its leave is not known yet: when it comes, it caps nothing
            self._over.add(u)
        self._await_join(u, left if left is not None else succ(self._core.done))
        if promises.latest[u] == NEVER_T:
            promises.gone_for_good(u)  # its last promise knew of any stop
        else:
            promises.new_incarnation(u)  # its next incarnation's promises are new

    def arrived(self, peer: int, tag: TagT) -> bool:
        """A data message from ``peer`` for ``tag`` arrived (and counts as received):
        whether it is delivered (elastic federations only)."""
        if self.lost and self.lost.get(peer) and peer in self.failed_peers:  # (counted by the grants, late: not lost)
            self.lost[peer] -= 1
        late = tag <= self._core.done and (self._core.maxwait is None or peer in self.failed_peers)
        if late or tag < self.joined or (self.leaves is not None and tag >= self.leaves) or (
                self.quiet and tag >= self.quiet.get(peer, FOREVER_T)):
            # for a tag already processed (its sender failed: no grant waited for it; under
            # decentralized coordination, a live sender's is tardy: delivered as such), or
            # outside this incarnation's tags, or sent by a failed peer after its last
            # completed tag
            self.dropped[peer] = self.dropped.get(peer, 0) + 1
            return False
        if tag > self._took.get(peer, NEVER_T):
            self._took[peer] = tag
        if self.member:
            heapq.heappush(self.ahead, (tag, peer))
        return True

    def processed(self, tag: TagT) -> None:
        """A member completed ``tag``: its inputs up to it are no longer ahead."""
        ahead = self.ahead
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
        return last <= self._core.done or self._core.granted(last)
