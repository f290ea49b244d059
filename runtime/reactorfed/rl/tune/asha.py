"""Asynchronous successive halving (ASHA: Li et al. 2020, "A system for massively parallel
hyperparameter tuning"; Ray Tune's ``AsyncHyperBandScheduler``): rungs at
``grace_period * reduction_factor**k`` learner iterations below the budget; a trial that
reaches a rung goes on unless its metric is below the ``1 - 1 / reduction_factor``
percentile of the metrics recorded at that rung before it (the first to reach a rung goes
on), else it stops there and its slot takes the next configuration.

"So far" is in logical time: the rungs' records hold the reports of earlier tags and, at
one tag, of lower slots; a trial reaches a rung at the tag its iterations put it at,
however long they took. Which trials are promoted is therefore the same in every run of a
seed. The cutoff is Ray's (``_Bracket.on_result``): the percentile of the metrics recorded
before (linear between two), trials without a metric yet (no episode finished) left out of
it and stopped by it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from reactorfed import ValidationError

from .contracts import Report
from .pbt import score
from .record import Decision
from .search import Search, SearchConfig
from .space import SearchSpace

__all__ = ["ASHA", "ASHAConfig"]


@dataclass(frozen=True)
class ASHAConfig:
    """ASHA's settings, named as Ray Tune's."""

    #: the first rung, in learner iterations
    grace_period: int = 10
    #: each rung keeps the best 1 / this of the trials that reach it
    reduction_factor: int = 3

    def check(self, field: str = "asha", budget: int | None = None) -> None:
        if not isinstance(self.grace_period, int) or self.grace_period < 1:
            raise ValidationError(f"{field}.grace_period: must be an int >= 1, got {self.grace_period!r}")
        if budget is not None and self.grace_period >= budget:
            raise ValidationError(f"{field}.grace_period: {self.grace_period} leaves no rung below the budget "
                                  f"({budget} iterations)")
        if not isinstance(self.reduction_factor, int) or self.reduction_factor < 2:
            raise ValidationError(f"{field}.reduction_factor: must be an int >= 2, got {self.reduction_factor!r}")


class ASHA(Search):
    """:class:`~reactorfed.rl.tune.search.Search` (random or grid) with ASHA's early stops."""

    name = "asha"

    def __init__(self, config: SearchConfig, asha: ASHAConfig, space: SearchSpace, seed: int = 0) -> None:
        super().__init__(config, space, seed)
        self.asha = asha
        self.rungs: dict[int, dict[int, float]] = {m: {} for m in self.milestones()}  # rung -> trial -> score

    def check(self, max_trials: int) -> None:
        super().check(max_trials)
        self.asha.check("asha", self.config.iterations)

    def milestones(self) -> list[int]:
        if not (self.asha.grace_period >= 1 and self.asha.reduction_factor >= 2):
            return []  # (settings check() refuses)
        out, r = [], self.asha.grace_period
        while r < self.config.iterations:
            out.append(r)
            r *= self.asha.reduction_factor
        return out

    def judge(self, r: Report, decisions: list[Decision]) -> bool:
        m = r.metrics[self.config.metric]
        recorded = self.rungs[r.iteration]
        finite = [v for v in recorded.values() if math.isfinite(v)]  # (the earlier trials')
        q = (1.0 - 1.0 / self.asha.reduction_factor) * 100.0
        cutoff = float(np.percentile(np.array(finite), q)) if finite else -math.inf
        recorded[r.trial] = score(m, self.config.mode)
        kind = "promote" if recorded[r.trial] >= cutoff else "stop"
        decisions.append(Decision(kind, r.trial, r.slot, r.iteration, metric=m, rung=r.iteration))
        return kind == "promote"

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "rungs": {str(k): len(v) for k, v in self.rungs.items()}}

    def state(self) -> dict[str, Any]:
        return {**super().state(), "rungs": {str(k): {str(t): s for t, s in v.items()} for k, v in self.rungs.items()}}

    def restore(self, state: Mapping[str, Any]) -> None:
        super().restore(state)
        self.rungs = {int(k): {int(t): float(s) for t, s in v.items()} for k, v in state["rungs"].items()}
