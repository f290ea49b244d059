"""A sum tree: leaves hold non-negative masses, every inner node the sum of its two
children, so the total is the root and the leaf at a given prefix sum is found in
``log2(capacity)`` steps (Schaul et al. 2016, "Prioritized experience replay", appendix
B.2.1: the structure behind proportional prioritization).

The tree is an array of ``2 * size`` float64 values (``size`` the capacity rounded up to a
power of two): node 1 is the root, node ``i``'s children are ``2i`` and ``2i + 1``, leaf
``j`` is node ``size + j``. Updates and searches are vectorised over a batch of leaves or
values. An inner node is always recomputed as the sum of its children, never adjusted by
a difference: its value is a function of the leaves alone, whatever the history of
updates (no drift, and the same leaves give the same bits).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SumTree"]


class SumTree:
    """``capacity`` leaves, all 0 at first."""

    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"a sum tree's capacity must be an int >= 1, got {capacity!r}")
        self.capacity = capacity
        size = 1
        while size < capacity:
            size *= 2
        self.size = size
        self.depth = size.bit_length() - 1
        self.nodes = np.zeros(2 * size, dtype=np.float64)

    @property
    def total(self) -> float:
        """The sum of every leaf (the root)."""
        return float(self.nodes[1])

    def leaves(self, index: np.ndarray | None = None) -> np.ndarray:
        """The leaves at ``index`` (all of them when None), as a copy."""
        leaves = self.nodes[self.size : self.size + self.capacity]
        return leaves.copy() if index is None else leaves[np.asarray(index, dtype=np.int64)]

    def update(self, index: np.ndarray, values: np.ndarray) -> None:
        """Set leaf ``index[k]`` to ``values[k]``; where an index repeats, its last value
        wins (numpy leaves the order of repeated fancy assignments unspecified, so the
        duplicates are dropped here explicitly)."""
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        vals = np.asarray(values, dtype=np.float64).reshape(-1)
        if idx.shape != vals.shape:
            raise ValueError(f"sum tree update: {idx.size} indices, {vals.size} values")
        if idx.size == 0:
            return
        if idx.min() < 0 or idx.max() >= self.capacity:
            raise IndexError(f"sum tree update: an index outside [0, {self.capacity})")
        if not np.all(np.isfinite(vals)) or vals.min() < 0:
            raise ValueError("sum tree update: masses must be finite and >= 0")
        # the last occurrence of each index: the first in the reversed array
        _, first_of_reversed = np.unique(idx[::-1], return_index=True)
        keep = idx.size - 1 - first_of_reversed
        nodes = idx[keep] + self.size
        self.nodes[nodes] = vals[keep]
        # every leaf is at one depth: recompute the parents level by level up to the root
        for _ in range(self.depth):
            nodes = np.unique(nodes >> 1)
            self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]

    def find(self, mass: np.ndarray) -> np.ndarray:
        """For each ``m`` in ``mass`` (in ``[0, total)``), the leaf ``j`` with
        ``sum(leaves[:j]) <= m < sum(leaves[:j + 1])``. A leaf of mass 0 is never returned
        (while the total is positive): a value at or past the total, which rounding can
        produce, lands on the last leaf of positive mass."""
        if self.nodes[1] <= 0:
            raise ValueError("sum tree search: the total mass is 0")
        m = np.array(mass, dtype=np.float64).reshape(-1)
        node = np.ones(m.size, dtype=np.int64)
        for _ in range(self.depth):
            left = 2 * node
            left_mass = self.nodes[left]
            # right when the value is past the left subtree and the right one has mass
            right = (m >= left_mass) & (self.nodes[left + 1] > 0)
            m = np.where(right, m - left_mass, m)
            node = np.where(right, left + 1, left)
        return node - self.size
