"""A uniform replay buffer on preallocated numpy arrays (CleanRL's layout)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Batch", "ReplayBuffer"]


@dataclass(slots=True)
class Batch:
    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_obs: np.ndarray
    dones: np.ndarray


class ReplayBuffer:
    """Ring buffer of transitions; sampling draws from a caller-supplied generator.

    Sampling takes the generator as an argument so that the learner owns all its
    randomness and two runs with one seed draw the same indices.
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype | type = np.float32,
        action_dtype: np.dtype | type = np.int64,
    ) -> None:
        self.capacity = capacity
        self.obs = np.zeros((capacity, *obs_shape), dtype=obs_dtype)
        self.next_obs = np.zeros((capacity, *obs_shape), dtype=obs_dtype)
        self.actions = np.zeros(capacity, dtype=action_dtype)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self._pos = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(
        self,
        obs: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: np.ndarray,
        dones: np.ndarray,
    ) -> None:
        """Append a batch of ``n`` transitions (leading axis), overwriting the oldest."""
        n = len(actions)
        if n > self.capacity:
            obs, actions, rewards, next_obs, dones = (
                a[-self.capacity :] for a in (obs, actions, rewards, next_obs, dones)
            )
            n = self.capacity
        idx = (self._pos + np.arange(n)) % self.capacity
        self.obs[idx] = obs
        self.next_obs[idx] = next_obs
        self.actions[idx] = actions
        self.rewards[idx] = rewards
        self.dones[idx] = dones
        self._pos = (self._pos + n) % self.capacity
        self._size = min(self._size + n, self.capacity)

    def state(self) -> dict[str, Any]:
        """The contents, for a checkpoint (the part filled, in slot order, and where the next goes)."""
        n = self._size
        return {"obs": self.obs[:n].copy(), "next_obs": self.next_obs[:n].copy(), "actions": self.actions[:n].copy(),
                "rewards": self.rewards[:n].copy(), "dones": self.dones[:n].copy(), "pos": self._pos, "size": n}

    def restore(self, state: dict[str, Any]) -> None:
        """Hold :meth:`state`'s contents again (a buffer of the same capacity and shapes)."""
        n = int(state["size"])
        if n > self.capacity:
            raise ValueError(f"a replay of {n} transitions does not fit a buffer of {self.capacity}")
        for name in ("obs", "next_obs", "actions", "rewards", "dones"):
            getattr(self, name)[:n] = state[name]
        self._pos, self._size = int(state["pos"]), n

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        """``batch_size`` transitions drawn uniformly with replacement."""
        if self._size == 0:
            raise ValueError("sample from an empty replay buffer")
        idx = rng.integers(0, self._size, size=batch_size)
        return Batch(self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.dones[idx])
