"""A program's progress, for a person: how far it is (``done`` of ``total``: iterations,
rounds, files) and a few figures of its own (env steps, the training return), as its
reactors report it (:meth:`reactorfed.Reactor.report_progress`).

A run keeps the latest report on its :class:`ProgressBoard` (one per scheduler: the
latest report of any reactor of the process wins). Where it goes from there: the
process's ``/status`` shows it; a federate's heartbeat thread sends it to the RTI when it
changed, at most once a second (:mod:`reactorfed.federation.process.heartbeat`), and the
RTI's ``/status`` gathers every federate's; the Kubernetes operator puts it into
``status.progress`` and ``kubectl get rfed``'s columns, and ``reactorfed launch``'s
progress line shows it; the RTI keeps each federate's reports as a :class:`ProgressHistory`
too, the curves its live page draws. A report is checked here, when it is made, so that what leaves
the process is small and plain JSON: a :class:`~reactorfed.ValidationError` names the bad
field.
"""

from __future__ import annotations

import math
import numbers
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValidationError

__all__ = ["MAX_FIGURES", "MAX_NAME", "ProgressBoard", "ProgressHistory", "ProgressReport", "check_progress"]

#: at most this many figures in one report
MAX_FIGURES = 8
#: a figure's name: at most this many characters, letters, digits and ``_`` (not first a digit)
MAX_NAME = 32
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class ProgressReport:
    """One report: ``done`` of ``total`` (either may be None: not known) and ``figures``,
    names to numbers (ints stay ints)."""

    done: int | None = None
    total: int | None = None
    figures: Mapping[str, int | float] = field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        """As ``/status`` shows it: the fields known, nothing for the others."""
        out: dict[str, Any] = {}
        if self.done is not None:
            out["done"] = self.done
        if self.total is not None:
            out["total"] = self.total
        if self.figures:
            out["figures"] = dict(self.figures)
        return out


def check_progress(done: Any = None, total: Any = None, figures: Mapping[str, Any] | None = None) -> ProgressReport:
    """The report of ``done`` of ``total`` and ``figures``, checked: ``done`` an int >= 0,
    ``total`` an int >= 0 (given with ``done``), each figure a real number named by a short
    identifier; a figure that is NaN (not known yet, e.g. the mean return before the
    first episode ends) is left out. Raises :class:`~reactorfed.ValidationError` naming
    the bad field."""
    if done is not None and not _is_int(done, 0):
        raise ValidationError(f"progress: done must be an int >= 0, not {done!r}")
    if total is not None:
        if not _is_int(total, 0):
            raise ValidationError(f"progress: total must be an int >= 0, not {total!r}")
        if done is None:
            raise ValidationError("progress: total was given without done")
    figures = figures or {}
    if len(figures) > MAX_FIGURES:
        raise ValidationError(f"progress: {len(figures)} figures, at most {MAX_FIGURES}")
    kept: dict[str, int | float] = {}
    for name, value in figures.items():
        if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.match(name):
            raise ValidationError(f"progress: the figure name {name!r} is not an identifier of at most {MAX_NAME} "
                                  "characters (letters, digits, _)")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError(f"progress: figure {name} must be a number, not {value!r}")
        if isinstance(value, numbers.Integral):
            if not -(2**63) <= int(value) < 2**63:
                raise ValidationError(f"progress: figure {name} is out of the range of a 64-bit int")
            kept[name] = int(value)
            continue
        number = float(value)
        if math.isnan(number):
            continue  # not known yet
        if math.isinf(number):
            raise ValidationError(f"progress: figure {name} is infinite")
        kept[name] = number
    return ProgressReport(None if done is None else int(done), None if total is None else int(total), kept)


def _is_int(value: Any, least: int) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and least <= int(value) < 2**63


class ProgressBoard:
    """The latest report of a run, and a count of the reports so far (a reader sends only
    what changed). Written by the threads that run reactions (one at a time), read by any
    (the heartbeat thread, the status server) without a lock: the pair is one reference,
    swapped whole."""

    __slots__ = ("_latest", "_lock")

    def __init__(self) -> None:
        self._latest: tuple[int, ProgressReport | None] = (0, None)
        self._lock = threading.Lock()

    def report(self, report: ProgressReport) -> None:
        with self._lock:
            self._latest = (self._latest[0] + 1, report)

    def latest(self) -> tuple[int, ProgressReport | None]:
        """(how many reports so far, the latest one or None)."""
        return self._latest

    def json(self) -> dict[str, Any] | None:
        """The latest report as ``/status`` shows it (None: nothing reported)."""
        report = self._latest[1]
        return None if report is None else report.json()


class ProgressHistory:
    """Each source's reports over time, bounded: at most ``capacity`` points a source, the
    whole run's curve at a coarser grain as it grows (a full history keeps every other
    point and from then on takes every other report, then every fourth, ...), and the
    latest report always. A point is the source's logical time (ns after the start) and
    the report. Written by one thread, read by any (under a lock)."""

    def __init__(self, capacity: int = 512) -> None:
        if capacity < 2:
            raise ValueError(f"a history of {capacity} points: at least 2")
        self.capacity = capacity
        self._lock = threading.Lock()
        self._of: dict[str, _Curve] = {}

    def add(self, source: str, elapsed_ns: int | None, report: ProgressReport) -> None:
        with self._lock:
            c = self._of.get(source)
            if c is None:
                c = self._of[source] = _Curve()
            c.seen += 1
            point = (elapsed_ns, report)
            if (c.seen - 1) % c.stride:
                c.pending = point
                return
            c.pending = None
            c.points.append(point)
            if len(c.points) >= self.capacity:
                c.points = c.points[::2]
                c.stride *= 2

    def json(self) -> dict[str, Any]:
        """``{source: {"reports", "t_ns", "done", "figures": {name: [...]}}}``: each a list
        over the points kept (oldest first; None where a point has no value: a time not
        known, no ``done``, a figure not reported then); ``reports``: how many were made."""
        with self._lock:
            curves = {s: (c.seen, [*c.points, *([c.pending] if c.pending else [])]) for s, c in self._of.items()}
        out: dict[str, Any] = {}
        for source, (seen, points) in curves.items():
            names: list[str] = []
            for _, r in points:
                names += [n for n in r.figures if n not in names]
            out[source] = {
                "reports": seen,
                "t_ns": [t for t, _ in points],
                "done": [r.done for _, r in points],
                "figures": {n: [r.figures.get(n) for _, r in points] for n in names},
            }
        return out


@dataclass
class _Curve:
    points: list[tuple[int | None, ProgressReport]] = field(default_factory=list)
    seen: int = 0
    stride: int = 1
    pending: tuple[int | None, ProgressReport] | None = None
