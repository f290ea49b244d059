"""The asynchronous execution plan, as a reactor program: samplers sample on their own
clocks, the learner learns from each fragment as it comes, and the policy's lag is
bounded and fixed by logical time (IMPALA's and APPO's plan; RLlib's asynchronous
sampling, made reproducible).

::

    learner.weights --(after weights_delay, broadcast)--> samplers[i].weights
    samplers[i].fragment ---------------------------------> learner.fragments[i]

Sampler ``i`` samples a fragment every ``period`` of logical time, at offsets staggered
over the period (``weights_delay + i * period / num_samplers``), with the newest weights
it holds; it does not wait for the learner. The learner learns at every tag a fragment
arrives at (one update from the fragments of that tag, in sampler order) and broadcasts
its payload, which reaches the samplers ``weights_delay`` later. So a fragment sampled at
``t`` was sampled with the weights the learner sent at or before ``t - weights_delay``:
the policy lags by at most ``ceil(weights_delay / (period / num_samplers))`` updates,
whatever the processes' speeds. Federated, a sampler needs the learner's progress only
up to ``t - weights_delay``: that much logical time is how far ahead of the learner it
may run. V-trace (:class:`~reactorfed.rl.APPOConfig`) corrects for the lag.

Because logical time orders everything that varies, a seed fixes the weights after ``k``
updates in one process and federated alike, a slow sampler included: what is slow only
waits. RLlib's asynchronous algorithms cannot promise that (ray-project/ray #37029).

The learner stops after ``run.iterations`` updates, or once the last 100 training
episodes average ``run.target_return``, and asks the federation to stop (the samplers'
clocks would run on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from reactorfed import (
    PortReader,
    PortWriter,
    Reactor,
    Timer,
    ValidationError,
    bank,
    each,
    ms,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..training import RunConfig
from .sampler import PlanSampler, sampler_seed
from .trainer import PlanTrainer

__all__ = ["AsyncPlan", "AsyncSampler", "AsyncTrainer", "policy_lag_bound"]


def policy_lag_bound(weights_delay: int, period: int, num_samplers: int) -> int:
    """The most updates a fragment's weights can be behind the learner's when it learns
    from it: updates happen at most every ``period / num_samplers``."""
    return math.ceil(weights_delay * num_samplers / period)


class AsyncSampler(PlanSampler):
    """Every ``period`` from ``offset``: steps ``num_envs`` copies of ``env`` for
    ``fragment_len`` rows with the newest weights it holds, and sends the fragment."""

    tick = Timer(offset="offset", period="period")

    def __init__(self, algo: Algorithm, env: str, space: SpaceInfo, num_envs: int, fragment_len: int,
                 seed: int, offset: int, period: int, backend: str = "gymnasium") -> None:
        super().__init__(algo, env, space, num_envs, fragment_len, seed, backend)
        self.offset, self.period = offset, period
        self.loaded = False

    # declared before collect: weights arriving at a tick are used by that tick's fragment
    @reaction(triggers=[PlanSampler.weights])
    def receive(self, weights: PortReader[np.ndarray]) -> None:
        self.load(weights.get())
        self.loaded = True

    @reaction(triggers=[tick], effects=[PlanSampler.fragment])
    def collect(self, fragment: PortWriter[np.ndarray]) -> None:
        # the first weights arrive at the first tick (offset >= weights_delay); a resumed
        # learner that has nothing left to do sends none: then nothing is sampled
        if self.loaded:
            fragment.set(self.sample())


class AsyncTrainer(PlanTrainer):
    """Learns from the fragments of each tag as they come, then broadcasts its payload;
    once training is over it asks the federation to stop (see
    :class:`~reactorfed.rl.plans.trainer.PlanTrainer` for the rest)."""

    done = False

    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        return not self.done  # fragments still under way after the stop was asked: not learned from

    def training_over(self) -> None:
        self.done = True
        self.request_stop()


class AsyncPlan(Reactor):
    """The asynchronous plan for ``algo`` on ``env``: ``num_samplers`` samplers of
    ``num_envs`` copies, ``fragment_len`` rows a fragment, one every ``period`` each,
    weights reaching them ``weights_delay`` after the learner sends them. A federated run
    puts each sampler and the learner in its own process. ``backend`` steps the samplers'
    copies (:mod:`~reactorfed.rl.envs.backends`).

    Subclass it for a program with its own settings (``super().__init__(...)``), and set
    :attr:`Sampler` for samplers of your own (an :class:`AsyncSampler` subclass)."""

    Sampler: type[AsyncSampler] = AsyncSampler

    def __init__(self, algo: Algorithm, env: str, *, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, period: int = ms(10), weights_delay: int = ms(10),
                 run: RunConfig | None = None, seed: int = 0, backend: str = "gymnasium") -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len),
                            ("period", period), ("weights_delay", weights_delay)):
            if not isinstance(value, int) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        space = SpaceInfo.of_env(env)
        self.samplers = bank(self.Sampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)),
                             offset=each(lambda i: weights_delay + i * period // num_samplers), period=period,
                             backend=backend)
        self.learner = AsyncTrainer(num_samplers, algo, space, run=run, seed=seed, weights_delay=weights_delay)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)
