"""Assembly: resolve a reactor hierarchy into channels, slots and a precedence graph.

* Connections are flattened into channel pairs and checked (direction, hierarchy,
  width, one upstream per channel).
* Channels joined by zero-delay connections share one :class:`Slot`; delayed
  connections become scheduled deliveries from one slot to another.
* Edges run along zero-delay data dependencies and along each reactor's declaration
  order; a cycle is a causality loop and is refused with the reactions named. A
  reaction's level is the longest path to it; reactions sharing a level are independent.
* Reactions ready at one tag run by rank: inferred deadline, level, assembly order
  (reactor-c's order; see :func:`rank`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from .action import Action, ActionDecl
from .errors import CausalityLoopError, ValidationError
from .port import MultiPort, Port, PortDecl
from .reaction import Reaction, ReactionDecl
from .reactor import Bank, Connection, Reactor
from .tag import FOREVER
from .timer import SHUTDOWN, STARTUP, Timer, TimerSlot
from .trigger import Slot

__all__ = ["NetLink", "Program", "assemble", "rank"]


class NetLink:
    """A connection between two federates: carried over the network."""

    __slots__ = ("delay", "dst", "dst_fed", "id", "src", "src_fed")

    def __init__(self, id: int, src: Port[Any], dst: Port[Any], delay: int | None, src_fed: str, dst_fed: str) -> None:
        self.id = id
        self.src = src
        self.dst = dst
        #: None: same tag; 0: next microstep; d: d ns later
        self.delay = delay
        self.src_fed = src_fed
        self.dst_fed = dst_fed

    def __repr__(self) -> str:
        after = "" if self.delay is None else f" after {self.delay} ns"
        return f"<link {self.id}: {self.src.fqn} -> {self.dst.fqn}{after}>"


class Program:
    """The assembled program: every reactor, channel, action and reaction, ranked."""

    def __init__(self, main: Reactor) -> None:
        self.main = main
        self.reactors: list[Reactor] = []
        self.channels: list[Port[Any]] = []
        self.actions: list[Action] = []
        self.timers: list[TimerSlot] = []
        self.reactions: list[Reaction] = []  # sorted by rank
        self.startup = Slot(f"{main.name}.startup")
        self.shutdown = Slot(f"{main.name}.shutdown")
        self.edges: dict[Reaction, list[Reaction]] = {}
        #: federated execution: this process's federate, all federates, the links
        self.federate: str | None = None
        self.federates: list[str] = []
        self.links: list[NetLink] = []
        self.fed_of: dict[int, str] = {}

    def is_local(self, reactor: Reactor) -> bool:
        """Does ``reactor`` run in this process?"""
        return self.federate is None or self.fed_of.get(id(reactor)) == self.federate

    @property
    def max_level(self) -> int:
        return max((r.level for r in self.reactions), default=-1)


def _walk(r: Reactor) -> Iterable[Reactor]:
    yield r
    for c in r._children:
        yield from _walk(c)


def _flatten(x: Any, where: str) -> list[Port[Any]]:
    if isinstance(x, Port):
        return [x]
    if isinstance(x, MultiPort):
        return x.channels()
    if isinstance(x, (list, tuple, Bank)):
        out: list[Port[Any]] = []
        for item in x:
            out.extend(_flatten(item, where))
        return out
    raise ValidationError(f"{where}: cannot connect {x!r}: expected a port, multiport, a bank's port or a list of them")


def _connect(c: Connection) -> None:
    owner = c.owner.fqn
    srcs = _flatten(c.src, owner)
    dsts = _flatten(c.dst, owner)
    sname = _describe(c.src)
    dname = _describe(c.dst)
    for s in srcs:
        ok = (not s.is_input and s.reactor._parent is c.owner) or (s.is_input and s.reactor is c.owner)
        if not ok:
            raise ValidationError(
                f"{owner}: cannot connect from {s.fqn}: a connection's source must be an output of a "
                f"contained reactor or an input of {owner}"
            )
    for d in dsts:
        ok = (d.is_input and d.reactor._parent is c.owner) or (not d.is_input and d.reactor is c.owner)
        if not ok:
            raise ValidationError(
                f"{owner}: cannot connect to {d.fqn}: a connection's destination must be an input of a "
                f"contained reactor or an output of {owner}"
            )
    if len(srcs) != len(dsts):
        if c.broadcast and srcs and len(dsts) % len(srcs) == 0:
            srcs = srcs * (len(dsts) // len(srcs))
        else:
            hint = " (use broadcast=True to repeat the sources)" if srcs and len(dsts) % len(srcs) == 0 else ""
            raise ValidationError(
                f"{owner}: width mismatch connecting {sname} ({len(srcs)} channels) to {dname} "
                f"({len(dsts)} channels){hint}"
            )
    for s, d in zip(srcs, dsts, strict=True):
        if d.upstream is not None:
            raise ValidationError(f"{owner}: {d.fqn} is already connected from {d.upstream.fqn}; a port has one upstream")
        _check_types(owner, s, d)
        d.upstream = s
        # A physical connection is never zero-delay: it shares no slot and makes no edge.
        d.upstream_delay = (c.after or 0) if c.physical else c.after
        d.upstream_physical = c.physical
        s.downstream.append(d)


def _check_types(owner: str, s: Port[Any], d: Port[Any]) -> None:
    st, dt = s.type, d.type
    if dt is object or st is dt or not isinstance(st, type) or not isinstance(dt, type):
        return
    if not issubclass(st, dt):
        raise ValidationError(f"{owner}: {s.fqn} carries {st.__name__} but {d.fqn} expects {dt.__name__}")


def _describe(x: Any) -> str:
    if isinstance(x, (Port, MultiPort)):
        return x.fqn
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], (Port, MultiPort)):
        return f"[{x[0].fqn}, ...]"
    return repr(x)


def _resolve(reactor: Reactor, ref: Any, rdecl: ReactionDecl, role: str) -> tuple[str | None, list[Any], Any]:
    """Resolve one reference of a reaction: (parameter name, runtime elements, object)."""
    where = f"reaction {reactor.fqn}.{rdecl.name}"
    if ref is STARTUP or ref is SHUTDOWN:
        if role != "trigger":
            raise ValidationError(f"{where}: {ref!r} can only be a trigger")
        return None, [ref], ref
    if isinstance(ref, (PortDecl, ActionDecl, Timer)):
        name = ref.name
        # A subclass may redeclare an element (e.g. an action with another policy): the
        # base class's reactions then use the redeclared one.
        if not _same_kind(getattr(type(reactor), name, None), ref):
            raise ValidationError(f"{where}: {ref!r} is not an element of {reactor.fqn}")
        obj = reactor.__dict__[name]
        path = name
    elif isinstance(ref, str):
        path = ref
        parts = ref.split(".")
        obj = reactor
        for p in parts:
            if not hasattr(obj, p):
                raise ValidationError(f"{where}: {ref!r} names nothing in {reactor.fqn}")
            obj = getattr(obj, p)
        name = parts[0]
        if len(parts) > 2:
            raise ValidationError(f"{where}: {ref!r} reaches too deep: only 'port' or 'child.port' references")
    else:
        raise ValidationError(f"{where}: cannot use {ref!r} as a {role}")
    elems = _elements(obj)
    if not elems and not isinstance(obj, (MultiPort, list, tuple)):  # width 0 is fine
        raise ValidationError(f"{where}: {path!r} is not a port, action or timer")
    own = isinstance(ref, (PortDecl, ActionDecl, Timer)) or "." not in path
    for e in elems:
        if isinstance(e, Port):
            if own and e.reactor is not reactor:
                raise ValidationError(f"{where}: {e.fqn} does not belong to {reactor.fqn}")
            if not own and e.reactor._parent is not reactor:
                raise ValidationError(f"{where}: {e.fqn} is not a port of a reactor contained in {reactor.fqn}")
            mine = e.reactor is reactor
            if role == "effect" and mine and e.is_input:
                raise ValidationError(f"{where}: cannot write its own input {e.fqn}")
            if role == "effect" and not mine and not e.is_input:
                raise ValidationError(f"{where}: cannot write {e.fqn}, an output of a contained reactor")
            if role != "effect" and not mine and e.is_input:
                raise ValidationError(f"{where}: cannot read {e.fqn}, an input of a contained reactor")
        elif isinstance(e, TimerSlot) and role == "effect":
            raise ValidationError(f"{where}: a timer ({e.fqn}) cannot be an effect")
        elif isinstance(e, Action) and e.reactor is not reactor:
            raise ValidationError(f"{where}: {e.fqn} is an action of another reactor")
    return name, elems, obj


def _same_kind(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, PortDecl) and isinstance(b, PortDecl):
        return a.is_input == b.is_input
    return (isinstance(a, ActionDecl) and isinstance(b, ActionDecl)) or (isinstance(a, Timer) and isinstance(b, Timer))


def _elements(obj: Any) -> list[Any]:
    if isinstance(obj, Port):
        return [obj]
    if isinstance(obj, MultiPort):
        return obj.channels()
    if isinstance(obj, (Action, TimerSlot)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        out: list[Any] = []
        for o in obj:
            out.extend(_elements(o))
        return out
    return []


def assemble(main: Reactor, federate: str | None = None) -> Program:
    """Check ``main`` and everything it contains and build the ranked program.

    With ``federate`` (the name of one of main's children), only that federate's
    reactions run; connections to and from other federates become :class:`NetLink` s.
    """
    if main._parent is not None:
        top = main._parent
        while top._parent is not None:
            top = top._parent
        top._rename(None)  # full names, for the message
        raise ValidationError(f"{main.fqn} is contained in {main._parent.fqn}; run the top-level reactor")
    main._rename(None)
    prog = Program(main)
    prog.reactors = list(_walk(main))
    for r in prog.reactors:
        if r._env is not None:
            raise ValidationError(f"{r.fqn} is already part of a running program")
        for p in r._ports():
            prog.channels.extend(p.channels())
        prog.actions.extend(r._actions())
        prog.timers.extend(r._timers())
        # timers' and actions' parameters, now that __init__ set them and full names are known
        for action in r._actions():
            action.resolve()
        for timer in r._timers():
            timer.resolve()
    for r in prog.reactors:
        for c in r._connections:
            _connect(c)

    # Reactions, in assembly order.
    order = 0
    reads: dict[Slot, list[Reaction]] = {}
    for r in prog.reactors:
        for i, rd in enumerate(type(r)._decl_reactions):
            rx = Reaction(r, rd, i, order)
            order += 1
            prog.reactions.append(rx)
            for role, refs, bucket in (("trigger", rd.triggers, rx.triggers), ("source", rd.sources, rx.sources), ("effect", rd.effects, rx.effects)):
                for ref in refs:
                    _, elems, _ = _resolve(r, ref, rd, role)
                    bucket.extend(elems)
            for e in rx.effects:
                if isinstance(e, Port):
                    e.written_by.append(rx)
                elif isinstance(e, Action):
                    e.scheduled_by.append(rx)

    for ch in prog.channels:
        if ch.upstream is not None and ch.written_by:
            raise ValidationError(
                f"{ch.fqn} has two sources: it is connected from {ch.upstream.fqn} and written by "
                f"{ch.written_by[0].fqn}"
            )

    # The precedence graph spans the whole program, federated or not, so that a
    # causality loop through several federates is refused just the same.
    def root(ch: Port[Any], cut: bool) -> Port[Any]:
        seen = 0
        while ch.upstream is not None and ch.upstream_delay is None and not (cut and id(ch) in net_dst):
            ch = ch.upstream
            seen += 1
            assert seen <= len(prog.channels), "zero-delay connections form a cycle"
        return ch

    net_dst: set[int] = set()
    for rx in prog.reactions:
        for e in (*rx.triggers, *rx.sources):
            if isinstance(e, Port):
                lst = reads.setdefault(root(e, False)._slot, [])
                if rx not in lst:
                    lst.append(rx)
    edges: dict[Reaction, list[Reaction]] = {rx: [] for rx in prog.reactions}
    by_reactor: dict[int, list[Reaction]] = {}
    for rx in prog.reactions:
        by_reactor.setdefault(id(rx.reactor), []).append(rx)
    for rxs in by_reactor.values():
        for a, b in itertools.pairwise(rxs):
            edges[a].append(b)
    for rx in prog.reactions:
        for e in rx.effects:
            if isinstance(e, Port):
                for reader in reads.get(root(e, False)._slot, ()):
                    if reader not in edges[rx]:
                        edges[rx].append(reader)
    prog.edges = edges
    _levels(prog.reactions, edges)
    _infer_deadlines(prog.reactions, edges)

    if federate is not None:
        _partition(prog, federate)
        net_dst.update(id(link.dst) for link in prog.links)
    local = prog.is_local

    # Share slots along zero-delay connections (cut at federate boundaries); delayed
    # connections deliver slot to slot.
    for ch in prog.channels:
        ch._slot = root(ch, True)._slot
    for ch in prog.channels:
        if ch.upstream is not None and ch.upstream_delay is not None and id(ch) not in net_dst and local(ch.reactor):
            delay = ch.upstream_delay
            # a physical connection's after d is coded -1 - d (Scheduler._process)
            ch.upstream._slot.delayed.append((ch._slot, -1 - delay if ch.upstream_physical else delay))

    prog.reactions = [rx for rx in prog.reactions if local(rx.reactor)]
    prog.actions = [a for a in prog.actions if local(a.reactor)]
    prog.timers = [t for t in prog.timers if local(t.reactor)]
    for rx in prog.reactions:
        for e in rx.triggers:
            slot = prog.startup if e is STARTUP else prog.shutdown if e is SHUTDOWN else _slot_of(e)
            if rx not in slot.reactions:
                slot.reactions.append(rx)
    rank(prog, by_deadline=True)
    return prog


def rank(prog: Program, *, by_deadline: bool) -> None:
    """Number the reactions in the order they run when ready at one tag (``rx.rank``) and
    sort ``prog.reactions`` and every slot's reactions by it.

    ``by_deadline`` (what assembly does): reactor-c's order, the earliest inferred
    deadline first, then level (``lf_combine_deadline_and_level``: a reaction's index is
    ``deadline << 16 | level``), then assembly order, which makes it deterministic. The
    order respects every edge: along an edge the level grows and the inferred deadline
    never does. Without ``by_deadline``: (level, assembly order), for a scheduler that
    must finish each level before the next (a federate's zero-delay-cycle checkpoints)."""
    if by_deadline:
        prog.reactions.sort(key=lambda x: (x.inferred_deadline, x.level, x.order))
    else:
        prog.reactions.sort(key=lambda x: (x.level, x.order))
    for i, rx in enumerate(prog.reactions):
        rx.rank = i
    for slot in _all_slots(prog):
        slot.reactions.sort(key=lambda x: x.rank)


def _partition(prog: Program, federate: str) -> None:
    """Split the program at the main reactor's children (each bank member on its own):
    keep ``federate``'s reactors local and turn connections between federates into
    network links."""
    main = prog.main
    if type(main)._decl_reactions or main._ports() or main._actions() or main._timers():
        raise ValidationError(
            f"{main.fqn}: a federated program's main reactor only contains federates and connects "
            "them; move its reactions, ports, actions and timers into a contained reactor"
        )
    names = [c.name for c in main._children]
    prog.federates = names
    if federate not in names:
        raise ValidationError(f"{main.fqn} has no federate {federate!r}; its federates are: {', '.join(names)}")
    prog.federate = federate
    fed_of: dict[int, str] = {}
    for child in main._children:
        for r in _walk(child):
            fed_of[id(r)] = child.name
    prog.fed_of = fed_of
    links: list[NetLink] = []
    for ch in prog.channels:
        up = ch.upstream
        if up is not None and fed_of[id(up.reactor)] != fed_of[id(ch.reactor)]:
            if ch.upstream_physical:
                raise ValidationError(
                    f"{main.fqn}: the physical connection {up.fqn} ~> {ch.fqn} joins two federates; "
                    "physical connections are supported within one process or federate only"
                )
            links.append(NetLink(len(links), up, ch, ch.upstream_delay, fed_of[id(up.reactor)], fed_of[id(ch.reactor)]))
    prog.links = links


def _slot_of(e: Any) -> Slot:
    if isinstance(e, Port):
        return e._slot
    assert isinstance(e, (Action, TimerSlot))
    return e


def _all_slots(prog: Program) -> list[Slot]:
    slots: dict[int, Slot] = {}
    for s in [prog.startup, prog.shutdown, *prog.actions, *prog.timers, *(c._slot for c in prog.channels)]:
        slots[id(s)] = s
    return list(slots.values())


def _levels(reactions: list[Reaction], edges: dict[Reaction, list[Reaction]]) -> None:
    indeg = {rx: 0 for rx in reactions}
    for src in reactions:
        for dst in edges[src]:
            indeg[dst] += 1
    ready = [rx for rx in reactions if indeg[rx] == 0]
    for rx in reactions:
        rx.level = 0
    done = 0
    while ready:
        rx = ready.pop()
        done += 1
        for nxt in edges[rx]:
            nxt.level = max(nxt.level, rx.level + 1)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    if done != len(reactions):
        raise CausalityLoopError(_find_cycle([rx for rx in reactions if indeg[rx] > 0], edges))


def _infer_deadlines(reactions: list[Reaction], edges: dict[Reaction, list[Reaction]]) -> None:
    """A reaction's inferred deadline: its own, or the smallest of any reaction downstream
    of it, whichever is smaller (FOREVER: none). LF's ReactionInstanceGraph
    (assignInferredDeadlines) over the same edges: data and declaration order. Successors
    have higher levels, so one pass from the highest level down sees them first."""
    for rx in sorted(reactions, key=lambda x: x.level, reverse=True):
        d = FOREVER if rx.deadline is None else rx.deadline
        for nxt in edges[rx]:
            if nxt.inferred_deadline < d:
                d = nxt.inferred_deadline
        rx.inferred_deadline = d


def _find_cycle(rest: list[Reaction], edges: dict[Reaction, list[Reaction]]) -> list[str]:
    """A cycle among the reactions Kahn's algorithm could not order, as names."""
    # Every reaction left has a predecessor left: walk predecessors until one repeats.
    inside = set(rest)
    preds: dict[Reaction, list[Reaction]] = {r: [] for r in rest}
    for src in rest:
        for dst in edges[src]:
            if dst in inside:
                preds[dst].append(src)
    path: list[Reaction] = []
    index: dict[Reaction, int] = {}
    node = min(rest, key=lambda r: r.order)
    while node not in index:
        index[node] = len(path)
        path.append(node)
        node = min(preds[node], key=lambda r: r.order)
    cycle = path[index[node]:]
    cycle.reverse()
    # Start from the reaction declared first, so the message reads in program order.
    first = cycle.index(min(cycle, key=lambda r: r.order))
    cycle = cycle[first:] + cycle[:first]
    return [r.fqn for r in cycle]
