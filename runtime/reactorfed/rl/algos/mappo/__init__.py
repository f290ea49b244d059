"""MAPPO (Yu et al. 2022, "The surprising effectiveness of PPO in cooperative multi-agent
games"): PPO whose critic sees the global state (every agent's observation and which agent
is asking) while each agent's actor acts on its own observation. Its config loads without
torch; the learner and the network load it on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_attributes
from .config import MAPPOConfig

if TYPE_CHECKING:
    from .actor_critic import CentralActorCritic
    from .learner import MAPPOLearner

__getattr__ = lazy_attributes(__name__, globals(), {
    "CentralActorCritic": "actor_critic",
    "MAPPOLearner": "learner",
})

__all__ = ["CentralActorCritic", "MAPPOConfig", "MAPPOLearner"]
