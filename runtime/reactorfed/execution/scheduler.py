"""The scheduler: executes an assembled program tag by tag in logical time.

At each tag it fires the events of that tag (actions, timers, delayed connections,
startup/shutdown), runs the triggered reactions in rank order (inferred deadline, level,
assembly order: see :func:`reactorfed.assembly.assemble.rank`), then delivers delayed connections
and clears presence (values persist: see :mod:`reactorfed.model.port`). In ``fast`` mode it never waits; otherwise it does not process a
tag before physical time reaches it. Physical actions (scheduled from any thread, a
reaction's included) are stamped with physical time and arrive from other threads
through an inbox; everything else happens on the scheduler's thread (or, with
``workers > 1``, on a pool that runs a run of same-level ranks at a time, under a lock).

A :class:`Coordinator` (federated execution) may hold a tag back until it is granted,
add events that arrived from the network, and hear of each completed tag.
"""

from __future__ import annotations

import functools
import heapq
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any, Protocol

from ..assembly.assemble import _resolve, rank
from ..assembly.program import Program
from ..errors import ReactorError, ValidationError
from ..model.action import Action, ActionHandle, ActionReader, ActionSlot, Policy
from ..model.elastic import MemberChange, elastic_banks
from ..model.port import (
    CheckedWriter,
    MultiPort,
    MultiReader,
    MultiWriter,
    Port,
    PortReader,
    PortWriter,
)
from ..model.reaction import Reaction
from ..model.timer import SHUTDOWN, STARTUP, TimerElement, TimerSlot
from ..model.trigger import Slot
from ..time.clock import Clock, Wakeup
from ..time.tag import FOREVER, FOREVER_TAG, MAX_MICROSTEP, NEVER, TagT, delay_tag, succ
from .deadlines import with_deadline
from .membership import Membership

__all__ = ["Coordinator", "ReactionFailed", "Scheduler"]

log = logging.getLogger("reactorfed.execution.scheduler")

_NO_LEVEL = 1 << 62
#: FOREVER_TAG as a bare tuple, for the inlined delay_tag below (see Scheduler._schedule).
_FOREVER_T: TagT = (FOREVER, MAX_MICROSTEP)
_heappush = heapq.heappush
_heappop = heapq.heappop


class ReactionFailed(ReactorError):
    """A reaction raised; the program stops. ``__cause__`` is the original exception."""


class Coordinator(Protocol):
    """The hooks federated execution plugs into the scheduler."""

    def start_time(self, proposed: int) -> int:
        """Agree on the start time with the rest of the federation."""
        ...

    def acquire(self, scheduler: Scheduler, tag: TagT | None) -> TagT | None:
        """Block until the earliest local event ``tag`` (None: none) may be processed and
        return the tag to process: the head of the event queue after posting what
        arrived from the network (through :meth:`Scheduler.post_remote`), never past the
        stop tag; None when nothing is left to do anywhere (starvation)."""
        ...

    def at_level(self, scheduler: Scheduler, level: int) -> None:
        """Called before the first reaction of each level in ``scheduler.checkpoints``."""
        ...

    def completed(self, scheduler: Scheduler, tag: TagT, next_tag: TagT | None) -> None:
        """``tag`` is complete (its outputs are sent); ``next_tag``: the earliest event
        queued after it (None: none; it may lie past the stop tag)."""
        ...

    def stop_requested(self, scheduler: Scheduler, tag: TagT) -> TagT:
        """A local request to stop at ``tag``; returns the agreed stop tag."""
        ...

    def wait_until(self, scheduler: Scheduler, t: int, wakeup: Wakeup) -> bool:
        """Wait for physical time ``t`` before the tag :meth:`acquire` returned, as
        :meth:`Clock.wait_until` does, and also for the network: returns False early when
        ``wakeup`` is set or something arrived that may change the tag to process (an
        earlier event, a stop request); the scheduler then asks :meth:`acquire` again."""
        ...


class _SerialWriter(PortWriter[Any]):
    """The writer for serial execution: does :meth:`Scheduler._mark` inline (a port
    write is the hot path: one call less per write)."""

    __slots__ = ("_sched",)

    def __init__(self, port: Port[Any], slot: Slot, mark: Callable[[Slot], None]) -> None:
        super().__init__(port, slot, mark)
        self._sched: Scheduler = mark.__self__  # type: ignore[attr-defined]

    def set(self, value: Any) -> None:
        slot = self._slot
        slot.value = value
        if not slot.present:
            slot.present = True
            s = self._sched
            s._set.append(slot)
            stamp = s._stamp
            for r in slot.reactions:
                if r.stamp != stamp:
                    r.stamp = stamp
                    _heappush(s._rq, r.rank)


class Scheduler:
    def __init__(
        self,
        program: Program,
        *,
        clock: Clock,
        fast: bool,
        timeout: int | None,
        keepalive: bool,
        workers: int = 1,
        check_types: bool = False,
        coordinator: Coordinator | None = None,
    ) -> None:
        self.program = program
        self.clock = clock
        self.fast = fast
        self.timeout = timeout
        self.keepalive = keepalive
        self.workers = workers
        self.check_types = check_types
        self.coordinator = coordinator
        self.current_tag: TagT = (NEVER, 0)
        self.start_time = 0
        self.stop_tag: TagT = FOREVER_TAG
        self.stop_reason = ""
        self.tags_processed = 0
        self.reactions_executed = 0
        self.deadline_misses = 0
        self._eq: list[TagT] = []
        self._events: dict[TagT, dict[Slot, Any]] = {}
        self._rq: list[int] = []
        self._set: list[Slot] = []
        self._stamp = 0
        self._reactions = program.reactions
        self._inbox: deque[tuple[ActionSlot, Any, int]] = deque()
        self._wakeup = Wakeup()
        self._external_stop = False
        self._ended = False  # the run is over: a physical action scheduled now is dropped
        self._current: Reaction | None = None
        self._tls = threading.local()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        #: levels before which the coordinator's ``at_level`` runs (federated zero-delay cycles)
        self.checkpoints: list[int] = []
        #: hooks run at the end of every tag with the slots set at it (federation senders)
        self.tag_hooks: list[Callable[[TagT, list[Slot]], None]] = []
        #: the elastic banks' members present at each tag (None: the program has none)
        self.membership: Membership | None = Membership(program) if elastic_banks(program.main) else None

    def set_membership(self, changes: list[MemberChange]) -> None:
        """Apply a membership schedule of the program's elastic banks in this run (before
        it starts; see :mod:`reactorfed.model.elastic`)."""
        if self.membership is None:
            raise ValidationError(f"{self.program.main.fqn} has no elastic bank: a membership schedule has nothing to change")
        if self._thread is not None:
            raise ValidationError("a membership schedule is set before the run starts")
        self.membership.load(changes)

    # -- binding handles -----------------------------------------------------------
    def bind(self) -> None:
        """The start of execution: take the program (one scheduler, once), bind the
        reactor tree to this scheduler until the run ends (``Reactor._env``: what a
        reactor's ``tag()``, ``request_stop()`` and physical actions reach; the tree
        runs in one program at a time) and give every reaction its arguments (handles
        for what it declared, on this program's slots)."""
        prog = self.program
        if prog.scheduler is not None:
            raise ValidationError(
                f"{prog.main.fqn}: this assembled program is already bound to a scheduler; a program "
                "runs once: assemble the reactor tree again for another run"
            )
        for r in prog.reactors:
            if r._env is not None:
                raise ValidationError(f"{r.fqn} is already part of a running program")
        prog.scheduler = self
        parallel = self.workers > 1
        mark = self._mark_locked if parallel else self._mark
        sched = self._schedule_locked if parallel else self._schedule
        writer_cls = CheckedWriter if self.check_types else PortWriter if parallel else _SerialWriter
        for r in prog.reactors:
            r.__dict__["_env"] = self
            r.__dict__["_ended"] = False
        for rx in self._reactions:
            decl = rx.decl
            handles: dict[str, Any] = {}
            nested: dict[str, SimpleNamespace] = {}
            for role, refs in (("trigger", decl.triggers), ("source", decl.sources), ("effect", decl.effects)):
                for ref in refs:
                    name, _, obj = _resolve(rx.reactor, ref, decl, role)
                    if name is None:
                        continue
                    h = self._handle(obj, role == "effect", mark, sched, writer_cls)
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
            rx.call = with_deadline(self, rx, body) if rx.deadline is not None else body
        if parallel:
            self._pool = ThreadPoolExecutor(self.workers - 1, thread_name_prefix="reactorfed-worker")

    def _handle(self, obj: Any, effect: bool, mark: Callable[[Slot], None], sched: Any, writer_cls: type[PortWriter[Any]]) -> Any:
        slots = self.program.slots
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
            return ActionHandle(action, self.schedule_physical if action.physical else sched)
        if isinstance(obj, TimerElement):
            return ActionReader(slots[obj])  # type: ignore[arg-type]
        if obj is STARTUP or obj is SHUTDOWN:
            return ActionReader(self.program.startup if obj is STARTUP else self.program.shutdown)  # type: ignore[arg-type]
        raise ValidationError(f"cannot make a handle for {obj!r}")

    # -- called from reactions and other threads --------------------------------------
    def current_reaction_name(self) -> str | None:
        r = getattr(self._tls, "current", None) if self.workers > 1 else self._current
        return r.fqn if r is not None else None

    def _mark(self, slot: Slot) -> None:
        self._set.append(slot)
        stamp = self._stamp
        rq = self._rq
        for r in slot.reactions:
            if r.stamp != stamp:
                r.stamp = stamp
                _heappush(rq, r.rank)

    def _mark_locked(self, slot: Slot) -> None:
        with self._lock:
            self._mark(slot)

    def _post(self, tag: TagT, slot: Slot, value: Any) -> None:
        """Queue an event for ``slot`` at ``tag`` (the caller checked ``tag <= stop_tag``).

        A second event for one slot at one tag never overwrites the first: it goes to the
        next microstep, and the next if that is taken too (reactor-c's ``lf_schedule_trigger``
        without a ``min_spacing``: "let events pile up in super dense time"), so a logical
        action scheduled twice for one tag, or a burst on an ``after d`` connection, keeps
        every value, in order. The common cases cost what they did before the pile-up: a
        tag without events is one lookup, a tag with events of other slots one lookup and
        one containment test; only a collision takes the slower :meth:`_pile_up`."""
        evs = self._events.get(tag)
        if evs is None:
            self._events[tag] = {slot: value}
            _heappush(self._eq, tag)
        elif slot in evs:
            self._pile_up(tag, slot, value)
        else:
            evs[slot] = value

    def _pile_up(self, tag: TagT, slot: Slot, value: Any) -> TagT | None:
        """``slot`` has an event at ``tag``: queue this one at the first later microstep
        free for it. Past the stop tag it is dropped, as reactor-c does (events past the
        last tag are dropped); returns where it went, None when dropped."""
        t, m = tag
        events = self._events
        while True:
            m += 1
            tag = (t, m)
            if tag > self.stop_tag:
                log.debug("%s: an event piled up past the stop tag %s is dropped", slot.fqn, self.stop_tag)
                return None
            evs = events.get(tag)
            if evs is None:
                events[tag] = {slot: value}
                _heappush(self._eq, tag)
                return tag
            if slot not in evs:
                evs[slot] = value
                return tag

    def post_remote(self, tag: TagT, slot: Slot, value: Any) -> bool:
        """Post an event that arrived from elsewhere (a federate's network input) at
        exactly ``tag``; False (nothing posted) when ``slot`` already has an event there.
        A remote event never piles up here: its sender put the exact tag on the wire (it
        piles a burst up itself, see the federate's ``Outputs.send_at_tag_end``), so the
        grants and message counts computed from that tag stay exact. Must be called on the
        scheduler's thread (from a coordinator hook)."""
        assert tag > self.current_tag, f"remote event at {tag} is not after {self.current_tag}"
        evs = self._events.get(tag)
        if evs is None:
            self._events[tag] = {slot: value}
            _heappush(self._eq, tag)
        elif slot in evs:
            return False
        else:
            evs[slot] = value
        return True

    def _schedule(self, action: ActionSlot, value: Any, delay: int) -> None:
        if delay and (delay.__class__ is not int or delay < 0):
            raise ValidationError(f"{action.fqn}: delay must be a whole number of ns >= 0, got {delay!r}")
        d = action.min_delay + delay
        t, m = self.current_tag
        # tag.delay_tag(self.current_tag, d), inlined: a hot path (every logical action's
        # schedule), and a call costs 1-10% of a tag here (bench/tag_inline.py). The same
        # result for every tag a reaction runs at (after NEVER, before FOREVER): saturates
        # at FOREVER_TAG.
        tag = (t, m + 1) if d == 0 else (td, 0) if (td := t + d) < FOREVER else _FOREVER_T
        if action.min_spacing is not None:
            self._place(action, value, tag)
        elif tag <= self.stop_tag:
            self._post(tag, action, value)  # no min_spacing: a collision piles up

    def _schedule_locked(self, action: ActionSlot, value: Any, delay: int) -> None:
        with self._lock:
            self._schedule(action, value, delay)

    def _place(self, action: ActionSlot, value: Any, tag: TagT) -> None:
        """Queue an event of an action with a declared min_spacing (0 included) at ``tag``,
        or where its policy puts it (see :mod:`reactorfed.model.action`; reactor-c's
        ``lf_schedule_trigger``, lib/schedule.c). Tags of such an action strictly grow,
        so it never collides with itself."""
        spacing = action.min_spacing
        assert spacing is not None
        last = action.last_tag
        if last is not None and (tag <= last if spacing == 0 else tag[0] < last[0] + spacing):
            policy = action.decl.policy
            if policy is Policy.DROP:
                return
            if policy is Policy.REPLACE:
                pending = self._events.get(last)
                if pending is not None and action in pending:
                    pending[action] = value  # the previous event is still queued: it takes the value
                    return
            # defer (and replace once the previous event has happened): the earliest tag allowed
            tag = delay_tag(last, spacing)
        if tag > self.stop_tag:
            return  # past the last tag: dropped, and not the previous event for the spacing
        action.last_tag = tag
        self._post(tag, action, value)

    def _place_any(self, action: ActionSlot, value: Any, tag: TagT) -> None:
        if action.min_spacing is not None:
            self._place(action, value, tag)
        elif tag <= self.stop_tag:
            self._post(tag, action, value)

    def schedule_physical(self, action: ActionSlot, value: Any, delay: int) -> None:
        """Thread-safe: timestamp with physical time now, hand over to the scheduler.

        Every schedule of a physical action comes here, from a reaction's handle or from
        any thread (reactor-c's ``lf_schedule_trigger``: physical time + min_delay + delay,
        microstep 0, under the environment's lock, then a wakeup). A tag at or before the
        current one becomes the current tag's next microstep (:meth:`_place_physical`).

        From a reaction of this program the event is placed at once, as a logical action's
        is, so the tag's end (and a coordinator's report of the next event) sees it; from
        any other thread it goes through the inbox, which the scheduler's thread drains
        before it picks the next tag."""
        if delay.__class__ is not int or delay < 0:
            raise ValidationError(f"{action.fqn}: delay must be a whole number of ns >= 0, got {delay!r}")
        if self._ended:
            log.warning("%s is scheduled after the program ended: dropped (as every event past the last tag)", action.fqn)
            return
        t = self.clock.now() + action.min_delay + delay
        if self._current is not None and threading.current_thread() is self._thread:
            self._place_physical(action, value, t)  # a reaction, serial execution
        elif self._in_worker():
            with self._lock:  # a reaction, workers > 1 (the lock _schedule_locked takes)
                self._place_physical(action, value, t)
        else:
            self._inbox.append((action, value, t))
            self._wakeup.set()

    def _place_physical(self, action: ActionSlot, value: Any, t: int) -> None:
        cur = self.current_tag
        tag = (t, 0)
        if tag <= cur:
            tag = succ(cur)
        self._place_any(action, value, tag)

    def request_stop(self) -> None:
        """From a reaction: stop at the next microstep. From another thread: stop soon."""
        if threading.current_thread() is self._thread or self._in_worker():
            self._set_stop(succ(self.current_tag), "stop requested")
        else:
            self._external_stop = True
            self._wakeup.set()

    def _in_worker(self) -> bool:
        return getattr(self._tls, "current", None) is not None

    def _set_stop(self, tag: TagT, reason: str) -> None:
        if self.coordinator is not None:
            tag = self.coordinator.stop_requested(self, tag)
        self.lower_stop_tag(tag, reason)

    # -- the coordination surface (what a coordinator may read and change) -------------
    def next_event_tag(self) -> TagT | None:
        """The tag of the earliest queued event (None: none), stop tag or not. A
        coordinator reads it after posting what arrived from the network."""
        eq = self._eq
        return eq[0] if eq else None

    def lower_stop_tag(self, tag: TagT, reason: str) -> None:
        """Stop at ``tag`` (``reason`` says why) if that is earlier than the stop tag so
        far: a stop tag only moves back (a federation's agreed stop, a request, a timeout)."""
        if tag < self.stop_tag:
            self.stop_tag = tag
            self.stop_reason = reason

    # -- the loop --------------------------------------------------------------------
    def run(self) -> None:
        if self._thread is not None:
            raise ValidationError("this scheduler has already run its program: assemble the reactor tree again "
                                  "(Environment.run(main)) for another run")
        self._thread = threading.current_thread()
        proposed = self.clock.now()
        self.start_time = start = self.coordinator.start_time(proposed) if self.coordinator else proposed
        if self.checkpoints:
            # A coordinator's level checkpoints need each level finished before the next:
            # rank by level alone (no deadline-first order in such a federate).
            rank(self.program, by_deadline=False)
        if self.timeout is not None:
            # (lowered, not set: a replayed joiner learns its leave, its stop tag, at its
            # ADMIT, inside start_time)
            self.lower_stop_tag((start + self.timeout, 0), "timeout")
        prog = self.program
        mem = self.membership
        # The first tag this run processes: the start tag, or a joiner's effective start
        # tag (its ADMIT's, elastic banks): the startup reactions run there, and the timers
        # fire on their schedule from there (a joiner's own, its member's, are restarted
        # from its join tag by the join: rescale.Membership).
        first = mem.first if mem is not None and mem.first is not None else (start, 0)
        if first <= self.stop_tag:
            self._post(first, prog.startup, None)
        for tm in prog.timers:
            t = start + tm.offset
            if (t, 0) < first:
                if not tm.period:
                    continue
                t += -(-(first[0] - t) // tm.period) * tm.period
                if (t, 0) < first:  # (first is at a later microstep of that time)
                    t += tm.period
            if t <= self.stop_tag[0]:
                self._post((t, 0), tm, None)
        if mem is not None:
            mem.start(self, start)
        try:
            self._loop()
        finally:
            self._ended = True
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    def _drain_inbox(self) -> None:
        inbox = self._inbox
        while inbox:
            action, value, t = inbox.popleft()
            self._place_physical(action, value, t)
        if self._external_stop:
            self._external_stop = False
            cur = self.current_tag
            self._set_stop(succ(cur) if cur[0] != NEVER else (self.start_time, 0), "stop requested from outside")

    def _next(self) -> TagT | None:
        """The next tag to process, waiting as needed; None when the program is over."""
        coord = self.coordinator
        while True:
            if self._inbox or self._external_stop:
                self._drain_inbox()
            eq = self._eq
            head = eq[0] if eq else None
            if head is not None and head > self.stop_tag:
                head = None
            if head is None and self.keepalive and self.stop_tag == FOREVER_TAG and coord is None:
                self._wakeup.wait()
                self._wakeup.clear()
                continue
            # Keepalive with a stop time: wait for a physical action until then.
            if (
                head is None
                and self.keepalive
                and coord is None
                and self.stop_tag[0] < FOREVER
                and not self.fast
                and not self.clock.wait_until(self.stop_tag[0], self._wakeup)
            ):
                continue
            if coord is not None:
                # May post events that arrived from the network (so re-read the head).
                head = coord.acquire(self, head)
                if self._inbox or self._external_stop:
                    continue
            if head is None:
                return None
            if not self.fast and head[0] > self.clock.now() and not (
                    self.clock.wait_until(head[0], self._wakeup) if coord is None
                    else coord.wait_until(self, head[0], self._wakeup)):
                continue  # woken by a physical action or a stop request (or the network)
            return head

    def _loop(self) -> None:
        prog = self.program
        shutdown = prog.shutdown
        eq = self._eq
        direct = self.fast and self.coordinator is None
        tag: TagT | None
        while True:
            # Fast path (what _next returns in this case): fast mode, no coordinator,
            # nothing from other threads, and the earliest event is not past the stop tag.
            if direct and eq and not self._inbox and not self._external_stop and eq[0] <= self.stop_tag:
                tag = eq[0]
            else:
                tag = self._next()
            stop = self.stop_tag
            if tag is None or tag >= stop:
                # The last tag: the stop tag (with its events), or after starvation.
                cur = self.current_tag
                starving = tag is None and not self._eq and not self.keepalive
                after = succ(cur)
                if tag is None and (stop == FOREVER_TAG or (starving and after < stop)):
                    stop = self.stop_tag = after
                    self.stop_reason = "starvation"
                elif not self.fast:
                    while not self.clock.wait_until(stop[0], self._wakeup):
                        pass
                evs = self._events.pop(stop, {})
                if stop in self._eq:
                    self._eq.remove(stop)
                    heapq.heapify(self._eq)
                evs[shutdown] = None
                self._process(stop, evs)
                break
            if eq and eq[0] == tag:
                heapq.heappop(eq)
                self._process(tag, self._events.pop(tag))
            else:
                # A tag the coordinator asked for with no event here (a provisional grant:
                # the federate's outputs on a zero-delay cycle are announced absent at it).
                self._process(tag, {})
        self._eq.clear()
        self._events.clear()

    def _process(self, tag: TagT, events: dict[Slot, Any]) -> None:
        self.current_tag = tag
        self._stamp += 1
        stamp = self._stamp
        rq = self._rq
        setl = self._set
        mem = self.membership
        if mem is not None and tag >= mem.due:
            mem.apply(self, tag, events)  # before any reaction runs at the tag
        for slot, value in events.items():
            slot.value = value
            if not slot.present:
                slot.present = True
                setl.append(slot)
            for r in slot.reactions:
                if r.stamp != stamp:
                    r.stamp = stamp
                    _heappush(rq, r.rank)
            if slot.__class__ is TimerSlot and slot.period:
                # tag.delay_tag(tag, slot.period), inlined (a hot path, as in _schedule)
                nxt = (nt, 0) if (nt := tag[0] + slot.period) < FOREVER else _FOREVER_T
                if nxt <= self.stop_tag:
                    self._post(nxt, slot, None)
        if self._pool is not None:
            self._run_parallel()
        elif self.checkpoints:
            self._run_checkpointed()
        else:
            self._run_serial()
        self.tags_processed += 1
        hooks = self.tag_hooks
        for slot in setl:
            if slot.delayed:
                t, m = tag
                for dst, delay in slot.delayed:
                    if delay >= 0:
                        # tag.delay_tag(tag, delay), inlined (a hot path: a call costs 3-12%
                        # of a tag with one "after" connection, bench/tag_inline.py)
                        dtag = (t, m + 1) if delay == 0 else (td, 0) if (td := t + delay) < FOREVER else _FOREVER_T
                    else:  # a physical connection (LF's ~>, after d coded -1 - d)
                        dtag = (self.clock.now() - 1 - delay, 0)
                        if dtag <= tag:
                            dtag = succ(tag)
                    if dtag <= self.stop_tag:
                        self._post(dtag, dst, slot.value)
            if not hooks:  # hooks see the tag's presence: clear after them
                slot.present = False
        if hooks:
            for hook in hooks:
                hook(tag, setl)
            for slot in setl:
                slot.present = False
        # Only presence is cleared: a port's value persists (LF's Python target's
        # ``port.value``; ``get()`` is None when absent), and an action's stays in its slot
        # unread (ActionReader gates on presence) until its next event replaces it.
        setl.clear()
        if self.coordinator is not None:
            eq = self._eq
            self.coordinator.completed(self, tag, eq[0] if eq else None)

    def _run_serial(self) -> None:
        rq = self._rq
        reactions = self._reactions
        pop = _heappop
        n = 0
        r: Reaction | None = None
        try:
            while rq:
                r = reactions[pop(rq)]
                self._current = r
                r.call()
                n += 1
        except ReactorError:
            raise
        except BaseException as e:
            assert r is not None
            raise self._failure(r, e) from e
        finally:
            self._current = None
            self.reactions_executed += n

    def _run_checkpointed(self) -> None:
        """Serial execution that stops at the coordinator's level checkpoints: before the
        first reaction of each listed level (and at the end), ``at_level`` may send
        outputs whose writers are done and wait for network inputs about to be read."""
        rq = self._rq
        reactions = self._reactions
        cps = self.checkpoints
        coord = self.coordinator
        assert coord is not None
        i = 0
        r: Reaction | None = None
        try:
            while True:
                level = reactions[rq[0]].level if rq else _NO_LEVEL
                while i < len(cps) and cps[i] <= level:
                    coord.at_level(self, cps[i])
                    i += 1
                    level = reactions[rq[0]].level if rq else _NO_LEVEL
                if not rq:
                    break
                r = reactions[_heappop(rq)]
                self._current = r
                r.call()
                self.reactions_executed += 1
        except ReactorError:
            raise
        except BaseException as e:
            assert r is not None
            raise self._failure(r, e) from e
        finally:
            self._current = None

    def fire_now(self, slot: Slot, value: Any) -> None:
        """Set ``slot`` at the current tag while it is being processed (a network input
        whose value arrived mid-tag); its readers have not run yet."""
        slot.value = value
        if not slot.present:
            slot.present = True
            self._mark(slot)

    def _run_one(self, r: Reaction) -> None:
        self._tls.current = r
        try:
            r.call()
        finally:
            self._tls.current = None

    def _run_parallel(self) -> None:
        rq = self._rq
        reactions = self._reactions
        pool = self._pool
        assert pool is not None
        while rq:
            with self._lock:
                first = reactions[_heappop(rq)]
                batch = [first]
                while rq and reactions[rq[0]].level == first.level:
                    batch.append(reactions[_heappop(rq)])
            futures: list[Future[None]] = [pool.submit(self._run_one, r) for r in batch[1:]]
            errors: list[tuple[Reaction, BaseException]] = []
            try:
                self._run_one(first)
            except BaseException as e:
                errors.append((first, e))
            for r, f in zip(batch[1:], futures, strict=True):
                exc = f.exception()
                if exc is not None:
                    errors.append((r, exc))
            self.reactions_executed += len(batch)
            if errors:
                bad, exc = min(errors, key=lambda x: x[0].rank)  # deterministic: the first by rank
                if isinstance(exc, ReactorError):
                    raise exc
                raise self._failure(bad, exc) from exc

    def _failure(self, r: Reaction, e: BaseException) -> ReactionFailed:
        return ReactionFailed(f"reaction {r.fqn} failed at tag {self._elapsed()}: {type(e).__name__}: {e}")

    def _elapsed(self) -> str:
        t, m = self.current_tag
        return f"({t - self.start_time} ns, {m}) after start"
