"""DQN: its config, epsilon-greedy exploration, the Q-networks and the DQN Learner. All
of it needs torch, loaded on first use of a name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_attributes

if TYPE_CHECKING:
    from ..network import AtariQNetwork, QNetwork, greedy_action
    from .learner import DQNConfig, DQNLearner, EpsilonGreedy, linear_schedule, make_qnetwork

__getattr__ = lazy_attributes(__name__, globals(), {
    **dict.fromkeys(["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork"], "learner"),
    **dict.fromkeys(["AtariQNetwork", "QNetwork", "greedy_action"], ".network"),
})

__all__ = [
    "AtariQNetwork",
    "DQNConfig",
    "DQNLearner",
    "EpsilonGreedy",
    "QNetwork",
    "greedy_action",
    "linear_schedule",
    "make_qnetwork",
]
