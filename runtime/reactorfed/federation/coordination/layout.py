"""The shape of a federation: its federates, the links between them, and what follows
from them for time coordination (upstream path delays, zero-delay cycles)."""

from __future__ import annotations

import hashlib
import heapq
import json
from dataclasses import dataclass, field

from ...partition import Partition
from ...tag import TagT, add_delay
from ..wire.protocol import PROTOCOL_VERSION

__all__ = ["Delay", "Layout", "Link", "add_delay", "compose"]

# A path delay as a tag offset: (dt, dm). None (same tag) is (0, 0), "after 0" is (0, 1),
# "after d" is (d, 0). Applying (dt, dm) to (t, m): (t + dt, dm) if dt > 0 else (t, m + dm),
# saturating at FOREVER: reactorfed.tag.add_delay (re-exported here).
Delay = TagT


def link_delay(after: int | None) -> Delay:
    return (0, 0) if after is None else (0, 1) if after == 0 else (after, 0)


def compose(a: Delay, b: Delay) -> Delay:
    """The delay of a then b."""
    return (a[0] + b[0], b[1]) if b[0] > 0 else (a[0], a[1] + b[1])


@dataclass(frozen=True)
class Link:
    id: int
    src: int  # federate index
    dst: int
    delay: int | None
    src_port: str
    dst_port: str


@dataclass
class Layout:
    names: list[str]
    links: list[Link]
    #: path[u][f]: the smallest delay of any path of links from u to f (absent: no path)
    path: list[dict[int, Delay]] = field(default_factory=list)
    #: scc[f]: the federates joined with f in a cycle of zero-delay links (f included)
    scc: list[frozenset[int]] = field(default_factory=list)
    digest: str = ""

    @classmethod
    def of(cls, part: Partition) -> Layout:
        """The layout of a program's partition (``assemble(main, federate).partition``)."""
        index = {n: i for i, n in enumerate(part.federates)}
        links = [
            Link(lk.id, index[lk.src_fed], index[lk.dst_fed], lk.delay, lk.src.fqn, lk.dst.fqn)
            for lk in part.links
        ]
        lay = cls(list(part.federates), links)
        lay._closure()
        classes = [type(c).__qualname__ for c in part.main._children]
        desc = json.dumps(
            {"v": PROTOCOL_VERSION, "federates": lay.names, "classes": classes,
             "links": [[lk.src_port, lk.dst_port, lk.delay] for lk in links]},
            sort_keys=True,
        )
        lay.digest = hashlib.sha256(desc.encode()).hexdigest()[:32]
        return lay

    def index(self, name: str) -> int:
        return self.names.index(name)

    def _closure(self) -> None:
        # The smallest delay of any path from each federate, by Dijkstra from each one
        # (O(N * E log E); Floyd-Warshall's O(N^3) took 1.5 s per process at N = 128, in the
        # RTI and in every federate, before any joined). Dijkstra is exact here: delays
        # never decrease along a path (compose(a, b) >= a) and compose is monotone in a.
        # A federate reaches itself only through a cycle, whose smallest delay it gets.
        n = len(self.names)
        out: list[list[tuple[int, Delay]]] = [[] for _ in range(n)]
        for lk in self.links:
            out[lk.src].append((lk.dst, link_delay(lk.delay)))
        path: list[dict[int, Delay]] = []
        for src in range(n):
            done: dict[int, Delay] = {}
            heap = [(d, dst) for dst, d in out[src]]
            heapq.heapify(heap)
            while heap:
                d, f = heapq.heappop(heap)
                if f in done:
                    continue
                done[f] = d
                for g, e in out[f]:
                    if g not in done:
                        heapq.heappush(heap, (compose(d, e), g))
            path.append(done)
        self.path = path
        zero = [{lk.dst for lk in self.links if lk.src == i and lk.delay is None} for i in range(n)]
        reach = [self._reach(i, zero) for i in range(n)]
        self.scc = [frozenset(j for j in range(n) if j == i or (j in reach[i] and i in reach[j])) for i in range(n)]

    @staticmethod
    def _reach(i: int, adj: list[set[int]]) -> set[int]:
        seen: set[int] = set()
        todo = list(adj[i])
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(adj[j])
        return seen

    def upstream(self, f: int) -> dict[int, Delay]:
        """Every federate with a path to ``f``, with the smallest path delay. ``f`` itself
        is included when it lies on a cycle: its own next event may come back to it."""
        return {u: p[f] for u, p in enumerate(self.path) if f in p}

    def direct_upstream(self, f: int) -> set[int]:
        return {lk.src for lk in self.links if lk.dst == f and lk.src != f}

    def downstream(self, f: int) -> set[int]:
        return {lk.dst for lk in self.links if lk.src == f and lk.dst != f}

    def cyclic(self, lk: Link) -> bool:
        """A zero-delay link inside a zero-delay cycle: its absence is announced each tag."""
        return lk.delay is None and lk.src != lk.dst and lk.dst in self.scc[lk.src]
