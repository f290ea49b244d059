"""Population-based training (Jaderberg et al. 2017, "Population based training of neural
networks"), synchronous in logical time: every ``perturbation_interval`` learner
iterations each trial reports and waits; once the whole population has reported for that
iteration (a round), the trials are ranked by the metric, each of the worst
``quantile_fraction`` takes the weights and optimizer state of one of the best (exploit)
and a perturbation of that trial's hyperparameters (explore), and all carry on.

Ray Tune's PBT (and Sample Factory's) decides when a trial reports, against the others'
latest results: who exploits whom then depends on which trial ran faster. Here a round is
the set of reports for one iteration, so the decision depends only on the reports; its
draws come from a generator seeded by the tuner's seed and the round. Ties rank by slot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from reactorfed import ValidationError

from .contracts import TRIAL_METRICS, Directive, Report, best_figures, trial_seed
from .record import Decision
from .space import SearchSpace, Value

__all__ = ["PBT", "PBTConfig", "score"]


@dataclass(frozen=True)
class PBTConfig:
    """PBT's settings, named as Ray Tune's ``PopulationBasedTraining``."""

    #: trials trained at once (one slot each)
    population: int = 4
    #: learner iterations between rounds
    perturbation_interval: int = 10
    #: each trial's budget, in learner iterations
    iterations: int = 100
    #: the share of the population that exploits (the worst) and is exploited (the best)
    quantile_fraction: float = 0.25
    #: the chance that explore draws a value afresh rather than perturbing it
    resample_probability: float = 0.25
    #: explore multiplies a value by one of these
    perturbation_factors: tuple[float, float] = (0.8, 1.2)
    #: what ranks the trials (one of :data:`~reactorfed.rl.tune.contracts.TRIAL_METRICS`)
    metric: str = "mean_return_100"
    mode: Literal["max", "min"] = "max"
    #: stop the population at the first round whose best trial reaches this (None: never)
    target: float | None = None

    def check(self, field: str = "pbt", max_trials: int | None = None) -> None:
        """Refuse settings that cannot run, naming the field (``field.NAME``)."""
        def bad(name: str, why: str) -> ValidationError:
            return ValidationError(f"{field}.{name}: {why}")

        if not isinstance(self.population, int) or self.population < 2:
            raise bad("population", f"a population needs at least 2 trials, got {self.population!r}")
        if max_trials is not None and self.population > max_trials:
            raise bad("population", f"{self.population} trials is more than the trials' bank holds "
                                    f"(max_trials = {max_trials})")
        for name in ("perturbation_interval", "iterations"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise bad(name, f"must be an int >= 1, got {value!r}")
        if not 0.0 < self.quantile_fraction <= 0.5:
            raise bad("quantile_fraction", f"must lie in (0, 0.5], got {self.quantile_fraction}")
        if not 0.0 <= self.resample_probability <= 1.0:
            raise bad("resample_probability", f"must lie in [0, 1], got {self.resample_probability}")
        if not self.perturbation_factors or any(not (f > 0 and math.isfinite(f)) for f in self.perturbation_factors):
            raise bad("perturbation_factors", f"must be positive numbers, got {self.perturbation_factors}")
        if self.metric not in TRIAL_METRICS:
            raise bad("metric", f"the trials do not report {self.metric!r}; they report {', '.join(TRIAL_METRICS)}")
        if self.mode not in ("max", "min"):
            raise bad("mode", f"must be max or min, got {self.mode!r}")


def score(metric: float, mode: str) -> float:
    """Higher is better; NaN (no episode finished yet) is the worst."""
    if math.isnan(metric):
        return -math.inf
    return metric if mode == "max" else -metric


class PBT:
    """The decision rule (a :class:`~reactorfed.rl.tune.contracts.Scheduler`): slot ``s``
    runs trial ``s`` throughout."""

    wants_state = True
    explores = True

    def __init__(self, config: PBTConfig, space: SearchSpace, seed: int = 0) -> None:
        self.config, self.space, self.seed = config, space, seed
        self.hparams: dict[int, dict[str, Value]] = {}
        self.pending: dict[int, Report] = {}
        self.round = 0
        self.best: tuple[int, float, dict[str, Value]] | None = None  # (trial, metric, hparams) at the last round
        self.solved_at: int | None = None

    @property
    def slots(self) -> int:
        return self.config.population

    @property
    def iterations(self) -> int:
        return self.config.iterations

    def check(self, max_trials: int) -> None:
        self.config.check("pbt", max_trials)

    def _until(self, iteration: int) -> int:
        return min(iteration + self.config.perturbation_interval, self.config.iterations)

    def begin(self, slots: int) -> tuple[list[tuple[int, Directive]], list[Decision]]:
        out, decisions = [], []
        for s in range(self.config.population):
            hp = self.space.sample(np.random.default_rng([self.seed, 1, s]))
            self.hparams[s] = hp
            out.append((s, Directive("start", trial=s, until=self._until(0), hparams=hp,
                                     seed=trial_seed(self.seed, s))))
            decisions.append(Decision("start", s, s, 0, hparams=hp))
        return out, decisions

    def decide(self, reports: Sequence[Report]) -> tuple[list[tuple[int, Directive]], list[Decision]]:
        for r in reports:
            self.pending[r.slot] = r
        c = self.config
        if len(self.pending) < c.population:
            return [], []
        reps = [self.pending[s] for s in range(c.population)]
        self.pending = {}
        iteration = reps[0].iteration
        assert all(r.iteration == iteration for r in reps), [r.iteration for r in reps]
        self.round += 1
        ranked = sorted(range(c.population), key=lambda s: (-score(reps[s].metrics[c.metric], c.mode), s))
        best = reps[ranked[0]]
        self.best = (best.trial, best.metrics[c.metric], dict(best.hparams))
        decisions = [Decision("rank", best.trial, ranked[0], iteration, metric=best.metrics[c.metric],
                              ranking=[reps[s].trial for s in ranked])]
        solved = c.target is not None and score(best.metrics[c.metric], c.mode) >= score(c.target, c.mode)
        if solved and self.solved_at is None:
            self.solved_at = iteration
        if iteration >= c.iterations or solved:
            for s, r in enumerate(reps):
                decisions.append(Decision("complete", r.trial, s, iteration, metric=r.metrics[c.metric]))
            return [(s, Directive("stop", trial=reps[s].trial)) for s in range(c.population)], decisions
        n = min(max(1, math.ceil(c.population * c.quantile_fraction)), c.population // 2)
        top, bottom = ranked[:n], set(ranked[-n:])
        rng = np.random.default_rng([self.seed, 2, self.round])
        out: list[tuple[int, Directive]] = []
        until = self._until(iteration)
        for s, r in enumerate(reps):
            m = r.metrics[c.metric]
            if s not in bottom:
                out.append((s, Directive("continue", trial=r.trial, until=until, hparams=dict(r.hparams))))
                decisions.append(Decision("keep", r.trial, s, iteration, metric=m))
                continue
            donor = reps[top[int(rng.integers(n))]]
            hp = self.space.perturb(donor.hparams, rng, c.perturbation_factors, c.resample_probability)
            self.hparams[s] = hp
            assert donor.state is not None, "PBT's reports carry the learner state"
            out.append((s, Directive("continue", trial=r.trial, until=until, hparams=hp, state=donor.state,
                                     donor=donor.trial)))
            decisions.append(Decision("exploit", r.trial, s, iteration, metric=m, hparams=hp,
                                      before=dict(r.hparams), donor=donor.trial))
        return out, decisions

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scheduler": "pbt", "rounds": self.round}
        if self.best is not None:
            trial, metric, hp = self.best
            out.update(best_trial=trial, best_metric=None if math.isnan(metric) else metric, best_hparams=hp)
        if self.config.target is not None:
            out.update(target=self.config.target, solved_at_iteration=self.solved_at)
        return out

    def progress(self) -> tuple[int, int, dict[str, float]]:
        c = self.config
        return (min(self.round * c.perturbation_interval, c.iterations), c.iterations,
                best_figures(c.metric, self.best[1] if self.best else None))

    def state(self) -> dict[str, Any]:
        return {"hparams": {str(k): v for k, v in self.hparams.items()}, "round": self.round,
                "pending": [r.wire() for r in self.pending.values()],
                "best": list(self.best) if self.best else None, "solved_at": self.solved_at}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.hparams = {int(k): dict(v) for k, v in state["hparams"].items()}
        self.round = int(state["round"])
        self.pending = {r.slot: r for r in (Report.of(d) for d in state["pending"])}
        best = state.get("best")
        self.best = (int(best[0]), float(best[1]), dict(best[2])) if best else None
        self.solved_at = state.get("solved_at")
