"""A program for the asynchronous-replay plan's tests: Ape-X DQN on CartPole with two
shards and one sampler slowed down on purpose (physical time only: it sleeps before each
fragment)."""

from __future__ import annotations

import time

from reactorfed import ms, reaction
from reactorfed.rl import RunConfig
from reactorfed.rl.algos.apex.config import ApexDQNConfig
from reactorfed.rl.plans.apex import ApexPlan, ApexSampler
from reactorfed.rl.replay.contracts import ReplayConfig


class _Dawdler(ApexSampler):
    """Sampler ``slow_index`` sleeps ``slow_ms`` before each of its fragments."""

    slow_index = -1
    slow_ms = 0

    @reaction(triggers=[ApexSampler.tick])
    def dawdle(self) -> None:
        if self.bank_index == self.slow_index:
            time.sleep(self.slow_ms / 1000)


class SlowApex(ApexPlan):
    def __init__(self, iterations: int = 40, slow_index: int = 0, slow_ms: int = 0, num_shards: int = 2,
                 seed: int = 3) -> None:
        # a class per program: the bank's members read the slow sampler from their class
        self.Sampler = type("Dawdler", (_Dawdler,), {"slow_index": slow_index, "slow_ms": slow_ms})
        super().__init__(ApexDQNConfig(hidden=(32, 32), target_update_interval=10), "CartPole-v1",
                         num_samplers=2, num_shards=num_shards, num_envs=2, fragment_len=8, period=ms(8),
                         learn_period=ms(1), prefetch=2, weights_every=3, weights_delay=ms(5),
                         replay=ReplayConfig(capacity=100, batch_size=16, learning_starts=64, beta_steps=50),
                         run=RunConfig(iterations=iterations), seed=seed)
