"""The contract between a replay-based policy (Ape-X DQN) and the asynchronous-replay plan
(:mod:`reactorfed.rl.plans.apex`), beside :mod:`reactorfed.rl.contracts`'s for on-policy ones.

An on-policy learner learns from whole rollouts (:class:`~reactorfed.rl.contracts.Learner`);
a replay learner learns from prioritized batches of n-step transitions that replay shards
drew, and answers with new priorities. Its actor, besides acting, gives the transitions
it produced their initial priorities (Ape-X's actors do, with their own copy of the
network). An algorithm's config builds both sides, as :class:`~reactorfed.rl.contracts.Algorithm`
does, and says the ``gamma`` and ``n`` of its n-step returns, which the plan's samplers
compute. The replay itself (capacity, prioritization, batch size) is the plan's:
:class:`ReplayConfig`.

No torch here: a sampler builds its actor from this module's protocols alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..contracts import SpaceInfo

__all__ = ["ReplayActor", "ReplayAlgorithm", "ReplayBatch", "ReplayConfig", "ReplayLearner"]


@dataclass(frozen=True)
class ReplayConfig:
    """The plan's prioritized replay (Schaul et al. 2016; Ape-X's defaults for ``alpha``
    and ``beta0``), over all its shards."""

    #: transitions held over all shards (each holds its share, rounded up)
    capacity: int = 50_000
    alpha: float = 0.6
    #: importance-sampling exponent, annealed linearly to 1 over ``beta_steps`` updates
    beta0: float = 0.4
    beta_steps: int = 10_000
    #: added to |TD error| so that no transition's priority is 0
    eps: float = 1e-6
    #: transitions per learner update, split over the shards by their priority mass
    batch_size: int = 64
    #: no update before the shards hold this many transitions together
    learning_starts: int = 1_000

    def __post_init__(self) -> None:
        if self.capacity < 1 or self.batch_size < 1 or self.learning_starts < 0 or self.beta_steps < 0:
            raise ValueError("ReplayConfig: capacity and batch_size must be >= 1, learning_starts and "
                             "beta_steps >= 0")
        if self.alpha < 0 or self.eps <= 0 or not 0.0 <= self.beta0 <= 1.0:
            raise ValueError("ReplayConfig: alpha must be >= 0, eps > 0, beta0 in [0, 1]")


@dataclass(frozen=True, slots=True)
class ReplayBatch:
    """A learner's batch: n-step transitions and their importance-sampling weights."""

    obs: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    next_obs: np.ndarray
    discounts: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def of_rows(cls, rows: np.ndarray, weights: np.ndarray) -> ReplayBatch:
        """From rows with :func:`~reactorfed.rl.replay.nstep.transition_dtype`'s fields; aligned,
        contiguous copies (rows received from a shard may sit unaligned in a buffer)."""
        n = len(rows)
        return cls(obs=np.array(rows["obs"], dtype=np.float32).reshape(n, -1),
                   actions=np.array(rows["action"], dtype=np.int64),
                   returns=np.array(rows["ret"], dtype=np.float32),
                   next_obs=np.array(rows["next_obs"], dtype=np.float32).reshape(n, -1),
                   discounts=np.array(rows["discount"], dtype=np.float32),
                   weights=np.array(weights, dtype=np.float32))


class ReplayActor(Protocol):
    """The sampler's side: acts, and prioritises the transitions it produced."""

    def load(self, payload: np.ndarray) -> None:
        """Take the weights the learner broadcast (:meth:`ReplayLearner.payload`)."""

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions for ``obs`` shaped ``(k, *obs_shape)``, and their log-probabilities."""
        ...

    def priorities(self, t: np.ndarray) -> np.ndarray:
        """Raw initial priorities (|TD errors|) of n-step transitions ``t``."""
        ...


class ReplayLearner(Protocol):
    """The learner's side: learns from prioritized batches, emits weights and priorities."""

    #: environment steps the samplers reported so far
    env_steps: int
    #: gradient steps taken so far
    updates: int

    def payload(self) -> np.ndarray:
        """What samplers need to act: a flat float32 array."""
        ...

    def learn(self, batch: ReplayBatch) -> tuple[dict[str, float], np.ndarray]:
        """One update from ``batch``: its statistics, and the new raw priorities of its
        transitions (in batch order)."""
        ...

    def digest(self) -> str:
        """A hash of the weights: equal digests mean bit-identical weights."""
        ...

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write everything needed to resume, and ``extra`` (a plan's counters)."""
        ...

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]:
        """Resume from :meth:`save`'s file; returns the whole saved dict."""
        ...


class ReplayAlgorithm(Protocol):
    """A replay-based algorithm's settings, which build both sides of its policy."""

    @property
    def gamma(self) -> float: ...

    @property
    def n_step(self) -> int: ...

    def make_actor(self, space: SpaceInfo, seed: int, actors: Sequence[int] = (0,),
                   num_actors: int = 1) -> ReplayActor:
        """A sampler's actor for the environment copies ``actors`` (their indices among
        the plan's ``num_actors`` copies: an algorithm may explore differently in each);
        ``seed`` seeds its action sampling."""
        ...

    def make_learner(self, space: SpaceInfo, seed: int) -> ReplayLearner:
        """The learner; ``seed`` seeds its initial weights."""
        ...
