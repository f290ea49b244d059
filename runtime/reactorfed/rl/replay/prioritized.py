"""Proportional prioritized replay (Schaul et al. 2016, "Prioritized experience replay",
section 3.3): a ring of ``capacity`` transitions, each with priority ``p_i = |delta_i| + eps``,
sampled with probability

    P(i) = p_i^alpha / sum_k p_k^alpha

and corrected by importance-sampling weights

    w_i = (N * P(i))^-beta / max_j w_j

where ``N`` is the number of transitions held and ``beta`` is annealed towards 1 over
training (:func:`annealed_beta`). The masses ``p_i^alpha`` live in a :class:`SumTree`.

Sampling is stratified (the paper's appendix B.2.1): ``[0, total)`` is cut into ``k``
equal segments and one value drawn uniformly in each, so a batch covers the whole range
of priorities. Every draw comes from a caller's seeded numpy :class:`~numpy.random.Generator`:
the same generator state and the same buffer give the same samples.

A transition is known by its *id*, the count of transitions added before it: ids never
repeat, so a priority update for a transition the ring has since overwritten is told apart
and ignored (:meth:`PrioritizedReplay.update` counts them) instead of re-weighting the
newcomer in its slot. The rows are any structured numpy dtype (a replay shard keeps
:mod:`reactorfed.rl.replay.nstep` transitions); storage is allocated at the first :meth:`add`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .sum_tree import SumTree

__all__ = ["PrioritizedReplay", "annealed_beta", "importance_weights", "stratified_masses"]


def importance_weights(probs: np.ndarray, n: int, beta: float) -> np.ndarray:
    """``(n * P(i))^-beta``, divided by the batch's largest so that weights only scale
    updates down (Schaul et al.: "for stability reasons"). float64."""
    p = np.asarray(probs, dtype=np.float64)
    if p.size == 0:
        return p.copy()
    if n < 1 or np.any(p <= 0):
        raise ValueError("importance weights need n >= 1 and positive probabilities")
    w = (n * p) ** (-beta)
    return w / w.max()


def annealed_beta(beta0: float, steps: int, t: int) -> float:
    """``beta`` after ``t`` of ``steps`` learner updates: linear from ``beta0`` to 1, then 1."""
    if steps <= 0:
        return 1.0
    return min(1.0, beta0 + (1.0 - beta0) * t / steps)


def stratified_masses(total: float, k: int, rng: np.random.Generator) -> np.ndarray:
    """One value drawn uniformly in each of ``k`` equal segments of ``[0, total)``."""
    return (np.arange(k, dtype=np.float64) + rng.random(k)) * (total / k)


class PrioritizedReplay:
    """A ring of ``capacity`` rows with proportional priorities (``alpha``, ``eps``)."""

    def __init__(self, capacity: int, alpha: float = 0.6, eps: float = 1e-6) -> None:
        if not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"replay capacity must be an int >= 1, got {capacity!r}")
        if alpha < 0 or eps <= 0:
            raise ValueError(f"replay: alpha must be >= 0 and eps > 0, got {alpha}, {eps}")
        self.capacity, self.alpha, self.eps = capacity, alpha, eps
        self.tree = SumTree(capacity)
        self.rows: np.ndarray | None = None
        #: transitions ever added: the next one's id
        self.added = 0
        #: priority updates that named a transition no longer held
        self.stale_updates = 0

    def __len__(self) -> int:
        return min(self.added, self.capacity)

    @property
    def total(self) -> float:
        """``sum_k p_k^alpha`` over the transitions held."""
        return self.tree.total

    def mass(self, priorities: np.ndarray) -> np.ndarray:
        """``(|p| + eps)^alpha``: what the tree holds for raw priorities (|TD errors|)."""
        return (np.abs(np.asarray(priorities, dtype=np.float64)) + self.eps) ** self.alpha

    def add(self, rows: np.ndarray, priorities: np.ndarray) -> np.ndarray:
        """Append ``rows`` (a structured array) with raw ``priorities``, overwriting the
        oldest; their ids. Of more rows than the capacity, only the last ``capacity`` stay
        (their ids are returned; the others were added and overwritten at once)."""
        rows = np.asarray(rows)
        prio = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if rows.ndim != 1 or len(prio) != len(rows):
            raise ValueError(f"replay add: {rows.shape} rows, {prio.shape} priorities")
        if self.rows is None:
            self.rows = np.zeros(self.capacity, dtype=rows.dtype)
        elif rows.dtype != self.rows.dtype:
            raise ValueError(f"replay add: rows of dtype {rows.dtype}, the replay holds {self.rows.dtype}")
        n = len(rows)
        skip = max(0, n - self.capacity)
        ids = self.added + np.arange(skip, n, dtype=np.int64)
        slots = ids % self.capacity
        self.rows[slots] = rows[skip:]
        self.tree.update(slots, self.mass(prio[skip:]))
        self.added += n
        return ids

    def held(self, ids: np.ndarray) -> np.ndarray:
        """Which of ``ids`` name a transition still in the ring."""
        ids = np.asarray(ids, dtype=np.int64)
        return (ids >= self.added - len(self)) & (ids < self.added)

    def update(self, ids: np.ndarray, priorities: np.ndarray) -> None:
        """New raw priorities (|TD errors|) for the transitions ``ids``; ids no longer held
        are skipped and counted in :attr:`stale_updates`. A repeated id takes its last value."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        prio = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if ids.shape != prio.shape:
            raise ValueError(f"replay update: {ids.size} ids, {prio.size} priorities")
        ok = self.held(ids)
        self.stale_updates += int(ids.size - np.count_nonzero(ok))
        self.tree.update(ids[ok] % self.capacity, self.mass(prio[ok]))

    def sample(self, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``k`` transitions drawn with probability ``P(i)``, stratified: (ids, masses
        ``p_i^alpha``). Their probabilities are the masses over :attr:`total`."""
        if len(self) == 0:
            raise ValueError("sample from an empty replay")
        slots = self.tree.find(stratified_masses(self.total, k, rng))
        masses = self.tree.leaves(slots)
        # the id of the transition in each slot: the newest one written there
        newest = self.added - 1
        ids = newest - (newest - slots) % self.capacity
        return ids, masses

    def get(self, ids: np.ndarray) -> np.ndarray:
        """The rows of ``ids`` (held ones), as a copy."""
        assert self.rows is not None
        return self.rows[np.asarray(ids, dtype=np.int64) % self.capacity]

    def sample_weighted(self, k: int, rng: np.random.Generator, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One process's prioritized batch: (rows, ids, importance weights)."""
        ids, masses = self.sample(k, rng)
        return self.get(ids), ids, importance_weights(masses / self.total, len(self), beta)

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the rows, their masses and the counters."""
        return {"rows": self.rows, "masses": self.tree.leaves(), "added": self.added,
                "stale_updates": self.stale_updates}

    def restore(self, state: Mapping[str, Any]) -> None:
        """Hold what :meth:`state` saved (in a replay of the same capacity)."""
        self.tree = SumTree(self.capacity)
        self.rows = None if state["rows"] is None else np.array(state["rows"])
        if self.rows is not None:
            self.tree.update(np.arange(self.capacity), np.asarray(state["masses"]))
        self.added, self.stale_updates = int(state["added"]), int(state["stale_updates"])
