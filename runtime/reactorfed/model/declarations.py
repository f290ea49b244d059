"""What a reactor class declares: its elements (ports, actions, timers, reactions, modes,
reset state), inherited ones included, collected in Lingua Franca's order, and checked
when the class is defined (a reaction's parameters name what it declared; the modes'
rules, :func:`.mode.check_modes`)."""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

from ..errors import ValidationError
from .action import ActionDecl
from .mode import Mode, ResetState, Transition, check_modes
from .port import PortDecl
from .reaction import ReactionDecl
from .timer import RESET, SHUTDOWN, STARTUP, Timer

__all__ = ["Declared", "check_declared", "collect"]


class Declared(NamedTuple):
    """A reactor class's elements by attribute name, in LF's order."""

    ports: dict[str, PortDecl[Any]]
    actions: dict[str, ActionDecl[Any]]
    timers: dict[str, Timer]
    reactions: dict[str, ReactionDecl]
    modes: dict[str, Mode]
    states: dict[str, ResetState[Any]]


def collect(cls: type) -> Declared:
    """``cls``'s elements, inherited ones included, in Lingua Franca's order for ``reactor
    C extends A, B``: A's (with its own bases' first), then B's, then C's own; a class
    reached twice (a diamond) counts once, where first reached. An element redefined under
    the same name keeps the position of its first definition, and the definition is the one
    Python's attribute lookup finds (the MRO: C's, else A's, else B's). Python's MRO alone
    would give B's reactions before A's."""
    d = Declared({}, {}, {}, {}, {}, {})
    kinds: tuple[tuple[type, dict[str, Any]], ...] = (
        (PortDecl, d.ports), (ActionDecl, d.actions), (Timer, d.timers), (ReactionDecl, d.reactions),
        (Mode, d.modes), (ResetState, d.states))
    for klass in _lf_order(cls):
        for attr, v in vars(klass).items():
            for kind, found in kinds:
                if isinstance(v, kind) and attr not in found:
                    resolved = getattr(cls, attr, None)  # the MRO's definition
                    if isinstance(resolved, kind):
                        found[attr] = resolved
    return d


def check_declared(cls: type, d: Declared) -> None:
    """Refuse, naming the element, what ``cls`` declares wrong."""
    reactions = list(d.reactions.values())
    check_modes(cls, list(d.modes.values()), [*d.timers.values(), *d.actions.values(), *d.states.values()],
                reactions)
    for r in reactions:
        _check_params(cls, r)


def _lf_order(cls: type) -> list[type]:
    """``cls`` and its bases, bases first, in the order listed, each once (depth first,
    post-order): for ``C(A, B)`` with ``A(Base)`` and ``B(Base)``: Base, A, B, C."""
    out: list[type] = []
    seen: set[type] = set()

    def visit(k: type) -> None:
        if k in seen or k is object:
            return
        seen.add(k)
        for b in k.__bases__:
            visit(b)
        out.append(k)

    visit(cls)
    return out


def _element_name(ref: Any) -> str | None:
    if isinstance(ref, (PortDecl, ActionDecl, Timer)):
        return ref.name
    if ref is STARTUP or ref is SHUTDOWN or ref is RESET or isinstance(ref, Transition):
        return ref.name  # a handle whose is_present tells whether it triggered (LF's startup.is_present)
    if isinstance(ref, str):
        return ref.split(".", 1)[0]
    raise ValidationError(f"not a port, action, timer or trigger reference: {ref!r}")


def _check_params(cls: type, r: ReactionDecl) -> None:
    names = {n for ref in (*r.triggers, *r.sources, *r.effects) if (n := _element_name(ref)) is not None}
    for fn, what in ((r.fn, "reaction"), (r.deadline_fn, "deadline handler")):
        if fn is None:
            continue
        params = [p.name for p in list(inspect.signature(fn).parameters.values())[1:]]
        for p in params:
            if p not in names:
                raise ValidationError(
                    f"{what} {cls.__name__}.{r.name}: parameter {p!r} names no declared trigger, "
                    f"source or effect (declared: {', '.join(sorted(names)) or 'none'})"
                )
