"""Sample generation (the paper's workloads 1 and 2) as a reactorfed program.

``num_samplers`` environment samplers feed one collector. ``pattern``:
``step`` (one step per sampler per tag, open loop), ``step-sync`` (the collector
starts every round: closed loop) or ``fragment`` (``fragment``-step rollouts).

    reactorfed run examples/rl/sampling.py:Main --fast --param env=CartPole-v1 --param pattern=step
    reactorfed run examples/rl/sampling.py:Main --fast --param env=Pong --param pattern=fragment --param fragment=100
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
    ) -> None:
        if pattern not in ("step", "step-sync", "fragment"):
            raise ValueError(f"pattern must be step, step-sync or fragment, got {pattern!r}")
        frag = fragment if pattern == "fragment" else 0
        closed = pattern == "step-sync"
        per_sampler = steps // num_samplers
        self.samplers = bank(
            EnvSampler,
            num_samplers,
            env=env,
            seed=each(lambda i: 100 + i),
            steps=per_sampler,
            fragment=frag,
            closed_loop=closed,
        )
        self.collector = Collector(
            num_samplers, fragment=frag, rounds=per_sampler if closed else 0, result_path=result_path
        )
        self.connect(self.samplers.obs, self.collector.obs)
        if closed:
            self.connect(self.collector.go, self.samplers.go, after=0, broadcast=True)
