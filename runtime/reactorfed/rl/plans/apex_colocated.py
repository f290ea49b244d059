"""Ape-X's plan with the replay shards in the learner's federate: for a deployment whose
federates are the samplers and one learner, as the Kubernetes operator's are (a pod per
sampler, one for the learner, none for anything else).

:class:`~reactorfed.rl.plans.apex.ApexPlan` makes each replay shard a federate of its own.
:class:`ColocatedApexPlan` builds the same reactors and connections, with the same delays,
but puts the shards and the learner inside one child, :class:`ColocatedReplay`, named
``learner``: federated, its shards live in the learner's process, and the samplers'
transitions cross one link each to it. Logical time orders everything as in
:class:`ApexPlan` (a connection's delay is the same whether it crosses a process or not),
so one seed gives the same weights under either plan, in one process or federated.
"""

from __future__ import annotations

import math

import numpy as np

from reactorfed import Input, Output, Reactor, bank, each, ms

from ..contracts import SpaceInfo
from ..replay.contracts import ReplayAlgorithm, ReplayConfig
from ..replay.shard import ReplayShard, shard_seed
from ..training import RunConfig
from .apex import ApexSampler, ElasticApexSampler, apex_samplers, apex_trainer

__all__ = ["ColocatedApexPlan", "ColocatedReplay"]


class ColocatedReplay(Reactor):
    """``num_shards`` replay shards and the Ape-X learner in one reactor (one federate).
    ``transitions[c]`` takes the samplers' fragments in shard order (shard ``s``'s samplers
    ``s, s + S, ...``, then shard ``s + 1``'s); ``episodes[i]`` sampler ``i``'s returns."""

    transitions: Input[np.ndarray] = Input(np.ndarray, width="num_samplers")
    episodes: Input[np.ndarray] = Input(np.ndarray, width="num_samplers")
    weights: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, num_samplers: int, num_shards: int, algo: ReplayAlgorithm, space: SpaceInfo,
                 replay: ReplayConfig, *, learn_period: int, prefetch: int, weights_every: int,
                 run: RunConfig | None = None, seed: int = 0, weights_delay: int = 0, elastic: bool = False) -> None:
        N, S = self.num_samplers, self.num_shards = num_samplers, num_shards
        self.shards = bank(ReplayShard, S, num_inputs=each(lambda s: len(range(s, N, S))),
                           capacity=math.ceil(replay.capacity / S), alpha=replay.alpha, eps=replay.eps,
                           seed=each(lambda s: shard_seed(seed, s)))
        self.learner = apex_trainer(N, S, algo, space, replay, learn_period=learn_period, weights_every=weights_every,
                                    run=run, seed=seed, weights_delay=weights_delay, elastic=elastic)
        reply = prefetch * learn_period
        # the delays of ApexPlan's connections, each on the same path inside this reactor
        self.connect(self.transitions, self.shards.transitions)
        self.connect(self.episodes, self.learner.episodes, after=reply)
        self.connect(self.learner.request, self.shards.request, after=0)
        self.connect(self.learner.priorities, self.shards.priorities, after=0)
        self.connect(self.shards.batch, self.learner.batches, after=reply)
        self.connect(self.learner.weights, self.weights)


class ColocatedApexPlan(Reactor):
    """:class:`~reactorfed.rl.plans.apex.ApexPlan` (same parameters, same schedule, same
    weights for a seed) whose federates are ``samplers[i]`` and ``learner`` only: the
    shards run inside the learner's (with ``max_samplers``, elastic samplers as there).
    Subclass it for a program with its own settings."""

    Sampler: type[ApexSampler] = ApexSampler
    ElasticSampler: type[ApexSampler] = ElasticApexSampler

    def __init__(self, algo: ReplayAlgorithm, env: str, *, num_samplers: int = 2, num_shards: int = 1,
                 num_envs: int = 4, fragment_len: int = 16, period: int = ms(16), learn_period: int = ms(1),
                 prefetch: int = 2, weights_every: int = 4, weights_delay: int = ms(16),
                 replay: ReplayConfig | None = None, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", max_samplers: int = 0) -> None:
        S = num_shards
        self.samplers, space = apex_samplers(
            self, self.ElasticSampler if max_samplers else self.Sampler, algo, env, num_samplers=num_samplers,
            num_shards=S, num_envs=num_envs, fragment_len=fragment_len, period=period, learn_period=learn_period,
            prefetch=prefetch, weights_every=weights_every, weights_delay=weights_delay, seed=seed, backend=backend,
            max_samplers=max_samplers)
        N = max_samplers or num_samplers  # (slots)
        self.learner = ColocatedReplay(N, S, algo, space, replay or ReplayConfig(), learn_period=learn_period,
                                       prefetch=prefetch, weights_every=weights_every, run=run, seed=seed,
                                       weights_delay=weights_delay, elastic=max_samplers > 0)
        self.connect([self.samplers[i].fragment for s in range(S) for i in range(s, N, S)],
                     self.learner.transitions)
        self.connect(self.samplers.episodes, self.learner.episodes)
        self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)
