"""Population-based training of DQN on CartPole-v1: copy this to start your own.

A population of ``pbt.population`` trials, each the synchronous plan with DQN
(:class:`~reactorfed.rl.SyncDQNConfig`: Ape-X's double-Q loss on 3-step returns and target
network, the prioritized replay in the learner; 2 samplers of 4 copies, 32 rows each per
iteration, then ``dqn.updates_per_iteration`` gradient steps), trains under a controller.
Every ``pbt.perturbation_interval`` iterations each trial reports the mean return of its
last 100 training episodes and waits; once all have reported, the worst quarter takes the
online and target networks, the Adam state and the update count (which places the next
target copy) of one of the best quarter, and a perturbation of its hyperparameters
(``space``: the learning rate, the target period, the batch). Each trial keeps its own
replay: its transitions are of its own environments, and Q-learning learns from anyone's
(see :mod:`reactorfed.rl.tune.exchange`). The discount, the n-step length and epsilon are
not searched here: a running trial's replay and samplers hold them (a search space naming
them is refused). Every decision is a line of ``DIR/decisions.jsonl``; each trial saves
itself, replay included, at each round (``DIR``: ``checkpoint``); ``resume=true`` carries
on from the last round.

Federated (the RTI, one process for the controller and one per trial)::

    reactorfed launch examples/rl/pbt_dqn_cartpole.py:Main --fast

In one process::

    python examples/rl/pbt_dqn_cartpole.py

Every field of :class:`Args` is a parameter (``--param dqn.epsilon=0.05``,
``--param space.batch_size=`` leaves it out of the search). One ``seed`` gives the same
decisions and final weights in one process and federated (``OMP_NUM_THREADS=1``),
whichever trial is slower (``--param slow_trial=1 --param slow_ms=50``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed.rl import Backend, SyncDQNConfig
from reactorfed.rl.tune import PBT, DQNSpace, PBTConfig, TuneProgram


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2  # per trial
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = (
        32  # rows per fragment: an iteration is num_samplers * num_envs * num_steps steps
    )
    backend: Backend = "gymnasium"
    seed: int = 1
    # the population, the rounds, the budget (iterations per trial), the stop at a target
    pbt: PBTConfig = field(
        default_factory=lambda: PBTConfig(iterations=400, perturbation_interval=20, target=475.0)
    )
    space: DQNSpace = field(default_factory=DQNSpace)
    # what every trial starts from: 256 env steps an iteration, 32 gradient steps of 64 rows
    dqn: SyncDQNConfig = field(default_factory=lambda: SyncDQNConfig(updates_per_iteration=32))
    checkpoint: str = "runs/pbt_dqn_cartpole"  # a folder ("": no checkpoints)
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
