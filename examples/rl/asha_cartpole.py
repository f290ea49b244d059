"""Hyperparameter search for PPO on CartPole-v1 with asynchronous successive halving (ASHA),
or a plain random or grid search, as reactors: copy this to start your own.

``search.slots`` trials train at once (each the synchronous PPO plan of
examples/rl/ppo_cartpole.py); ``search.num_samples`` configurations are drawn from
``space`` (``search.kind=grid``: every point of its grid, ``search.grid_points`` values per
range). With ``scheduler=asha`` a trial reports at each rung (``asha.grace_period``
iterations, then x ``asha.reduction_factor``) and goes on only if its mean return of the
last 100 training episodes is in the best 1/``reduction_factor`` recorded at that rung so
far; a stopped trial's slot takes the next configuration. With ``scheduler=fifo`` every
trial runs its whole budget (``search.iterations``). Every decision is a line of
``DIR/decisions.jsonl`` (``DIR``: ``checkpoint``); trials save themselves at each report,
the controller after each decision: ``resume=true`` carries on.

Federated (the RTI, one process for the controller and one per slot)::

    reactorfed launch examples/rl/asha_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/asha_cartpole.py:Main --fast

One ``seed`` gives the same decisions and the same weights in one process and federated
(with one torch thread), whichever trial is slower (``--param slow_trial=0 --param slow_ms=50``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from reactorfed.rl import Backend, PPOConfig
from reactorfed.rl.tune import ASHA, ASHAConfig, PPOSpace, Search, SearchConfig, TuneProgram


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2  # per trial
    num_envs: int = 4  # environment copies per sampler
    num_steps: int = 32  # rows per fragment: an iteration is num_samplers * num_envs * num_steps steps
    backend: Backend = "gymnasium"
    seed: int = 1
    scheduler: Literal["asha", "fifo"] = "asha"  # fifo: every trial to its budget
    search: SearchConfig = field(default_factory=lambda: SearchConfig(num_samples=12, slots=4, iterations=270))
    asha: ASHAConfig = field(default_factory=lambda: ASHAConfig(grace_period=10, reduction_factor=3))
    space: PPOSpace = field(default_factory=PPOSpace)
    # what every trial starts from (rl-zoo's CartPole-v1 settings); the learning rate and the
    # clip range anneal to 0 over the budget (search.iterations)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    checkpoint: str = "runs/asha_cartpole"  # a folder ("": no checkpoints)
    resume: bool = False
    pause_after: int = 0  # end this run after that many decisions on reports (0: never); resume=true carries on
    decisions: str = ""  # the record ("": DIR/decisions.jsonl, or none without a checkpoint folder)
    progress: bool = True
    max_trials: int = 16  # the most slots the bank may hold
    slow_trial: int = -1  # this slot sleeps slow_ms in each update (-1: none)
    slow_ms: int = 0


class Main(TuneProgram):
    def __init__(self, args: Args = Args()) -> None:
        space = args.space.search_space()
        if args.scheduler == "asha":
            scheduler: Search = ASHA(args.search, args.asha, space, seed=args.seed)
        else:
            scheduler = Search(args.search, space, seed=args.seed)
        per_round = args.num_samplers * args.num_envs * args.num_steps
        ppo = dataclasses.replace(args.ppo, total_timesteps=max(1, args.search.iterations * per_round))
        decisions = args.decisions or (f"{args.checkpoint}/decisions.jsonl" if args.checkpoint else "")
        super().__init__(ppo, args.env, scheduler, space, max_trials=args.max_trials, num_samplers=args.num_samplers,
                         num_envs=args.num_envs, fragment_len=args.num_steps, seed=args.seed, backend=args.backend,
                         decisions=decisions, checkpoint_dir=args.checkpoint, resume=args.resume,
                         progress=args.progress, pause_after=args.pause_after, slow_trial=args.slow_trial,
                         slow_ms=args.slow_ms)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
