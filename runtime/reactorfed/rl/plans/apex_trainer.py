"""The asynchronous-replay plan's learner reactor (:mod:`reactorfed.rl.plans.apex` has the
schedule): every ``learn_period`` of logical time it learns from the batch its replay
shards drew for this tick, sends each shard the new priorities of its transitions, asks
every shard for its share of the batch of a later tick, and every ``weights_every``
updates broadcasts its weights to the samplers.

A batch is drawn over the union of the shards, proportionally: the learner splits each
request over the shards in proportion to their total priority mass as they last reported
it (largest remainders, ties to the lower shard), and weighs each draw by the probability
it was actually drawn with, ``P(i) = (n_s / B) * p_i^alpha / T_s`` (``n_s`` of the ``B``
draws from shard ``s``, whose mass was ``T_s`` when it drew), so the importance weights
``(N * P(i))^-beta / max`` stay right even when the split is out of date.

It stops after ``run.iterations`` updates, or once the last 100 training episodes (which
the samplers report) average ``run.target_return``, and asks the federation to stop; what
still arrives after that is not learned from. At shutdown it saves a checkpoint and
reports its result, as the other plans' learners do
(:class:`~reactorfed.rl.plans.trainer.PlanTrainer`).
"""

from __future__ import annotations

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
    Timer,
    reaction,
)

from ..contracts import SpaceInfo
from ..replay.contracts import ReplayAlgorithm, ReplayBatch, ReplayConfig, ReplayLearner
from ..replay.prioritized import annealed_beta, importance_weights
from ..replay.shard import ShardReply, pack_priorities, unpack_reply
from ..training import (
    PolicyLag,
    RunConfig,
    TrainingLog,
    end_of_training,
    paused,
    resume_from_checkpoint,
    save_progress,
)
from .elastic_round import ElasticRound

__all__ = ["ApexTrainer", "ElasticApexTrainer", "draw_probabilities", "split_batch"]


def split_batch(batch_size: int, totals: np.ndarray) -> np.ndarray:
    """``batch_size`` draws split over shards in proportion to ``totals`` (their priority
    masses): the floors of the quotas, then one more to the largest remainders (ties to
    the lower index). All zeros when every total is 0."""
    t = np.asarray(totals, dtype=np.float64)
    if t.sum() <= 0:
        return np.zeros(len(t), dtype=np.int64)
    quota = batch_size * t / t.sum()
    counts = np.floor(quota).astype(np.int64)
    left = batch_size - int(counts.sum())
    order = np.argsort(-(quota - counts), kind="stable")
    counts[order[:left]] += 1
    return counts


def draw_probabilities(replies: list[ShardReply]) -> np.ndarray:
    """The probability each draw of a batch had, in shard order: ``(n_s / B) * p_i / T_s``
    for a draw of mass ``p_i`` among the ``n_s`` of ``B`` from shard ``s`` (mass ``T_s``)."""
    drawn = sum(len(r.ids) for r in replies)
    parts = [len(r.ids) / drawn * r.masses / r.total for r in replies if len(r.ids)]
    return np.concatenate(parts) if parts else np.zeros(0)


class ApexTrainer(Reactor):
    """Learns every ``learn_period`` from the batch its ``num_shards`` shards drew
    ``prefetch`` ticks before; see the module's docstring."""

    batches: Input[np.ndarray] = Input(np.ndarray, width="num_shards")
    episodes: Input[np.ndarray] = Input(np.ndarray, width="num_samplers")
    request: Output[np.ndarray] = Output(np.ndarray, width="num_shards")
    priorities: Output[np.ndarray] = Output(np.ndarray, width="num_shards")
    weights: Output[np.ndarray] = Output(np.ndarray)
    tick = Timer(offset=0, period="learn_period")

    def __init__(self, num_samplers: int, num_shards: int, algo: ReplayAlgorithm, space: SpaceInfo,
                 replay: ReplayConfig, *, learn_period: int, weights_every: int, run: RunConfig | None = None,
                 seed: int = 0, weights_delay: int = 0) -> None:
        run = run or RunConfig()
        self.num_samplers, self.num_shards, self.algo, self.space = num_samplers, num_shards, algo, space
        self.replay, self.learn_period, self.weights_every = replay, learn_period, weights_every
        self.run, self.seed = run, seed
        self.learner: ReplayLearner | None = None
        self.log = TrainingLog(run)
        self.iteration = self.resumed_from = 0
        self.done = False
        #: what the shards last reported: transitions held, total priority mass
        self.held = np.zeros(num_shards, dtype=np.int64)
        self.totals = np.zeros(num_shards, dtype=np.float64)
        self.stats: dict[str, float] = {}
        self.result: dict[str, Any] = {}
        self.lag = PolicyLag(weights_delay, self)  # of every transition trained on

    @reaction(triggers=[STARTUP], effects=[weights])
    def start(self, weights: PortWriter[np.ndarray]) -> None:
        self.learner = learner = self.algo.make_learner(self.space, self.seed)
        run = self.run
        self.iteration = self.resumed_from = resume_from_checkpoint(learner, run, self.log)
        self.log.start(self.fqn, self.physical_time)
        self.report_progress(self.iteration, run.iterations, **self.log.figures(learner.env_steps))
        if self.iteration < run.iterations and not self.log.solved:
            self._send(weights)
        else:  # a run resumed after it had finished (or reached its target): nothing left to do
            self._over()

    def _over(self) -> None:
        self.done = True
        self.request_stop()

    # declared before step: the episodes of a tick count before its update
    @reaction(triggers=[episodes])
    def record(self, episodes: MultiReader[np.ndarray]) -> None:
        learner = self.learner
        assert learner is not None
        if self.done:  # still under way when the stop was asked
            for i, rec in episodes.present():
                self._late(i, int(rec[0]))
            return
        for i, rec in episodes.present():  # [env steps, the returns of the episodes that ended]
            self._took(i, int(rec[0]))
            learner.env_steps += int(rec[0])
            self.log.add((float(r) for r in rec[1:]), self.iteration, learner.env_steps)
        # (env steps count before the first update too: while the replay fills)
        self.report_progress(self.iteration, self.run.iterations, **self.log.figures(learner.env_steps))
        if self.log.solved:
            self._over()

    @reaction(triggers=[tick, batches], effects=[request, priorities, weights])
    def step(self, batches: MultiReader[np.ndarray], request: MultiWriter[np.ndarray],
             priorities: MultiWriter[np.ndarray], weights: PortWriter[np.ndarray]) -> None:
        if self.done:
            return
        present = batches.present()
        if present:
            # every shard answers every request, at the tick the plan's delays fix
            if len(present) != self.num_shards:
                raise RuntimeError(f"{self.fqn}: {len(present)} of {self.num_shards} shards answered at one tick")
            replies = [unpack_reply(rec) for _, rec in present]
            self.held[:] = [r.held for r in replies]
            self.totals[:] = [r.total for r in replies]
            if any(len(r.ids) for r in replies):
                self._learn(replies, priorities, weights)
        if not self.done:
            counts = (split_batch(self.replay.batch_size, self.totals)
                      if self.held.sum() >= max(self.replay.learning_starts, 1) else np.zeros(self.num_shards, np.int64))
            for s in range(self.num_shards):
                request[s].set(counts[s : s + 1].copy())

    def _learn(self, replies: list[ShardReply], priorities: MultiWriter[np.ndarray], weights: PortWriter[np.ndarray]) -> None:
        learner = self.learner
        assert learner is not None
        self._updating()
        probs = draw_probabilities(replies)
        beta = annealed_beta(self.replay.beta0, self.replay.beta_steps, learner.updates)
        w = importance_weights(probs, int(self.held.sum()), beta)
        rows = np.concatenate([r.rows for r in replies if len(r.ids)])
        now = self.elapsed_tag()
        self.lag.observe_rows(rows["policy_time"], rows["policy_microstep"], (now.time, now.microstep),
                              self.iteration)
        self.stats, td = learner.learn(ReplayBatch.of_rows(rows, w))
        self.stats["beta"] = beta
        at = 0
        for s, r in enumerate(replies):
            if len(r.ids):
                priorities[s].set(pack_priorities(r.ids, td[at : at + len(r.ids)]))
                at += len(r.ids)
        self.iteration += 1
        self.log.write(self.iteration, learner.env_steps, self.stats, self.elapsed())
        run = self.run
        self.report_progress(self.iteration, run.iterations, **self.log.figures(learner.env_steps))
        if run.progress and self.iteration % run.progress_every == 0:
            self.log.show(self.iteration, learner.env_steps, self.stats)
        if run.checkpoint and run.checkpoint_every and self.iteration % run.checkpoint_every == 0:
            self._save()
        if self.iteration >= run.iterations or paused(run, self.iteration, self.resumed_from):
            self._over()
        elif self.iteration % self.weights_every == 0:
            self._send(weights)

    def _send(self, weights: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        weights.set(self.learner.payload())
        t = self.elapsed_tag()
        self.lag.sent((t.time, t.microstep), self.iteration)

    def _save(self) -> None:
        assert self.learner is not None
        save_progress(self.learner, self.run, self.iteration, self.log)

    def _updating(self) -> None:
        """An update begins (for a subclass to note)."""

    def _took(self, index: int, steps: int) -> None:
        """Sampler ``index`` reported ``steps`` env steps (for a subclass to count)."""

    def _late(self, index: int, steps: int) -> None:
        """Sampler ``index`` reported ``steps`` env steps after the stop was asked (not
        counted in the result's; for a subclass to count apart)."""

    def _extra_result(self) -> dict[str, Any]:
        """More of the result (a subclass's)."""
        return {}

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        assert self.learner is not None
        self.result = end_of_training(self.learner, self.log, self.run, self.iteration, self.resumed_from, self.stats)
        self.result.update(self.lag.result())
        self.result.update(self._extra_result())
        self.report_result(self.result)


class ElasticApexTrainer(ApexTrainer):
    """The Ape-X learner when its samplers are the members of the main reactor's elastic
    bank ``bank`` (``num_samplers`` slots): it learns as :class:`ApexTrainer` does (its
    ticks and its shards do not depend on who samples), counts the env steps the samplers
    report by member incarnation (:class:`~reactorfed.rl.plans.elastic_round.ElasticRound`;
    a report arrives ``prefetch`` ticks after it was sent, its sender may have left by
    then), and at each tick sends its weights again when a member is present that its last
    weights did not go to: weights sent while a member was absent are dropped, and a
    joiner samples nothing before it holds some (before ``learning_starts`` the learner
    sends none of its own). Its result adds ``samples_by_member``, ``membership``,
    ``samples_after_stop`` (by member: env steps reported after it asked to stop, not
    counted), ``weights_resent`` and ``change_gaps_ms``."""

    def __init__(self, bank: str, num_samplers: int, num_shards: int, algo: ReplayAlgorithm, space: SpaceInfo,
                 replay: ReplayConfig, *, learn_period: int, weights_every: int, run: RunConfig | None = None,
                 seed: int = 0, weights_delay: int = 0) -> None:
        super().__init__(num_samplers, num_shards, algo, space, replay, learn_period=learn_period,
                         weights_every=weights_every, run=run, seed=seed, weights_delay=weights_delay)
        self.rounds = ElasticRound(bank, weights_delay, timeline=self.run.timeline)
        self.sent_to: tuple[int, ...] = ()  # the members present when the weights went out last
        self.resent = 0
        #: bank index -> env steps reported after the learner asked to stop
        self.unused: dict[str, int] = {}

    def _send(self, weights: PortWriter[np.ndarray]) -> None:
        self.sent_to = self.rounds.look(self)
        super()._send(weights)

    # declared after step: a tick's update (and its broadcast) first
    @reaction(triggers=[ApexTrainer.tick], effects=[ApexTrainer.weights])
    def resend(self, weights: PortWriter[np.ndarray]) -> None:
        now = self.rounds.look(self)
        if not self.done and any(i not in self.sent_to for i in now):
            self.resent += 1
            self._send(weights)

    def _updating(self) -> None:
        # (the members present; the env steps of a row: those reported until the next update)
        self.rounds.row(self, self.rounds.look(self))

    def _took(self, index: int, steps: int) -> None:
        self.rounds.look(self)
        self.rounds.took(index, steps, late=True)

    def _late(self, index: int, steps: int) -> None:
        self.unused[str(index)] = self.unused.get(str(index), 0) + steps

    def _extra_result(self) -> dict[str, Any]:
        # (no rounds to ask again: the learner learns from what arrives)
        r = {k: v for k, v in self.rounds.result().items() if k != "rounds_asked_again"}
        return {**r, "samples_after_stop": dict(sorted(self.unused.items())), "weights_resent": self.resent}
