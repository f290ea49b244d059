"""Connections, resolved at assembly: each declared :class:`Connection` flattened into
channel pairs and checked (direction, hierarchy, width, types, one upstream per channel),
into the :class:`Wire` that feeds each connected channel.

A channel has one upstream, except where its upstreams are in different modes of one
reactor (LF allows it: modes are mutually exclusive, so at most one of them is active).
The first connection into a channel is its wire; the others, its alternatives. Chains of
zero-delay connections joined that way share one slot (one value), which is right for the
channel and what is downstream of it, and wrong for a channel upstream of the join that
something else reads: it would carry the other modes' values too. That is refused
(:func:`check_shared`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ValidationError
from ..model.bank import Bank
from ..model.mode import ModeElement
from ..model.port import MultiPort, Port
from ..model.reaction import Reaction
from ..model.reactor import Connection
from .program import Wire

__all__ = ["check_shared", "connect", "exclusive", "exclusive_reactions"]


def exclusive(a: ModeElement | None, b: ModeElement | None) -> bool:
    """Are ``a`` and ``b`` two different modes of one reactor (never active together)?"""
    return a is not None and b is not None and a is not b and a.reactor is b.reactor


def exclusive_reactions(a: Reaction, b: Reaction) -> bool:
    """Are reactions ``a`` and ``b`` declared in two different modes of one reactor? LF adds
    no data dependency between them (ReactionInstanceGraph): modes break such cycles."""
    ma, mb = a.decl.mode, b.decl.mode
    return ma is not None and mb is not None and ma is not mb and a.reactor is b.reactor


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


def connect(c: Connection, wires: dict[Port[Any], Wire], alternatives: dict[Port[Any], list[Wire]]) -> None:
    """Resolve one declared connection into ``wires`` (the connection into each channel)
    and ``alternatives`` (more connections into it, each in another mode of its reactor)."""
    owner = c.owner.fqn
    srcs = _flatten(c.src, owner)
    dsts = _flatten(c.dst, owner)
    sname = _describe(c.src)
    dname = _describe(c.dst)
    for s in srcs:
        ok = (not s.is_input and s.reactor.parent is c.owner) or (s.is_input and s.reactor is c.owner)
        if not ok:
            raise ValidationError(
                f"{owner}: cannot connect from {s.fqn}: a connection's source must be an output of a "
                f"contained reactor or an input of {owner}"
            )
    for d in dsts:
        ok = (d.is_input and d.reactor.parent is c.owner) or (not d.is_input and d.reactor is c.owner)
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
        _check_types(owner, s, d)
        # A physical connection is never zero-delay: it shares no slot and makes no edge.
        w = Wire(s, (c.after or 0) if c.physical else c.after, c.physical, c.mode, c.serializer, c.absent_after)
        up = wires.get(d)
        if up is None:
            wires[d] = w
            continue
        others = [up, *alternatives.get(d, ())]
        clash = next((o for o in others if not exclusive(o.mode, w.mode)), None)
        if clash is not None:
            raise ValidationError(f"{owner}: {d.fqn} is already connected from {clash.src.fqn}; a port has one upstream "
                                  "(or one in each mode of a reactor)")
        alternatives.setdefault(d, []).append(w)


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


def check_shared(channels: Iterable[Port[Any]], wires: dict[Port[Any], Wire], alternatives: dict[Port[Any], list[Wire]],
                 head: Callable[[Port[Any]], Port[Any]], reactions: Iterable[Reaction]) -> None:
    """Refuse a channel whose zero-delay chain was joined to another one (by connections
    into one channel from several modes) upstream of the join, when a reaction reads it
    or a delayed connection leaves it: it would see the other chain's values. ``head``:
    a channel's slot head, joins included."""
    joins = {d for d, alts in alternatives.items() if any(w.delay is None for w in alts)}
    if not joins:
        return
    joined = {head(d) for d in joins}

    def join_above(ch: Port[Any]) -> Port[Any] | None:
        """The join ``ch`` is at or downstream of (along zero-delay wires), None: none."""
        while True:
            if ch in joins:
                return ch
            w = wires.get(ch)
            if w is None or w.delay is not None:
                return None
            ch = w.src

    upstream = {ch for ch in channels if head(ch) in joined and join_above(ch) is None}
    if not upstream:
        return
    for rx in reactions:
        for e in (*rx.triggers, *rx.sources):
            if isinstance(e, Port) and e in upstream:
                raise ValidationError(_shared(e, f"read by {rx.fqn}", joins, head))
    for dst, first in wires.items():
        for w in (first, *alternatives.get(dst, ())):
            if w.delay is not None and w.src in upstream:
                raise ValidationError(_shared(w.src, f"connected with a delay to {dst.fqn}", joins, head))


def _shared(ch: Port[Any], what: str, joins: set[Port[Any]], head: Callable[[Port[Any]], Port[Any]]) -> str:
    join = next(d for d in joins if head(d) is head(ch))
    return (f"{ch.fqn} is {what}, but it is upstream of {join.fqn}, which is connected from several modes: "
            f"their zero-delay connections share one value, so {ch.fqn} would carry the other modes' values "
            f"too; read {join.fqn} (or a port downstream of it) instead")
