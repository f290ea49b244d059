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
``target_return`` (475), or after ``ppo.total_timesteps`` steps; the lead learner (or the
server) prints the verdict and saves a checkpoint (``checkpoint``, loadable with
``PPOLearner.load``; ``resume=true`` carries on from it).

Federated (the RTI, one process per sampler, per learner, and the server)::

    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:Main --fast
    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:ParamServer --fast
    reactorfed launch examples/rl/ppo_data_parallel_cartpole.py:ParamServer --fast -p colocate=true

(``colocate=true``: each worker and its samplers in one process, the server in another:
the shape ``examples/k8s/ppo-param-server-cartpole.yaml`` deploys;
``examples/k8s/ppo-data-parallel-cartpole.yaml`` deploys ``Main``.)

In one process::

    reactorfed run examples/rl/ppo_data_parallel_cartpole.py:Main --fast
    python examples/rl/ppo_data_parallel_cartpole.py [param_server]

Every field of :class:`Args` is a parameter: ``--param num_learners=4``; PPO's settings
are its ``ppo`` field, a :class:`~reactorfed.rl.PPOConfig`, set by dotted names:
``--param ppo.minibatch_size=64`` (each learner's). One ``seed``
gives the same weights in one process and federated (with the same ``--threads``,
1 by default).

``Main`` with ``max_samplers``: the samplers are one elastic bank, ``num_learners *
samplers_per_learner`` at the start, then between 1 and ``max_samplers`` as members join (a
``reactorfed federate`` process for a free slot) and leave (SIGTERM) while it trains;
sampler ``i`` feeds learner ``i mod num_learners``, and a learner whose samplers are all
absent sits a round out (the others' gradients are averaged; see
:mod:`reactorfed.rl.plans.data_parallel`). Training runs for the rounds ``total_timesteps``
takes at the initial width (``num_samplers``, in all, when given). The RTI's record (``--membership-out``) replayed
(``--membership``) gives the same weights::

    reactorfed rti examples/rl/ppo_data_parallel_cartpole.py:Main --param max_samplers=8 --param round_ms=20 --membership-out run.json
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed import ms
from reactorfed.rl import Backend, DataParallelPlan, ParamServerPlan, PPOConfig, RunConfig


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_learners: int = 2  # learners (Main) or gradient workers (ParamServer)
    samplers_per_learner: int = 1
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment
    backend: Backend = "gymnasium"  # what steps the copies: gymnasium, envpool or auto
    target_return: float = 475.0
    seed: int = 1
    checkpoint: str = "runs/ppo_data_parallel_cartpole.pt"
    checkpoint_every: int = 20
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 10
    trace: bool = False  # each result carries a hash of the weights after every step
    colocate: bool = False  # ParamServer: each worker and its samplers in one process (k8s: a pod)
    # PPO: rl-zoo's CartPole-v1 settings, minibatch_size each learner's (2 learners make rl-zoo's
    # 256 a step); ppo.total_timesteps is the run's budget (the learning rate and the clip range
    # anneal to 0 over it)
    ppo: PPOConfig = field(default_factory=lambda: PPOConfig(minibatch_size=128))
    # Main, > 0: the samplers are one elastic bank of 1 to max_samplers (num_learners *
    # samplers_per_learner at the start), sampler i feeding learner i mod num_learners, that
    # join and leave while it trains; the weights go back round_ms of logical time later
    # (0: the next microstep). Without --fast, rounds a few ms apart keep logical time near
    # physical time, where a join lands
    max_samplers: int = 0
    # elastic: the samplers at the start, in all (0: num_learners * samplers_per_learner); the
    # parameter a Kubernetes group of the samplers writes its width to
    num_samplers: int = 0
    round_ms: int = 0
    # elastic: each learner's result keeps a row per update (bench/rescale.py times rescaling with it)
    timeline: bool = False


def run_config(args: Args) -> RunConfig:
    """How the lead learner (or the server) runs training, from ``args``."""
    width = args.num_samplers if args.max_samplers and args.num_samplers else args.num_learners * args.samplers_per_learner
    per_round = width * args.num_envs * args.num_steps
    return RunConfig(
        iterations=math.ceil(args.ppo.total_timesteps / per_round),
        target_return=args.target_return,
        checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every,
        resume=args.resume, pause_after=args.pause_after,
        progress=args.progress,
        progress_every=args.progress_every,
        timeline=args.timeline,
    )

class Main(DataParallelPlan):
    def __init__(self, args: Args = Args()) -> None:
        super().__init__(args.ppo, args.env, num_learners=args.num_learners,
                         samplers_per_learner=args.samplers_per_learner, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run_config(args), seed=args.seed, backend=args.backend,
                         trace=args.trace, max_samplers=args.max_samplers, period=ms(args.round_ms),
                         initial_samplers=args.num_samplers)


class ParamServer(ParamServerPlan):
    def __init__(self, args: Args = Args()) -> None:
        super().__init__(args.ppo, args.env, num_workers=args.num_learners,
                         samplers_per_worker=args.samplers_per_learner, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run_config(args), seed=args.seed, backend=args.backend,
                         trace=args.trace, colocate=args.colocate)


if __name__ == "__main__":
    import sys

    from reactorfed import Environment

    Environment(fast=True).run(ParamServer() if sys.argv[1:] == ["param_server"] else Main())
