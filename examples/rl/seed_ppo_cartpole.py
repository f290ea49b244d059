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

With ``max_samplers`` the samplers are an elastic bank: ``num_samplers`` at the start, then
between 1 and ``max_samplers`` as members join (a ``reactorfed federate`` process for a
free slot) and leave (SIGTERM) while it trains; each fragment acts for the members present
when it starts, fragments ``round_ms`` of logical time apart (see
:mod:`reactorfed.rl.plans.seed`). Training runs for the updates ``total_timesteps`` takes at
``num_samplers``. The RTI's record (``--membership-out``) replayed (``--membership``) gives
the same weights::

    reactorfed rti examples/rl/seed_ppo_cartpole.py:Main --param max_samplers=8 --param round_ms=20 --membership-out run.json
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed import ms
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
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep the learning curve in the result
    # PPO: its defaults are rl-zoo's CartPole-v1 settings; ppo.total_timesteps is the run's
    # budget (the learning rate and the clip range anneal to 0 over it)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    # > 0: the samplers are an elastic bank of 1 to max_samplers (num_samplers at the start)
    # that join and leave while it trains; a fragment starts round_ms of logical time after
    # the last update (0: the next microstep). Without --fast, fragments a few ms apart keep
    # logical time near physical time, where a join lands
    max_samplers: int = 0
    round_ms: int = 0
    # elastic: the learner's result keeps a row per update (bench/rescale.py times rescaling with it)
    timeline: bool = False


class Main(SeedPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_update = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(
            iterations=math.ceil(args.ppo.total_timesteps / per_update),
            target_return=args.target_return,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume, pause_after=args.pause_after,
            progress=args.progress,
            progress_every=args.progress_every,
            curve=args.curve,
            timeline=args.timeline,
        )
        super().__init__(args.ppo, args.env, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend,
                         device=args.device, max_samplers=args.max_samplers, period=ms(args.round_ms))


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
