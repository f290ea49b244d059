"""PPO's learner with the convolutional actor-critic: :class:`~reactorfed.rl.algos.ppo.learner.PPOLearner`'s
update, loss, schedule, checkpoint and digest, on a
:class:`~reactorfed.rl.algos.ppo.conv_actor_critic.ConvActorCritic` (see
:class:`~reactorfed.rl.algos.ppo.conv_config.ConvPPOConfig`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conv_actor_critic import ConvActorCritic
from .learner import PPOLearner

if TYPE_CHECKING:
    from .conv_config import ConvPPOConfig

__all__ = ["ConvPPOLearner"]


class ConvPPOLearner(PPOLearner):
    """A :class:`PPOLearner` whose model is a :class:`ConvActorCritic` (and its Adam)."""

    config: ConvPPOConfig

    def _build_model(self, seed: int) -> ConvActorCritic:  # type: ignore[override]
        c = self.config
        return ConvActorCritic(self.space.obs_shape, self.space.num_actions, c.channels, c.hidden, seed)
