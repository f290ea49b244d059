"""PPO: its config (MLP and CNN), the actors that sample with a numpy copy of the policy,
the actor-critic networks, GAE and the PPO Learner (torch: loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_attributes
from .config import PPOConfig
from .conv_actor import ConvActor
from .conv_config import ConvPPOConfig
from .gae import gae, lambda_returns

if TYPE_CHECKING:
    from .actor_critic import ActorCritic
    from .conv_actor_critic import ConvActorCritic
    from .conv_learner import ConvPPOLearner
    from .learner import PPOLearner, clipped_surrogate_loss, value_loss

__getattr__ = lazy_attributes(__name__, globals(), {
    "ActorCritic": "actor_critic",
    "ConvActorCritic": "conv_actor_critic",
    "ConvPPOLearner": "conv_learner",
    "PPOLearner": "learner",
    "clipped_surrogate_loss": "learner",
    "value_loss": "learner",
})

__all__ = [
    "ActorCritic",
    "ConvActor",
    "ConvActorCritic",
    "ConvPPOConfig",
    "ConvPPOLearner",
    "PPOConfig",
    "PPOLearner",
    "clipped_surrogate_loss",
    "gae",
    "lambda_returns",
    "value_loss",
]
