"""How soon after physical time an event from outside logical time can reach a federate's
outputs: the least delay from a physical action's clock reading (or a physical
connection's arrival) to any output this federate sends over a coordinated link.

A federate promises its downstream peers (and reports the RTI) its next event; an event
a physical action brings is stamped by the clock, so no promise may reach past physical
time plus this delay (reactor-c's ``min_delay_from_physical_action_to_federate_output``,
which LF's code generator computes over the reactions that trigger one another through
actions). The walk here follows every path: a physical action's min_delay, logical
actions' min_delays, connections' ``after`` delays, through ports and contained reactors,
and takes the least sum (Dijkstra). Microsteps add no time, so they count as nothing.
"""

from __future__ import annotations

import heapq
from typing import Any

from ..model.action import Action, ActionSlot
from ..model.port import Port
from ..model.reaction import Reaction
from .program import Program

__all__ = ["physical_output_delay"]


def physical_output_delay(prog: Program) -> int | None:
    """The least delay (ns) from physical time at a physical action's scheduling, or at
    an arrival on a physical link into this federate, to an output of this federate on a
    coordinated link (None: no such path, or ``prog`` is not a federate)."""
    part = prog.partition
    if part is None:
        return None
    me = part.federate
    targets = {id(lk.src) for lk in part.links if lk.src_fed == me and lk.dst_fed != me and not lk.physical}
    if not targets:
        return None
    triggered: dict[int, list[Reaction]] = {}
    for rx in prog.reactions:
        for e in rx.triggers:
            triggered.setdefault(id(e), []).append(rx)
    onward: dict[int, list[tuple[Port[Any], int]]] = {}  # port -> (port it feeds, the connection's delay)
    for dst, w in prog.wires.items():
        onward.setdefault(id(w.src), []).append((dst, w.delay or 0))
    for dst, ws in prog.alternatives.items():
        for w in ws:
            onward.setdefault(id(w.src), []).append((dst, w.delay or 0))

    # (delay so far, a tie-breaker, element): elements are ports and actions
    heap: list[tuple[int, int, Any]] = []
    for slot in prog.actions:
        if slot.physical:
            # (the action as reactions name it: the reactor's own, cached by its descriptor)
            heap.append((slot.min_delay, len(heap), getattr(slot.reactor, slot.decl.name)))
    for lk in part.links:
        if lk.physical and lk.dst_fed == me:
            heap.append((lk.delay or 0, len(heap), lk.dst))
    heapq.heapify(heap)
    done: set[int] = set()
    n = len(heap)
    while heap:
        d, _, e = heapq.heappop(heap)
        if id(e) in done:
            continue
        done.add(id(e))
        if id(e) in targets:
            return d  # (popped in order of delay: the least)
        nexts: list[tuple[int, Any]] = []
        if isinstance(e, Port):
            nexts.extend((d + delay, dst) for dst, delay in onward.get(id(e), ()))
        for rx in triggered.get(id(e), ()):
            for eff in rx.effects:
                if isinstance(eff, Port):
                    nexts.append((d, eff))
                elif isinstance(eff, Action) and not eff.physical:  # (a physical one is a start itself)
                    act = prog.slots[eff]
                    assert isinstance(act, ActionSlot)
                    nexts.append((d + act.min_delay, eff))
        for dd, x in nexts:
            if id(x) not in done:
                n += 1
                heapq.heappush(heap, (dd, n, x))
    return None

