"""A program for SEED's plan's tests: PPO on CartPole under central batched inference,
with one sampler slowed down on purpose (physical time only: it sleeps before each step)."""

from __future__ import annotations

import time

import numpy as np

from reactorfed import reaction
from reactorfed.model.port import PortReader
from reactorfed.rl import PPOConfig, RunConfig, SeedPlan
from reactorfed.rl.plans import SeedSampler

SMALL = PPOConfig(minibatch_size=32, update_epochs=2, total_timesteps=2_000)


class _Dawdler(SeedSampler):
    """Sampler ``slow_index`` sleeps ``slow_ms`` before each of its steps."""

    slow_index = -1
    slow_ms = 0

    @reaction(triggers=[SeedSampler.actions])
    def dawdle(self, actions: PortReader[np.ndarray]) -> None:
        if self.bank_index == self.slow_index:
            time.sleep(self.slow_ms / 1000)


class SlowSeed(SeedPlan):
    def __init__(self, iterations: int = 3, slow_index: int = 0, slow_ms: int = 0, num_samplers: int = 2,
                 num_envs: int = 2, fragment_len: int = 16, seed: int = 3) -> None:
        # a class per program: the bank's members read the slow sampler from their class
        self.Sampler = type("Dawdler", (_Dawdler,), {"slow_index": slow_index, "slow_ms": slow_ms})
        super().__init__(SMALL, "CartPole-v1", num_samplers=num_samplers, num_envs=num_envs,
                         fragment_len=fragment_len, run=RunConfig(iterations=iterations), seed=seed, device="cpu")
