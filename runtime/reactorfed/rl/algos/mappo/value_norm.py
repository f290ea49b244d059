"""The value normalizer MAPPO's critic trains against (Yu et al. 2022, section 4 and
appendix: "value normalization", their ``ValueNorm``): a running mean and deviation of the
value targets, kept as debiased exponential moving averages of the targets and of their
squares. The critic outputs values in normalized units: targets are normalized before the
loss, and its outputs denormalized before GAE. Numpy in float64, the same arithmetic in
every process: one seed still gives bit-identical weights in one process and federated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["RunningValueNorm"]


class RunningValueNorm:
    """Running statistics of value targets, updated once a batch (``beta`` per batch, as
    the paper's code with ``per_element_update=False``); the variance floored at
    ``var_floor`` (theirs: 1e-2) so that a batch of equal returns does not blow up the scale."""

    def __init__(self, beta: float = 0.99999, epsilon: float = 1e-5, var_floor: float = 1e-2) -> None:
        self.beta, self.epsilon, self.var_floor = beta, epsilon, var_floor
        self.mean_acc = 0.0
        self.sq_acc = 0.0
        self.debias = 0.0

    def update(self, targets: np.ndarray) -> None:
        x = np.asarray(targets, dtype=np.float64)
        b = self.beta
        self.mean_acc = b * self.mean_acc + (1.0 - b) * float(x.mean())
        self.sq_acc = b * self.sq_acc + (1.0 - b) * float((x * x).mean())
        self.debias = b * self.debias + (1.0 - b)

    def stats(self) -> tuple[float, float]:
        """(mean, standard deviation) now; (0, 1) before the first update."""
        if self.debias == 0.0:
            return 0.0, 1.0
        d = max(self.debias, self.epsilon)
        mean = self.mean_acc / d
        var = max(self.sq_acc / d - mean * mean, self.var_floor)
        return mean, float(np.sqrt(var))

    def normalize(self, x: np.ndarray) -> np.ndarray:
        mean, std = self.stats()
        return ((np.asarray(x, dtype=np.float64) - mean) / std).astype(np.float32)

    def denormalize(self, x: np.ndarray) -> np.ndarray:
        mean, std = self.stats()
        return (np.asarray(x, dtype=np.float64) * std + mean).astype(np.float32)

    def state(self) -> dict[str, float]:
        return {"mean_acc": self.mean_acc, "sq_acc": self.sq_acc, "debias": self.debias}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.mean_acc, self.sq_acc = float(state["mean_acc"]), float(state["sq_acc"])
        self.debias = float(state["debias"])
