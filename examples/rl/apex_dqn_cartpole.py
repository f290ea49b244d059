"""Ape-X DQN on CartPole-v1, trained by reactors under the asynchronous-replay plan: copy
this to start your own.

2 samplers each step 4 copies of CartPole ``num_steps`` rows every ``period_ms`` of
logical time, staggered, each copy exploring with its own epsilon (Ape-X's
``0.4^(1 + 7 i / 7)`` over the 8 copies); they turn the rows into 3-step transitions,
prioritise them with their copy of the network and push them into their replay shard
(sampler i -> shard i mod ``num_shards``). Every ``learn_period_ms`` the learner takes a
prioritized batch the shards drew for it ``prefetch`` updates earlier, takes one double
Q-learning step weighted by the importance weights, sends the shards the new priorities
(|TD error|) and, every ``weights_every`` updates, the samplers its weights, which reach
them ``weights_delay_ms`` later. Training stops once the last 100 training episodes
average ``target_return`` (exploring copies included), or after about ``total_timesteps``
steps.

Federated (the RTI, one process per sampler, per shard and for the learner)::

    reactorfed launch examples/rl/apex_dqn_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/apex_dqn_cartpole.py:Main --fast

``OnePod`` is the same program with the shards in the learner's process (federates
``samplers[i]`` and ``learner`` only: one pod fewer per shard; examples/k8s/apex-dqn-cartpole.yaml
runs ``Main``, each shard in a pod of its own), with the same weights for a seed::

    reactorfed launch examples/rl/apex_dqn_cartpole.py:OnePod --fast

Measured once here (2 cores shared with other work, load average about 17, seed 1): the
last 100 training episodes averaged 198 after 29,161 env steps and 3,590 updates, in 29 s
of training in one process (38 s wall) and 17 s federated (31 s wall for ``launch``:
the RTI, 2 samplers, 2 shards, the learner), with the same weights both ways.

Every field of :class:`Args` is a parameter (``--param num_shards=1``); Ape-X DQN's
settings are its ``dqn`` field (a :class:`~reactorfed.rl.ApexDQNConfig`) and the
prioritized replay's its ``replay`` field (a :class:`~reactorfed.rl.ReplayConfig`), set by
dotted names (``--param replay.batch_size=32``). Asynchronous, and still deterministic:
one ``seed`` gives the same weights in one process and federated, however fast each
process runs (with the same ``--threads``, 1 by default). The replay ratio is fixed
by logical time: ``replay.batch_size`` draws every ``learn_period_ms``
against ``num_samplers * num_envs * num_steps`` steps every ``period_ms``.
``backend=envpool`` steps the samplers' copies with EnvPool's C++ engine (``auto``: EnvPool
where it has the environment): as deterministic, other episodes than gymnasium's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from reactorfed import ms
from reactorfed.rl import (
    ApexDQNConfig,
    ApexPlan,
    Backend,
    ColocatedApexPlan,
    ReplayConfig,
    RunConfig,
)


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    num_shards: int = 2
    num_envs: int = 4  # environment copies per sampler, each an actor with its own epsilon
    num_steps: int = 16  # rows per fragment
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    period_ms: int = 16  # logical time between two fragments of one sampler
    learn_period_ms: int = 1  # logical time between two learner updates
    prefetch: int = 2  # the learner asks for the batch of the update this many ahead
    weights_every: int = 4  # learner updates between two broadcasts
    weights_delay_ms: int = 16  # logical time from the learner's send to the samplers
    total_timesteps: int = 100_000
    target_return: float = 195.0
    seed: int = 1
    checkpoint: str = "runs/apex_dqn_cartpole.pt"
    checkpoint_every: int = 1000
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 500
    curve: bool = False  # keep the learning curve in the result (bench/training.py plots it)
    dqn: ApexDQNConfig = field(default_factory=ApexDQNConfig)  # Ape-X DQN's policy
    replay: ReplayConfig = field(default_factory=ReplayConfig)  # prioritized replay, over all the shards
    # > 0: the samplers are an elastic bank of 1 to max_samplers (num_samplers at the start)
    # that join and leave while it trains (see reactorfed.rl.plans.apex); the updates it takes
    # are still those total_timesteps takes at num_samplers
    max_samplers: int = 0
    # elastic: the learner's result keeps a row per update (bench/rescale.py times rescaling with it)
    timeline: bool = False


def settings(args: Args) -> dict[str, Any]:
    """The plan's keyword arguments for ``args`` (:class:`Main`'s and :class:`OnePod`'s)."""
    # env steps per learner update, fixed by logical time: the updates that fit in the budget
    per_update = (args.num_samplers * args.num_envs * args.num_steps * args.learn_period_ms / args.period_ms)
    iterations = max(1, math.ceil((args.total_timesteps - args.replay.learning_starts) / per_update))
    run = RunConfig(iterations=iterations, target_return=args.target_return, checkpoint=args.checkpoint,
                    checkpoint_every=args.checkpoint_every, resume=args.resume, pause_after=args.pause_after, progress=args.progress,
                    progress_every=args.progress_every, curve=args.curve, timeline=args.timeline)
    return dict(algo=args.dqn, env=args.env, num_samplers=args.num_samplers, num_shards=args.num_shards,
                num_envs=args.num_envs, fragment_len=args.num_steps, period=ms(args.period_ms),
                learn_period=ms(args.learn_period_ms), prefetch=args.prefetch, weights_every=args.weights_every,
                weights_delay=ms(args.weights_delay_ms), replay=args.replay, run=run, seed=args.seed,
                backend=args.backend, max_samplers=args.max_samplers)


class Main(ApexPlan):
    def __init__(self, args: Args = Args()) -> None:
        super().__init__(**settings(args))


class OnePod(ColocatedApexPlan):
    """The same plan, the same weights for a seed, with the replay shards in the learner's
    process: federates ``samplers[i]`` and ``learner`` only (examples/k8s/apex-dqn-cartpole.yaml
    runs ``Main``, each shard in a pod of its own)."""

    def __init__(self, args: Args = Args()) -> None:
        super().__init__(**settings(args))


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
