"""Assembly: build a :class:`Program` from a reactor tree, reading its declarations only.

The three phases, as in reactor-cpp: **construction** (the user's ``__init__`` s create
reactors and declare connections: :mod:`reactorfed.model.reactor`), **assembly** (here) and
**execution** (:class:`~reactorfed.execution.scheduler.Scheduler`, which binds one program and runs
it). Assembly never changes the tree: every call builds a new program with its own
runtime state (slots, actions' and timers' resolved parameters, reactions), so two
assemblies of one tree share nothing, and a tree may run again after a run ends.

* Connections are flattened into channel pairs and checked (direction, hierarchy,
  width, one upstream per channel).
* Channels joined by zero-delay connections share one :class:`Slot`; delayed
  connections become scheduled deliveries from one slot to another.
* Edges run along zero-delay data dependencies and along each reactor's declaration
  order; a cycle is a causality loop and is refused with the reactions named. A
  reaction's level is the longest path to it; reactions sharing a level are independent.
* Reactions ready at one tag run by rank: inferred deadline, level, assembly order
  (reactor-c's order; see :func:`rank`).
* For a federate (``assemble(main, federate)``), a :class:`~reactorfed.assembly.partition.Partition`
  says which reactors run here and which connections cross to other federates.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from ..errors import CausalityLoopError, ValidationError
from ..model.action import Action, ActionDecl, ActionSlot
from ..model.attachment import scheduler_of
from ..model.mode import Transition
from ..model.port import MultiPort, Port, PortDecl
from ..model.reaction import Reaction, ReactionDecl
from ..model.reactor import (
    Reactor,
    actions_of,
    connections_of,
    declared_reactions,
    ports_of,
    timers_of,
)
from ..model.timer import RESET, SHUTDOWN, STARTUP, Timer, TimerElement, TimerSlot
from ..model.trigger import Slot
from ..time.tag import FOREVER
from .connections import check_shared, connect, exclusive, exclusive_reactions
from .modes import build_modes
from .partition import NetLink, Partition
from .program import Program, Wire
from .toplevel import check_own_ports, kept_declarations

__all__ = ["NetLink", "Partition", "Program", "assemble", "rank", "resolve"]


def _walk(r: Reactor) -> Iterable[Reactor]:
    yield r
    for c in r.children:
        yield from _walk(c)


def resolve(reactor: Reactor, ref: Any, rdecl: ReactionDecl, role: str) -> tuple[str | None, list[Any], Any]:
    """Resolve one reference of a reaction: (parameter name, runtime elements, object)."""
    where = f"reaction {reactor.fqn}.{rdecl.name}"
    if ref is STARTUP or ref is SHUTDOWN or ref is RESET:
        if role == "effect":
            raise ValidationError(f"{where}: {ref!r} cannot be an effect: it is a trigger or a source")
        return ref.name, [ref], ref
    if isinstance(ref, Transition):  # (an effect of the reactor's own mode: checked with its class)
        if getattr(type(reactor), ref.mode.name, None) is not ref.mode:
            raise ValidationError(f"{where}: {ref!r} goes to a mode that is not one of {reactor.fqn}'s")
        return ref.name, [], ref
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
            if not own and e.reactor.parent is not reactor:
                raise ValidationError(f"{where}: {e.fqn} is not a port of a reactor contained in {reactor.fqn}")
            mine = e.reactor is reactor
            if role == "effect" and mine and e.is_input:
                raise ValidationError(f"{where}: cannot write its own input {e.fqn}")
            if role == "effect" and not mine and not e.is_input:
                raise ValidationError(f"{where}: cannot write {e.fqn}, an output of a contained reactor")
            if role != "effect" and not mine and e.is_input:
                raise ValidationError(f"{where}: cannot read {e.fqn}, an input of a contained reactor")
        elif isinstance(e, TimerElement) and role == "effect":
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
    if isinstance(obj, (Action, TimerElement)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        out: list[Any] = []
        for o in obj:
            out.extend(_elements(o))
        return out
    return []


def assemble(main: Reactor, federate: str | None = None) -> Program:
    """Check ``main`` and everything it contains and build a new ranked program, without
    changing the tree (see the module docstring).

    With ``federate`` (the name of one of main's children), only that federate's
    reactions run; connections to and from other federates become :class:`NetLink` s of
    the program's :class:`Partition`.
    """
    if main.parent is not None:
        raise ValidationError(f"{main.fqn} is contained in {main.parent.fqn}; run the top-level reactor")
    prog = Program(main)
    prog.reactors = reactors = list(_walk(main))
    slots = prog.slots
    actions: list[ActionSlot] = []
    timers: list[TimerSlot] = []
    for r in reactors:
        if scheduler_of(r) is not None:
            raise ValidationError(f"{r.fqn} is already part of a running program")
        for p in ports_of(r):
            prog.channels.extend(p.channels())
        # timers' and actions' parameters, now that __init__ set them
        for action in actions_of(r):
            slots[action] = aslot = ActionSlot(action)
            actions.append(aslot)
        for timer in timers_of(r):
            slots[timer] = tslot = TimerSlot(timer)
            timers.append(tslot)
    wires = prog.wires
    alternatives = prog.alternatives
    for r in reactors:
        for c in connections_of(r):
            connect(c, wires, alternatives)

    # Reactions, in assembly order; edges along each reactor's declaration order.
    edges: dict[Reaction, list[Reaction]] = {}
    writers: dict[Port[Any], list[Reaction]] = {}  # the reactions that declare a channel an effect
    for r in reactors:
        mine: list[Reaction] = []
        for i, rd in enumerate(declared_reactions(type(r))):
            rx = Reaction(r, rd, i, len(prog.reactions))
            prog.reactions.append(rx)
            mine.append(rx)
            edges[rx] = []
            for role, refs, bucket in (("trigger", rd.triggers, rx.triggers), ("source", rd.sources, rx.sources), ("effect", rd.effects, rx.effects)):
                for ref in refs:
                    _, elems, _ = resolve(r, ref, rd, role)
                    bucket.extend(elems)
            for e in rx.effects:
                if isinstance(e, Port):
                    writers.setdefault(e, []).append(rx)
        for before, after in itertools.pairwise(mine):
            edges[before].append(after)

    for ch in prog.channels:
        for w in (wires[ch], *alternatives.get(ch, ())) if ch in wires else ():
            for rx in writers.get(ch, ()):  # (allowed in two modes of one reactor)
                if not exclusive(w.mode, rx.reactor.__dict__[rx.decl.mode.name] if rx.decl.mode else None):
                    raise ValidationError(
                        f"{ch.fqn} has two sources: it is connected from {w.src.fqn} and written by {rx.fqn}")

    # The precedence graph spans the whole program, federated or not, so that a
    # causality loop through several federates is refused just the same.
    net_dst: set[Port[Any]] = set()

    def root(ch: Port[Any], cut: bool) -> Port[Any]:
        """The channel at the head of ``ch``'s zero-delay connections (cut at network links)."""
        seen = 0
        w = wires.get(ch)
        while w is not None and w.delay is None and not (cut and ch in net_dst):
            ch = w.src
            w = wires.get(ch)
            seen += 1
            assert seen <= len(prog.channels), "zero-delay connections form a cycle"
        return merged.get(ch, ch)

    # Zero-delay connections into one channel from two modes join their chains: one slot
    # (never written by both at one tag: one of the modes is inactive).
    merged: dict[Port[Any], Port[Any]] = {}
    for dst, alts in alternatives.items():
        for w in alts:
            if w.delay is None:
                a, b = root(w.src, False), root(dst, False)
                if a is not b:
                    for ch, head in list(merged.items()):
                        if head is a:
                            merged[ch] = b
                    merged[a] = b

    check_shared(prog.channels, wires, alternatives, lambda ch: root(ch, False), prog.reactions)
    reads: dict[Port[Any], list[Reaction]] = {}
    for rx in prog.reactions:
        for e in (*rx.triggers, *rx.sources):
            if isinstance(e, Port):
                lst = reads.setdefault(root(e, False), [])
                if rx not in lst:
                    lst.append(rx)
    for rx in prog.reactions:
        for e in rx.effects:
            if isinstance(e, Port):
                for reader in reads.get(root(e, False), ()):
                    if reader not in edges[rx] and not exclusive_reactions(rx, reader):
                        edges[rx].append(reader)
    prog.edges = edges
    _levels(prog.reactions, edges)
    _infer_deadlines(prog.reactions, edges)

    if federate is not None:
        prog.partition = _partition(main, federate, prog.channels, wires, prog.reactions)
        net_dst.update(link.dst for link in prog.partition.links)
    local = prog.is_local
    keeps = prog.keeps

    # Share slots along zero-delay connections (cut at federate boundaries); delayed
    # connections deliver slot to slot.
    heads: dict[Port[Any], Slot] = {}
    for ch in prog.channels:
        head = root(ch, True)
        slot = heads.get(head)
        if slot is None:
            slot = heads[head] = Slot(head.fqn)
        slots[ch] = slot
    for ch in prog.channels:
        for w in (wires[ch], *alternatives.get(ch, ())) if ch in wires else ():
            if w.delay is not None and ch not in net_dst and local(ch.reactor):
                # a physical connection's after d is coded -1 - d (Scheduler._process)
                slots[w.src].delayed.append((slots[ch], -1 - w.delay if w.physical else w.delay))

    prog.reactions = [rx for rx in prog.reactions if keeps(rx.reactor, rx.decl)]
    prog.actions = [a for a in actions if keeps(a.reactor, a.decl)]
    prog.timers = [t for t in timers if keeps(t.reactor, t.decl)]
    for rx in prog.reactions:
        for e in rx.triggers:
            if e is RESET:
                continue  # run when its mode is entered with a reset (execution/modes.py)
            trig = prog.startup if e is STARTUP else prog.shutdown if e is SHUTDOWN else slots[e]
            if rx not in trig.reactions:
                trig.reactions.append(rx)
    rank(prog, by_deadline=True)
    prog.modes = build_modes(prog)
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


def _partition(main: Reactor, federate: str, channels: list[Port[Any]], wires: dict[Port[Any], Wire],
               reactions: list[Reaction]) -> Partition:
    """Split the program at the main reactor's children (each bank member on its own):
    ``federate``'s reactors run here, with its share of the main reactor's own
    (:mod:`.toplevel`), and connections between federates become network links."""
    names = [c.name for c in main.children]
    if federate not in names:
        raise ValidationError(f"{main.fqn} has no federate {federate!r}; its federates are: {', '.join(names)}")
    part = Partition(main, federate, names, [])
    fed_of = part.federate_of
    part.kept = kept_declarations(main, federate, fed_of, reactions)
    for ch in channels:
        w = wires.get(ch)
        if w is None:
            continue
        up = w.src
        if up.reactor is main or ch.reactor is main:
            check_own_ports(main, up, ch)
            continue
        src_fed, dst_fed = fed_of(up.reactor), fed_of(ch.reactor)
        if src_fed != dst_fed:
            part.links.append(NetLink(len(part.links), up, ch, w.delay, src_fed, dst_fed, w.physical, w.serializer,
                                      w.absent_after))
    return part


def _all_slots(prog: Program) -> list[Slot]:
    return list(dict.fromkeys([prog.startup, prog.shutdown, *prog.actions, *prog.timers,
                               *(prog.slots[c] for c in prog.channels)]))


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
