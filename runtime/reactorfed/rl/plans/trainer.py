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

from collections.abc import Sequence
from typing import Any

import numpy as np

from reactorfed import SHUTDOWN, STARTUP, Input, MultiReader, Output, PortWriter, Reactor, reaction

from ..contracts import Algorithm, Learner, SpaceInfo
from ..rollout import Rollout, unpack_rollout
from ..training import (
    PolicyLag,
    RunConfig,
    TrainingLog,
    end_of_training,
    resume_from_checkpoint,
    save_progress,
)

__all__ = ["PlanTrainer"]


class PlanTrainer(Reactor):
    """Stops after ``run.iterations`` updates, or once the last 100 training episodes
    average ``run.target_return``. At shutdown it saves a checkpoint (with
    ``run.checkpoint``) and reports its result (:meth:`~reactorfed.Reactor.report_result`):
    iterations, env steps, returns, when the target was reached, the weights' digest."""

    fragments: Input[np.ndarray] = Input(np.ndarray, width="n")
    weights: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, n: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0, weights_delay: int = 0) -> None:
        """``weights_delay``: the ``after`` of the connection from :attr:`weights` to the
        samplers (0: none or a microstep), for the fragments' policy lag."""
        run = run or RunConfig()
        self.n, self.algo, self.space, self.run, self.seed = n, algo, space, run, seed
        self.learner: Learner | None = None
        self.log = TrainingLog(run)
        self.lag = PolicyLag(weights_delay, self)
        self.iteration = 0
        self.resumed_from = 0
        self.stats: dict[str, float] = {}
        self.result: dict[str, Any] = {}

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

    # -- the reactions ----------------------------------------------------------------
    @reaction(triggers=[STARTUP], effects=[weights])
    def start(self, weights: PortWriter[np.ndarray]) -> None:
        if self.begin():
            self.send(weights)
        else:
            self.training_over()

    def begin(self) -> bool:
        """Build the learner (resuming from a checkpoint when asked) and start the log;
        whether there is training to do (a run resumed after it had finished has none)."""
        self.learner = learner = self.algo.make_learner(self.space, self.seed)
        self.iteration = self.resumed_from = resume_from_checkpoint(learner, self.run, self.log)
        self.log.start(self.fqn, self.physical_time)
        self.report_progress(self.iteration, self.run.iterations, **self.progress_figures(learner.env_steps))
        return self.iteration < self.run.iterations

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
        self.iteration += 1
        self.log.add((r for ro in rollouts for r in ro.episode_returns), self.iteration, learner.env_steps)
        known = [x for x in lags if x is not None]
        extra = {"reactorfed/policy_lag_iterations": sum(known) / len(known)} if known else None
        self.log.write(self.iteration, learner.env_steps, self.stats, self.elapsed(), extra)
        run = self.run
        self.report_progress(self.iteration, run.iterations, **self.progress_figures(learner.env_steps))
        if run.progress and self.iteration % run.progress_every == 0:
            self.log.show(self.iteration, learner.env_steps, self.stats)
        if run.checkpoint and run.checkpoint_every and self.iteration % run.checkpoint_every == 0:
            self._save()
        return self.iteration < run.iterations and not self.log.solved

    def _save(self) -> None:
        assert self.learner is not None
        save_progress(self.learner, self.run, self.iteration, self.log)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        assert self.learner is not None
        self.result = end_of_training(self.learner, self.log, self.run, self.iteration, self.resumed_from, self.stats)
        self.result.update(self.lag.result())
        self.result.update(self.extra_result())
        self.report_result(self.result)
