"""Population-based training of PPO on CartPole-v1, as reactors: copy this to start your own.

A population of ``pbt.population`` trials (each the synchronous PPO plan of
examples/rl/ppo_cartpole.py: 2 samplers of 4 copies, 32 steps, one learner) trains under a
controller. Every ``pbt.perturbation_interval`` learner iterations each trial reports the
mean return of its last 100 training episodes and waits; once all have reported, the
controller ranks them, the worst quarter takes the weights and Adam state of one of the
best quarter and a perturbation of its hyperparameters (x0.8 or x1.2, or drawn afresh with
probability 1/4), and all go on. It stops after ``pbt.iterations`` iterations per trial, or
at the first round whose best trial averages ``pbt.target`` (475). Every decision is a line
of ``DIR/decisions.jsonl`` (``DIR``: ``checkpoint``); each trial saves itself at each round
(``DIR/slot<s>/``) and the controller after each decision (``DIR/controller.pt``):
``resume=true`` carries on from the last round.

Federated (the RTI, one process for the controller and one per trial)::

    reactorfed launch examples/rl/pbt_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/pbt_cartpole.py:Main --fast
    python examples/rl/pbt_cartpole.py

Every field of :class:`Args` is a parameter: ``--param pbt.population=8``,
``--param space.learning_rate=1e-4,1e-2`` (a range; empty: not searched),
``--param ppo.update_epochs=10`` (the settings every trial starts from). One ``seed`` gives
the same decisions and the same final weights in one process and federated (with one torch
thread: ``OMP_NUM_THREADS=1``), whichever trial is slower: ``--param slow_trial=1
--param slow_ms=50`` slows one on purpose.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from reactorfed.rl import Backend, PPOConfig
from reactorfed.rl.tune import PBT, PBTConfig, PPOSpace, TuneProgram


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2  # per trial
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment: an iteration is num_samplers * num_envs * num_steps steps
    backend: Backend = "gymnasium"
    seed: int = 1
    # the population, the rounds, the budget (iterations per trial), the stop at a target
    pbt: PBTConfig = field(default_factory=lambda: PBTConfig(iterations=400, perturbation_interval=20, target=475.0))
    space: PPOSpace = field(default_factory=PPOSpace)
    # what every trial starts from (rl-zoo's CartPole-v1 settings); the learning rate and the
    # clip range anneal to 0 over the budget (pbt.iterations)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    checkpoint: str = "runs/pbt_cartpole"  # a folder ("": no checkpoints)
    resume: bool = False
    pause_after: int = 0  # end this run after that many decisions on reports (0: never); resume=true carries on
    decisions: str = ""  # the record ("": DIR/decisions.jsonl, or none without a checkpoint folder)
    progress: bool = True
    max_trials: int = 16  # the most trials the bank may hold
    slow_trial: int = -1  # this trial sleeps slow_ms in each update (-1: none)
    slow_ms: int = 0


class Main(TuneProgram):
    def __init__(self, args: Args = Args()) -> None:
        space = args.space.search_space()
        per_round = args.num_samplers * args.num_envs * args.num_steps
        ppo = dataclasses.replace(args.ppo, total_timesteps=max(1, args.pbt.iterations * per_round))
        decisions = args.decisions or (f"{args.checkpoint}/decisions.jsonl" if args.checkpoint else "")
        super().__init__(ppo, args.env, PBT(args.pbt, space, seed=args.seed), space, max_trials=args.max_trials,
                         num_samplers=args.num_samplers, num_envs=args.num_envs, fragment_len=args.num_steps,
                         seed=args.seed, backend=args.backend, decisions=decisions, checkpoint_dir=args.checkpoint,
                         resume=args.resume, progress=args.progress, pause_after=args.pause_after,
                         slow_trial=args.slow_trial, slow_ms=args.slow_ms)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
