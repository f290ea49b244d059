"""PPO's learner with the convolutional actor-critic: :class:`~reactorfed.rl.ppo.PPOLearner`'s
update, loss, schedule, checkpoint and digest, on a
:class:`~reactorfed.rl.conv_actor_critic.ConvActorCritic` (see
:class:`~reactorfed.rl.conv_ppo_config.ConvPPOConfig`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .conv_actor_critic import ConvActorCritic
from .policy import SpaceInfo
from .ppo import PPOLearner, _adam

if TYPE_CHECKING:
    from .conv_ppo_config import ConvPPOConfig

__all__ = ["ConvPPOLearner"]


class ConvPPOLearner(PPOLearner):
    """A :class:`PPOLearner` whose model is a :class:`ConvActorCritic` (and its Adam)."""

    config: ConvPPOConfig

    def __init__(self, space: SpaceInfo, config: ConvPPOConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        super().__init__(space, config, seed=seed, device=device)
        # the base built a small MLP and its optimizer: replaced before any use
        self.model = ConvActorCritic(space.obs_shape, space.num_actions, config.channels, config.hidden,  # type: ignore[assignment]
                                     seed).to(self.device)
        self.optimizer = _adam(self.model, config.learning_rate, config.adam_eps)
