"""Ape-X DQN: its config, the per-copy epsilon-greedy actor (numpy) and the double-Q
Learner weighted by replay's importance weights (torch: loaded on first use); the same
learner with its replay beside it (:class:`ApexReplayLearner`: a tuner's Ape-X slot); and
the same loss on the synchronous plan, its replay in the learner (:class:`SyncDQNConfig`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_attributes
from .config import ApexDQNConfig
from .q_actor import QActor, apex_epsilons
from .sync_config import SyncDQNConfig

if TYPE_CHECKING:
    from .learner import ApexDQNLearner, double_q_target, weighted_td_loss
    from .replay_learner import ApexReplayLearner
    from .sync_learner import SyncDQNLearner

__getattr__ = lazy_attributes(__name__, globals(), {
    **dict.fromkeys(["ApexDQNLearner", "double_q_target", "weighted_td_loss"], "learner"),
    "ApexReplayLearner": "replay_learner", "SyncDQNLearner": "sync_learner"})

__all__ = ["ApexDQNConfig", "ApexDQNLearner", "ApexReplayLearner", "QActor", "SyncDQNConfig", "SyncDQNLearner",
           "apex_epsilons", "double_q_target", "weighted_td_loss"]
