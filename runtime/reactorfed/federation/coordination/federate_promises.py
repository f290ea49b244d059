"""What a federate's upstream peers promised, pure: the :class:`PeerPromises` part of
:class:`.federate_core.FederateCore`, and from it the earliest tag anything could still
arrive here at (:meth:`PeerPromises.bound`: the core's grants from promises, and its own
promises downstream, come from it).

A peer's promise (null message, as in Chandy and Misra's conservative simulation) says it
will send nothing more before its tag; over each of its links here that is the tag plus
the link's delay. Links are FIFO: what was sent before a promise has arrived when the
promise does. Before its first promise, a peer may send at the start tag.

Besides promises, two things change the bounds, through the methods below: the stop
agreement (:mod:`.federate_stop`; the core passes on a peer's StopMark, a promise made
knowing of a stop, and the agreed stop tag, after which the promises made before a Mark
hold only for the tags before it), and the membership part (:mod:`.federate_membership`:
an elastic slot's promises count up to its leave, and an absent slot sends nothing before
its next join).
"""

from __future__ import annotations

from ...time.tag import FOREVER_T, NEVER_T, TagT
from .layout import Delay, Layout, add_delay, link_delay

__all__ = ["PeerPromises", "earliest_arrival"]


def earliest_arrival(promise: TagT, delays: list[Delay]) -> TagT:
    """The earliest tag a message from a peer that promised ``promise`` can carry here,
    over the delays of its links to this federate."""
    return add_delay(promise, delays[0]) if len(delays) == 1 else min(add_delay(promise, d) for d in delays)


class PeerPromises:
    """The promises of federate ``me``'s upstream peers (see the module docstring)."""

    def __init__(self, layout: Layout, me: int) -> None:
        #: upstream peer -> the delays of its links here
        self.links: dict[int, list[Delay]] = {}
        for lk in layout.links:
            if lk.dst == me and lk.src != me:
                self.links.setdefault(lk.src, []).append(link_delay(lk.delay))
        #: upstream peer -> its latest promise
        self.latest: dict[int, TagT] = {}
        #: upstream peer -> the earliest tag it could still send here
        self.bound_from: dict[int, TagT] = {}
        #: upstream peer -> its latest promise since its Mark (made knowing of a stop)
        self.marked: dict[int, TagT] = {}
        #: upstream slot -> the leave of the incarnation whose promises arrive now: they
        #: count up to it (a promise from its next incarnation may come before its last one)
        self.caps: dict[int, TagT] = {}
        #: the agreed stop tag (None: none yet)
        self.stop: TagT | None = None
        #: promises arrived since the core last granted from them (see :meth:`looked`)
        self.fresh = False
        self._bound: TagT | None = None  # bound(), None: to be computed

    def begin(self, start: int) -> None:
        """The federation started at ``start``: before its first promise, a peer might send
        at the start tag."""
        self.latest = {u: (start, 0) for u in self.links}
        self.bound_from = {u: earliest_arrival((start, 0), ds) for u, ds in self.links.items()}
        self._bound = None

    # -- what arrives (hot: every promise) ------------------------------------------------
    def on_promise(self, peer: int, tag: TagT) -> None:
        """``peer`` promises nothing more before ``tag`` (plus each link's delay)."""
        caps = self.caps
        if caps and peer in caps and tag > caps[peer]:
            tag = caps[peer]  # a leaving slot: up to its leave
        marked = self.marked
        if marked and peer in marked and tag > marked[peer]:
            marked[peer] = tag
            self._bound = None
            self.fresh = True
        if tag > self.latest.get(peer, NEVER_T):
            self.latest[peer] = tag
            delays = self.links.get(peer)
            if delays is not None:
                self.bound_from[peer] = earliest_arrival(tag, delays)
                self._bound = None
            self.fresh = True

    def on_mark(self, peer: int, tag: TagT) -> None:
        """``peer`` promises nothing more before ``tag``, knowing of a stop, and so are its
        promises from now on (a Mark of NEVER too: the peer knows, its next ones count)."""
        marked = self.marked
        m = marked.get(peer)
        if m is None or tag > m:
            marked[peer] = tag
        self._bound = None
        self.fresh = True
        self.on_promise(peer, tag)

    def bound(self) -> TagT:
        """The earliest tag at which anything could still arrive here, by the promises."""
        best = self._bound
        if best is None:
            best = self._bound = self._compute()
        return best

    def looked(self) -> TagT:
        """:meth:`bound`, for the core granting from it: the promises are not fresh now."""
        self.fresh = False
        best = self._bound
        if best is None:
            best = self._bound = self._compute()
        return best

    def _compute(self) -> TagT:
        stop = self.stop
        if stop is None:
            return min(self.bound_from.values(), default=FOREVER_T)
        # Once the stop tag is agreed, a promise made before its sender knew of the stop
        # holds for every tag before ``stop``, not at it: the stop gives the sender an event
        # there (its shutdown reactions, which may send; every other event the stop brings
        # is at ``stop`` too, none later is processed). So from a peer, the earliest of its
        # promises over the link's delay and ``stop`` over the link's delay (a link with a
        # delay, even a microstep, carries nothing sent at ``stop`` to ``stop``), or
        # whatever it promised since its Mark if that is later.
        best = FOREVER_T
        links = self.links
        marked = self.marked
        for u, b in self.bound_from.items():
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

    # -- the stop agreement's and the membership part's -----------------------------------
    def agreed(self, stop: TagT) -> None:
        """The federation stops at ``stop`` (see :mod:`.federate_stop`)."""
        self.stop = stop
        self._bound = None

    def expect(self, u: int, at: TagT | None) -> TagT:
        """Upstream ``u`` (an incarnation of it not heard from yet) sends nothing before
        ``at``; None: nothing at all, as far as is known. Returns the bound from it."""
        self.latest[u] = NEVER_T if at is None else at
        bound = self.bound_from[u] = FOREVER_T if at is None else earliest_arrival(at, self.links[u])
        self._bound = None
        self.fresh = True
        return bound

    def renew(self) -> None:
        """The bounds changed other than by a promise (this member joined): look again."""
        self._bound = None
        self.fresh = True

    def cap(self, u: int, leave: TagT) -> None:
        """The promises of upstream slot ``u``'s incarnation count up to its ``leave``."""
        self.caps[u] = leave

    def uncap(self, u: int) -> TagT | None:
        """Upstream slot ``u``'s incarnation sends nothing more: its cap (None: none known)."""
        return self.caps.pop(u, None)

    def new_incarnation(self, u: int) -> None:
        """The promises of upstream slot ``u`` from now on are its next incarnation's:
        the last one's Mark says nothing of them."""
        self.marked.pop(u, None)

    def gone_for_good(self, u: int) -> None:
        """Upstream slot ``u`` sends nothing more, ever: its last promise knew of any stop."""
        self.marked[u] = FOREVER_T
