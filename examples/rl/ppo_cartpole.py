"""PPO on CartPole-v1, trained by reactors under the synchronous plan: copy this to start
your own.

Each round, 2 samplers step 4 copies of CartPole 32 times each with the learner's latest
policy (rl-zoo's 8 environments x 32 steps); the learner computes GAE advantages, takes
20 epochs of PPO steps and broadcasts the new policy. Training stops once the last 100
training episodes average ``target_return`` (475), or after ``ppo.total_timesteps`` steps;
the learner prints the verdict and saves a checkpoint (``checkpoint``, loadable with
``PPOLearner.load``; ``resume=true`` carries on from it).

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/ppo_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/ppo_cartpole.py:Main --fast
    python examples/rl/ppo_cartpole.py

Every field of :class:`Args` is a parameter: ``--param num_samplers=4``; PPO's settings
are its ``ppo`` field, a :class:`~reactorfed.rl.PPOConfig` (rl-zoo's CartPole-v1 settings),
set by dotted names: ``--param ppo.learning_rate=3e-4``. The run is
deterministic: one ``seed`` gives the same weights either way (with one torch thread:
``OMP_NUM_THREADS=1``, or the same thread count everywhere). ``backend=envpool`` steps the
samplers' copies with EnvPool's C++ engine (``pip install 'reactorfed[envpool]'``; ``auto``:
EnvPool where it has the environment): as deterministic, but other episodes than
gymnasium's for the same seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed.rl import Backend, PPOConfig, RunConfig, SyncPlan


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment: a round is num_samplers * num_envs * num_steps steps
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    target_return: float = 475.0
    seed: int = 1
    checkpoint: str = "runs/ppo_cartpole.pt"
    checkpoint_every: int = 20
    resume: bool = False
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep the learning curve in the result (bench/training.py plots it)
    # PPO: its defaults are rl-zoo's CartPole-v1 settings; ppo.total_timesteps is the run's
    # budget (the learning rate and the clip range anneal to 0 over it)
    ppo: PPOConfig = field(default_factory=PPOConfig)


class Main(SyncPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_round = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(
            iterations=math.ceil(args.ppo.total_timesteps / per_round),
            target_return=args.target_return,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume,
            progress=args.progress,
            progress_every=args.progress_every,
            curve=args.curve,
        )
        super().__init__(args.ppo, args.env, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
