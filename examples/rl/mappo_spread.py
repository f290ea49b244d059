"""MAPPO on PettingZoo MPE's ``simple_spread``, trained by reactors: PPO whose critic sees
the global state (every agent's observation, and which agent asks) while each agent acts
on its own observation (Yu et al. 2022). Copy this to start your own.

The program is :mod:`ippo_spread`'s (read it for the rounds, the progress line, the
checkpoints and resume, and the policy mapping), with MAPPO's config: the environment
federate appends the agent-specific global state to each agent's rows, and each policy's
learner trains its centralized critic on it. With the default ``shared`` mapping one actor
and one critic serve every agent (the paper's parameter sharing)::

    reactorfed run examples/rl/mappo_spread.py:Main --fast
    reactorfed launch examples/rl/mappo_spread.py:Main --fast --param mapping.kind=per_agent
    python examples/rl/mappo_spread.py

MAPPO's settings are the ``mappo`` field (a :class:`~reactorfed.rl.MAPPOConfig`, PPO's
fields: ``--param mappo.learning_rate=5e-4``), the MAPPO paper's for MPE by default, with
its value normalization and Huber value loss (``mappo.value``: ``--param
mappo.value.norm=false``, ``--param mappo.value.huber_delta=0`` for the squared error);
``mappo.total_timesteps`` is the budget in env steps. One ``seed`` gives the same weights in
one process and federated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed.rl import MAPPOConfig, MultiAgentPlan, PolicyMapping, RunConfig


@dataclass(frozen=True)
class Args:
    task: str = "simple_spread"
    num_agents: int = 3  # simple_spread's agents (and landmarks)
    max_cycles: int = 25  # steps an episode
    num_samplers: int = 1  # environment federates
    num_envs: int = 8  # copies of the task per sampler
    num_steps: int = 25  # rows per round: a round is num_samplers * num_envs * num_steps env steps
    seed: int = 1
    checkpoint: str = "runs/mappo_spread"  # a directory: <policy>.pt each (MAPPOLearner.load)
    checkpoint_every: int = 20
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep each policy's learning curve in its result (bench/marl_training.py plots it)
    mappo: MAPPOConfig = field(default_factory=lambda: MAPPOConfig(total_timesteps=200_000))
    mapping: PolicyMapping = field(default_factory=PolicyMapping)


class Main(MultiAgentPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_round = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(iterations=math.ceil(args.mappo.total_timesteps / per_round), checkpoint=args.checkpoint,
                        checkpoint_every=args.checkpoint_every, resume=args.resume, pause_after=args.pause_after,
                        progress=args.progress, progress_every=args.progress_every, curve=args.curve)
        super().__init__(args.mappo, args.task, mapping=args.mapping, num_agents=args.num_agents,
                         max_cycles=args.max_cycles, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
