"""A federate's side of the stop agreement, pure: what :class:`.federate_core.FederateCore`
does with stop requests (local and the RTI's), the agreed stop tag, the StopMarks its
upstream peers send, and its own last words when it resigns (its :class:`StopAgreement`
part).

A local stop request goes to the RTI (STOP_REQ); a stop request from the RTI is answered
with the earliest tag this federate can still stop at (the request's, or the tag after its
current one). From either until the RTI's STOP_GRANTED, the federate does not reach the tag
it asked or answered (:attr:`~StopAgreement.stop_limit`: the stop may come exactly there,
and then that tag's events run once, with the shutdown reactions), and reports and promises
nothing past it (what its shutdown reactions send goes out at it); the granted tag
(:attr:`~StopAgreement.stop_granted`) lowers the scheduler's stop tag. A local request may
come from a reaction, inside a tag whose outputs are not sent yet: nothing reported or
promised meanwhile passes that tag. (The core reads ``stop_limit`` and ``stop_granted``
directly on its hot paths, as ``acquire`` and ``input_bound``: no call into this part.)

Promises and grants made before a stop was known do not count the event the stop gives
every federate at the stop tag (its shutdown reactions). So a federate that learns of a
stop sends its downstream peers a :class:`StopMark <..wire.protocol.StopMark>`: a promise
(as Promise) made knowing of the stop, and so are all its promises from there on, as are
those of a federate that resigned (:meth:`~StopAgreement.resign`). Once the stop tag is
agreed, a peer's promises from before its Mark hold only for the tags before the stop tag
(plus the link's delay: see :meth:`StopAgreement._stop_bound`), and the grants held at the
agreement stop short of it. The RTI recomputes its grants from the agreement
(:class:`.rti_core.RtiCore`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...time.tag import NEVER, TagT, pred, succ
from ..wire.protocol import Resign, StopMark, StopReply, StopReq
from .federate_membership import Message, earliest_arrival
from .layout import Delay
from .presence import Presence
from .rti_state import FOREVER_T

__all__ = ["StopAgreement"]


class StopAgreement:
    """The stop agreement of a federate's core (a part of :class:`.federate_core.FederateCore`:
    the attributes annotated below without a value are the core's, and so are the methods
    declared for the type checker only)."""

    start: int
    peer_grants: bool
    has_upstream: bool
    has_downstream: bool
    passes_promises: bool
    outbox: list[Message]
    grant: TagT
    ptag: TagT | None
    promised: TagT
    received: dict[int, int]
    finished: set[int]
    promises_in: bool
    presence: Presence  # (the membership part's)
    _promise_links: dict[int, list[Delay]]
    _bound_from: dict[int, TagT]
    _bound: TagT | None
    _marked: dict[int, TagT]

    if TYPE_CHECKING:  # (defined by the core; _incarnation_done by its membership part)
        def grant_from_promises(self) -> None: ...
        def flush_reports(self, head: TagT | None, current: TagT, now: int) -> None: ...
        def on_promise(self, peer: int, tag: TagT) -> None: ...
        def _sent_report(self) -> dict[int, list[int]]: ...
        def _incarnation_done(self, u: int) -> None: ...

    def _init_stop(self) -> None:
        self.stop_limit: TagT | None = None  # agreed not to reach this until STOP_GRANTED
        self.stop_granted: TagT | None = None
        self._stop_marked = False  # the Mark went to the downstream peers

    # -- what arrives from the RTI -------------------------------------------------------
    def on_stop_request(self, tag: TagT, current: TagT) -> None:
        """The RTI asks to stop at ``tag``; this federate is at ``current``. Answers with
        the earliest tag it can stop at, and does not reach it until the stop is agreed."""
        reply = max(tag, succ(current) if current[0] != NEVER else (self.start, 0))
        self.stop_limit = reply if self.stop_limit is None else max(reply, self.stop_limit)
        self._mark_stop()
        self.outbox.append(StopReply(reply))

    def on_stop_granted(self, tag: TagT) -> TagT:
        """The federation stops at ``tag`` (the driver lowers the scheduler's stop tag).
        Grants made before the agreement stop short of it: the RTI computed them, and the
        peers made the promises they came from, without knowing of the stop, which gives
        peers an event at ``tag``. The RTI's grants from here on, and the peers' promises
        since their Marks, know of it (see input_bound)."""
        self.stop_granted = tag
        if self.grant >= tag:
            self.grant = pred(tag)
        if self.ptag is not None and self.ptag >= tag:
            self.ptag = None
        self._bound = None
        if self.peer_grants and self.has_upstream:
            self.grant_from_promises()
        return tag

    def _mark_stop(self) -> None:
        """This federate now knows of a stop: its promises from here on account for it
        (nothing past the limit until the stop is agreed): tell the downstream peers, with
        the most it can promise now."""
        if self._stop_marked or not self.passes_promises:
            return
        self._stop_marked = True
        limit = self.stop_limit
        assert limit is not None
        p = self.promised if self.promised < limit else limit
        self.promised = p
        self.outbox.append(StopMark(p))

    # -- what arrives from upstream peers ------------------------------------------------
    def on_mark(self, peer: int, tag: TagT) -> None:
        """``peer`` promises nothing more before ``tag``, knowing of a stop (or resigned),
        and so are its promises from now on (see :class:`..wire.protocol.StopMark`)."""
        if tag >= FOREVER_T:
            self.finished.add(peer)
            if peer in self.presence.slots:  # an incarnation's last words: its next counts
                self._incarnation_done(peer)
                return
        if not self.peer_grants:
            return  # with RTI grants only, a Mark says only that the peer is done
        marked = self._marked
        m = marked.get(peer)
        if m is None or tag > m:
            marked[peer] = tag  # (a Mark of NEVER too: the peer knows, its next promises count)
        self._bound = None
        self.promises_in = True
        self.on_promise(peer, tag)

    def _stop_bound(self, stop: TagT) -> TagT:
        """The core's ``input_bound`` once the stop tag ``stop`` is agreed. A promise made
        before its sender knew of the stop holds for every tag before ``stop``, not at it:
        the stop gives the sender an event there (its shutdown reactions, which may send;
        every other event the stop brings is at ``stop`` too, none later is processed). So
        from a peer, the earliest of its promises over the link's delay and ``stop`` over
        the link's delay (a link with a delay, even a microstep, carries nothing sent at
        ``stop`` to ``stop``), or whatever it promised since its Mark if that is later."""
        best = FOREVER_T
        links = self._promise_links
        marked = self._marked
        for u, b in self._bound_from.items():
            delays = links[u]
            cap = earliest_arrival(stop, delays)
            e = b if b < cap else cap
            m = marked.get(u)
            if m is not None:
                post = earliest_arrival(m, delays)
                if post > e:
                    e = post
            if e < best:
                best = e
        return best

    # -- the scheduler's events ----------------------------------------------------------
    def request_stop(self, tag: TagT, head: TagT | None, current: TagT, now: int) -> None:
        """Ask the federation to stop at ``tag`` (the scheduler's earliest event is at
        ``head``, its current tag ``current``): the RTI gets everything held back first.
        This federate goes no further than ``tag`` until the stop is agreed
        (:attr:`stop_granted`), and promises nothing past it meanwhile."""
        self.stop_limit = tag if self.stop_limit is None else max(tag, self.stop_limit)
        self._mark_stop()
        self.flush_reports(head, current, now)
        self.outbox.append(StopReq(tag))

    def resign(self, tag: TagT) -> None:
        """This federate is done at ``tag``: the final counts for the RTI, and a promise of
        nothing more for the peers (a Mark: it holds whatever stop comes)."""
        self.outbox.append(Resign(tag, self._sent_report(), dict(self.received)))
        if self.peer_grants:
            self._stop_marked = True
            self.promised = FOREVER_T
        # With RTI grants only, the Mark is no promise the peers use, but it still tells
        # them this federate is done: its data links to them may close now, while a link
        # that closes before it is a fault (messages on it may be lost).
        if self.peer_grants or self.has_downstream:
            self.outbox.append(StopMark(FOREVER_T))
