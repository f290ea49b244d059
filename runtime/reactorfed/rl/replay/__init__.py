"""Replay: a uniform buffer, prioritized replay on a sum tree, n-step transitions, the
replay shard (a reactor that serves prioritized batches) and the contract of replay-based
algorithms (:mod:`.contracts`)."""

from __future__ import annotations

from .buffer import Batch, ReplayBuffer
from .contracts import ReplayActor, ReplayAlgorithm, ReplayBatch, ReplayConfig, ReplayLearner
from .nstep import NStepBuilder, transition_dtype
from .prioritized import PrioritizedReplay, annealed_beta, importance_weights
from .shard import ReplayShard
from .sum_tree import SumTree

__all__ = [
    "Batch",
    "NStepBuilder",
    "PrioritizedReplay",
    "ReplayActor",
    "ReplayAlgorithm",
    "ReplayBatch",
    "ReplayBuffer",
    "ReplayConfig",
    "ReplayLearner",
    "ReplayShard",
    "SumTree",
    "annealed_beta",
    "importance_weights",
    "transition_dtype",
]
