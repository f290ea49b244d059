"""PPO with a CNN on MinAtar Breakout, trained by reactors under the synchronous plan:
copy this to start your own (``env=MinAtar/SpaceInvaders-v1``, ``Asterix``, ``Freeway``,
``Seaquest`` take the same network).

MinAtar (Young and Tian 2019) is Atari in miniature: 10x10 frames of C boolean channels
(Breakout: paddle, ball, trail, bricks), sticky actions, difficulty ramping; it needs
``pip install 'reactorfed[minatar]'``. The network is MinAtar's reference one, a 3x3
convolution of 16 filters and 128 units, with a policy and a value head; samplers act
with a numpy copy of its policy half (no torch in a sampler), the learner trains it with
torch (:class:`~reactorfed.rl.algos.ppo.conv_config.ConvPPOConfig`, whose docstring says
where the hyper-parameters come from: purejaxrl's and gymnax-blines' MinAtar PPO).

Each round, 2 samplers step 8 copies of the game 128 times each with the learner's latest
policy; the learner computes GAE advantages, takes 4 epochs of 8 minibatches and
broadcasts the new policy. Training stops after ``ppo.total_timesteps`` steps, or once the
last 100 training episodes average ``target_return``; the learner prints the verdict and
saves a checkpoint (``checkpoint``, loadable with ``ConvPPOLearner.load``; ``resume=true``
carries on from it).

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/ppo_minatar.py:Main --fast

In one process::

    reactorfed run examples/rl/ppo_minatar.py:Main --fast

Measured here (``python -m bench.minatar --total-timesteps 5000000``: bench/results/minatar_ppo.jsonl
and .png; federated, seed 1, on 2 cores shared with a 256-process benchmark, load average
about 240 for most of the run): the last 100 training episodes averaged 4.3 after 100k env
steps (54 s of training), 6.1 after 1M (8 min), 10.1 after 2M (16 min) and 11.8 at the end,
4.94M steps in 28.7 min (2,870 steps/s; about 9,800 steps/s on a quiet machine). A uniformly
random policy averages 0.39 (1,000 episodes).

Every field of :class:`Args` is a parameter: ``--param num_samplers=4``; PPO's settings
and the network's are its ``ppo`` field, a :class:`~reactorfed.rl.ConvPPOConfig`, set by
dotted names: ``--param ppo.channels=32``. The run is deterministic: one ``seed`` gives
the same weights in one process and federated (with the same ``--threads``, 1 by
default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reactorfed.rl import Backend, ConvPPOConfig, RunConfig, SyncPlan


@dataclass(frozen=True)
class Args:
    env: str = "MinAtar/Breakout-v1"
    num_samplers: int = 2
    num_envs: int = 8  # environment copies per sampler
    num_steps: int = 128  # rows per fragment: a round is num_samplers * num_envs * num_steps steps
    backend: Backend = "gymnasium"  # MinAtar has no EnvPool engine: gymnasium's SyncVectorEnv
    target_return: float | None = None  # stop early once the last 100 episodes average this
    seed: int = 1
    checkpoint: str = "runs/ppo_minatar.pt"
    checkpoint_every: int = 20
    resume: bool = False
    pause_after: int = 0  # end after that many updates, with a checkpoint, for a later resume=true
    progress: bool = True
    progress_every: int = 10
    curve: bool = False  # keep the learning curve in the result (bench/minatar.py writes it out)
    # PPO and the network: ConvPPOConfig's defaults are purejaxrl's and gymnax-blines' MinAtar
    # settings (a round's 2048 transitions in 8 minibatches of 256; MinAtar's reference network,
    # 16 3x3 filters and 128 units); ppo.total_timesteps is the run's budget (the learning rate
    # anneals to 0 over it)
    ppo: ConvPPOConfig = field(default_factory=ConvPPOConfig)


class Main(SyncPlan):
    def __init__(self, args: Args = Args()) -> None:
        per_round = args.num_samplers * args.num_envs * args.num_steps
        run = RunConfig(
            iterations=math.ceil(args.ppo.total_timesteps / per_round),
            target_return=args.target_return,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume,
            pause_after=args.pause_after,
            progress=args.progress,
            progress_every=args.progress_every,
            curve=args.curve,
        )
        super().__init__(args.ppo, args.env, num_samplers=args.num_samplers, num_envs=args.num_envs,
                         fragment_len=args.num_steps, run=run, seed=args.seed, backend=args.backend)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
