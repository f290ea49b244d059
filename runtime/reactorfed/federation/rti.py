"""The RTI's coordination logic: pure, no sockets (see :mod:`.rti_server` for those).

For each federate ``f`` the RTI knows its next event tag (NET), its latest tag complete
(LTC), what its peers have sent it and what it has received. The earliest tag at which
anything could still reach ``f`` (its EIMT) is the minimum, over every federate ``u``
with a path of links to ``f``, of ``u``'s next possible event plus the path's delay. A
federate ``u`` cannot act before ``max(NET(u), LTC(u) + 1 microstep)`` unless a message
still in flight to it is earlier. ``f`` may process every tag before its EIMT (TAG); at
its EIMT it may go ahead provisionally (PTAG) when the only federates that could still
send at that tag are in a zero-delay cycle with it (they announce absent ports).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..tag import FOREVER, FOREVER_TAG, NEVER_TAG
from .layout import Layout, add_delay

__all__ = ["FederateState", "Grant", "RtiCore"]

TagT = tuple[int, int]
_MAX_M = FOREVER_TAG.microstep
FOREVER_T: TagT = (FOREVER_TAG.time, FOREVER_TAG.microstep)
NEVER_T: TagT = (NEVER_TAG.time, NEVER_TAG.microstep)


def succ(t: TagT) -> TagT:
    return t if t[0] >= FOREVER else (t[0], t[1] + 1)


def pred(t: TagT) -> TagT:
    if t[0] >= FOREVER:
        return FOREVER_T
    return (t[0], t[1] - 1) if t[1] > 0 else (t[0] - 1, _MAX_M)


@dataclass
class FederateState:
    net: TagT = NEVER_T
    ltc: TagT = NEVER_T
    resigned: bool = False
    granted: TagT = NEVER_T
    ptag: TagT = NEVER_T
    #: cumulative messages sent to each downstream federate
    sent: dict[int, int] = field(default_factory=dict)
    #: cumulative messages received from each upstream federate
    received: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Grant:
    federate: int
    tag: TagT
    provisional: bool
    counts: dict[int, int]


class RtiCore:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        n = len(layout.names)
        self.feds = [FederateState() for _ in range(n)]
        #: messages in flight, per (sender, receiver): [(cumulative count, earliest tag)]
        self.in_flight: dict[tuple[int, int], list[tuple[int, TagT]]] = {}
        self._upstream = [layout.upstream(f) for f in range(n)]
        self._direct = [layout.direct_upstream(f) for f in range(n)]
        self._affects: list[set[int]] = [
            {g for g in range(n) if f in self._upstream[g]} for f in range(n)
        ]
        self.stop_tag: TagT | None = None
        self.stop_proposed: TagT | None = None
        self.stop_replies: dict[int, TagT] = {}

    def start(self, start_time: int) -> None:
        for st in self.feds:
            st.net = (start_time, 0)

    # -- reports from federates --------------------------------------------------------
    # Each report returns the grants it makes due; with ``regrant=False`` it only updates
    # the state, and :meth:`regrant` computes the grants of a whole batch of reports at once
    # (the RTI server does that: a backlog of reports then yields one grant per federate,
    # covering every tag the batch made safe, instead of one grant per report).
    def on_net(self, f: int, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        st.net = net
        self._counts(f, sent, received)
        return self._regrant(f) if regrant else []

    def on_ltc(self, f: int, ltc: TagT, net: TagT, sent: dict[int, list[int]], received: dict[int, int],
               regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        if ltc > st.ltc:
            st.ltc = ltc
        st.net = net
        self._counts(f, sent, received)
        return self._regrant(f) if regrant else []

    def on_resign(self, f: int, sent: dict[int, list[int]], received: dict[int, int],
                  regrant: bool = True) -> list[Grant]:
        st = self.feds[f]
        self._counts(f, sent, received)
        st.resigned = True
        st.net = FOREVER_T
        st.ltc = FOREVER_T
        return self._regrant(f) if regrant else []

    def _counts(self, f: int, sent: dict[int, list[int]], received: dict[int, int]) -> None:
        st = self.feds[f]
        for d, (count, t, m) in sent.items():
            if d >= len(self.feds):
                continue
            if count > st.sent.get(d, 0):
                st.sent[d] = count
                # The receiver may have reported them received before this report came.
                if count > self.feds[d].received.get(f, 0):
                    self.in_flight.setdefault((f, d), []).append((count, (t, m)))
        for u, count in received.items():
            if u >= len(self.feds):
                continue
            if count > st.received.get(u, 0):
                st.received[u] = count
            lst = self.in_flight.get((u, f))
            if lst:
                self.in_flight[(u, f)] = [(c, t) for c, t in lst if c > count]

    # -- grants ----------------------------------------------------------------------
    def next_event(self, u: int) -> TagT:
        st = self.feds[u]
        if st.resigned:
            return FOREVER_T
        e = max(st.net, succ(st.ltc))
        stop = self.stop_tag
        if stop is not None and e > stop and st.ltc < stop:
            # Agreed: u has an event at the stop tag (its shutdown reactions), whatever
            # NET it reported before it knew of the stop.
            e = stop
        for (_src, dst), lst in self.in_flight.items():
            if dst == u:
                for _c, t in lst:
                    if t < e:
                        e = t
        return e

    def eimt(self, f: int) -> tuple[TagT, set[int]]:
        """The earliest tag anything could still reach ``f``, and who could send it."""
        best = FOREVER_T
        who: set[int] = set()
        for u, d in self._upstream[f].items():
            t = add_delay(self.next_event(u), d)
            if t < best:
                best, who = t, {u}
            elif t == best:
                who.add(u)
        return best, who

    def grant_for(self, f: int) -> Grant | None:
        """The grant ``f`` should get now, if it improves on what it has."""
        st = self.feds[f]
        if st.resigned or not self._upstream[f]:
            return None
        e, who = self.eimt(f)
        n = st.net
        counts = {u: self.feds[u].sent.get(f, 0) for u in self._direct[f]}
        if e > n:
            g = pred(e)
            if g > st.granted:
                st.granted = g
                return Grant(f, g, False, counts)
            return None
        if e == n and who <= self.layout.scc[f] and n > st.ptag and n > st.granted:
            st.ptag = n
            return Grant(f, n, True, counts)
        g = pred(e)
        if g > st.granted:
            st.granted = g
            return Grant(f, g, False, counts)
        return None

    def _regrant(self, changed: int) -> list[Grant]:
        return self.regrant((changed,))

    def regrant(self, changed: Iterable[int]) -> list[Grant]:
        """The grants due after reports from the federates ``changed``."""
        todo: set[int] = set()
        for c in changed:
            todo |= self._affects[c]
            todo.add(c)
        out: list[Grant] = []
        for g in sorted(todo):
            gr = self.grant_for(g)
            if gr is not None:
                out.append(gr)
        return out

    # -- stopping --------------------------------------------------------------------
    def on_stop_request(self, f: int, tag: TagT) -> TagT | None:
        """A federate asks to stop at ``tag``. Returns the tag to ask everyone about, or
        None when a request is already under way (it is folded in)."""
        if self.stop_tag is not None:
            return None
        if self.stop_proposed is None:
            self.stop_proposed = tag
            self.stop_replies = {}
            return tag
        self.stop_proposed = max(self.stop_proposed, tag)
        return None

    def on_stop_reply(self, f: int, tag: TagT) -> TagT | None:
        """Returns the agreed stop tag once every live federate has answered."""
        if self.stop_proposed is None or self.stop_tag is not None:
            return None
        self.stop_replies[f] = tag
        live = [i for i, st in enumerate(self.feds) if not st.resigned]
        if all(i in self.stop_replies for i in live):
            self.stop_tag = stop = max([self.stop_proposed, *self.stop_replies.values()])
            # The grants so far were computed from NETs reported before the stop was
            # known: they may cover the stop tag, at which every federate now has an event.
            # A federate caps what it holds at the agreement (FederateCore.on_stop_granted);
            # grants are computed afresh from here on (next_event), and may be sent again.
            last = pred(stop)
            for st in self.feds:
                if st.granted > last:
                    st.granted = last
                if st.ptag > last:
                    st.ptag = last
            return stop
        return None

    def all_resigned(self) -> bool:
        return all(st.resigned for st in self.feds)
