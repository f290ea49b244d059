"""How the reactions ready at one tag run: the ready queue they are taken from, and the
three execution strategies the scheduler chooses from when its run starts.

* :class:`Serial`: one after the other on the scheduler's thread, by rank.
* :class:`Checkpointed`: serial, stopping at a coordinator's level checkpoints (a
  federate on a zero-delay cycle: outputs sent and inputs awaited between levels).
* :class:`Parallel`: a run of same-level ranks at a time on a thread pool (``workers >
  1``); the ready queue and the event queue are then touched under :attr:`Parallel.lock`.

The loops here run once per tag and once per reaction: they are written for speed.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..errors import ReactorError
from ..model.reaction import Reaction
from ..model.trigger import Slot

if TYPE_CHECKING:
    from .scheduler import Coordinator, Scheduler

__all__ = ["Checkpointed", "Parallel", "ReadyQueue", "Serial", "Strategy"]

_heappush = heapq.heappush
_heappop = heapq.heappop
_NO_LEVEL = 1 << 62

#: what a strategy makes of a reaction's exception: the error the run stops with
Failure = Callable[[Reaction, BaseException], BaseException]


class ReadyQueue:
    """The reactions triggered at the tag being processed (a heap of ranks), and the slots
    set at it. A reaction is queued once per tag: ``stamp`` counts tags, and a reaction
    whose own stamp is the current one is queued already."""

    __slots__ = ("heap", "stamp", "written")

    def __init__(self) -> None:
        self.heap: list[int] = []
        self.written: list[Slot] = []
        self.stamp = 0

    def mark(self, slot: Slot) -> None:
        """``slot`` was set at this tag: queue the reactions it triggers."""
        self.written.append(slot)
        stamp = self.stamp
        heap = self.heap
        for r in slot.reactions:
            if r.stamp != stamp:
                r.stamp = stamp
                _heappush(heap, r.rank)


class Serial:
    """Runs the ready reactions one after the other, by rank, on the calling thread."""

    def __init__(self, ready: ReadyQueue, reactions: list[Reaction], failure: Failure) -> None:
        self.ready = ready
        self.reactions = reactions
        self.failure = failure
        #: the reaction running (None: none)
        self.current: Reaction | None = None
        self.executed = 0

    def running(self) -> Reaction | None:
        """The reaction running (on the scheduler's thread)."""
        return self.current

    def in_worker(self) -> bool:
        """Is the calling thread one of this strategy's workers, running a reaction?"""
        return False

    def run(self) -> None:
        rq = self.ready.heap
        reactions = self.reactions
        pop = _heappop
        n = 0
        r: Reaction | None = None
        try:
            while rq:
                r = reactions[pop(rq)]
                self.current = r
                r.call()
                n += 1
        except ReactorError:
            raise
        except BaseException as e:
            assert r is not None
            raise self.failure(r, e) from e
        finally:
            self.current = None
            self.executed += n

    def close(self) -> None:
        pass


class Checkpointed(Serial):
    """Serial execution that stops at the coordinator's level checkpoints: before the
    first reaction of each listed level (and at the end), ``at_level`` may send outputs
    whose writers are done and wait for network inputs about to be read."""

    def __init__(self, ready: ReadyQueue, reactions: list[Reaction], failure: Failure,
                 scheduler: Scheduler, coordinator: Coordinator, checkpoints: list[int]) -> None:
        super().__init__(ready, reactions, failure)
        self.scheduler = scheduler
        self.coordinator = coordinator
        self.checkpoints = checkpoints

    def run(self) -> None:
        rq = self.ready.heap
        reactions = self.reactions
        cps = self.checkpoints
        coord = self.coordinator
        sched = self.scheduler
        i = 0
        r: Reaction | None = None
        try:
            while True:
                level = reactions[rq[0]].level if rq else _NO_LEVEL
                while i < len(cps) and cps[i] <= level:
                    coord.at_level(sched, cps[i])
                    i += 1
                    level = reactions[rq[0]].level if rq else _NO_LEVEL
                if not rq:
                    break
                r = reactions[_heappop(rq)]
                self.current = r
                r.call()
                self.executed += 1
        except ReactorError:
            raise
        except BaseException as e:
            assert r is not None
            raise self.failure(r, e) from e
        finally:
            self.current = None


class Parallel:
    """Runs the ready reactions a level at a time: the first of a run of same-level ranks
    on the calling thread, the others on a pool of ``workers - 1`` threads. The first
    error by rank stops the run (deterministic whichever thread failed first)."""

    #: (never set: a reaction runs on a worker, see :meth:`running`)
    current: Reaction | None = None

    def __init__(self, ready: ReadyQueue, reactions: list[Reaction], failure: Failure, workers: int) -> None:
        self.ready = ready
        self.reactions = reactions
        self.failure = failure
        self.executed = 0
        #: held by everything that touches the ready queue or the event queue from a reaction
        self.lock = threading.Lock()
        self.tls = threading.local()
        self.pool = ThreadPoolExecutor(workers - 1, thread_name_prefix="reactorfed-worker")

    def running(self) -> Reaction | None:
        """The reaction running on the calling thread (None: none)."""
        return getattr(self.tls, "current", None)

    def in_worker(self) -> bool:
        return getattr(self.tls, "current", None) is not None

    def locked(self, fn: Callable[..., None]) -> Callable[..., None]:
        """``fn`` called under :attr:`lock`."""
        lock = self.lock

        def call(*args: Any) -> None:
            with lock:
                fn(*args)

        return call

    def _run_one(self, r: Reaction) -> None:
        self.tls.current = r
        try:
            r.call()
        finally:
            self.tls.current = None

    def run(self) -> None:
        rq = self.ready.heap
        reactions = self.reactions
        pool = self.pool
        while rq:
            with self.lock:
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
            self.executed += len(batch)
            if errors:
                bad, exc = min(errors, key=lambda x: x[0].rank)  # deterministic: the first by rank
                if isinstance(exc, ReactorError):
                    raise exc
                raise self.failure(bad, exc) from exc

    def close(self) -> None:
        self.pool.shutdown(wait=True)


Strategy = Serial | Parallel
