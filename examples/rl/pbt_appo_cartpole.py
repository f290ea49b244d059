"""Population-based training of APPO on CartPole-v1, each trial on the asynchronous plan:
copy this to start your own.

A population of ``pbt.population`` trials, each the asynchronous APPO plan of
examples/rl/appo_cartpole.py (2 samplers of 4 copies, a 32-row fragment every
``period_ms`` each, staggered; weights reaching them ``weights_delay_ms`` after the learner
sends them; V-trace corrects for the lag), trains under a controller. Every
``pbt.perturbation_interval`` learner updates each trial reports the mean return of its
last 100 training episodes and waits; the updates fall at tags the samplers' clocks fix,
the same in every trial, so a round gathers at one tag: the controller ranks the trials,
the worst quarter takes the weights and Adam state of one of the best quarter and a
perturbation of its hyperparameters, and all go on at the next microstep. Every decision
is a line of ``DIR/decisions.jsonl``; trials and controller save themselves at each round
(``DIR``: ``checkpoint``); ``resume=true`` carries on from the last round.

Federated (the RTI, one process for the controller and one per trial)::

    reactorfed launch examples/rl/pbt_appo_cartpole.py:Main --fast

In one process::

    python examples/rl/pbt_appo_cartpole.py

Every field of :class:`Args` is a parameter (``--param appo.update_epochs=1``,
``--param space.vtrace_lambda=`` leaves it out of the search). One ``seed`` gives the same
decisions and final weights in one process and federated (``OMP_NUM_THREADS=1``),
whichever trial is slower (``--param slow_trial=1 --param slow_ms=50``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed import ms
from reactorfed.rl import APPOConfig, Backend
from reactorfed.rl.tune import PBT, APPOSpace, PBTConfig, TuneProgram


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2  # per trial
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment: a learner update learns from one
    period_ms: int = 10  # logical time between two fragments of one sampler
    weights_delay_ms: int = 10  # logical time from the learner's send to the samplers
    backend: Backend = "gymnasium"
    seed: int = 1
    # the population, the rounds, the budget (learner updates per trial), the stop at a target
    pbt: PBTConfig = field(
        default_factory=lambda: PBTConfig(iterations=1600, perturbation_interval=80, target=475.0)
    )
    space: APPOSpace = field(default_factory=APPOSpace)
    # what every trial starts from (examples/rl/appo_cartpole.py's settings)
    appo: APPOConfig = field(default_factory=lambda: APPOConfig(update_epochs=2, minibatch_size=64))
    checkpoint: str = "runs/pbt_appo_cartpole"  # a folder ("": no checkpoints)
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
            args.appo,
            args.env,
            PBT(args.pbt, space, seed=args.seed),
            space,
            plan="async",
            period=ms(args.period_ms),
            weights_delay=ms(args.weights_delay_ms),
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
