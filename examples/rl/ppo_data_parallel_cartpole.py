"""PPO on CartPole-v1 with data-parallel learners (``Main``) or a parameter server
(``ParamServer``): copy this to start your own.

``Main``: ``num_learners`` learners, each fed every round by ``samplers_per_learner``
samplers of its own; at every minibatch step each learner computes its own minibatch's
gradient, sends it to every other, adds them all in learner order, and applies the same
Adam step, so all learners hold bit-identical weights (``reactorfed.rl.DataParallelPlan``).
``ParamServer``: the same shares and gradients, computed by ``num_learners`` gradient
workers without an optimizer, averaged and applied by one server that sends the
weights back (``reactorfed.rl.ParamServerPlan``). With one seed both end with the same
weights. The defaults match ``ppo_cartpole.py``'s round (2 x 4 copies x 32 steps, 20
epochs of minibatch 256 over the round's transitions, rl-zoo's settings), cut into two
learners' shares. Training stops once the last 100 training episodes average
``target_return`` (475), or after ``total_timesteps`` steps; the lead learner (or the
server) prints the verdict and saves a checkpoint (``checkpoint``, loadable with
``PPOLearner.load``; ``resume=true`` carries on from it).

Federated (the RTI, one process per sampler, per learner, and the server)::

    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:Main --fast
    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:ParamServer --fast
    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:ParamServer --fast -p colocate=true

(``colocate=true``: each worker and its samplers in one process, the server in another:
the shape ``examples/k8s/ppo-data-parallel-cartpole.yaml`` deploys.)

In one process::

    reactorfed run examples/rl/ppo_data_parallel_cartpole.py:Main --fast
    python examples/rl/ppo_data_parallel_cartpole.py [param_server]

Every field of :class:`Args` is a parameter: ``--param num_learners=4``. One ``seed``
gives the same weights in one process and federated (with one torch thread:
``OMP_NUM_THREADS=1``, or the same thread count everywhere).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reactorfed.rl import Backend, DataParallelPlan, ParamServerPlan, PPOConfig, RunConfig


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_learners: int = 2  # learners (Main) or gradient workers (ParamServer)
    samplers_per_learner: int = 1
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    total_timesteps: int = 100_000
    target_return: float = 475.0
    seed: int = 1
    checkpoint: str = "runs/ppo_data_parallel_cartpole.pt"
    checkpoint_every: int = 20
    resume: bool = False
    progress: bool = True
    progress_every: int = 10
    trace: bool = False  # each result carries a hash of the weights after every step
    colocate: bool = False  # ParamServer: each worker and its samplers in one process (k8s: a pod)
    # PPO (rl-zoo's CartPole-v1 settings; minibatch_size is each learner's)
    learning_rate: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 0.98
    gae_lambda: float = 0.8
    update_epochs: int = 20
    minibatch_size: int = 128
    clip_coef: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: tuple[int, ...] = (64, 64)


def settings(args: Args) -> tuple[PPOConfig, RunConfig]:
    """PPO's settings and the run's, from ``args``."""
    ppo = PPOConfig(
        learning_rate=args.learning_rate,
        anneal_lr=args.anneal_lr,
        anneal_clip=args.anneal_lr,
        total_timesteps=args.total_timesteps,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        update_epochs=args.update_epochs,
        minibatch_size=args.minibatch_size,
        clip_coef=args.clip_coef,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        hidden=args.hidden,
    )
    per_round = args.num_learners * args.samplers_per_learner * args.num_envs * args.num_steps
    run = RunConfig(
        iterations=math.ceil(args.total_timesteps / per_round),
        target_return=args.target_return,
        checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every,
        resume=args.resume,
        progress=args.progress,
        progress_every=args.progress_every,
    )
    return ppo, run


class Main(DataParallelPlan):
    def __init__(self, args: Args = Args()) -> None:
        ppo, run = settings(args)
        super().__init__(ppo, args.env, num_learners=args.num_learners,
                         samplers_per_learner=args.samplers_per_learner, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend,
                         trace=args.trace)


class ParamServer(ParamServerPlan):
    def __init__(self, args: Args = Args()) -> None:
        ppo, run = settings(args)
        super().__init__(ppo, args.env, num_workers=args.num_learners,
                         samplers_per_worker=args.samplers_per_learner, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend,
                         trace=args.trace, colocate=args.colocate)


if __name__ == "__main__":
    import sys

    from reactorfed import Environment

    Environment(fast=True).run(ParamServer() if sys.argv[1:] == ["param_server"] else Main())
