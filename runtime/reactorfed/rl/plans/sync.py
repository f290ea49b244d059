"""The synchronous execution plan, as a reactor program: every sampler delivers a fragment,
the learner updates, the weights are broadcast (PPO's plan; RLlib's synchronous sampling).

::

    learner.weights --(after 0, broadcast)--> samplers[i].weights
    samplers[i].fragment ---------------------> learner.fragments[i]

Each round: the learner sends its payload; each of ``num_samplers`` samplers steps its
``num_envs`` environment copies ``fragment_len`` times with it and sends the packed
:class:`~reactorfed.rl.rollout.Rollout`; every fragment arrives at one tag, and the
learner learns from them in sampler order, then sends the new payload one microstep
later. The policy lags by nothing: each fragment is sampled with the weights of the
update before. Logical time orders everything that varies, so a seed fixes the weights
after ``k`` updates in one process and federated alike.

The plan knows nothing of the algorithm: it builds an actor in each sampler and a
learner through an :class:`~reactorfed.rl.contracts.Algorithm` (e.g.
:class:`~reactorfed.rl.PPOConfig`). Both are built in their reactor's startup
reaction, so a federate builds only its own (a sampler process never imports torch).

With ``max_samplers`` the samplers are an elastic bank of 1 to ``max_samplers`` members
(``num_samplers`` at the start) that join and leave while it trains, and the weights reach
them ``period`` later (0: the next microstep). A round's width changes at an agreed tag:
the round is :class:`~reactorfed.rl.plans.elastic_round.ElasticRound`'s, whose fragments
are exactly those of the members present when its weights went out and when they arrived
(:class:`ElasticSyncTrainer`). The update takes them in sampler order, so its batch is as
wide as the round: PPO's minibatches of ``minibatch_size`` rows are cut from the batch's
rows in an order its learner's seeded generator draws each epoch, the last one shorter
when the batch is not a multiple (a round of 1 sampler of 4 copies x 32 rows: one
minibatch of 128; of 3: 256 and 128). The round's width at each tag is the membership's,
so the RTI's record replayed gives the same batches, the same draws, the same weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from reactorfed import (
    STARTUP,
    ActionHandle,
    Bank,
    Elastic,
    LogicalAction,
    MultiReader,
    PortReader,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    elastic_bank,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..rollout import Rollout
from ..training import RunConfig
from .elastic_round import ElasticRound
from .learner_wait import LearnerWait, late_by
from .sampler import PlanSampler, sampler_seed
from .trainer import PlanTrainer

__all__ = ["ElasticSyncSampler", "ElasticSyncTrainer", "SyncPlan", "SyncSampler", "SyncTrainer", "sampler_seed"]


class SyncSampler(PlanSampler):
    """Steps ``num_envs`` copies of ``env`` for ``fragment_len`` rows each time weights arrive."""

    @reaction(triggers=[PlanSampler.weights], effects=[PlanSampler.fragment, PlanSampler.state])
    def collect(self, weights: PortReader[np.ndarray], fragment: PortWriter[np.ndarray],
                state: PortWriter[np.ndarray]) -> None:
        self.load(weights.get())
        fragment.set(self.sample())
        self.send_state(state)


class SyncTrainer(PlanTrainer):
    """Learns from every sampler's fragment at once, then broadcasts its payload (see
    :class:`~reactorfed.rl.plans.trainer.PlanTrainer` for the rest). Its checkpoints hold
    the samplers' states where the plan connects them (``carries_samplers``): a resumed run
    is then the run that would have happened."""

    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        # the plan's invariant: every sampler's fragment arrives at the tag of the round
        assert len(present) == self.n, f"{len(present)} of {self.n} fragments at one tag"
        return True


class ElasticSyncSampler(SyncSampler):
    """A :class:`SyncSampler` that is a member of an elastic bank: it reports the env steps
    it sent after each fragment (a member that leaves runs no shutdown reaction)."""

    @reaction(triggers=[PlanSampler.weights], effects=[PlanSampler.fragment])
    def collect(self, weights: PortReader[np.ndarray], fragment: PortWriter[np.ndarray]) -> None:
        self.load(weights.get())
        fragment.set(self.sample())
        self.report_result({"samples": self.transitions})


class ElasticSyncTrainer(PlanTrainer):
    """The synchronous plan's learner when its samplers are the members of the main
    reactor's elastic bank ``bank`` (``n`` slots, its maximum width), its weights reaching
    them ``period`` later: each round learns from the fragments of the members present
    (:class:`~reactorfed.rl.plans.elastic_round.ElasticRound`). Its result adds
    ``incomplete_iterations`` (rounds whose fragments were not those of the members asked
    and still present: none in a correct run) and the round's part: ``samples_by_member``,
    ``membership``, ``rounds_asked_again``, ``change_gaps_ms``."""

    round_end: LogicalAction[object] = LogicalAction(object)

    def __init__(self, bank: str, n: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0, period: int = 0) -> None:
        super().__init__(n, algo, space, run=run, seed=seed, weights_delay=period)
        self.rounds = ElasticRound(bank, period, timeline=self.run.timeline)
        self.wait = LearnerWait(self.physical_time)  # (measured for autoscaling; training never reads it)
        self.incomplete_iterations = 0

    def _ask(self, now: tuple[int, ...], weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        self.send(weights)
        self.rounds.ask(now, round_end)

    @reaction(triggers=[STARTUP], effects=[PlanTrainer.weights, round_end])
    def start(self, weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        now = self.rounds.look(self)
        if self.begin():
            self._ask(now, weights, round_end)
        else:
            self.training_over()

    @reaction(triggers=[PlanTrainer.fragments, round_end], effects=[PlanTrainer.weights, round_end])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray],
              round_end: ActionHandle) -> None:
        present = fragments.present()
        if present:  # (rounds timed by ``period``: waiting for the clock is not waiting for samples)
            self.wait.working(late_by(self) if self.rounds.period else None)
        now, complete = self.rounds.end(self, present, round_end, lambda: self.send(weights))
        if not complete:
            self.incomplete_iterations += 1  # (a fragment missing, or one not asked for)
        if not present:  # every member asked left before the weights arrived: asked again
            return
        self.rounds.row(self, [i for i, _ in present])
        if self.update(present):
            self._ask(now, weights, round_end)
        else:
            self.training_over()

    def progress_figures(self, env_steps: int) -> dict[str, float]:
        return {**super().progress_figures(env_steps), **self.wait.figures()}

    def took(self, index: int, rollout: Rollout) -> None:
        self.rounds.took(index, rollout.transitions)

    def extra_result(self) -> dict[str, Any]:
        return {"incomplete_iterations": self.incomplete_iterations, **self.rounds.result()}


class SyncPlan(Reactor):
    """The synchronous plan for ``algo`` on ``env``: ``num_samplers`` samplers of ``num_envs``
    copies, ``fragment_len`` rows each per round, one learner. A federated run puts each
    sampler and the learner in its own process (they are the main reactor's children).
    ``backend`` steps the samplers' copies (:mod:`~reactorfed.rl.envs.backends`).

    With ``max_samplers`` (> 0) the samplers are an elastic bank of 1 to ``max_samplers``,
    ``num_samplers`` at the start, its weights reaching them ``period`` later (see the
    module).

    Subclass it for a program with its own settings (``super().__init__(...)``)."""

    def __init__(self, algo: Algorithm, env: str, *, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", max_samplers: int = 0, period: int = 0) -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len)):
            if not isinstance(value, int) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        space = SpaceInfo.of_env(env)
        seeds = each(lambda i: sampler_seed(seed, i))
        if max_samplers:
            if not isinstance(max_samplers, int) or max_samplers < num_samplers:
                raise ValidationError(
                    f"{self.fqn}: max_samplers must be an int >= num_samplers ({num_samplers}), got {max_samplers!r}")
            if not isinstance(period, int) or period < 0:
                raise ValidationError(f"{self.fqn}: period must be an int >= 0 (ns), got {period!r}")
            width = Elastic(min=1, max=max_samplers, initial=num_samplers)
            self.samplers: Bank[SyncSampler] = elastic_bank(ElasticSyncSampler, width, algo, env, space, num_envs,
                                                            fragment_len, seed=seeds, backend=backend)
            self.learner: PlanTrainer = ElasticSyncTrainer("samplers", max_samplers, algo, space, run=run, seed=seed,
                                                           period=period)
            self.connect(self.samplers.fragment, self.learner.fragments)
            self.connect(self.learner.weights, self.samplers.weights, after=period, broadcast=True)
            return
        # with checkpoints, each sampler's state goes to the learner with its fragment, and
        # back to it on a resume (at the tag of the first weights, before them)
        snapshots = bool(run is not None and run.checkpoint)
        self.samplers = bank(SyncSampler, num_samplers, algo, env, space, num_envs, fragment_len, seed=seeds,
                             backend=backend, snapshots=snapshots)
        self.learner = SyncTrainer(num_samplers, algo, space, run=run, seed=seed, carries_samplers=snapshots)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
        if snapshots:
            self.connect(self.samplers.state, self.learner.sampler_states)
            self.connect(self.learner.restore, self.samplers.restore, after=0)
