"""Sample generation as a reactorfed program (the paper's Gym and Atari sampling).

``num_samplers`` environment samplers feed one collector. ``pattern``:
``step`` (one step per sampler per tag, open loop), ``step-sync`` (the collector
starts every round: closed loop) or ``fragment`` (``fragment``-step rollouts). Every
step goes to the collector whole (observation, action, reward, terminated, truncated,
episode return: one record row), as it would go to a learner.
The collector reports its throughput at the end (``reactorfed: result of ...``).

    reactorfed run examples/rl/sampling.py:Main --fast --param env=CartPole-v1 --param pattern=step
    reactorfed run examples/rl/sampling.py:Main --fast --param env=Pong --param pattern=fragment --param fragment=100
    reactorfed launch examples/rl/sampling.py:Main --fast --param pattern=fragment --param num_envs=16 --param steps=320000

``num_envs`` (fragments only): each sampler steps that many copies of its environment as
a batch (CartPole has a native vectorised implementation, ~2.5x the steps per second of
one environment); ``steps`` counts environment steps in all copies. ``backend``: what
steps them, gymnasium's vector environments or EnvPool's C++ engine (``envpool``, or
``auto``: EnvPool where it is installed and has the environment; ``bench/envpool_sampling.py``
compares the two)::

    reactorfed launch examples/rl/sampling.py:Main --fast --param pattern=fragment --param num_envs=16 --param backend=envpool
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reactorfed import Reactor, bank, each
from reactorfed.rl import Backend, Collector, EnvSampler


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    pattern: Literal["step", "step-sync", "fragment"] = "step"
    fragment: int = 100
    steps: int = 2000
    num_envs: int = 1
    backend: Backend = "gymnasium"


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        if args.pattern not in ("step", "step-sync", "fragment"):
            raise ValueError(f"pattern must be step, step-sync or fragment, got {args.pattern!r}")
        if args.num_envs > 1 and args.pattern != "fragment":
            raise ValueError(f"num_envs > 1 needs pattern=fragment (got pattern={args.pattern})")
        frag = args.fragment if args.pattern == "fragment" else 0
        closed = args.pattern == "step-sync"
        per_sampler = args.steps // args.num_samplers // args.num_envs  # fragment rows per sampler
        self.samplers = bank(
            EnvSampler,
            args.num_samplers,
            env=args.env,
            seed=each(lambda i: 100 + i),
            steps=per_sampler,
            fragment=frag,
            closed_loop=closed,
            num_envs=args.num_envs,
            backend=args.backend,
        )
        self.collector = Collector(args.num_samplers, rounds=per_sampler if closed else 0)
        self.connect(self.samplers.fragment, self.collector.fragments)
        self.connect(self.samplers.ready, self.collector.ready)
        if closed:
            self.connect(self.collector.go, self.samplers.go, after=0, broadcast=True)
