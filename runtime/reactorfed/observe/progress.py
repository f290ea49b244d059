"""A program's progress, for a person: how far it is (``done`` of ``total``: iterations,
rounds, files) and a few figures of its own (env steps, the training return), as its
reactors report it (:meth:`reactorfed.Reactor.report_progress`).

A run keeps the latest report on its :class:`ProgressBoard` (one per scheduler: the
latest report of any reactor of the process wins). Where it goes from there: the
process's ``/status`` shows it; a federate's heartbeat thread sends it to the RTI when it
changed, at most once a second (:mod:`reactorfed.federation.process.heartbeat`), and the
RTI's ``/status`` gathers every federate's; the Kubernetes operator puts it into
``status.progress`` and ``kubectl get rfed``'s columns, and ``reactorfed launch``'s
progress line shows it. A report is checked here, when it is made, so that what leaves
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

__all__ = ["MAX_FIGURES", "MAX_NAME", "ProgressBoard", "ProgressReport", "check_progress"]

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
