"""The scheduler: executes an assembled program tag by tag in logical time.

At each tag it fires the events of that tag (actions, timers, delayed connections,
startup/shutdown), runs the triggered reactions in rank order (inferred deadline, level,
assembly order: :func:`reactorfed.assembly.assemble.rank`), then delivers delayed
connections and clears presence (values persist: :mod:`reactorfed.model.port`). In
``fast`` mode it never waits; otherwise it does not process a tag before physical time
reaches it. It composes the parts it drives: the :class:`EventQueue`, the
:class:`ReadyQueue` and an execution strategy (:mod:`.strategies`: serial, checkpointed,
parallel), the :class:`Inbox` (physical actions and stop requests from other threads,
and the wait for the next tag), the handles' binding (:mod:`.binding`), the elastic
banks' :class:`Membership` and the program's :class:`Modes` (if it has any). A
:class:`Coordinator` (federated execution) may hold a tag back until it is granted, add
events that arrived from the network, and hear of each completed tag.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Callable
from typing import Any

from ..assembly.assemble import rank
from ..assembly.program import Program
from ..errors import ReactorError, ValidationError
from ..model.action import ActionSlot
from ..model.attachment import attach_scheduler, scheduler_of
from ..model.elastic import MemberChange, elastic_banks
from ..model.port import CheckedWriter, PortWriter, SerialWriter
from ..model.reaction import Reaction
from ..model.reactor import Reactor
from ..model.timer import TimerSlot
from ..model.trigger import Slot
from ..observe.histograms import HistogramBoard
from ..observe.progress import ProgressBoard
from ..time.clock import Clock
from ..time.tag import FOREVER, FOREVER_T, FOREVER_TAG, NEVER, TagT, succ
from .binding import bind_reactions
from .coordinator import Coordinator
from .deadlines import with_deadline
from .event_queue import EventQueue
from .inbox import Inbox, clock_tag
from .membership import Membership
from .modes import Modes
from .strategies import Checkpointed, Parallel, ReadyQueue, Serial, Strategy
from .tardy import Tardiness
from .tracing import Tracer, UserEvents, trace_reactions, traced_schedule

__all__ = ["Coordinator", "ReactionFailed", "Scheduler"]

log = logging.getLogger("reactorfed.execution.scheduler")

_heappush = heapq.heappush


class ReactionFailed(ReactorError):
    """A reaction raised; the program stops. ``__cause__`` is the original exception."""


class Scheduler:
    def __init__(self, program: Program, *, clock: Clock, fast: bool, timeout: int | None, keepalive: bool,
                 workers: int = 1, check_types: bool = False, coordinator: Coordinator | None = None) -> None:
        self.program = program
        self.clock = clock
        self.fast = fast
        self.timeout = timeout
        self.keepalive = keepalive
        self.workers = workers
        self.check_types = check_types
        self.coordinator = coordinator
        #: set by a coordinator whose inputs are stamped at arrival (physical connections
        #: between federates): with nothing queued, nothing granted and no stop tag, the
        #: scheduler waits for them (or a stop) rather than ending by starvation
        self.awaits_arrivals = False
        self.current_tag: TagT = (NEVER, 0)
        self.start_time = 0
        self.stop_tag: TagT = FOREVER_TAG
        self.stop_reason = ""
        self.tags_processed = 0
        self.deadline_misses = 0
        #: the events still to come
        self.queue = EventQueue(lambda: self.stop_tag)
        self._eq = self.queue.heap  # (the loop's view of the queue, read per tag)
        self._events = self.queue.events
        self._post = self.queue.post
        self._ready = ReadyQueue()
        self._reactions = program.reactions
        self._strategy: Strategy = Serial(self._ready, self._reactions, self._failure)
        self._inbox = Inbox()
        self._ended = False  # the run is over: a physical action scheduled now is dropped
        self._thread: threading.Thread | None = None
        #: levels before which the coordinator's ``at_level`` runs (federated zero-delay cycles)
        self.checkpoints: list[int] = []
        #: hooks run at the end of every tag with the slots set at it (federation senders)
        self.tag_hooks: list[Callable[[TagT, list[Slot]], None]] = []
        #: the elastic banks' members present at each tag (None: the program has none)
        self.membership: Membership | None = Membership(program) if elastic_banks(program.main) else None
        #: the program's modes at run time (None: it has none; then nothing here changes)
        self.modes: Modes | None = Modes(program.modes, self) if program.modes is not None else None
        self.tracer: Tracer | None = None  # a traced run's recorder (set before bind)
        self.user_events = UserEvents()  # LF's user trace events
        #: what the program's reactors last reported of their progress (Reactor.report_progress)
        self.progress = ProgressBoard()
        self.histograms = HistogramBoard()  # the reactors' (the learners' policy lag), for /metrics
        #: tardy messages (decentralized coordination only: see enable_tardy)
        self.tardy: Tardiness | None = None
        #: a decentralized federate's maxwait (:class:`reactorfed.model.maxwait.MaxWaitControl`)
        self.fed_maxwait: Any = None

    @property
    def reactions_executed(self) -> int:  # (counted by the strategy that runs them)
        return self._strategy.executed

    def set_membership(self, changes: list[MemberChange]) -> None:
        """Apply a membership schedule of the program's elastic banks in this run (before
        it starts; see :mod:`reactorfed.model.elastic`)."""
        if self.membership is None:
            raise ValidationError(f"{self.program.main.fqn} has no elastic bank: a membership schedule has nothing to change")
        if self._thread is not None:
            raise ValidationError("a membership schedule is set before the run starts")
        self.membership.load(changes)

    def bind(self) -> None:
        """The start of execution: take the program (one scheduler, once), bind the
        reactor tree to this scheduler until the run ends (:func:`~reactorfed.model.reactor.attach_scheduler`: what a
        reactor's ``tag()``, ``request_stop()`` and physical actions reach; the tree
        runs in one program at a time) and give every reaction its arguments (handles
        for what it declared, on this program's slots: :mod:`.binding`)."""
        prog = self.program
        if prog.scheduler is not None:
            raise ValidationError(f"{prog.main.fqn}: this assembled program is already bound to a scheduler; a "
                                  "program runs once: assemble the reactor tree again for another run")
        for r in prog.reactors:
            if scheduler_of(r) is not None:
                raise ValidationError(f"{r.fqn} is already part of a running program")
        prog.scheduler = self
        mark: Callable[[Slot], None] = self._ready.mark
        schedule: Callable[[ActionSlot, Any, int], None] = self._schedule
        if self.workers > 1:
            self._strategy = par = Parallel(self._ready, self._reactions, self._failure, self.workers)
            mark, schedule = par.locked(mark), par.locked(schedule)
        writer_cls = CheckedWriter if self.check_types else PortWriter if self.workers > 1 else SerialWriter
        for r in prog.reactors:
            attach_scheduler(r, self)
        if self.tracer is not None:
            schedule = traced_schedule(schedule, self, self.tracer)
        bind_reactions(prog, mark=mark, schedule=schedule, schedule_physical=self.schedule_physical,
                       writer_cls=writer_cls, deadline=lambda rx, body: with_deadline(self, rx, body))
        if self.tracer is not None:
            trace_reactions(prog, self, self.tracer)

    # -- called from reactions and other threads --------------------------------------
    def current_reaction_name(self) -> str | None:
        r = self._strategy.running()
        return r.fqn if r is not None else None

    def running_reaction(self) -> Reaction | None:
        """The reaction running on the calling thread (None: none)."""
        r = self._strategy.running()
        return r if self.workers > 1 or threading.current_thread() is self._thread else None

    def post_remote(self, tag: TagT, slot: Slot, value: Any) -> bool:
        """Post an event that arrived from elsewhere (a federate's network input) at exactly
        ``tag`` (:meth:`EventQueue.post_exact`: no pile-up); False when ``slot`` has one
        there already. On the scheduler's thread only (from a coordinator hook)."""
        assert tag > self.current_tag, f"remote event at {tag} is not after {self.current_tag}"
        return self.queue.post_exact(tag, slot, value)

    def _schedule(self, action: ActionSlot, value: Any, delay: int) -> None:
        if delay and (delay.__class__ is not int or delay < 0):
            raise ValidationError(f"{action.fqn}: delay must be a whole number of ns >= 0, got {delay!r}")
        d = action.min_delay + delay
        t, m = self.current_tag
        # tag.delay_tag(self.current_tag, d), inlined: a hot path (every logical action's schedule;
        # a call costs 1-10% of a tag here, bench/tag_inline.py). The same result for every tag a
        # reaction runs at (after NEVER, before FOREVER): saturates at FOREVER_TAG.
        tag = (t, m + 1) if d == 0 else (td, 0) if (td := t + d) < FOREVER else FOREVER_T
        if action.min_spacing is not None:
            self.queue.place(action, value, tag, self.stop_tag)
        elif tag <= self.stop_tag:
            self._post(tag, action, value)  # no min_spacing: a collision piles up

    def schedule_physical(self, action: ActionSlot, value: Any, delay: int) -> None:
        """Thread-safe: every schedule of a physical action, from a reaction's handle or any
        thread (reactor-c's ``lf_schedule_trigger``: physical time + min_delay + delay,
        microstep 0; at or before the current tag: its next microstep). From a reaction of
        this program the event is placed at once, as a logical action's is, so the tag's end
        (and a coordinator's report of the next event) sees it; from any other thread it
        goes through the inbox, drained before the next tag is picked."""
        if delay.__class__ is not int or delay < 0:
            raise ValidationError(f"{action.fqn}: delay must be a whole number of ns >= 0, got {delay!r}")
        if self._ended:
            log.warning("%s is scheduled after the program ended: dropped (as every event past the last tag)", action.fqn)
            return
        now = self.clock.now()
        extra = action.min_delay + delay
        strategy = self._strategy
        if strategy.current is not None and threading.current_thread() is self._thread:
            self.place_physical(action, value, now, extra)  # a reaction, serial execution
        elif isinstance(strategy, Parallel) and strategy.in_worker():
            with strategy.lock:  # a reaction, workers > 1 (the lock the locked schedule takes)
                self.place_physical(action, value, now, extra)
        else:
            self._inbox.put(action, value, now, extra)

    def place_physical(self, action: ActionSlot, value: Any, now: int, extra: int) -> None:
        """On the scheduler's thread: queue a physical action's event, scheduled when the
        clock read ``now``, ``extra`` ns later (its min_delay and delay): :func:`.inbox.clock_tag`."""
        tag = clock_tag(now, extra, self.coordinator, self.current_tag)
        if action.min_spacing is not None:
            self.queue.place(action, value, tag, self.stop_tag)
        elif tag <= self.stop_tag:
            self._post(tag, action, value)

    def post_arrival(self, slot: Slot, value: Any, delay: int) -> None:
        """On the scheduler's thread: a value that arrived over a physical connection
        between federates (LF's ``~>``) with the connection's ``delay``, stamped by this
        side's clock as a physical connection in one process stamps it (:func:`.inbox.clock_tag`);
        past the stop tag, dropped; two at one tag pile up. A joiner's arrivals before its
        join tag come at its join tag (it runs no tag before)."""
        mem, tag = self.membership, clock_tag(self.clock.now(), delay, self.coordinator, self.current_tag)
        tag = max(tag, mem.first) if mem is not None and mem.first else tag
        if tag <= self.stop_tag:
            self._post(tag, slot, value)

    def request_stop(self, by: Reactor | None = None) -> None:
        """From a reaction: stop at the next microstep (in a transient federate, ``by``'s
        own: its leave). From another thread: stop soon."""
        if by is not None and self.membership is not None and self.membership.leave_requested(self, by):
            return
        if threading.current_thread() is self._thread or self._strategy.in_worker():
            self.stop_at(succ(self.current_tag), "stop requested")
        else:
            self._inbox.ask_stop()

    def stop_at(self, tag: TagT, reason: str) -> None:
        """A stop request for ``tag`` (agreed with the coordinator's federation, if any)."""
        if self.coordinator is not None:
            tag = self.coordinator.stop_requested(self, tag)
        self.lower_stop_tag(tag, reason)

    # -- the coordination surface (what a coordinator may read and change) -------------
    def next_event_tag(self) -> TagT | None:
        """The tag of the earliest queued event (None: none), stop tag or not. A
        coordinator reads it after posting what arrived from the network."""
        return self.queue.head()

    def lower_stop_tag(self, tag: TagT, reason: str) -> None:
        """Stop at ``tag`` (``reason`` says why) if that is earlier than the stop tag so
        far: a stop tag only moves back (a federation's agreed stop, a request, a timeout)."""
        if tag < self.stop_tag:
            self.stop_tag = tag
            self.stop_reason = reason

    def enable_tardy(self) -> Tardiness:
        """Decentralized coordination: messages may arrive after their tag (see
        :mod:`.tardy`); every reaction a port triggers checks for them. After bind."""
        if self.tardy is None:
            self.tardy = Tardiness()
            self.tardy.install(self.program)
        return self.tardy

    def post_tardy(self, slot: Slot, value: Any, intended: TagT) -> TagT | None:
        """A message for ``slot`` meant for ``intended`` came too late: queued at a later
        tag (:meth:`.Tardiness.place`), returned; None past the stop tag (dropped)."""
        return self.enable_tardy().place(self.queue, self.current_tag, self.stop_tag, slot, value, intended)

    def fire_now(self, slot: Slot, value: Any) -> None:
        """Set ``slot`` at the tag being processed (a network input arrived mid-tag; its readers have not run yet)."""
        slot.value = value
        if not slot.present:
            slot.present = True
            self._ready.mark(slot)

    # -- the loop --------------------------------------------------------------------
    def run(self) -> None:
        if self._thread is not None:
            raise ValidationError("this scheduler has already run its program: assemble the reactor tree again "
                                  "(Environment.run(main)) for another run")
        self._thread = threading.current_thread()
        proposed = self.clock.now()
        self.start_time = start = self.coordinator.start_time(proposed) if self.coordinator else proposed
        if self.checkpoints:
            # Each level finished before the next: rank by level alone (no deadline-first order).
            rank(self.program, by_deadline=False)
            if self.coordinator is not None and not isinstance(self._strategy, Parallel):
                self._strategy = Checkpointed(self._ready, self._reactions, self._failure, self,
                                              self.coordinator, self.checkpoints)
        if self.timeout is not None:
            # (lowered, not set: a replayed joiner learns its leave, its stop tag, in start_time)
            self.lower_stop_tag((start + self.timeout, 0), "timeout")
        mem = self.membership
        first = mem.first if mem is not None and mem.first is not None else (start, 0)  # (a joiner's: its ADMIT's)
        self.queue.post_start(self.program, start, first, self.stop_tag)
        if self.modes is not None:
            self.modes.start(start)  # (takes part in each tag's end as a tag hook)
        if mem is not None:
            mem.start(self, start)
        try:
            self._loop()
        finally:
            self._ended = True
            self._strategy.close()

    def _loop(self) -> None:
        shutdown = self.program.shutdown
        eq = self._eq
        inbox = self._inbox
        items = inbox.items
        direct = self.fast and self.coordinator is None
        tag: TagT | None
        while True:
            # Fast path (what Inbox.next_tag returns in this case): fast mode, no coordinator,
            # nothing from other threads, and the earliest event is not past the stop tag.
            if direct and eq and not items and not inbox.stop_asked and eq[0] <= self.stop_tag:
                tag = eq[0]
            else:
                tag = inbox.next_tag(self)
            stop = self.stop_tag
            if tag is None or tag >= stop:
                # The last tag: the stop tag (with its events), or after starvation.
                cur = self.current_tag
                starving = tag is None and not eq and not self.keepalive
                after = succ(cur)
                if tag is None and (stop == FOREVER_TAG or (starving and after < stop)):
                    stop = self.stop_tag = after
                    self.stop_reason = "starvation"
                elif not self.fast:
                    while not self.clock.wait_until(stop[0], inbox.wakeup):
                        pass
                evs = self.queue.pop_at(stop)
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
        self.queue.clear()

    def _process(self, tag: TagT, events: dict[Slot, Any]) -> None:
        self.current_tag = tag
        ready = self._ready
        ready.stamp += 1
        stamp = ready.stamp
        rq = ready.heap
        setl = ready.written
        mem = self.membership
        if mem is not None and tag >= mem.due:
            mem.apply(self, tag, events)  # before any reaction runs at the tag
        tardy = self.tardy
        if tardy is not None and tardy.due:
            tardy.begin(tag)
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
                nxt = (nt, 0) if (nt := tag[0] + slot.period) < FOREVER else FOREVER_T
                if nxt <= self.stop_tag:
                    self._post(nxt, slot, None)
        self._strategy.run()
        self.tags_processed += 1
        hooks = self.tag_hooks
        for slot in setl:
            if slot.delayed:
                t, m = tag
                for dst, delay in slot.delayed:
                    if delay >= 0:
                        # tag.delay_tag(tag, delay), inlined (a hot path: a call costs 3-12%
                        # of a tag with one "after" connection, bench/tag_inline.py)
                        dtag = (t, m + 1) if delay == 0 else (td, 0) if (td := t + delay) < FOREVER else FOREVER_T
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
        if tardy is not None:
            tardy.end(tag)
        if self.coordinator is not None:
            if self._inbox.items:  # (other threads' physical actions: in the next event reported)
                self._inbox.place(self)
            self.coordinator.completed(self, tag, eq[0] if (eq := self._eq) else None)

    def _failure(self, r: Reaction, e: BaseException) -> ReactionFailed:
        t, m = self.current_tag
        return ReactionFailed(f"reaction {r.fqn} failed at tag ({t - self.start_time} ns, {m}) after start: "
                              f"{type(e).__name__}: {e}")
