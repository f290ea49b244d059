"""MAPPO's learner: PPO's update (:class:`~reactorfed.rl.algos.ppo.learner.PPOLearner`:
GAE, the clipped objective, minibatch epochs, checkpoints) on a
:class:`~reactorfed.rl.algos.mappo.actor_critic.CentralActorCritic`, whose advantages come
from the value of the global state."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ...contracts import SpaceInfo
from ..ppo.learner import PPOLearner
from .actor_critic import CentralActorCritic

if TYPE_CHECKING:
    from .config import MAPPOConfig

__all__ = ["MAPPOLearner"]


class MAPPOLearner(PPOLearner):
    """PPO's learner with a centralized critic over ``space.state_dim`` columns."""

    def __init__(self, space: SpaceInfo, config: MAPPOConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        if space.state_dim < 1:
            raise ValueError("MAPPO's learner needs the global state's size (SpaceInfo.state_dim >= 1)")
        super().__init__(space, config, seed=seed, device=device)

    def _build_model(self, seed: int) -> CentralActorCritic:  # type: ignore[override]
        return CentralActorCritic(self.space.obs_dim, self.space.state_dim, self.space.num_actions,
                                  self.config.hidden, seed)
