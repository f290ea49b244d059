"""The record of a tuner's decisions: one JSON object a line, each with the logical tag
it was taken at and nothing that depends on physical time, so two runs of a seed write
the same lines (in one process or federated) and :meth:`DecisionLog.digest` compares them.

A decision's ``kind``: ``start`` (a trial begins in a slot), ``keep`` (a PBT trial carries
on unchanged), ``exploit`` (it takes ``donor``'s weights and optimizer state, and explores:
``hparams`` are its new values, ``before`` the old), ``promote`` / ``stop`` (an ASHA trial
passes a rung or ends there), ``complete`` (a trial reached the budget), ``rank`` (a PBT
round's ranking, best first).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .space import Value

__all__ = ["Decision", "DecisionLog"]


@dataclass(frozen=True)
class Decision:
    kind: str
    trial: int
    slot: int
    iteration: int
    metric: float | None = None
    hparams: dict[str, Value] = field(default_factory=dict)
    before: dict[str, Value] | None = None
    donor: int | None = None
    rung: int | None = None
    ranking: list[int] | None = None

    def row(self, tag: tuple[int, int]) -> dict[str, Any]:
        """The JSON object (NaN written as null: JSON has no NaN)."""
        out: dict[str, Any] = {"tag": list(tag), "kind": self.kind, "trial": self.trial, "slot": self.slot,
                               "iteration": self.iteration}
        if self.metric is not None:
            out["metric"] = None if math.isnan(self.metric) else self.metric
        if self.hparams:
            out["hparams"] = self.hparams
        for name in ("before", "donor", "rung", "ranking"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


class DecisionLog:
    """The decisions so far (as JSON lines), written to ``path`` as they are taken ("":
    kept in memory only)."""

    def __init__(self, path: str = "") -> None:
        self.path = path
        self.lines: list[str] = []

    def add(self, tag: tuple[int, int], decisions: list[Decision]) -> None:
        new = [json.dumps(d.row(tag), sort_keys=True) for d in decisions]
        self.lines.extend(new)
        if self.path and new:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in new))

    def open(self, keep: int = 0) -> None:
        """Start the file: empty, or (resuming) its first ``keep`` lines, the ones the
        checkpoint resumed from knew (a run stopped later wrote more: taken again)."""
        if not self.path:
            self.lines = self.lines[:keep]
            return
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8").splitlines() if keep and path.exists() else []
        self.lines = old[:keep]
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")

    def digest(self) -> str:
        """A hash of every line: equal digests, the same history."""
        h = hashlib.sha256()
        for line in self.lines:
            h.update(line.encode())
            h.update(b"\n")
        return h.hexdigest()

    def rows(self) -> list[Mapping[str, Any]]:
        return [json.loads(line) for line in self.lines]
