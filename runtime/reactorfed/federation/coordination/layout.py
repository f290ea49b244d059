"""The shape of a federation: its federates, the links between them, and what follows
from them for time coordination (upstream path delays, zero-delay cycles); and its
elastic banks (:mod:`reactorfed.model.elastic`): the federates that are slots, present or
absent, whose membership the RTI changes at agreed tags (``rti_core``)."""

from __future__ import annotations

import hashlib
import heapq
import json
from dataclasses import dataclass, field
from typing import Any

from ...assembly.partition import Partition
from ...errors import ValidationError
from ...model.elastic import as_elastic, elastic_width, is_transient
from ...model.maxwait import maxwait_of
from ...model.reactor import Reactor
from ...time.tag import FOREVER, TagT, add_delay
from ..wire.protocol import PROTOCOL_VERSION

__all__ = ["LAYOUT_FORMAT", "Delay", "ElasticGroup", "Layout", "Link", "add_delay", "compose"]

#: the version of :meth:`Layout.json`'s form (a reader refuses any other)
LAYOUT_FORMAT = 1

# A path delay as a tag offset: (dt, dm). None (same tag) is (0, 0), "after 0" is (0, 1),
# "after d" is (d, 0). Applying (dt, dm) to (t, m): (t + dt, dm) if dt > 0 else (t, m + dm),
# saturating at FOREVER: reactorfed.time.tag.add_delay (re-exported here).
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
    #: LF's ``~>``: the receiver stamps what arrives with its own physical time (plus the
    #: delay); no part of time coordination (see Layout.physical)
    physical: bool = False
    #: LF's ``@absent_after`` (ns): see :mod:`.federate_maxwait`
    absent_after: int = 0


@dataclass(frozen=True)
class ElasticGroup:
    """An elastic bank: its federates (slots, in bank-index order) and its widths."""

    name: str
    slots: tuple[int, ...]
    min: int
    max: int
    initial: int
    #: a transient federate (``transient(...)``, LF's ``@transient``): a new process for it
    #: while it is present takes over (hot swap); a bank's member's is a duplicate
    transient: bool = False


@dataclass
class Layout:
    names: list[str]
    #: the links time coordination orders (every one but the physical ones)
    links: list[Link]
    #: path[u][f]: the smallest delay of any path of links from u to f (absent: no path)
    path: list[dict[int, Delay]] = field(default_factory=list)
    #: scc[f]: the federates joined with f in a cycle of zero-delay links (f included)
    scc: list[frozenset[int]] = field(default_factory=list)
    digest: str = ""
    #: the elastic banks; every other federate is present from start to end
    elastic: list[ElasticGroup] = field(default_factory=list)
    #: the physical links (LF's ``~>``): data only, no grant waits for them, no message on
    #: them is counted (the receiver stamps it at arrival)
    physical: list[Link] = field(default_factory=list)
    #: each federate's declared maxwait (ns; FOREVER: none declared), by index
    maxwait: list[int] = field(default_factory=list)
    _elastic_of: dict[int, ElasticGroup] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, part: Partition) -> Layout:
        """The layout of a program's partition (``assemble(main, federate).partition``)."""
        index = {n: i for i, n in enumerate(part.federates)}
        every = [
            Link(lk.id, index[lk.src_fed], index[lk.dst_fed], lk.delay, lk.src.fqn, lk.dst.fqn, lk.physical,
                 lk.absent_after)
            for lk in part.links
        ]
        links = [lk for lk in every if not lk.physical]
        physical = [lk for lk in every if lk.physical]
        by_name = {c.name: c for c in part.main.children}
        lay = cls(list(part.federates), links, physical=physical, elastic=_elastic_groups(part.main, index),
                  maxwait=[maxwait_of(by_name[n]) for n in part.federates])
        lay._closure()
        classes = [type(c).__qualname__ for c in part.main.children]
        shape: dict[str, object] = {"v": PROTOCOL_VERSION, "federates": lay.names, "classes": classes,
                                    "links": [[lk.src_port, lk.dst_port, lk.delay] for lk in links]}
        if lay.elastic:  # (only then: the digests of other programs stay as they were)
            # min and max, not the initial width: one program, one digest, whatever the width
            shape["elastic"] = [[g.name, g.min, g.max] for g in lay.elastic]
        if any(lk.serializer is not None for lk in part.links):  # (the same: only then)
            shape["serializers"] = [[lk.id, type(lk.serializer).__qualname__] for lk in part.links
                                    if lk.serializer is not None]
        if physical:  # (the same: only then)
            shape["physical"] = [[lk.src_port, lk.dst_port, lk.delay] for lk in physical]
        if any(lk.absent_after for lk in links) or any(w != FOREVER for w in lay.maxwait):
            # (only then, as above) what decentralized coordination waits for
            shape["maxwait"] = [lay.maxwait, [lk.absent_after for lk in links]]
        desc = json.dumps(shape, sort_keys=True)
        lay.digest = hashlib.sha256(desc.encode()).hexdigest()[:32]
        return lay

    def json(self) -> dict[str, Any]:
        """The layout as JSON data (:meth:`from_json` reads it back): all an RTI needs of a
        program, handed to it without the program (``reactorfed rti --layout``). Path
        delays and cycles are not in it: they follow from the links."""

        def links(lks: list[Link]) -> list[list[Any]]:
            return [[lk.id, lk.src, lk.dst, lk.delay, lk.src_port, lk.dst_port, lk.absent_after] for lk in lks]

        return {"format": LAYOUT_FORMAT, "digest": self.digest, "federates": list(self.names),
                "links": links(self.links), "physical": links(self.physical), "maxwait": list(self.maxwait),
                "elastic": [{"name": g.name, "slots": list(g.slots), "min": g.min, "max": g.max,
                             "initial": g.initial, "transient": g.transient} for g in self.elastic]}

    @classmethod
    def from_json(cls, data: Any, where: str = "layout") -> Layout:
        """A layout from :meth:`json`'s data; anything malformed is a
        :class:`~reactorfed.errors.ValidationError` naming ``where`` and the element."""
        if not isinstance(data, dict):
            raise ValidationError(f"{where}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != LAYOUT_FORMAT:
            raise ValidationError(f"{where}: format {data.get('format')!r}, this reactorfed reads {LAYOUT_FORMAT}: "
                                  "write it again with this version")
        names = _field(data, "federates", list, where)
        n = len(names)
        if not all(isinstance(x, str) for x in names) or len(set(names)) != n or n == 0:
            raise ValidationError(f"{where}: 'federates' must be distinct names, at least one")
        digest = _field(data, "digest", str, where)
        if not digest:
            raise ValidationError(f"{where}: 'digest' is empty")
        maxwait = _field(data, "maxwait", list, where)
        if len(maxwait) != n or not all(type(w) is int and w >= 0 for w in maxwait):
            raise ValidationError(f"{where}: 'maxwait' must be {n} durations in ns, one per federate")
        links, physical = _links(data, "links", n, where), _links(data, "physical", n, where)
        ids = [lk.id for lk in links + physical]
        if len(set(ids)) != len(ids):
            raise ValidationError(f"{where}: link ids must be distinct, got {sorted(ids)}")
        groups = _groups(data, n, where)
        slots = [f for g in groups for f in g.slots]
        if len(set(slots)) != len(slots):
            raise ValidationError(f"{where}: a federate is a slot of two elastic banks, or twice of one")
        lay = cls(list(names), links, digest=digest, maxwait=list(maxwait), physical=physical, elastic=groups)
        lay._closure()
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
        self._elastic_of = {f: eg for eg in self.elastic for f in eg.slots}

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

    def elastic_of(self, f: int) -> ElasticGroup | None:
        """The elastic bank ``f`` is a slot of, if any."""
        return self._elastic_of.get(f)

    def initial_members(self) -> frozenset[int]:
        """The federates present at the start: all but the elastic slots past each bank's
        initial width."""
        absent = {f for g in self.elastic for f in g.slots[g.initial:]}
        return frozenset(f for f in range(len(self.names)) if f not in absent)

    def upstream(self, f: int) -> dict[int, Delay]:
        """Every federate with a path to ``f``, with the smallest path delay. ``f`` itself
        is included when it lies on a cycle: its own next event may come back to it."""
        return {u: p[f] for u, p in enumerate(self.path) if f in p}

    def direct_upstream(self, f: int) -> set[int]:
        return {lk.src for lk in self.links if lk.dst == f and lk.src != f}

    def downstream(self, f: int) -> set[int]:
        return {lk.dst for lk in self.links if lk.src == f and lk.dst != f}

    def data_upstream(self, f: int) -> set[int]:
        """The federates that send ``f`` data: over coordinated links or physical ones."""
        return self.direct_upstream(f) | {lk.src for lk in self.physical if lk.dst == f and lk.src != f}

    def data_downstream(self, f: int) -> set[int]:
        """The federates ``f`` sends data: over coordinated links or physical ones."""
        return self.downstream(f) | {lk.dst for lk in self.physical if lk.src == f and lk.dst != f}

    def cyclic(self, lk: Link) -> bool:
        """A zero-delay link inside a zero-delay cycle: its absence is announced each tag."""
        return lk.delay is None and lk.src != lk.dst and lk.dst in self.scc[lk.src]


def _elastic_groups(main: Reactor, index: dict[str, int]) -> list[ElasticGroup]:
    """The main reactor's elastic banks, in declaration order; refuses one anywhere else."""
    groups: list[ElasticGroup] = []
    todo = [main]
    while todo:
        r = todo.pop()
        todo.extend(r.children)
        for attr, value in vars(r).items():
            v = as_elastic(value)
            if v is None:
                continue
            if r is not main or not all(m.parent is main for m in v):
                raise ValidationError(
                    f"{r.fqn}.{attr}: an elastic bank's members must be federates: declare it in the main reactor")
            w = elastic_width(v)
            groups.append(ElasticGroup(attr, tuple(index[m.name] for m in v), w.min, w.max, w.start,
                                       isinstance(value, Reactor) and is_transient(value)))
    return groups


def _field(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValidationError(f"{where}: '{key}' must be a {kind.__name__}, got {value!r:.60}")
    return value


def _links(data: dict[str, Any], key: str, n: int, where: str) -> list[Link]:
    out: list[Link] = []
    for i, item in enumerate(_field(data, key, list, where)):
        ok = isinstance(item, list) and len(item) == 7
        if ok:
            lid, src, dst, delay, src_port, dst_port, absent_after = item
            ints = (lid, src, dst, absent_after) + (() if delay is None else (delay,))
            ok = (all(type(v) is int and v >= 0 for v in ints) and src < n and dst < n
                  and isinstance(src_port, str) and isinstance(dst_port, str))
        if not ok:
            raise ValidationError(f"{where}: {key}[{i}] must be [id, source, destination, delay or null, "
                                  f"source port, destination port, absent_after], federates below {n}; got {item!r:.80}")
        out.append(Link(lid, src, dst, delay, src_port, dst_port, key == "physical", absent_after))
    return out


def _groups(data: dict[str, Any], n: int, where: str) -> list[ElasticGroup]:
    out: list[ElasticGroup] = []
    for i, g in enumerate(_field(data, "elastic", list, where)):
        ok = isinstance(g, dict) and isinstance(g.get("name"), str) and isinstance(g.get("slots"), list)
        if ok:
            slots, nums = g["slots"], (g.get("min"), g.get("max"), g.get("initial"))
            ok = (all(type(f) is int and 0 <= f < n for f in slots) and all(type(v) is int for v in nums)
                  and 0 <= g["min"] <= g["initial"] <= g["max"] <= len(slots)
                  and isinstance(g.get("transient", False), bool))
        if not ok:
            raise ValidationError(f"{where}: elastic[{i}] must be {{name, slots (federate indices below {n}), "
                                  f"min <= initial <= max <= its slots, transient}}; got {g!r:.80}")
        out.append(ElasticGroup(g["name"], tuple(g["slots"]), g["min"], g["max"], g["initial"],
                                bool(g.get("transient", False))))
    return out
