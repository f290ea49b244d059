"""A program for the asynchronous plan's tests: APPO on CartPole with one sampler slowed
down on purpose (physical time only: it sleeps before each fragment)."""

from __future__ import annotations

import time

from reactorfed import ms, reaction
from reactorfed.rl import RunConfig
from reactorfed.rl.algos.appo.config import APPOConfig
from reactorfed.rl.plans.async_ import AsyncPlan, AsyncSampler


class _Dawdler(AsyncSampler):
    """Sampler ``slow_index`` sleeps ``slow_ms`` before each of its fragments."""

    slow_index = -1
    slow_ms = 0

    @reaction(triggers=[AsyncSampler.tick])
    def dawdle(self) -> None:
        if self.bank_index == self.slow_index:
            time.sleep(self.slow_ms / 1000)


class SlowAPPO(AsyncPlan):
    def __init__(self, iterations: int = 12, slow_index: int = 0, slow_ms: int = 0, seed: int = 3) -> None:
        # a class per program: the bank's members read the slow sampler from their class
        self.Sampler = type("Dawdler", (_Dawdler,), {"slow_index": slow_index, "slow_ms": slow_ms})
        super().__init__(APPOConfig(minibatch_size=32, update_epochs=2), "CartPole-v1", num_samplers=2, num_envs=2,
                         fragment_len=16, period=ms(4), weights_delay=ms(6), run=RunConfig(iterations=iterations),
                         seed=seed)
