"""Modes at run time: which reactions may run, mode changes at the end of a tag, and the
events of inactive modes held until they are entered again (reactor-c's
``_lf_process_mode_changes``, ``lib/modes.c``).

* Only the reactions of active modes (a mode is active when its reactor's current mode is
  it and the mode its reactor is in, if any, is active) are triggered: every slot that
  triggers a reaction in a mode keeps, in ``slot.reactions``, only those of active modes,
  recomputed at each mode change. A program without modes has no :class:`Modes`, and
  the scheduler's loop is the same with or without them.
* A reaction's ``M.set()`` asks for a transition; at the end of the tag, top down, every
  reactor asked moves to its new mode, and a mode entered with a reset resets the modal
  reactors it contains to their initial modes (a reset too). The entered modes are active
  from the next microstep, where their startup reactions (the first time a mode is entered)
  and their ``RESET`` reactions (a reset transition) run.
* When a mode becomes inactive, the queued events of its timers, actions and delayed
  connections are taken out and held with the time they were held at. A history
  transition puts them back with the delay they had left (at the next microstep when
  none); a reset transition drops them and restarts the mode's timers from their offset
  (reactor-c restarts a timer with a period only if it had an event held; so here).
* A reset transition sets the mode's :class:`~reactorfed.model.mode.ResetState` variables
  back to their initial values.
* Shutdown reactions in modes run if their mode was ever entered, active or not.

One difference from reactor-c: it resumes the held events only of the mode a history
transition names, so a modal reactor inside it keeps its own current mode's events held
forever; here every mode that becomes active resumes its events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..assembly.modes import ModeTable
from ..model.mode import Kind, ModeSlot
from ..model.reaction import Reaction
from ..model.trigger import Slot
from ..time.tag import TagT, delay_tag, succ

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["Modes"]


class Modes:
    """The modes of the program a scheduler runs (made when its table is not None)."""

    def __init__(self, table: ModeTable, scheduler: Scheduler) -> None:
        self.table = table
        self.scheduler = scheduler
        #: the slots that trigger reactions in modes, with all their reactions and each one's mode
        self.full: list[tuple[Slot, list[tuple[Reaction, ModeSlot | None]]]] = []

    def start(self, start: int) -> None:
        """The run's first events are queued: activate the initial modes, hold the events
        of the others, and take part in every tag's end."""
        table = self.table
        for st in table.states:
            for m in st.modes:
                m.active = m is st.current and (st.parent is None or st.parent.active)
                m.entered = m.active
        sched = self.scheduler
        prog = sched.program
        rm = table.reaction_mode
        for slot in dict.fromkeys([prog.startup, prog.shutdown, *prog.actions, *prog.timers,
                                   *(prog.slots[c] for c in prog.channels)]):
            if any(r in rm for r in slot.reactions):
                self.full.append((slot, [(r, rm.get(r)) for r in slot.reactions]))
        self._filter()
        self._hold(start)
        sched.tag_hooks.append(self.end_of_tag)

    def end_of_tag(self, tag: TagT, written: list[Slot]) -> None:
        """A tag hook: apply the transitions its reactions asked for."""
        table = self.table
        if not table.requested:
            return
        table.requested.clear()
        reset: set[ModeSlot] = set()  # the modes entered with a reset
        for st in table.states:  # top down: a reactor before those it contains
            if st.parent is not None and st.parent in reset:
                st.next, st.change = st.initial, Kind.RESET  # hierarchical reset
            if st.next is not None and st.change is Kind.RESET:
                reset.add(st.next)
        was_active = {m for m in table.modes.values() if m.active}
        for st in table.states:
            if st.next is not None:
                st.current, st.next = st.next, None
            for m in st.modes:
                m.active = m is st.current and (st.parent is None or st.parent.active)
        for r, rs, m in table.reset_states:
            if m in reset:
                setattr(r, rs.name, rs.initial(r))
        self._hold(tag[0])
        run: list[Reaction] = []
        for m in table.modes.values():
            if not m.active:
                continue
            if m not in was_active or m in reset:
                self._resume(m, tag, m in reset)
            if not m.entered:
                m.entered = True
                run.extend(m.startup_reactions)
            if m in reset:
                run.extend(m.reset_reactions)
        sched = self.scheduler
        if run and (nxt := succ(tag)) <= sched.stop_tag:
            table.entry.reactions = sorted(set(run), key=lambda r: r.rank)
            sched.queue.post(nxt, table.entry, None)
        self._filter()

    def _filter(self) -> None:
        """Every slot triggers only the reactions of active modes (shutdown: of modes ever entered)."""
        shutdown = self.scheduler.program.shutdown
        for slot, full in self.full:
            if slot is shutdown:
                slot.reactions = [r for r, m in full if m is None or m.entered]
            else:
                slot.reactions = [r for r, m in full if m is None or m.active]

    def _hold(self, now: int) -> None:
        """Take the queued events of inactive modes out of the queue, held at time ``now``."""
        mode_of = self.table.trigger_mode
        inactive = {s for s, m in mode_of.items() if not m.active}
        if inactive:
            for t, slot, value in self.scheduler.queue.take(inactive):
                mode_of[slot].suspended.append((t, slot, value, now))

    def _resume(self, m: ModeSlot, tag: TagT, reset: bool) -> None:
        """``m`` is entered at ``tag``: its held events come back with the delay they had
        left (history), or are dropped and its timers restart (reset)."""
        held, m.suspended = m.suspended, []
        sched = self.scheduler
        stop = sched.stop_tag
        post = sched.queue.post
        if not reset:
            for t, slot, value, at in held:
                if (when := delay_tag(tag, t[0] - at)) <= stop:
                    post(when, slot, value)
            return
        had = {slot for _, slot, _, _ in held}
        for timer, tm in self.table.timers:
            if tm is m and (not timer.period or timer in had) and (when := delay_tag(tag, timer.offset)) <= stop:
                post(when, timer, None)

