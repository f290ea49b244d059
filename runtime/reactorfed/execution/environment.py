"""The environment: configuration, assembly and execution of one program."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..assembly.assemble import assemble
from ..assembly.program import Program
from ..errors import ValidationError
from ..model.attachment import detach_scheduler
from ..model.reactor import Reactor
from ..time.clock import Clock, SystemClock
from ..time.duration import check_duration, format_duration
from ..time.tag import Tag
from .scheduler import Coordinator, Scheduler
from .tracing import Tracer

__all__ = ["Environment", "RunSummary"]

log = logging.getLogger("reactorfed")


@dataclass(frozen=True)
class RunSummary:
    """What a run did. Tags are relative to the start time."""

    tags: int
    reactions: int
    wall_ns: int
    start_time: int
    last_tag: Tag
    stop_reason: str
    deadline_misses: int
    #: CPU time this process used during the run (every thread; user and system)
    cpu_ns: int = 0
    #: what reactors reported (Reactor.report_result), by the reactor's full name
    results: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def reactions_per_s(self) -> float:
        return self.reactions * 1e9 / self.wall_ns if self.wall_ns else 0.0

    def __str__(self) -> str:
        return (
            f"{self.tags} tags, {self.reactions} reactions in {self.wall_ns / 1e9:.3f} s wall, "
            f"{self.cpu_ns / 1e9:.3f} s CPU ({self.reactions_per_s:,.0f} reactions/s); stopped at "
            f"{format_duration(self.last_tag.time)} +{self.last_tag.microstep} microsteps ({self.stop_reason})"
            + (f"; {self.deadline_misses} deadline misses" if self.deadline_misses else "")
        )


class Environment:
    """Runs a program: ``Environment(fast=True, timeout=sec(1)).run(Main())``.

    * ``fast``: do not wait for physical time (logical time runs as fast as it can).
    * ``timeout``: the last tag is start + timeout (ns); None runs until starvation or
      a stop request.
    * ``keepalive``: keep running with an empty event queue (waiting for physical
      actions); defaults to True when the program has physical actions.
    * ``workers``: > 1 runs the reactions of one level on a thread pool; the results are
      the same as serial execution.
    * ``clock``: the source of physical time (a :class:`~reactorfed.VirtualClock` in tests).
    * ``check_types``: check every value written to a port against the port's type.
    """

    def __init__(
        self,
        *,
        fast: bool = False,
        timeout: int | None = None,
        keepalive: bool | None = None,
        workers: int = 1,
        clock: Clock | None = None,
        check_types: bool = False,
        tracer: Tracer | None = None,
    ) -> None:
        if timeout is not None:
            check_duration(timeout, "timeout")
        if not isinstance(workers, int) or workers < 1:
            raise ValidationError(f"workers must be an int >= 1, got {workers!r}")
        self.fast = fast
        self.timeout = timeout
        self.keepalive = keepalive
        self.workers = workers
        self.clock: Clock = clock or SystemClock()
        self.check_types = check_types
        #: what records a traced run (:class:`reactorfed.observe.trace.Recorder`; None: untraced)
        self.tracer = tracer
        self.program: Program | None = None
        self.scheduler: Scheduler | None = None

    def assemble(self, main: Reactor, coordinator: Coordinator | None = None, federate: str | None = None) -> Scheduler:
        """Check the program and prepare it to run (done by :meth:`run` when needed).
        With ``federate``, only that child of ``main`` runs here (federated execution)."""
        program = assemble(main, federate)
        keepalive = self.keepalive
        if keepalive is None:
            keepalive = any(a.physical for a in program.actions)
        sched = Scheduler(
            program,
            clock=self.clock,
            fast=self.fast,
            timeout=self.timeout,
            keepalive=keepalive,
            workers=self.workers,
            check_types=self.check_types,
            coordinator=coordinator,
        )
        sched.tracer = self.tracer
        sched.bind()
        self.program, self.scheduler = program, sched
        return sched

    def run(self, main: Reactor | None = None, coordinator: Coordinator | None = None) -> RunSummary:
        """Assemble ``main`` (unless :meth:`assemble` was called) and execute it to the end."""
        if main is not None:
            self.assemble(main, coordinator)
        sched = self.scheduler
        if sched is None:
            raise ValidationError("nothing to run: pass the main reactor to run() or call assemble() first")
        # Accounting, not physical time for the program (that is the clock's): what the
        # run cost, for its summary (where a federation spends its CPU).
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        try:
            sched.run()
        finally:
            wall = time.perf_counter_ns() - t0
            cpu = time.process_time_ns() - c0
            results: dict[str, Mapping[str, Any]] = {}
            for r in sched.program.reactors:
                reported = detach_scheduler(r)  # a late schedule says it ended (Action.schedule)
                if reported is not None:
                    results[r.fqn] = reported
        t, m = sched.current_tag
        return RunSummary(
            tags=sched.tags_processed,
            reactions=sched.reactions_executed,
            wall_ns=wall,
            start_time=sched.start_time,
            last_tag=Tag(t - sched.start_time, m),
            stop_reason=sched.stop_reason,
            deadline_misses=sched.deadline_misses,
            cpu_ns=cpu,
            results=results,
        )

    def request_stop(self) -> None:
        """Ask a running program (from another thread) to stop soon."""
        if self.scheduler is not None:
            self.scheduler.request_stop()
