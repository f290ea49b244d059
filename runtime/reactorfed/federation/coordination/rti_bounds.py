"""The RTI core's earliest incoming message tags (EIMT), kept exact as next events move:
its :class:`RtiBounds` part (see :mod:`.rti_core`'s docstring for what they are for).

``EIMT(f)`` is the minimum, over every federate ``u`` with a path of links to ``f``, of
``u``'s next event plus the path's smallest delay. Stored as such (a term per upstream
federate) a chain of N federates has N different EIMTs, each over all the federates before
it: a report from the head of the chain moves N of them, O(N) a report and O(N^2) a tag
(issue 18). So terms are split by the *components* of the link graph (the largest sets
of federates each with a path to each other, whatever the delays; in a chain, each
federate alone). For ``f`` in component ``C``:

* a *next term* for each ``u`` in ``C`` upstream of ``f``: ``next(u) + path(u, f)``, as
  before (inside a cycle the EIMTs depend on each other; their next events are the
  well-founded terms);
* a *bound term* for each federate ``v`` outside ``C`` with a link ``v -> w`` into ``C``:
  ``bound(v) + d(v, w) + path(w, f)`` (``path(f, f)`` the empty path), smallest over
  such links, where ``bound(v) = min(next(v), EIMT(v))`` is the earliest tag ``v`` could
  send anything at. A ``v`` without upstream federates has ``next(v)`` for its bound:
  its term is a next term (the sources of a fan-in: one group, as before).

Both give the same minimum: a path into ``C`` enters it by one link and never leaves it
again (or its federates would be in ``C``), adding a delay is monotone in the tag and in
the delay, and adding two delays in turn is adding their composition (``add_delay``'s
saturation included). A bound term attains the EIMT exactly when some federate outside
``C`` does, and every federate of ``f``'s zero-delay cycle is in ``C`` with a next term
of its own: so whether all who attain it are in that cycle (PTAG) is told by the terms,
as it was by the federates.

Components are ordered by how many federates reach them (a link between two of them
goes to a larger count), so a change of ``bound(v)`` is followed in that order, each
federate once (a heap), and stops at the first federate whose bound does not move. In a
chain, a report moves one or two bounds, not N; within a component (a learner and its
samplers) it is what it was.

Federates with the same terms share one EIMT (a *group*; the N samplers of a learner, the
sinks of one source): its minimum and how many terms attain it, moved in O(1) by a term
that moves, recomputed only when the last term at the minimum moves later.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ...time.tag import TagT
from .layout import Delay, Layout, add_delay, compose, link_delay
from .rti_state import FOREVER_T, NEVER_T, EimtGroup

__all__ = ["RtiBounds"]


class RtiBounds:
    """The EIMTs of the RTI's core (its part :attr:`.rti_core.RtiCore.bounds`), kept as the
    federates' next events move. It asks the core for a federate's next event
    (``next_event``, when :meth:`refresh` is told it may have changed) and adds the
    federates whose EIMT moved to ``stale`` (the core's: the federates whose grants may
    have changed)."""

    def __init__(self, layout: Layout, next_event: Callable[[int], TagT], stale: set[int]) -> None:
        self.layout = layout
        self._next_event = next_event
        self._stale = stale
        n = len(layout.names)
        path = layout.path
        #: every federate with a path to f, with the smallest path delay (Layout.upstream)
        self.upstream = [layout.upstream(f) for f in range(n)]
        ups = self.upstream
        # f's component: f and whatever both reaches it and is reached by it
        comp = [frozenset((f, *(u for u in ups[f] if u in path[f]))) for f in range(n)]
        #: the order bounds are followed in: how many federates reach f, f included
        self._rank = [len(ups[f]) + (f not in ups[f]) for f in range(n)]
        entering: dict[frozenset[int], list[tuple[int, int, Delay]]] = {}
        #: whether f has a link out of its component and an upstream (the bound of one
        #: without is its next event: a next term, as a fan-in's sources are)
        self._relay = [False] * n
        for lk in layout.links:
            if lk.src not in comp[lk.dst]:
                entering.setdefault(comp[lk.dst], []).append((lk.src, lk.dst, link_delay(lk.delay)))
                self._relay[lk.src] = bool(ups[lk.src])
        #: each federate's EIMT group (None: no upstream, never waits); a group's members
        #: are the core's to keep (those not resigned)
        self.group: list[EimtGroup | None] = [None] * n
        groups: dict[tuple[frozenset[tuple[int, Delay]], ...], EimtGroup] = {}
        for f in range(n):
            nexts = {u: d for u, d in ups[f].items() if u in comp[f]}
            bounds: dict[int, Delay] = {}
            for v, w, d in entering.get(comp[f], ()):
                t = d if w == f else compose(d, path[w][f])
                terms = bounds if self._relay[v] else nexts
                if v not in terms or t < terms[v]:
                    terms[v] = t
            if nexts or bounds:
                key = (frozenset(nexts.items()), frozenset(bounds.items()))
                g = groups.setdefault(key, EimtGroup(nexts, bounds))
                g.members.add(f)
                g.scc_max = max(g.scc_max, len(layout.scc[f]))
                if self._relay[f]:
                    g.relays += (f,)
                self.group[f] = g
        #: per federate u, the groups with a term of u's next event, and of u's bound, with
        #: the term's delay
        self._feeds: list[list[tuple[EimtGroup, Delay]]] = [[] for _ in range(n)]
        self._bfeeds: list[list[tuple[EimtGroup, Delay]]] = [[] for _ in range(n)]
        for g in groups.values():
            for u, d in g.upstream.items():
                self._feeds[u].append((g, d))
            for v, d in g.bounds.items():
                self._bfeeds[v].append((g, d))
        self._groups = list(groups.values())
        #: whether a move of u's next event may move a bound (u's, or a relay's of a group
        #: with u's next term): else refresh has nothing to follow
        self._follows = [self._relay[u] or any(g.relays for g, _d in self._feeds[u]) for u in range(n)]
        self._order = sorted(range(n), key=self._rank.__getitem__)
        self._next: list[TagT] = [NEVER_T] * n
        self._bound: list[TagT] = [FOREVER_T] * n  # min(next, EIMT), kept for the relays
        self._todo: list[tuple[int, int]] = []  # relays whose bound may have moved: (rank, f)
        self._queued: set[int] = set()

    def refresh(self, u: int) -> None:
        """Follow a change of what ``u``'s next event depends on."""
        new = self._next_event(u)
        old = self._next[u]
        if new != old:
            self._next[u] = new
            for g, d in self._feeds[u]:
                self._moved(g, add_delay(old, d), add_delay(new, d))
            if self._follows[u]:
                if self._relay[u] and u not in self._queued:
                    self._rebound(u)  # (at once: nothing else is queued before it)
                if self._todo:
                    self._follow()

    def _follow(self) -> None:
        """Move the bound terms of the relays queued, in component order (every relay
        queued by one comes after it), each once; stop where a bound stays."""
        todo, queued = self._todo, self._queued
        while todo:
            _r, v = heapq.heappop(todo)
            queued.discard(v)
            self._rebound(v)

    def _rebound(self, v: int) -> None:
        """Relay ``v``'s bound may have moved: move its terms (queuing the relays whose
        bounds that moves)."""
        b = self._next[v]
        g = self.group[v]
        if g is not None and g.best < b:
            b = g.best
        old = self._bound[v]
        if b != old:
            self._bound[v] = b
            for h, d in self._bfeeds[v]:
                self._moved(h, add_delay(old, d), add_delay(b, d))

    def _moved(self, g: EimtGroup, old: TagT, new: TagT) -> None:
        """A term of ``g``'s EIMT went from ``old`` to ``new`` (``old >= g.best``)."""
        if old == new:
            return
        best, before = g.best, g.count
        if new < best:
            g.best, g.count = new, 1
        elif new == best:
            g.count += 1
        elif old == best:
            g.count -= 1
            if g.count == 0:  # the last at the minimum moved later: look at them all
                self._recompute(g)
        else:
            return  # neither was nor is at the minimum
        if g.best != best:
            self._stale |= g.members
            for r in g.relays:  # their bounds may move (_follow)
                if r not in self._queued:
                    self._queued.add(r)
                    heapq.heappush(self._todo, (self._rank[r], r))
        elif min(before, g.count) <= g.scc_max:
            # A grant depends on who attains the EIMT only through whether they are all
            # in the federate's zero-delay cycle (only_cycle): never when they are more
            # than the cycle's members. Same EIMT, more than that before and after: no
            # new grant.
            self._stale |= g.members

    def _recompute(self, g: EimtGroup) -> None:
        best, count = FOREVER_T, 0
        for terms, value in ((g.upstream, self._next), (g.bounds, self._bound)):
            for u, d in terms.items():
                t = add_delay(value[u], d)
                if t < best:
                    best, count = t, 1
                elif t == best:
                    count += 1
        g.best, g.count = best, count

    def recompute_all(self) -> None:
        """After a change to every next event (start, stop agreement)."""
        self._next = [self._next_event(u) for u in range(len(self._next))]
        seen: set[int] = set()
        for f in self._order:  # a group's bound terms come from federates before its first
            g = self.group[f]
            if g is not None and id(g) not in seen:
                seen.add(id(g))
                self._recompute(g)
                self._stale |= g.members
            b = self._next[f]
            self._bound[f] = g.best if g is not None and g.best < b else b
        self._todo.clear()
        self._queued.clear()

    def next_event(self, u: int) -> TagT:
        """``u``'s next event, as last refreshed."""
        return self._next[u]

    def bound(self, u: int) -> TagT:
        """The earliest tag ``u`` could still act at: its next event or its EIMT, whichever
        is first (as last refreshed; O(1))."""
        b = self._next[u]
        g = self.group[u]
        return g.best if g is not None and g.best < b else b

    def eimt(self, f: int) -> tuple[TagT, set[int]]:
        """The earliest tag anything could still reach ``f``, and who could send it
        (for reading: O(upstream))."""
        g = self.group[f]
        if g is None:
            return FOREVER_T, set()
        nxt = self._next
        return g.best, {u for u, d in self.upstream[f].items() if add_delay(nxt[u], d) == g.best}

    def only_cycle(self, f: int, g: EimtGroup) -> bool:
        """Whether all who could send at ``f``'s EIMT are in its zero-delay cycle: all the
        terms at the minimum are next terms of its members (a bound term is of none)."""
        scc = self.layout.scc[f]
        if g.count > len(scc):
            return False
        ups, nxt, best = g.upstream, self._next, g.best
        return sum(1 for u in scc if u in ups and add_delay(nxt[u], ups[u]) == best) == g.count
