"""Plain searches (random or grid) over a bank of slots: configurations are drawn (or
enumerated) one after another, each trained as a trial in the next free slot to the
budget; a slot whose trial ends takes the next configuration, until ``num_samples`` have
run. :class:`Search` is the decision rule; :class:`~reactorfed.rl.tune.asha.ASHA` adds
early stopping at rungs to it.

Trial ``k``'s configuration is drawn from a generator seeded by the tuner's seed and ``k``
(a grid's ``k``-th point), so it does not depend on which slot runs it nor when; reports of
one tag are taken in slot order, so which trial a free slot gets is fixed too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from reactorfed import ValidationError

from .contracts import TRIAL_METRICS, Directive, Report, best_figures, trial_seed
from .pbt import score
from .record import Decision
from .space import SearchSpace, Value

__all__ = ["Search", "SearchConfig"]


@dataclass(frozen=True)
class SearchConfig:
    """How configurations are generated and trained."""

    #: random: ``num_samples`` draws from the space; grid: every point of the space's grid
    #: (``grid_points`` values per range, every value of a choice)
    kind: Literal["random", "grid"] = "random"
    num_samples: int = 8
    grid_points: int = 3
    #: trials trained at once (the slots of the trials' bank)
    slots: int = 4
    #: each trial's budget, in learner iterations
    iterations: int = 100
    #: what ranks the trials (one of :data:`~reactorfed.rl.tune.contracts.TRIAL_METRICS`)
    metric: str = "mean_return_100"
    mode: Literal["max", "min"] = "max"

    def check(self, field: str = "search", max_trials: int | None = None) -> None:
        """Refuse settings that cannot run, naming the field (``field.NAME``)."""
        def bad(name: str, why: str) -> ValidationError:
            return ValidationError(f"{field}.{name}: {why}")

        if self.kind not in ("random", "grid"):
            raise bad("kind", f"must be random or grid, got {self.kind!r}")
        for name in ("num_samples", "grid_points", "slots", "iterations"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise bad(name, f"must be an int >= 1, got {value!r}")
        if max_trials is not None and self.slots > max_trials:
            raise bad("slots", f"{self.slots} trials at once is more than the trials' bank holds "
                               f"(max_trials = {max_trials})")
        if self.metric not in TRIAL_METRICS:
            raise bad("metric", f"the trials do not report {self.metric!r}; they report {', '.join(TRIAL_METRICS)}")
        if self.mode not in ("max", "min"):
            raise bad("mode", f"must be max or min, got {self.mode!r}")


class Search:
    """Random or grid search, each trial to the budget (a
    :class:`~reactorfed.rl.tune.contracts.Scheduler`)."""

    wants_state = False
    explores = False
    name = "search"

    def __init__(self, config: SearchConfig, space: SearchSpace, seed: int = 0) -> None:
        self.config, self.space, self.seed = config, space, seed
        self.grid = list(space.grid(config.grid_points)) if config.kind == "grid" else None
        self.total = len(self.grid) if self.grid is not None else config.num_samples
        self.next_trial = 0
        self.running: dict[int, int] = {}  # slot -> its trial
        #: trial -> its last report: iteration, metric, hparams, and how it ended (running/stopped/complete)
        self.trials: dict[int, dict[str, Any]] = {}

    @property
    def slots(self) -> int:
        return self.config.slots

    @property
    def iterations(self) -> int:
        return self.config.iterations

    def check(self, max_trials: int) -> None:
        self.config.check("search", max_trials)

    # -- what a subclass changes -----------------------------------------------------------
    def milestones(self) -> list[int]:
        """The iterations below the budget at which a trial reports (none: only at the end)."""
        return []

    def judge(self, r: Report, decisions: list[Decision]) -> bool:
        """Whether ``r``'s trial, at a milestone, goes on (recording why)."""
        decisions.append(Decision("promote", r.trial, r.slot, r.iteration, metric=r.metrics[self.config.metric]))
        return True

    # -- the rule ------------------------------------------------------------------------------
    def config_of(self, trial: int) -> dict[str, Value]:
        if self.grid is not None:
            return dict(self.grid[trial])
        return self.space.sample(np.random.default_rng([self.seed, 3, trial]))

    def until(self, iteration: int) -> int:
        later = [m for m in self.milestones() if m > iteration]
        return min(later) if later else self.config.iterations

    def _next(self, slot: int, decisions: list[Decision]) -> Directive:
        """A free slot's next trial, or stop when every configuration has run."""
        self.running.pop(slot, None)
        if self.next_trial >= self.total:
            return Directive("stop")
        k, self.next_trial = self.next_trial, self.next_trial + 1
        hp = self.config_of(k)
        self.running[slot] = k
        self.trials[k] = {"iteration": 0, "metric": None, "hparams": hp, "status": "running"}
        decisions.append(Decision("start", k, slot, 0, hparams=hp))
        return Directive("start", trial=k, until=self.until(0), hparams=hp, seed=trial_seed(self.seed, k))

    def begin(self, slots: int) -> tuple[list[tuple[int, Directive]], list[Decision]]:
        decisions: list[Decision] = []
        return [(s, self._next(s, decisions)) for s in range(slots)], decisions

    def decide(self, reports: Sequence[Report]) -> tuple[list[tuple[int, Directive]], list[Decision]]:
        out: list[tuple[int, Directive]] = []
        decisions: list[Decision] = []
        for r in sorted(reports, key=lambda r: r.slot):
            m = r.metrics[self.config.metric]
            self.trials[r.trial].update(iteration=r.iteration, metric=None if math.isnan(m) else m)
            if r.iteration >= self.config.iterations:
                self.trials[r.trial]["status"] = "complete"
                decisions.append(Decision("complete", r.trial, r.slot, r.iteration, metric=m))
                out.append((r.slot, self._next(r.slot, decisions)))
            elif self.judge(r, decisions):
                out.append((r.slot, Directive("continue", trial=r.trial, until=self.until(r.iteration),
                                              hparams=dict(r.hparams))))
            else:
                self.trials[r.trial]["status"] = "stopped"
                out.append((r.slot, self._next(r.slot, decisions)))
        return out, decisions

    def summary(self) -> dict[str, Any]:
        c = self.config
        out: dict[str, Any] = {"scheduler": self.name, "trials": len(self.trials),
                               "complete": sum(t["status"] == "complete" for t in self.trials.values())}
        ranked = sorted(self.trials.items(), key=lambda kv: (-kv[1]["iteration"], -score(
            math.nan if kv[1]["metric"] is None else kv[1]["metric"], c.mode), kv[0]))
        if ranked:
            trial, t = ranked[0]
            out.update(best_trial=trial, best_metric=t["metric"], best_hparams=t["hparams"],
                       best_iteration=t["iteration"])
        return out

    def progress(self) -> tuple[int, int, dict[str, float]]:
        ended = sum(t["status"] != "running" for t in self.trials.values())  # (to the budget, or stopped early)
        return ended, self.total, best_figures(self.config.metric, self.summary().get("best_metric"))

    def state(self) -> dict[str, Any]:
        return {"next_trial": self.next_trial, "running": {str(k): v for k, v in self.running.items()},
                "trials": {str(k): dict(v) for k, v in self.trials.items()}}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.next_trial = int(state["next_trial"])
        self.running = {int(k): int(v) for k, v in state["running"].items()}
        self.trials = {int(k): dict(v) for k, v in state["trials"].items()}
