"""The contract between a policy and an execution plan (RLlib's policy / policy optimizer
split).

A *policy* is an algorithm's model, loss and action selection, and its settings. It has
two sides: the :class:`Actor` a sampler acts with (a copy of the weights that matter for
acting, loaded from a payload the learner broadcasts), and the :class:`Learner` that
turns rollouts into new weights. An :class:`Algorithm` (a config dataclass) builds both.

An *execution plan* (:mod:`reactorfed.rl.plans.sync`, ...) is a reactor program that
decides who samples, when the learner learns and how weights travel; it knows nothing
of the loss. Payloads are single float32 arrays, so they cross federates as raw buffers.

This module imports no torch: a sampler process builds its actor without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .envs.runner import make_env
from .rollout import Rollout

__all__ = ["EPISODES_UNDER_WAY", "Actor", "Algorithm", "GradientLearner", "Learner", "SpaceInfo"]

#: the key of a learner's state that belongs to its samplers' episodes under way (a DQN
#: learner's open n-step returns): a resume loads it only with the samplers' own states,
#: which carry those episodes on; without them the samplers start new episodes
EPISODES_UNDER_WAY = "episodes_under_way"


@dataclass(frozen=True)
class SpaceInfo:
    """What a policy needs to know of an environment: one observation's shape, and the
    number of (discrete) actions. ``state_dim``: the size of what a centralized critic sees
    besides (MAPPO's global state, carried in each row after the observation; 0: none)."""

    obs_shape: tuple[int, ...]
    num_actions: int
    state_dim: int = 0

    @property
    def obs_dim(self) -> int:
        """Elements of one observation, flattened (what a fully connected network takes)."""
        return int(np.prod(self.obs_shape))

    @classmethod
    def of_env(cls, name: str) -> SpaceInfo:
        """Probe the environment ``name`` (built once, then closed)."""
        env = make_env(name)
        try:
            obs, act = env.observation_space, env.action_space
            n = getattr(act, "n", None)
            if n is None or obs.shape is None:
                raise ValueError(f"{name}: a policy here needs a Box observation and a Discrete action space")
            return cls(tuple(obs.shape), int(n))
        finally:
            env.close()


class Actor(Protocol):
    """The sampler's side of a policy: acts on a batch of observations."""

    def load(self, payload: np.ndarray) -> None:
        """Take the weights the learner broadcast (:meth:`Learner.payload`)."""

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions for ``obs`` shaped ``(k, *obs_shape)``, and their log-probabilities under
        the acting policy (the behaviour policy, which a learner corrects for)."""
        ...


class Learner(Protocol):
    """The learner's side of a policy: consumes rollouts, emits weights."""

    #: transitions learned from so far (reset rows of a vector environment excluded)
    env_steps: int
    #: gradient steps taken so far
    updates: int

    def payload(self) -> np.ndarray:
        """What samplers need to act: a flat float32 array."""
        ...

    def learn(self, rollouts: Sequence[Rollout]) -> dict[str, float]:
        """One update from ``rollouts`` (in a fixed order: the plan's); its statistics."""
        ...

    def digest(self) -> str:
        """A hash of the weights: equal digests mean bit-identical weights."""
        ...

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write everything needed to resume, and ``extra`` (a plan's counters)."""
        ...

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]:
        """Resume from :meth:`save`'s file; returns the whole saved dict (``extra`` in it)."""
        ...


@runtime_checkable
class GradientLearner(Learner, Protocol):
    """A learner whose update a plan can take one gradient step at a time, to average each
    step's gradient over several learners (:mod:`~reactorfed.rl.plans.data_parallel`,
    :mod:`~reactorfed.rl.plans.param_server`): :meth:`prepare` a share of the round,
    :meth:`plan_update` with every learner's count, then :meth:`gradient` and
    :meth:`apply_gradient` (the average) in turn, then :meth:`finish_update`. Learners that
    apply the same averages from the same state hold bit-identical weights.
    (:class:`~reactorfed.rl.algos.ppo.learner.PPOLearner` is one.)"""

    def prepare(self, rollouts: Sequence[Rollout]) -> int:
        """Begin an update from ``rollouts`` (this learner's share); returns its transitions."""
        ...

    def plan_update(self, counts: Sequence[int], rng: np.random.Generator | None = None) -> int:
        """The update's schedule from every learner's count (learner order), minibatch
        orders drawn from ``rng`` (None: nothing prepared, only applying); the steps planned."""
        ...

    def gradient(self) -> np.ndarray:
        """The next planned step's gradient (and statistics), flat float32."""
        ...

    def apply_gradient(self, mean: np.ndarray) -> bool:
        """One optimizer step on the learners' average of :meth:`gradient`; False (no step)
        when the algorithm ends the update early."""
        ...

    def finish_update(self) -> dict[str, float]:
        """The update's statistics."""
        ...

    def flat_parameters(self) -> np.ndarray:
        """Every parameter, flat float32 (a gradient worker's weights)."""
        ...

    def load_flat_parameters(self, flat: np.ndarray) -> None:
        """Take :meth:`flat_parameters`' array as the weights."""


class Algorithm(Protocol):
    """An algorithm's settings, which build both sides of its policy."""

    def make_actor(self, space: SpaceInfo, seed: int) -> Actor:
        """A sampler's actor; ``seed`` seeds its action sampling."""
        ...

    def make_learner(self, space: SpaceInfo, seed: int) -> Learner:
        """The learner; ``seed`` seeds its initial weights and minibatch order."""
        ...
