"""Sample generation (the paper's workloads 1 and 2) as a reactorfed program.

``num_samplers`` environment samplers feed one collector. ``pattern``:
``step`` (one step per sampler per tag, open loop), ``step-sync`` (the collector
starts every round: closed loop) or ``fragment`` (``fragment``-step rollouts).

    reactorfed run examples/rl/sampling.py:Main --fast --param env=CartPole-v1 --param pattern=step
    reactorfed run examples/rl/sampling.py:Main --fast --param env=Pong --param pattern=fragment --param fragment=100
    reactorfed launch examples/rl/sampling.py:Main --fast --param pattern=fragment --param num_envs=16 --param steps=320000

``num_envs`` (fragments only): each sampler steps that many copies of its environment as
a batch (CartPole has a native vectorised implementation, ~2.5x the steps per second of
one environment); ``steps`` counts environment steps in all copies.
"""

from __future__ import annotations

from reactorfed import Reactor, bank, each
from reactorfed.rl.samplers import Collector, EnvSampler


class Main(Reactor):
    def __init__(
        self,
        num_samplers: int = 2,
        env: str = "CartPole-v1",
        pattern: str = "step",
        fragment: int = 100,
        steps: int = 2000,
        result_path: str = "",
        num_envs: int = 1,
    ) -> None:
        if pattern not in ("step", "step-sync", "fragment"):
            raise ValueError(f"pattern must be step, step-sync or fragment, got {pattern!r}")
        if num_envs > 1 and pattern != "fragment":
            raise ValueError(f"num_envs > 1 needs pattern=fragment (got pattern={pattern})")
        frag = fragment if pattern == "fragment" else 0
        closed = pattern == "step-sync"
        per_sampler = steps // num_samplers // num_envs  # fragment rows per sampler
        self.samplers = bank(
            EnvSampler,
            num_samplers,
            env=env,
            seed=each(lambda i: 100 + i),
            steps=per_sampler,
            fragment=frag,
            closed_loop=closed,
            num_envs=num_envs,
        )
        self.collector = Collector(
            num_samplers, fragment=frag, rounds=per_sampler if closed else 0, result_path=result_path,
            num_envs=num_envs,
        )
        self.connect(self.samplers.obs, self.collector.obs)
        if closed:
            self.connect(self.collector.go, self.samplers.go, after=0, broadcast=True)
