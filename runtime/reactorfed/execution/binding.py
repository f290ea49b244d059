"""Binding: every reaction of a program gets its arguments, handles on this program's
slots for what it declared (readers for triggers and sources, writers and schedulers for
effects), and its call (its body, behind its deadline check if it has one)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from ..assembly.assemble import resolve
from ..assembly.program import Program
from ..errors import ValidationError
from ..model.action import Action, ActionHandle, ActionReader, ActionSlot
from ..model.mode import Transition
from ..model.port import MultiPort, MultiReader, MultiWriter, Port, PortReader, PortWriter
from ..model.reaction import Reaction
from ..model.timer import RESET, SHUTDOWN, STARTUP, TimerElement
from ..model.trigger import Slot

__all__ = ["bind_reactions"]

#: a logical action's schedule: (action, value, extra delay)
Schedule = Callable[[ActionSlot, Any, int], None]


def bind_reactions(prog: Program, *, mark: Callable[[Slot], None], schedule: Schedule,
                   schedule_physical: Schedule, writer_cls: type[PortWriter[Any]],
                   deadline: Callable[[Reaction, Callable[[], Any]], Callable[[], Any]]) -> None:
    """Give every reaction of ``prog`` its arguments and its call. ``mark``: what a port
    write does; ``schedule`` and ``schedule_physical``: what a logical and a physical
    action's schedule do; ``deadline``: a reaction's call behind its deadline check."""
    for rx in prog.reactions:
        decl = rx.decl
        handles: dict[str, Any] = {}
        nested: dict[str, SimpleNamespace] = {}
        for role, refs in (("trigger", decl.triggers), ("source", decl.sources), ("effect", decl.effects)):
            for ref in refs:
                name, _, obj = resolve(rx.reactor, ref, decl, role)
                if name is None:
                    continue
                h: Any
                if isinstance(obj, Transition):
                    assert prog.modes is not None, f"{rx.fqn}: a transition in a program without modes"
                    h = prog.modes.handle(rx.reactor, obj)
                elif obj is RESET:  # (outside every mode it never triggers)
                    h = ActionReader(prog.modes.entry if prog.modes is not None else Slot("reset"))  # type: ignore[arg-type]
                else:
                    h = _handle(prog, obj, role == "effect", mark, schedule, schedule_physical, writer_cls)
                if isinstance(ref, str) and "." in ref:
                    ns = nested.setdefault(name, SimpleNamespace())
                    attr = ref.split(".", 1)[1]
                    if role == "effect" or not hasattr(ns, attr):
                        setattr(ns, attr, h)
                elif role == "effect" or name not in handles:
                    handles[name] = h
        handles.update(nested)
        rx.args = tuple(handles[p] for p in decl.params)
        body = functools.partial(rx.body, rx.reactor, *rx.args)
        rx.handler = functools.partial(rx.late, rx.reactor, *rx.args) if rx.late is not None else None
        tardy = decl.tardy_fn
        rx.tardy = functools.partial(tardy, rx.reactor, *rx.args) if tardy is not None else None
        rx.call = deadline(rx, body) if rx.deadline is not None else body


def _handle(prog: Program, obj: Any, effect: bool, mark: Callable[[Slot], None], sched: Schedule,
            physical: Schedule, writer_cls: type[PortWriter[Any]]) -> Any:
    slots = prog.slots
    if isinstance(obj, Port):
        return writer_cls(obj, slots[obj], mark) if effect else PortReader(obj, slots[obj])
    if isinstance(obj, MultiPort):
        obj = obj.channels()
    if isinstance(obj, (list, tuple)):
        chans: list[Port[Any]] = []
        for o in obj:
            chans.extend(o.channels() if isinstance(o, (Port, MultiPort)) else [])
        if effect:
            return MultiWriter([writer_cls(c, slots[c], mark) for c in chans])
        return MultiReader([PortReader(c, slots[c]) for c in chans])
    if isinstance(obj, Action):
        action: ActionSlot = slots[obj]  # type: ignore[assignment]
        if not effect:
            return ActionReader(action)
        # A physical action takes physical time + delay whoever schedules it, and its
        # handle may be handed to another thread: it goes through the inbox (reactor-c's
        # lf_schedule_trigger stamps every physical action that way).
        return ActionHandle(action, physical if action.physical else sched)
    if isinstance(obj, TimerElement):
        return ActionReader(slots[obj])  # type: ignore[arg-type]
    if obj is STARTUP or obj is SHUTDOWN:
        return ActionReader(prog.startup if obj is STARTUP else prog.shutdown)  # type: ignore[arg-type]
    raise ValidationError(f"cannot make a handle for {obj!r}")
