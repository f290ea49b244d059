"""Histograms a program's reactors fill as they run, for the process's Prometheus
``/metrics`` (:class:`~reactorfed.observe.metrics.SchedulerCollector` shows every one of
its scheduler's :class:`HistogramBoard`, with Prometheus's conventions:
``NAME_bucket{le=...}`` cumulative, ``NAME_sum``, ``NAME_count``).

Values are ints (a count, or ns: time is never a float here); a histogram's ``unit`` is
how many of them make one of the exposition's (1_000_000_000: ns shown as seconds,
Prometheus's base unit).
An observation is a bisect and three additions on the reaction's thread; a scrape copies
the counts (the ``_count`` is their sum, so it always agrees with the ``+Inf`` bucket).
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Histogram", "HistogramBoard", "HistogramSnapshot"]


@dataclass(frozen=True)
class HistogramSnapshot:
    """A histogram at one moment: ``counts[i]`` observations at most ``bounds[i]`` (not
    cumulative; the last, beyond every bound), and their sum."""

    bounds: tuple[int, ...]
    counts: tuple[int, ...]
    sum: int

    @property
    def count(self) -> int:
        return sum(self.counts)


class Histogram:
    """Observations counted into buckets with upper bounds ``bounds`` (increasing ints)."""

    __slots__ = ("_counts", "_sum", "bounds", "doc", "unit")

    def __init__(self, bounds: Sequence[int], doc: str = "", unit: int = 1) -> None:
        b = tuple(int(x) for x in bounds)
        if not b or any(x >= y for x, y in itertools.pairwise(b)):
            raise ValueError(f"a histogram's bounds must increase: {bounds!r}")
        self.bounds, self.doc, self.unit = b, doc, unit
        self._counts = [0] * (len(b) + 1)
        self._sum = 0

    def observe(self, value: int) -> None:
        self._counts[bisect.bisect_left(self.bounds, value)] += 1
        self._sum += value

    def snapshot(self) -> HistogramSnapshot:
        return HistogramSnapshot(self.bounds, tuple(self._counts), self._sum)


class HistogramBoard:
    """A run's histograms (one per scheduler), by name and labels: :meth:`histogram`
    makes one the first time and returns it after."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._of: dict[tuple[str, tuple[tuple[str, str], ...]], Histogram] = {}

    def histogram(self, name: str, doc: str, bounds: Sequence[int], labels: Mapping[str, str] | None = None,
                  unit: int = 1) -> Histogram:
        key = (name, tuple(sorted((labels or {}).items())))
        with self._lock:
            h = self._of.get(key)
            if h is None:
                h = self._of[key] = Histogram(bounds, doc, unit)
            return h

    def items(self) -> list[tuple[str, dict[str, str], Histogram]]:
        """Every histogram: (name, labels, histogram), by name."""
        with self._lock:
            return [(name, dict(labels), h) for (name, labels), h in sorted(self._of.items(), key=lambda kv: kv[0])]
