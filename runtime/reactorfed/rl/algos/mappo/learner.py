"""MAPPO's learner: PPO's update (:class:`~reactorfed.rl.algos.ppo.learner.PPOLearner`:
GAE, the clipped objective, minibatch epochs, checkpoints) on a
:class:`~reactorfed.rl.algos.mappo.actor_critic.CentralActorCritic`, whose advantages come
from the value of the global state, trained against normalized targets (the running mean
and deviation of :mod:`.value_norm`) with Huber's loss, as the paper's MAPPO is (both
settings of ``MAPPOConfig.value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...contracts import SpaceInfo
from ..ppo.learner import Batch, PPOLearner
from .actor_critic import CentralActorCritic
from .value_norm import RunningValueNorm

if TYPE_CHECKING:
    from .config import MAPPOConfig

__all__ = ["MAPPOLearner"]


class MAPPOLearner(PPOLearner):
    """PPO's learner with a centralized critic over ``space.state_dim`` columns."""

    config: MAPPOConfig

    def __init__(self, space: SpaceInfo, config: MAPPOConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        if space.state_dim < 1:
            raise ValueError("MAPPO's learner needs the global state's size (SpaceInfo.state_dim >= 1)")
        self.value_norm = RunningValueNorm(config.value.norm_beta) if config.value.norm else None
        super().__init__(space, config, seed=seed, device=device)

    def _build_model(self, seed: int) -> CentralActorCritic:  # type: ignore[override]
        return CentralActorCritic(self.space.obs_dim, self.space.state_dim, self.space.num_actions,
                                  self.config.hidden, seed)

    def critic_values(self, out: np.ndarray) -> np.ndarray:
        return out if self.value_norm is None else self.value_norm.denormalize(out)

    def critic_targets(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        if self.value_norm is None:
            return batch.returns, batch.values
        # the old values in the critic's units under the statistics they were computed
        # with, then the statistics take this batch's returns, which are normalized by them
        old = self.value_norm.normalize(batch.values)
        self.value_norm.update(batch.returns)
        return self.value_norm.normalize(batch.returns), old

    def critic_loss(self, values: torch.Tensor, returns: torch.Tensor, old_values: torch.Tensor) -> torch.Tensor:
        delta = self.config.value.huber_delta
        if not delta:
            return super().critic_loss(values, returns, old_values)
        loss = torch.nn.functional.huber_loss(values, returns, reduction="none", delta=delta)
        clip = self.config.clip_vloss
        if clip is None:
            return loss.mean()
        clipped = old_values + torch.clamp(values - old_values, -clip, clip)
        return torch.max(loss, torch.nn.functional.huber_loss(clipped, returns, reduction="none", delta=delta)).mean()

    def state(self) -> dict[str, Any]:
        out = super().state()
        if self.value_norm is not None:
            out["value_norm"] = self.value_norm.state()
        return out

    def load_state(self, state: Mapping[str, Any]) -> None:
        super().load_state(state)
        if self.value_norm is not None and "value_norm" in state:
            self.value_norm.load_state(state["value_norm"])
