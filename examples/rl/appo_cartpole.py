"""APPO on CartPole-v1, trained by reactors under the asynchronous plan: copy this to
start your own.

2 samplers each step 4 copies of CartPole 32 rows every ``period_ms`` of logical time,
staggered, with the newest policy they hold; the learner learns from each fragment as it
comes (V-trace corrects for the samplers' older policy) and broadcasts the new policy,
which reaches the samplers ``weights_delay_ms`` later. The samplers never wait for a
round: the delay is how far ahead of the learner they may run, and it bounds the policy's
lag (``policy_lag_bound``: 2 updates with the defaults). Training stops once the last 100
training episodes average ``target_return``, or after ``total_timesteps`` steps.

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/appo_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/appo_cartpole.py:Main --fast

Every field of :class:`Args` is a parameter (``--param num_samplers=4``); APPO's settings
are its ``appo`` field, a :class:`~reactorfed.rl.APPOConfig`, set by dotted names
(``--param appo.learning_rate=1e-3``). Asynchronous,
and still deterministic: one ``seed`` gives the same weights in one process and
federated, however fast each process runs (with the same ``--threads``, 1 by default).
``backend=envpool`` steps the samplers' copies with EnvPool's C++ engine (``auto``: EnvPool
where it has the environment): as deterministic, other episodes than gymnasium's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed import ms
from reactorfed.rl import APPOConfig, AsyncPlan, Backend, RunConfig


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    period_ms: int = 10  # logical time between two fragments of one sampler
    weights_delay_ms: int = 10  # logical time from the learner's send to the samplers
    total_timesteps: int = 200_000
    target_return: float = 475.0
    seed: int = 1
    checkpoint: str = "runs/appo_cartpole.pt"
    checkpoint_every: int = 50
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 20
    curve: bool = False  # keep the learning curve in the result (bench/training.py plots it)
    # APPO: each 128-row fragment for 2 epochs of 64-row minibatches
    appo: APPOConfig = field(default_factory=lambda: APPOConfig(update_epochs=2, minibatch_size=64))
    # > 0: the samplers are an elastic bank of 1 to max_samplers (num_samplers at the start)
    # that join and leave while it trains (see reactorfed.rl.plans.async_)
    max_samplers: int = 0
    # elastic: the learner's result keeps a row per update (bench/rescale.py times rescaling with it)
    timeline: bool = False


class Main(AsyncPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_fragment = args.num_envs * args.num_steps
        run = RunConfig(iterations=math.ceil(args.total_timesteps / per_fragment), target_return=args.target_return,
                        checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every, resume=args.resume, pause_after=args.pause_after,
                        progress=args.progress, progress_every=args.progress_every, curve=args.curve,
                        timeline=args.timeline)
        super().__init__(args.appo, args.env, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, period=ms(args.period_ms), weights_delay=ms(args.weights_delay_ms),
                         run=run, seed=args.seed, backend=args.backend, max_samplers=args.max_samplers)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
