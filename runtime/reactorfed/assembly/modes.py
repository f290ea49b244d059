"""The modes of a program, at assembly: which mode every reaction, timer, action, delayed
connection and reset state variable is in, and the runtime state of every modal
reactor's modes (:class:`ModeTable`, one per program; see :mod:`reactorfed.model.mode`).

An element is in the mode its ``with`` block declares it in; otherwise in the mode its
reactor instance is in, which is the mode of its parent it was created in, or else the
mode its parent is in (LF's nearest enclosing mode). A delayed connection's events
belong to the connection's mode, as LF's generated delay reactor does. Nothing outside
every mode is in the table: a program without modes has none (``Program.modes`` is None).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.mode import (
    ModalState,
    ModeElement,
    ModeHandle,
    ModeSlot,
    ResetState,
    Transition,
    mode_of,
)
from ..model.reaction import Reaction
from ..model.reactor import Reactor, modes_of, reset_states_of
from ..model.timer import RESET, STARTUP, TimerSlot
from ..model.trigger import Slot

if TYPE_CHECKING:
    from .program import Program

__all__ = ["ModeTable", "build_modes"]


class ModeTable:
    """The modal structure of one program and its modes' runtime state."""

    def __init__(self, main: Reactor) -> None:
        #: every modal reactor's modes, a reactor before the reactors it contains
        self.states: list[ModalState] = []
        self.modes: dict[ModeElement, ModeSlot] = {}
        #: every reaction in a mode (directly or through its reactor), with that mode
        self.reaction_mode: dict[Reaction, ModeSlot] = {}
        #: the slots whose events belong to a mode: its timers', its actions', and the
        #: destinations of its delayed connections
        self.trigger_mode: dict[Slot, ModeSlot] = {}
        #: the timers in a mode (restarted when it is entered with a reset)
        self.timers: list[tuple[TimerSlot, ModeSlot]] = []
        self.reset_states: list[tuple[Reactor, ResetState[Any], ModeSlot]] = []
        #: the modal reactors a reaction asked to change modes at this tag
        self.requested: list[ModalState] = []
        #: the slot set at the microstep after a transition: what runs the entered modes'
        #: startup and reset reactions (a RESET trigger's handle reads it)
        self.entry = Slot(f"{main.name}.reset")

    def handle(self, reactor: Reactor, t: Transition) -> ModeHandle:
        """The handle of a reaction of ``reactor`` that declares the transition ``t``."""
        return ModeHandle(self.modes[reactor.__dict__[t.mode.name]], t.kind, self.requested)


def build_modes(prog: Program) -> ModeTable | None:
    """The program's :class:`ModeTable` (None when no reactor of it declares a mode)."""
    reactors = prog.reactors
    if not any(modes_of(r) for r in reactors):
        return None
    table = ModeTable(prog.main)
    enclosing: dict[Reactor, ModeSlot | None] = {}
    for r in reactors:  # a parent before its children
        created_in = mode_of(r)
        outer = table.modes[created_in] if created_in is not None else enclosing.get(r.parent) if r.parent else None
        enclosing[r] = outer
        elements = modes_of(r)
        if elements:
            st = ModalState(r, outer)
            for e in elements:
                ms = table.modes[e] = ModeSlot(e, st)
                st.modes.append(ms)
                if e.decl.initial:
                    st.initial = st.current = ms
            assert st.initial is not None, f"{r.fqn}: no initial mode (checked when its class was defined)"
            table.states.append(st)

    def mode_in(r: Reactor, declared: Any) -> ModeSlot | None:
        return table.modes[r.__dict__[declared.name]] if declared is not None else enclosing[r]

    for rx in prog.reactions:
        m = mode_in(rx.reactor, rx.decl.mode)
        if m is None:
            continue
        table.reaction_mode[rx] = m
        if STARTUP in rx.decl.triggers:
            m.startup_reactions.append(rx)
        if RESET in rx.decl.triggers:
            m.reset_reactions.append(rx)
    for tslot in prog.timers:
        if (m := mode_in(tslot.reactor, tslot.decl.mode)) is not None:
            table.trigger_mode[tslot] = m
            table.timers.append((tslot, m))
    for aslot in prog.actions:
        if (m := mode_in(aslot.reactor, aslot.decl.mode)) is not None:
            table.trigger_mode[aslot] = m
    for dst, wires in ((d, [w, *prog.alternatives.get(d, ())]) for d, w in prog.wires.items()):
        for w in wires:
            if w.delay is None or dst not in prog.slots:
                continue
            owner = dst.reactor.parent if dst.is_input else dst.reactor
            assert owner is not None
            m = table.modes[w.mode] if w.mode is not None else enclosing[owner]
            if m is not None:
                table.trigger_mode[prog.slots[dst]] = m
    for r in reactors:
        for rs in reset_states_of(type(r)):
            if (m := mode_in(r, rs.mode)) is not None:
                table.reset_states.append((r, rs, m))
    return table

