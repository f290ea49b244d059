"""The synchronous execution plan, as a reactor program: every sampler delivers a fragment,
the learner updates, the weights are broadcast (PPO's plan; RLlib's synchronous sampling).

::

    learner.weights --(after 0, broadcast)--> samplers[i].weights
    samplers[i].fragment ---------------------> learner.fragments[i]

Each round: the learner sends its payload; each of ``num_samplers`` samplers steps its
``num_envs`` environment copies ``fragment_len`` times with it and sends the packed
:class:`~reactorfed.rl.rollout.Rollout`; every fragment arrives at one tag, and the
learner learns from them in sampler order, then sends the new payload one microstep
later. The policy lags by nothing: each fragment is sampled with the weights of the
update before. Logical time orders everything that varies, so a seed fixes the weights
after ``k`` updates in one process and federated alike.

The plan knows nothing of the algorithm: it builds an actor in each sampler and a
learner through an :class:`~reactorfed.rl.contracts.Algorithm` (e.g.
:class:`~reactorfed.rl.PPOConfig`). Both are built in their reactor's startup
reaction, so a federate builds only its own (a sampler process never imports torch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reactorfed import PortReader, PortWriter, Reactor, ValidationError, bank, each, reaction

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..training import RunConfig
from .sampler import PlanSampler, sampler_seed
from .trainer import PlanTrainer

__all__ = ["SyncPlan", "SyncSampler", "SyncTrainer", "sampler_seed"]


class SyncSampler(PlanSampler):
    """Steps ``num_envs`` copies of ``env`` for ``fragment_len`` rows each time weights arrive."""

    @reaction(triggers=[PlanSampler.weights], effects=[PlanSampler.fragment])
    def collect(self, weights: PortReader[np.ndarray], fragment: PortWriter[np.ndarray]) -> None:
        self.load(weights.get())
        fragment.set(self.sample())


class SyncTrainer(PlanTrainer):
    """Learns from every sampler's fragment at once, then broadcasts its payload (see
    :class:`~reactorfed.rl.plans.trainer.PlanTrainer` for the rest)."""

    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        # the plan's invariant: every sampler's fragment arrives at the tag of the round
        assert len(present) == self.n, f"{len(present)} of {self.n} fragments at one tag"
        return True


class SyncPlan(Reactor):
    """The synchronous plan for ``algo`` on ``env``: ``num_samplers`` samplers of ``num_envs``
    copies, ``fragment_len`` rows each per round, one learner. A federated run puts each
    sampler and the learner in its own process (they are the main reactor's children).
    ``backend`` steps the samplers' copies (:mod:`~reactorfed.rl.envs.backends`).

    Subclass it for a program with its own settings (``super().__init__(...)``)."""

    def __init__(self, algo: Algorithm, env: str, *, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium") -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len)):
            if not isinstance(value, int) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        space = SpaceInfo.of_env(env)
        self.samplers = bank(SyncSampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)), backend=backend)
        self.learner = SyncTrainer(num_samplers, algo, space, run=run, seed=seed)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
