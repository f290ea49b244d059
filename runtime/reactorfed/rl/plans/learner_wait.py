"""How much of its time a learner waits for samples: the figure to scale samplers on.

A learner fed by samplers alternates between waiting (no fragment has arrived) and working
(it learns from what arrived). :class:`LearnerWait` measures both in physical time (ns, as
the run's clock gives it: the learner passes its ``physical_time``): the learner
calls :meth:`~LearnerWait.working` when fragments arrive (its reaction starts) and
:meth:`~LearnerWait.idle` when its update is done (as it reports its progress). Its
:meth:`~LearnerWait.share` is the part of the last ``window`` seconds spent waiting: near 1
when the samplers cannot keep the learner busy (more samplers would help), near 0 when
the learner never waits (more samplers would only queue fragments or lengthen its rounds).

A learner whose rounds are timed (a round every ``period`` of logical time, which tracks
physical time unless the run is ``fast``) cannot start a round before its tag's physical
time: waiting for the clock is not waiting for samples. It passes ``late_by``, how long (ns)
after its tag's physical time the reaction starts (:func:`late_by`), and only that much of
the gap counts as waiting: fragments that arrive before the round's time cost no wait.

The learner reports it as the progress figure ``learner_wait``
(:meth:`~reactorfed.Reactor.report_progress`); the RTI's ``/status`` carries it and the
Kubernetes operator serves it as an external metric for a HorizontalPodAutoscaler
(docs/kubernetes.md). It is a measurement only: nothing the learner computes reads it, so
training, and a replay of it, are the same with or without it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

from reactorfed import Reactor

from ...model.attachment import running_scheduler

__all__ = ["FIGURE", "LearnerWait", "late_by"]

#: the progress figure's name
FIGURE = "learner_wait"
#: the span of recent updates the share is taken over
WINDOW_NS = 10 * 1_000_000_000


class LearnerWait:
    """The share of the last ``window_ns`` of physical time (``clock``, ns: the learner's
    ``physical_time``, read only in its reactions) a learner waited."""

    def __init__(self, clock: Callable[[], int], window_ns: int = WINDOW_NS) -> None:
        self.window_ns = window_ns
        self.clock = clock
        #: one entry per update: (its end, the wait before it, its work), ns, oldest first
        self.spans: deque[tuple[int, int, int]] = deque()
        self._busy_since: int | None = None
        self._idle_since: int | None = None
        self._waited = 0

    def working(self, late_by: int | None = None) -> None:
        """Fragments arrived: the wait (since the last :meth:`idle`) is over. Again before
        :meth:`idle`: nothing (the learner is still at the same update). ``late_by``: ns the
        reaction starts after its tag's physical time (None: its start is not bound to the
        clock); the wait counts only that much of the gap."""
        if self._busy_since is not None:
            return
        now = self.clock()
        self._busy_since = now
        gap = now - self._idle_since if self._idle_since is not None else 0
        self._waited = gap if late_by is None else min(gap, max(late_by, 0))

    def idle(self) -> None:
        """The update is done: the learner waits from now. Without :meth:`working` before
        it: nothing."""
        if self._busy_since is None:
            return
        now = self.clock()
        self.spans.append((now, self._waited, now - self._busy_since))
        self._busy_since = None
        self._idle_since = now
        while len(self.spans) > 1 and self.spans[0][0] < now - self.window_ns:
            self.spans.popleft()

    def share(self) -> float:
        """Waiting's share of the updates (wait and work) of the window; NaN before the first."""
        waited = sum(s[1] for s in self.spans)
        total = waited + sum(s[2] for s in self.spans)
        return waited / total if total > 0 else math.nan

    def figures(self) -> dict[str, float]:
        """:meth:`idle`, then ``{"learner_wait": share}`` (nothing before the first update
        ends: a progress report leaves a NaN figure out anyway)."""
        self.idle()
        share = self.share()
        return {} if math.isnan(share) else {FIGURE: round(share, 4)}


def late_by(reactor: Reactor) -> int | None:
    """From a reaction of ``reactor``: ns since its tag's physical time (None when the run
    is ``fast``: a reaction there never waits for the clock)."""
    if running_scheduler(reactor).fast:
        return None
    return reactor.physical_time() - reactor.logical_time()
