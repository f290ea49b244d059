"""Population-based training of Ape-X DQN on CartPole-v1, each trial on Ape-X's plan: copy
this to start your own.

A population of ``pbt.population`` trials, each Ape-X's plan of
examples/rl/apex_dqn_cartpole.py with the replay in the learner (2 samplers of 4 copies, a
16-row fragment every ``period_ms`` each, staggered; the 8 copies on Ape-X's ladder of
epsilons ``0.4^(1 + 7 i / 7)``; the samplers build 3-step transitions and prioritise them
with their copy of the network; weights reach them ``weights_delay_ms`` after the learner
sends them), trains under a controller. A learner iteration adds one fragment's
transitions to its prioritized replay and takes ``updates_per_iteration`` double
Q-learning steps on batches of ``replay.batch_size``. Every ``pbt.perturbation_interval``
iterations each trial reports the mean return of its last 100 training episodes
(exploring copies included) and waits; the iterations fall at tags the samplers' clocks
fix, the same in every trial, so a round gathers at one tag: the worst quarter takes the
online and target networks, the Adam state and the update count of one of the best
quarter, and a perturbation of its hyperparameters (``space``: the learning rate, the
target period). Each trial keeps its own replay (see :mod:`reactorfed.rl.tune.exchange`).
The discount, the n-step length and the epsilons are not searched: the samplers hold them
(a search space naming them is refused). Every decision is a line of
``DIR/decisions.jsonl``; each trial saves itself, replay included, at each round
(``DIR``: ``checkpoint``); ``resume=true`` carries on from the last round.

Federated (the RTI, one process for the controller and one per trial)::

    reactorfed launch examples/rl/pbt_apex_cartpole.py:Main --fast

In one process::

    python examples/rl/pbt_apex_cartpole.py

Every field of :class:`Args` is a parameter (``--param dqn.epsilon=0.5``,
``--param replay.batch_size=32``, ``--param space.target_update_interval=`` leaves it out
of the search). One ``seed`` gives the same decisions and final weights in one process
and federated (``OMP_NUM_THREADS=1``), whichever trial is slower
(``--param slow_trial=1 --param slow_ms=50``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed import ms
from reactorfed.rl import ApexDQNConfig, Backend, ReplayConfig
from reactorfed.rl.tune import PBT, ApexSpace, PBTConfig, TuneProgram


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2  # per trial
    num_envs: int = 4  # environment copies per sampler, each an actor with its own epsilon
    num_steps: int = 16  # rows per fragment: a learner iteration adds one's transitions
    period_ms: int = 16  # logical time between two fragments of one sampler
    weights_delay_ms: int = 16  # logical time from the learner's send to the samplers
    updates_per_iteration: int = 8  # gradient steps per iteration
    backend: Backend = "gymnasium"
    seed: int = 1
    # the population, the rounds, the budget (iterations per trial), the stop at a target
    pbt: PBTConfig = field(
        default_factory=lambda: PBTConfig(iterations=1600, perturbation_interval=80, target=195.0)
    )
    space: ApexSpace = field(default_factory=ApexSpace)
    dqn: ApexDQNConfig = field(default_factory=ApexDQNConfig)  # what every trial starts from
    replay: ReplayConfig = field(default_factory=ReplayConfig)  # each trial's prioritized replay
    checkpoint: str = "runs/pbt_apex_cartpole"  # a folder ("": no checkpoints)
    resume: bool = False
    pause_after: int = (
        0  # end this run after that many decisions on reports (0: never); resume=true carries on
    )
    decisions: str = ""  # the record ("": DIR/decisions.jsonl, or none without a checkpoint folder)
    progress: bool = True
    max_trials: int = 16  # the most trials the bank may hold
    slow_trial: int = -1  # this trial sleeps slow_ms in each update (-1: none)
    slow_ms: int = 0


class Main(TuneProgram):
    def __init__(self, args: Args = Args()) -> None:
        space = args.space.search_space()
        decisions = args.decisions or (
            f"{args.checkpoint}/decisions.jsonl" if args.checkpoint else ""
        )
        super().__init__(
            args.dqn,
            args.env,
            PBT(args.pbt, space, seed=args.seed),
            space,
            plan="apex",
            period=ms(args.period_ms),
            weights_delay=ms(args.weights_delay_ms),
            replay=args.replay,
            updates_per_iteration=args.updates_per_iteration,
            max_trials=args.max_trials,
            num_samplers=args.num_samplers,
            num_envs=args.num_envs,
            fragment_len=args.num_steps,
            seed=args.seed,
            backend=args.backend,
            decisions=decisions,
            checkpoint_dir=args.checkpoint,
            resume=args.resume,
            progress=args.progress,
            pause_after=args.pause_after,
            slow_trial=args.slow_trial,
            slow_ms=args.slow_ms,
        )


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
