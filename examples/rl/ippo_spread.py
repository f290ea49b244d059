"""Independent PPO (IPPO) on PettingZoo MPE's ``simple_spread``, trained by reactors: copy
this to start your own multi-agent run.

Three agents learn to cover three landmarks without colliding. Each round, every sampler
(the environment: ``num_envs`` copies of the task and a numpy copy of each policy) steps
``num_steps`` rows; each agent's rollout goes to the learner of the policy ``mapping`` gives
it, which takes PPO's update (each critic on the agent's own observation: IPPO) and sends
its weights back. The first sampler prints the team's return (every agent's rewards
summed over an episode, averaged over the last 100 episodes); each policy saves
``<checkpoint>/<policy>.pt`` (``PPOLearner.load``) every ``checkpoint_every`` rounds and
at the end, and ``resume=true`` carries every policy on from its file.

Which policy acts for which agent (RLlib's policy mapping)::

    --param mapping.kind=shared        one policy for every agent (the default; parameter sharing)
    --param mapping.kind=per_agent     a policy, and a learner federate, per agent
    --param mapping.kind=groups --param mapping.groups=pair:agent_0+agent_1,solo:agent_2

Federated (the RTI, a process per sampler, one per policy: with ``per_agent`` every agent
learns in a process of its own)::

    reactorfed launch examples/rl/ippo_spread.py:Main --fast --param mapping.kind=per_agent

In one process::

    reactorfed run examples/rl/ippo_spread.py:Main --fast
    python examples/rl/ippo_spread.py

PPO's settings are the ``ppo`` field (``--param ppo.learning_rate=3e-4``); its defaults
here are the MAPPO paper's for MPE, without annealing. ``ppo.total_timesteps`` is the run's
budget in env steps (all agents acting once is one step): the run takes
``ceil(total_timesteps / (num_samplers * num_envs * num_steps))`` rounds. One ``seed`` gives
every policy the same weights in one process and federated (with one torch thread:
``OMP_NUM_THREADS=1``, or the same thread count everywhere). ``task`` may also be
``simple_speaker_listener`` (its speaker and listener need a policy each) or
``simple_reference``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed.rl import MultiAgentPlan, PolicyMapping, PPOConfig, RunConfig

#: the MAPPO paper's MPE settings (Yu et al. 2022), for independent learners
IPPO = PPOConfig(learning_rate=7e-4, anneal_lr=False, anneal_clip=False, gamma=0.99, gae_lambda=0.95,
                 update_epochs=10, minibatch_size=400, ent_coef=0.01, total_timesteps=200_000)


@dataclass(frozen=True)
class Args:
    task: str = "simple_spread"
    num_agents: int = 3  # simple_spread's agents (and landmarks)
    max_cycles: int = 25  # steps an episode
    num_samplers: int = 1  # environment federates
    num_envs: int = 8  # copies of the task per sampler
    num_steps: int = 25  # rows per round: a round is num_samplers * num_envs * num_steps env steps
    seed: int = 1
    checkpoint: str = "runs/ippo_spread"  # a directory: <policy>.pt each
    checkpoint_every: int = 20
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep each policy's learning curve in its result (bench/marl_training.py plots it)
    ppo: PPOConfig = field(default_factory=lambda: IPPO)
    mapping: PolicyMapping = field(default_factory=PolicyMapping)


class Main(MultiAgentPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_round = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(iterations=math.ceil(args.ppo.total_timesteps / per_round), checkpoint=args.checkpoint,
                        checkpoint_every=args.checkpoint_every, resume=args.resume, pause_after=args.pause_after,
                        progress=args.progress, progress_every=args.progress_every, curve=args.curve)
        super().__init__(args.ppo, args.task, mapping=args.mapping, num_agents=args.num_agents,
                         max_cycles=args.max_cycles, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
