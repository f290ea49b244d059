"""PPO on CartPole-v1, trained by reactors under SEED RL's plan (central batched inference):
copy this to start your own.

2 samplers each hold 4 copies of CartPole and nothing else: no policy, no torch. Every
step they send their observations to the learner, which acts for all 8 copies in one
forward pass of its own network (on CUDA when its process has it, ``device=auto``) and
sends each sampler its actions back. Every 32 steps the learner holds a fragment of every
copy, takes rl-zoo's 20 epochs of PPO on it, and acts with the new policy from the next
step on: no weights ever travel. Training stops once the last 100 training episodes
average ``target_return`` (475), or after ``ppo.total_timesteps`` steps; the learner prints the
verdict and saves a checkpoint (``checkpoint``, loadable with ``PPOLearner.load``;
``resume=true`` carries on from it).

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/seed_ppo_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/seed_ppo_cartpole.py:Main --fast
    python examples/rl/seed_ppo_cartpole.py

Every field of :class:`Args` is a parameter: ``--param num_samplers=4``; PPO's settings
are its ``ppo`` field, a :class:`~reactorfed.rl.PPOConfig` (rl-zoo's CartPole-v1 settings),
set by dotted names: ``--param ppo.update_epochs=10``. The run is
deterministic: one ``seed`` gives the same weights either way, however slow a sampler is
(with the same ``--threads``, 1 by default, and on one device). A step costs a round
trip between each sampler and the learner: SEED's plan pays off when the policy network is
large and the learner has an accelerator (``python -m bench.seed`` measures it here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed.rl import Backend, PPOConfig, RunConfig, SeedPlan


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # steps per fragment: an update every num_samplers * num_envs * num_steps env steps
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    device: str = "auto"  # where the learner acts and learns: auto (CUDA when present), cpu, cuda, cuda:N
    target_return: float = 475.0
    seed: int = 1
    checkpoint: str = "runs/seed_ppo_cartpole.pt"
    checkpoint_every: int = 20
    resume: bool = False
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep the learning curve in the result
    # PPO: its defaults are rl-zoo's CartPole-v1 settings; ppo.total_timesteps is the run's
    # budget (the learning rate and the clip range anneal to 0 over it)
    ppo: PPOConfig = field(default_factory=PPOConfig)


class Main(SeedPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_update = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(
            iterations=math.ceil(args.ppo.total_timesteps / per_update),
            target_return=args.target_return,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume,
            progress=args.progress,
            progress_every=args.progress_every,
            curve=args.curve,
        )
        super().__init__(args.ppo, args.env, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend,
                         device=args.device)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
