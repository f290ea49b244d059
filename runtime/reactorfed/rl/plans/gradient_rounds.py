"""What the data-parallel and the parameter-server plans share: a round's header (a
learner's transitions and finished episodes), the average of the learners' gradients in
a fixed order, each share's minibatch generator, and :class:`GradientRounds`, the reactor
that runs training one round of averaged gradient steps at a time (a data-parallel
learner, or the parameter server).

The average is the one thing that must come out bit for bit the same wherever it is
taken: :func:`mean_gradient` adds the gradients in learner order, in float32, then
divides by their number, so every learner (or the server) that holds the same gradients
gets the same bits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from reactorfed import SHUTDOWN, Input, MultiReader, Output, Reactor, ValidationError, reaction

from ..contracts import Algorithm, GradientLearner, SpaceInfo
from ..rollout import Rollout
from ..training import (
    PolicyLag,
    RunConfig,
    TrainingLog,
    end_of_training,
    learner_result,
    paused,
    resume_state,
    save_progress,
)
from .sampler_state import CarriedStates

__all__ = ["GradientRounds", "channel_values", "check_widths", "gradient_learner", "mean_gradient", "read_headers", "round_header", "round_rng"]


def check_widths(who: str, **widths: object) -> None:
    """Each of ``widths`` an int >= 1, else a :class:`ValidationError` naming it."""
    for name, value in widths.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValidationError(f"{who}: {name} must be an int >= 1, got {value!r}")


def channel_values(ports: MultiReader[np.ndarray], width: int, what: str) -> list[np.ndarray]:
    """Every channel's value at this tag, in channel order."""
    present = ports.present()
    # the plan's invariant: every channel's value arrives at the step's tag
    assert len(present) == width, f"{len(present)} of {width} {what} at one tag"
    return [v for _, v in present]


def mean_gradient(grads: Sequence[np.ndarray]) -> np.ndarray:
    """The mean of ``grads`` (float32), summed in the order given: the learners' order."""
    total = np.array(grads[0], dtype=np.float32, copy=True)
    for g in grads[1:]:
        total += g
    total /= np.float32(len(grads))
    return total


def round_header(transitions: int, rollouts: Sequence[Rollout]) -> np.ndarray:
    """A learner's share of a round, for the others (or the server): its transitions, then
    the returns of the episodes that finished in it, in its samplers' order (float64)."""
    return np.array([transitions, *(r for ro in rollouts for r in ro.episode_returns)], dtype=np.float64)


def read_headers(headers: Sequence[np.ndarray]) -> tuple[list[int], list[float]]:
    """Every learner's transitions, and the returns of all of them, in learner order."""
    return [int(h[0]) for h in headers], [float(r) for h in headers for r in h[1:]]


def round_rng(seed: int, share: int, iteration: int) -> np.random.Generator:
    """The generator of share ``share``'s minibatch orders in round ``iteration``: a function
    of the three, so nothing of it needs saving, and a resumed run draws what it would have."""
    return np.random.default_rng([seed, share, iteration])


def gradient_learner(algo: Algorithm, space: SpaceInfo, seed: int, who: str) -> GradientLearner:
    """``algo``'s learner, which must take its update a gradient step at a time."""
    learner = algo.make_learner(space, seed)
    if not isinstance(learner, GradientLearner):
        raise ValidationError(f"{who}: {type(learner).__name__} cannot take an update a gradient step at a time "
                              "(it is no reactorfed.rl.contracts.GradientLearner); PPO's can")
    # a subclass with an update of its own (APPO's V-trace over PPOLearner) would inherit
    # its parent's gradient steps: other steps than its learn() takes
    mro = type(learner).__mro__
    owner = {name: next(c for c in mro if name in vars(c)) for name in ("learn", "prepare")}
    if owner["learn"] is not owner["prepare"] and issubclass(owner["learn"], owner["prepare"]):
        raise ValidationError(f"{who}: {type(learner).__name__} has an update of its own (learn) but the gradient "
                              f"steps of {owner['prepare'].__name__}: it cannot run a gradient step at a time")
    return learner


class GradientRounds(Reactor):
    """A reactor that holds the optimizer and trains one round at a time, a round being a
    sequence of averaged gradient steps: :meth:`begin` at startup, :meth:`plan_round` once
    every share's header is in, :meth:`apply` for each average, :meth:`end_round` after the
    last. The ``lead`` writes the checkpoint (``run.checkpoint``) and shows progress; all
    resume from it. Stops after ``run.iterations`` rounds or once the last 100 training
    episodes (of every share) average ``run.target_return``. With ``trace``, the result
    carries ``step_digests_sha256``, a hash of the weights' digest after every step.

    With ``carried`` (> 0: the lead, where the plan connects every sampler's :attr:`sampler_states`
    and :attr:`restore`) its checkpoints hold the states of that many samplers, sent back on
    a resume before the first weights (:class:`~reactorfed.rl.plans.sampler_state.CarriedStates`)."""

    sampler_states: Input[np.ndarray] = Input(np.ndarray, width="carried_width")
    restore: Output[np.ndarray] = Output(np.ndarray, width="carried_width")

    def __init__(self, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None, seed: int = 0,
                 lead: bool = True, trace: bool = False, carried: int = 0) -> None:
        self.algo, self.space, self.run, self.seed = algo, space, run or RunConfig(), seed
        self.carried_width = carried
        self.carried = CarriedStates(carried)
        self.lead, self.trace = lead, trace
        self.learner: GradientLearner | None = None
        self.log = TrainingLog(self.run)
        self.iteration = self.resumed_from = 0
        self.planned = self.steps_done = 0
        self.returns: list[float] = []
        self.stats: dict[str, float] = {}
        self.result: dict[str, Any] = {}
        self.trail = hashlib.sha256()
        self.lag = PolicyLag(owner=self)

    def sent_weights(self) -> None:
        """Weights went out to the samplers now (for the policy lag of what they send back)."""
        t = self.elapsed_tag()
        self.lag.sent((t.time, t.microstep), self.iteration)

    def took(self, rollouts: Sequence[Rollout]) -> None:
        """This round's fragments arrived: their policy lag."""
        t = self.elapsed_tag()
        for ro in rollouts:
            self.lag.observe(ro.policy_tag, (t.time, t.microstep), self.iteration)

    def begin(self) -> bool:
        """Build the learner (resumed from the checkpoint when asked); whether training goes on."""
        self.learner = gradient_learner(self.algo, self.space, self.seed, self.fqn)
        self.iteration, state = resume_state(self.learner, self._shown(), self.log)
        self.resumed_from = self.iteration
        if self.carried_width and self.iteration:
            self.carried.from_checkpoint(state, self.iteration, self.run.checkpoint)
        self.log.start(self.fqn, self.physical_time)
        self._report()
        return self.iteration < self.run.iterations and not self.log.solved

    def _report(self) -> None:
        """The lead's progress report (the others' would repeat it)."""
        if self.lead:
            assert self.learner is not None
            self.report_progress(self.iteration, self.run.iterations, **self.log.figures(self.learner.env_steps))

    def _shown(self) -> RunConfig:
        return self.run if self.lead else replace(self.run, progress=False)

    def plan_round(self, headers: Sequence[np.ndarray], rng: np.random.Generator | None) -> None:
        """Every share's header is in (learner order): the round's steps are planned."""
        assert self.learner is not None
        counts, self.returns = read_headers(headers)
        self.planned, self.steps_done = self.learner.plan_update(counts, rng), 0

    def apply(self, mean: np.ndarray) -> bool:
        """One averaged step; whether another one follows in this round."""
        assert self.learner is not None
        if not self.learner.apply_gradient(mean):
            return False
        self.steps_done += 1
        if self.trace:
            self.trail.update(self.learner.digest().encode())
        return self.steps_done < self.planned

    def end_round(self) -> bool:
        """The round's bookkeeping; whether another round follows."""
        learner = self.learner
        assert learner is not None
        self.stats = learner.finish_update()
        self.iteration += 1
        self.carried.round_over()  # (the states of this round's fragments are all in: they came with them)
        self.log.add(self.returns, self.iteration, learner.env_steps)
        self.log.write(self.iteration, learner.env_steps, self.stats, self.elapsed())
        run = self.run
        self._report()
        if self.lead and run.progress and self.iteration % run.progress_every == 0:
            self.log.show(self.iteration, learner.env_steps, self.stats)
        if self.lead and run.checkpoint and run.checkpoint_every and self.iteration % run.checkpoint_every == 0:
            save_progress(learner, run, self.iteration, self.log, self.carried.checkpoint_part(self.iteration))
        return (self.iteration < run.iterations and not self.log.solved
                and not paused(run, self.iteration, self.resumed_from))

    @reaction(triggers=[sampler_states])
    def keep_states(self, sampler_states: MultiReader[np.ndarray]) -> None:
        """The samplers' states of this round's fragments."""
        self.carried.arrived(sampler_states.present())

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        learner = self.learner
        assert learner is not None
        if self.lead:
            self.result = end_of_training(learner, self.log, self.run, self.iteration, self.resumed_from, self.stats,
                                          self.carried.checkpoint_part(self.iteration))
        else:
            self.result = {**learner_result(learner, self.log, self.run, self.iteration, self.resumed_from),
                           "checkpoint": ""}  # (the lead's alone is written)
        if self.trace:
            self.result["step_digests_sha256"] = self.trail.hexdigest()
        self.result.update(self.lag.result())
        self.result.update(self.extra_result())
        self.report_result(self.result)

    def extra_result(self) -> dict[str, Any]:
        """More of the result (a subclass's)."""
        return {}
