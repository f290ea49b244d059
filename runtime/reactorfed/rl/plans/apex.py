"""The asynchronous-replay execution plan, as a reactor program: samplers push n-step
transitions into sharded prioritized replay, the learner samples from the shards and
sends back priorities, weights reach the samplers now and then (Ape-X's plan: Horgan et
al. 2018; RLlib's Ape-X execution plan), reproducible.

::

    samplers[i].fragment --(same tag)-------------> shards[i mod S].transitions
    samplers[i].episodes --(after D * P)----------> learner.episodes[i]
    learner.request[s]   --(after 0)--------------> shards[s].request
    learner.priorities[s] --(after 0)-------------> shards[s].priorities
    shards[s].batch      --(after D * P)----------> learner.batches[s]
    learner.weights      --(after W, broadcast)---> samplers[i].weights

The schedule, in logical time (``P`` = ``learn_period``, ``D`` = ``prefetch``, ``K`` =
``weights_every``, ``W`` = ``weights_delay``, ``T`` = ``period``):

- **Samplers.** Sampler ``i`` ticks every ``T`` from ``W + i * T / N`` (staggered; the
  learner's first weights, sent at startup, arrive at ``W``). At a tick it steps its
  ``num_envs`` copies ``fragment_len`` rows with the newest weights it holds, each copy
  exploring with its own epsilon, turns the rows into n-step transitions (steps whose
  return is not complete yet wait for the next tick: :class:`~reactorfed.rl.replay.nstep.NStepBuilder`),
  gives them initial priorities with its copy of the network, and sends them to its shard
  at the same tag, with the returns of the episodes that ended to the learner.
- **Learner.** It ticks every ``P`` from the start. At tick ``j`` (tag ``jP``) it learns
  from the batch the shards drew for it, if any, sends each shard the new priorities of
  its draws, and asks every shard for its share of the batch of tick ``j + D``. Every
  ``K`` updates it broadcasts its weights. (Before the shards hold ``learning_starts``
  transitions it asks for none, and learns nothing.)
- **Shards.** At ``(jP, 1)`` (``after 0``: the next microstep) shard ``s`` has every
  transition its samplers sent at tags up to ``jP`` and the learner's priorities of tick
  ``j``; it applies them, draws, and answers; the answer arrives at ``(j + D) P``, the
  learner's tick ``j + D``.

Each reactor acts only on what reached it, at tags logical time fixes, and in an order
its reactions' declarations fix; every draw comes from a seeded generator held by the
shard, every action from one held by the sampler. So a seed fixes the learner's weights
after ``k`` updates, in one process and federated alike, whatever the timing: a slow
process only makes the others wait (the shards wait for their samplers, the learner for
the shards, the samplers for weights at most ``W`` old). The price is the replay ratio:
``batch_size`` draws every ``P`` against ``N * num_envs * fragment_len`` steps every
``T``, fixed by logical time, where Ape-X lets it float with the processes' speeds.

**Staleness, bounded by the schedule.** A fragment sampled at ``t`` acts with the weights
of the last broadcast that arrived by ``t``: sent at ``jP <= t - W`` with ``K`` dividing
``j``; the learner has taken at most ``K - 1 + ceil(W / P)`` updates since
(:func:`weights_lag_bound`). A batch learned from at tick ``j`` was drawn at ``(j - D)P``
with the priorities of the updates up to tick ``j - D``: the ``D - 1`` updates in between
are missing from them (:func:`priority_lag_bound`), and so are the transitions sampled
after ``(j - D)P``. ``D = 1`` leaves nothing stale but makes the learner and the shards
take turns; ``D = 2`` lets a shard draw for the next tick while the learner learns.

**Sampler i -> shard i mod S**, not every sampler to every shard in turn: one link per
sampler (``N``, not ``N * S``, and a shard's inputs come in one order), and nothing lost:
the learner splits each batch by the shards' priority masses and weighs every draw by the
probability it was drawn with (:mod:`reactorfed.rl.plans.apex_trainer`), so the batch is
distributed as if drawn from one replay of all transitions, whichever shard holds which
sampler's. ``S`` should divide ``N`` for the shards to fill alike.

The learner stops after ``run.iterations`` updates, or once the last 100 training
episodes average ``run.target_return``, and asks the federation to stop.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from reactorfed import (
    STARTUP,
    Elastic,
    Output,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    elastic_bank,
    ms,
    reaction,
)

from ..contracts import SpaceInfo
from ..envs.backends import BACKENDS
from ..replay.contracts import ReplayActor, ReplayAlgorithm, ReplayConfig
from ..replay.nstep import NStepBuilder
from ..replay.shard import ReplayShard, shard_seed
from ..rollout import PolicyRunner
from ..training import RunConfig
from .apex_trainer import ApexTrainer, ElasticApexTrainer
from .async_ import AsyncSampler
from .sampler import actor_seed, sampler_seed

__all__ = ["ApexPlan", "ApexSampler", "ElasticApexSampler", "apex_samplers", "priority_lag_bound",
           "weights_lag_bound"]


def weights_lag_bound(weights_delay: int, learn_period: int, weights_every: int) -> int:
    """The most learner updates a sampler's weights can be behind the learner's when it
    acts: ``K - 1`` between broadcasts, and those within the weights' delay."""
    return weights_every - 1 + math.ceil(weights_delay / learn_period)


def priority_lag_bound(prefetch: int) -> int:
    """The most learner updates whose priorities a batch was drawn without."""
    return prefetch - 1


class ApexSampler(AsyncSampler):
    """Every ``period`` from ``offset``: steps ``num_envs`` copies of ``env`` (actors
    ``first_actor`` on, of ``num_actors``) ``fragment_len`` rows with the newest weights
    it holds, and sends the n-step transitions completed, prioritised, to its shard."""

    algo: ReplayAlgorithm  # type: ignore[assignment]
    episodes: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, algo: ReplayAlgorithm, env: str, space: SpaceInfo, num_envs: int, fragment_len: int,
                 seed: int, offset: int, period: int, first_actor: int = 0, num_actors: int = 1,
                 backend: str = "gymnasium") -> None:
        super().__init__(algo, env, space, num_envs, fragment_len, seed, offset, period,  # type: ignore[arg-type]
                         backend)
        self.first_actor, self.num_actors = first_actor, num_actors
        self.replay_actor: ReplayActor | None = None
        self.nstep: NStepBuilder | None = None

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.runner = PolicyRunner(self.env, self.num_envs, seed=self.seed, backend=self.backend)
        actors = range(self.first_actor, self.first_actor + self.num_envs)
        self.actor = self.replay_actor = self.algo.make_actor(self.space, actor_seed(self.seed), actors,
                                                              self.num_actors)
        self.nstep = NStepBuilder(self.num_envs, self.algo.n_step, self.algo.gamma)
        self.loaded = False

    @reaction(triggers=[AsyncSampler.tick], effects=[AsyncSampler.fragment, episodes])
    def collect(self, fragment: PortWriter[np.ndarray], episodes: PortWriter[np.ndarray]) -> None:
        if not self.loaded:  # a resumed learner with nothing left to do sends no weights
            return
        assert self.runner is not None and self.replay_actor is not None and self.nstep is not None
        rollout = self.runner.rollout(self.fragment_len, self.replay_actor)
        rollout.policy_tag = self.policy_tag
        t = self.nstep.add(rollout)
        t["priority"] = self.replay_actor.priorities(t)
        fragment.set(t)
        episodes.set(np.array([rollout.transitions, *rollout.episode_returns], dtype=np.float64))
        self.transitions += rollout.transitions
        self.sent()

    def sent(self) -> None:
        """A fragment went out (for a subclass to report)."""


class ElasticApexSampler(ApexSampler):
    """An :class:`ApexSampler` that is a member of an elastic bank: it reports the env
    steps it sent after each fragment (a member that leaves runs no shutdown reaction)."""

    def sent(self) -> None:
        self.report_result({"samples": self.transitions})


class ApexPlan(Reactor):
    """The asynchronous-replay plan for ``algo`` on ``env``: ``num_samplers`` samplers of
    ``num_envs`` copies (``fragment_len`` rows every ``period``), ``num_shards`` replay
    shards, one learner updating every ``learn_period`` on batches asked ``prefetch``
    updates ahead, broadcasting every ``weights_every`` updates weights that reach the
    samplers ``weights_delay`` later (see the module's docstring). A federated run puts
    each sampler, each shard and the learner in its own process. ``backend`` steps the
    samplers' copies (:mod:`~reactorfed.rl.envs.backends`).

    With ``max_samplers`` (> 0) the samplers are an elastic bank of 1 to ``max_samplers``,
    ``num_samplers`` at the start (:attr:`ElasticSampler` s), staggered over the
    ``max_samplers`` slots, slot ``i`` feeding shard ``i mod num_shards``; the shards and
    the learner's ticks do not change with the width (:class:`~reactorfed.rl.plans.apex_trainer.ElasticApexTrainer`).

    Subclass it for a program with its own settings, and set :attr:`Sampler` for samplers
    of your own (an :class:`ApexSampler` subclass)."""

    Sampler: type[ApexSampler] = ApexSampler
    ElasticSampler: type[ApexSampler] = ElasticApexSampler

    def __init__(self, algo: ReplayAlgorithm, env: str, *, num_samplers: int = 2, num_shards: int = 1,
                 num_envs: int = 4, fragment_len: int = 16, period: int = ms(16), learn_period: int = ms(1),
                 prefetch: int = 2, weights_every: int = 4, weights_delay: int = ms(16),
                 replay: ReplayConfig | None = None, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", max_samplers: int = 0) -> None:
        replay = replay or ReplayConfig()
        S = num_shards
        self.samplers, space = apex_samplers(
            self, self.ElasticSampler if max_samplers else self.Sampler, algo, env, num_samplers=num_samplers,
            num_shards=S, num_envs=num_envs, fragment_len=fragment_len, period=period, learn_period=learn_period,
            prefetch=prefetch, weights_every=weights_every, weights_delay=weights_delay, seed=seed, backend=backend,
            max_samplers=max_samplers)
        N = max_samplers or num_samplers  # (slots)
        self.shards = bank(ReplayShard, S, num_inputs=each(lambda s: len(range(s, N, S))),
                           capacity=math.ceil(replay.capacity / S), alpha=replay.alpha, eps=replay.eps,
                           seed=each(lambda s: shard_seed(seed, s)))
        self.learner = apex_trainer(N, S, algo, space, replay, learn_period=learn_period, weights_every=weights_every,
                                    run=run, seed=seed, weights_delay=weights_delay, elastic=max_samplers > 0)
        # shard s's input channels, in order, are samplers s, s + S, s + 2S, ...
        self.connect([self.samplers[i].fragment for s in range(S) for i in range(s, N, S)], self.shards.transitions)
        reply = prefetch * learn_period
        self.connect(self.samplers.episodes, self.learner.episodes, after=reply)
        self.connect(self.learner.request, self.shards.request, after=0)
        self.connect(self.learner.priorities, self.shards.priorities, after=0)
        self.connect(self.shards.batch, self.learner.batches, after=reply)
        self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)


def apex_trainer(num_samplers: int, num_shards: int, algo: ReplayAlgorithm, space: SpaceInfo,
                 replay: ReplayConfig, *, learn_period: int, weights_every: int, run: RunConfig | None, seed: int,
                 weights_delay: int, elastic: bool) -> ApexTrainer:
    """Every Ape-X plan's learner: an :class:`ApexTrainer`, or with ``elastic`` samplers (the
    main reactor's elastic bank ``samplers``) an :class:`ElasticApexTrainer`."""
    if elastic:
        return ElasticApexTrainer("samplers", num_samplers, num_shards, algo, space, replay,
                                  learn_period=learn_period, weights_every=weights_every, run=run, seed=seed,
                                  weights_delay=weights_delay)
    return ApexTrainer(num_samplers, num_shards, algo, space, replay, learn_period=learn_period,
                       weights_every=weights_every, run=run, seed=seed, weights_delay=weights_delay)


def apex_samplers(plan: Reactor, sampler: type[ApexSampler], algo: ReplayAlgorithm, env: str, *,
                  num_samplers: int, num_shards: int, num_envs: int, fragment_len: int, period: int,
                  learn_period: int, prefetch: int, weights_every: int, weights_delay: int, seed: int,
                  backend: str, max_samplers: int = 0) -> tuple[Any, SpaceInfo]:
    """What every Ape-X plan (:class:`ApexPlan`, the colocated one) checks and builds alike:
    its widths and periods (a :class:`~reactorfed.errors.ValidationError` naming ``plan``),
    then its bank of ``sampler``, each ``num_envs`` copies, staggered over ``period``;
    returns the bank and ``env``'s space. With ``max_samplers`` (> 0): an elastic bank of
    1 to ``max_samplers`` slots, ``num_samplers`` at the start, staggered over the slots."""
    for name, value in (("num_samplers", num_samplers), ("num_shards", num_shards), ("num_envs", num_envs),
                        ("fragment_len", fragment_len), ("period", period), ("learn_period", learn_period),
                        ("prefetch", prefetch), ("weights_every", weights_every), ("weights_delay", weights_delay)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValidationError(f"{plan.fqn}: {name} must be an int >= 1, got {value!r}")
    if max_samplers and (not isinstance(max_samplers, int) or max_samplers < num_samplers):
        raise ValidationError(
            f"{plan.fqn}: max_samplers must be an int >= num_samplers ({num_samplers}), got {max_samplers!r}")
    if num_shards > (max_samplers or num_samplers):
        raise ValidationError(f"{plan.fqn}: {num_shards} shards for {num_samplers} samplers: "
                              "each shard needs a sampler (sampler i feeds shard i mod num_shards)")
    if backend not in BACKENDS:
        raise ValidationError(f"{plan.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
    N = max_samplers or num_samplers
    space = SpaceInfo.of_env(env)
    kw: dict[str, Any] = dict(seed=each(lambda i: sampler_seed(seed, i)),
                              offset=each(lambda i: weights_delay + i * period // N), period=period,
                              first_actor=each(lambda i: i * num_envs), num_actors=N * num_envs, backend=backend)
    if max_samplers:
        width = Elastic(min=1, max=max_samplers, initial=num_samplers)
        return elastic_bank(sampler, width, algo, env, space, num_envs, fragment_len, **kw), space
    return bank(sampler, N, algo, env, space, num_envs, fragment_len, **kw), space
