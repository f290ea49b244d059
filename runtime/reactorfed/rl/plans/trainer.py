"""A plan's learner reactor, whatever the plan: it builds the algorithm's learner at
startup (resuming from a checkpoint when asked), learns from the fragments that arrive,
broadcasts its payload while training goes on, and at shutdown saves a checkpoint and
reports its result. The plans differ only in which fragments make an update and in how
the run ends: the synchronous plan's learner (:class:`~reactorfed.rl.plans.sync.SyncTrainer`)
needs every sampler's fragment at each tag and ends by sending no more weights; the
asynchronous one's (:class:`~reactorfed.rl.plans.async_.AsyncTrainer`) learns from what
comes and asks the federation to stop, since its samplers' clocks run on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    MultiReader,
    MultiWriter,
    Output,
    PortWriter,
    Reactor,
    reaction,
)

from ..contracts import Algorithm, Learner, SpaceInfo
from ..rollout import Rollout, unpack_rollout
from ..training import (
    PolicyLag,
    RunConfig,
    TrainingLog,
    end_of_training,
    paused,
    resume_state,
    save_progress,
)
from .sampler_state import CarriedStates

__all__ = ["PlanTrainer"]


class PlanTrainer(Reactor):
    """Stops after ``run.iterations`` updates, or once the last 100 training episodes
    average ``run.target_return``. At shutdown it saves a checkpoint (with
    ``run.checkpoint``) and reports its result (:meth:`~reactorfed.Reactor.report_result`):
    iterations, env steps, returns, when the target was reached, the weights' digest.

    Where a plan connects them, the samplers' states come with their fragments
    (:attr:`sampler_states`; :mod:`~reactorfed.rl.plans.sampler_state`): every checkpoint
    holds those of the round it follows, and a resumed run sends them back on
    :attr:`restore` before its first weights (a plan that connects them says so:
    ``carries_samplers``)."""

    fragments: Input[np.ndarray] = Input(np.ndarray, width="n")
    sampler_states: Input[np.ndarray] = Input(np.ndarray, width="n")
    weights: Output[np.ndarray] = Output(np.ndarray)
    restore: Output[np.ndarray] = Output(np.ndarray, width="n")

    def __init__(self, n: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0, weights_delay: int = 0, carries_samplers: bool = False) -> None:
        """``weights_delay``: the ``after`` of the connection from :attr:`weights` to the
        samplers (0: none or a microstep), for the fragments' policy lag.
        ``carries_samplers``: the plan connects :attr:`sampler_states` and :attr:`restore`."""
        run = run or RunConfig()
        self.n, self.algo, self.space, self.run, self.seed = n, algo, space, run, seed
        self.carries_samplers = carries_samplers
        self.learner: Learner | None = None
        self.log = TrainingLog(run)
        self.lag = PolicyLag(weights_delay, self)
        self.iteration = 0
        self.resumed_from = 0
        self.stats: dict[str, float] = {}
        self.result: dict[str, Any] = {}
        self.carried = CarriedStates(n)  # the samplers' states (where the plan connects them)

    # -- what a plan decides --------------------------------------------------------
    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        """Whether the fragments of this tag (channel, packed) make an update."""
        raise NotImplementedError

    def training_over(self) -> None:
        """Training is over (the last update, or a resumed run with nothing left): no
        more weights go out."""

    def took(self, index: int, rollout: Rollout) -> None:
        """The fragment of channel ``index``, about to be learned from (for a plan to count)."""

    def extra_result(self) -> dict[str, Any]:
        """More of the result (a plan's)."""
        return {}

    def episode_returns(self, rollouts: Sequence[Rollout]) -> Iterable[float]:
        """The returns of the episodes that ended in ``rollouts`` (in channel order), as the
        log counts them: every rollout's, in order (a plan whose channels carry several
        agents of one episode counts each episode once)."""
        return (r for ro in rollouts for r in ro.episode_returns)

    # -- the reactions ----------------------------------------------------------------
    @reaction(triggers=[STARTUP], effects=[weights, restore])
    def start(self, weights: PortWriter[np.ndarray], restore: MultiWriter[np.ndarray]) -> None:
        if self.begin():
            self.carried.send(restore)  # (before the weights, in each sampler)
            self.send(weights)
        else:
            self.training_over()

    def begin(self) -> bool:
        """Build the learner (resuming from a checkpoint when asked) and start the log;
        whether there is training to do (a run resumed after it had finished, or had
        reached its target, has none)."""
        self.learner = learner = self.algo.make_learner(self.space, self.seed)
        self.iteration, state = resume_state(learner, self.run, self.log)
        self.resumed_from = self.iteration
        if self.carries_samplers and self.iteration:
            self.carried.from_checkpoint(state, self.iteration, self.run.checkpoint)
        self.log.start(self.fqn, self.physical_time)
        self.report_progress(self.iteration, self.run.iterations, **self.progress_figures(learner.env_steps))
        return self.iteration < self.run.iterations and not self.log.solved

    @reaction(triggers=[sampler_states])
    def keep_states(self, sampler_states: MultiReader[np.ndarray]) -> None:
        """The samplers' states of this tag's fragments (before they are learned from)."""
        self.carried.arrived(sampler_states.present())

    def progress_figures(self, env_steps: int) -> dict[str, float]:
        """What the learner reports of its progress besides its iteration (a subclass may
        add figures)."""
        return self.log.figures(env_steps)

    def send(self, weights: PortWriter[np.ndarray]) -> None:
        """Send the learner's payload (noting when, for the fragments' policy lag)."""
        assert self.learner is not None
        weights.set(self.learner.payload())
        t = self.elapsed_tag()
        self.lag.sent((t.time, t.microstep), self.iteration)

    @reaction(triggers=[fragments], effects=[weights])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray]) -> None:
        present = fragments.present()
        if not self.take(present):
            return
        if self.update(present):
            self.send(weights)
        else:
            self.training_over()

    def update(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        """One update from the fragments ``present`` (channel, packed; in channel order):
        the log, the progress line, the checkpoint. Whether training goes on."""
        learner = self.learner
        assert learner is not None
        rollouts = [unpack_rollout(packed) for _, packed in present]
        for (i, _), ro in zip(present, rollouts, strict=True):
            self.took(i, ro)
        now = self.elapsed_tag()
        lags = [self.lag.observe(ro.policy_tag, (now.time, now.microstep), self.iteration) for ro in rollouts]
        self.stats = learner.learn(rollouts)
        self.carried.round_over()
        known = [x for x in lags if x is not None]
        extra = {"reactorfed/policy_lag_iterations": sum(known) / len(known)} if known else None
        self.record_update(self.episode_returns(rollouts), extra)
        run = self.run
        if run.checkpoint and run.checkpoint_every and self.iteration % run.checkpoint_every == 0:
            self._save()
        return (self.iteration < run.iterations and not self.log.solved
                and not paused(run, self.iteration, self.resumed_from))

    def record_update(self, returns: Iterable[float], extra: dict[str, float] | None = None) -> None:
        """An update's bookkeeping once the learner has learned (its :attr:`stats`): the
        iteration counted, the episodes' ``returns`` logged, the log's line (with ``extra``),
        the progress report and, every ``progress_every``, the progress line."""
        learner = self.learner
        assert learner is not None
        self.iteration += 1
        self.log.add(returns, self.iteration, learner.env_steps)
        self.log.write(self.iteration, learner.env_steps, self.stats, self.elapsed(), extra)
        run = self.run
        self.report_progress(self.iteration, run.iterations, **self.progress_figures(learner.env_steps))
        if run.progress and self.iteration % run.progress_every == 0:
            self.log.show(self.iteration, learner.env_steps, self.stats)

    def _save(self) -> None:
        assert self.learner is not None
        save_progress(self.learner, self.run, self.iteration, self.log, self.carried.checkpoint_part(self.iteration))

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        assert self.learner is not None
        self.result = end_of_training(self.learner, self.log, self.run, self.iteration, self.resumed_from, self.stats,
                                      self.carried.checkpoint_part(self.iteration))
        self.result.update(self.lag.result())
        self.result.update(self.extra_result())
        self.report_result(self.result)
