"""MAPPO's network: PPO's actor on the agent's own observation, and a critic on the global
state. A row is ``[observation | state]`` (``obs_dim + state_dim`` columns): the actor reads
the first ``obs_dim``, the critic the rest. The actor half, its payload and its
initialisation are :class:`~reactorfed.rl.algos.ppo.actor_critic.ActorCritic`'s, so the
environment federate acts with the same numpy :class:`~reactorfed.rl.algos.mlp_actor.MLPActor`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..network import flat_weights
from ..ppo.actor_critic import mlp

__all__ = ["CentralActorCritic"]


class CentralActorCritic(nn.Module):
    """``actor(obs) -> logits``; ``critic(state) -> value``; rows ``[obs | state]``."""

    def __init__(self, obs_dim: int, state_dim: int, num_actions: int, hidden: tuple[int, ...] = (64, 64),
                 seed: int = 0) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.obs_dim, self.state_dim, self.num_actions, self.hidden = obs_dim, state_dim, num_actions, hidden
        self.actor = mlp([obs_dim, *hidden, num_actions], 0.01, g)
        self.critic = mlp([state_dim, *hidden, 1], 1.0, g)

    def _split(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        flat = rows.reshape(len(rows), -1)
        if flat.shape[1] != self.obs_dim + self.state_dim:
            raise ValueError(f"rows of {flat.shape[1]} columns; MAPPO's are observation ({self.obs_dim}) "
                             f"+ state ({self.state_dim})")
        return flat[:, : self.obs_dim], flat[:, self.obs_dim :]

    def value(self, rows: torch.Tensor) -> torch.Tensor:
        """``V(state)``, shaped ``(batch,)``."""
        return self.critic(self._split(rows)[1]).squeeze(-1)

    def evaluate(self, rows: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log pi(a|obs), entropy of pi(.|obs), V(state)) for a batch of rows."""
        obs, state = self._split(rows)
        logp_all = torch.log_softmax(self.actor(obs), dim=-1)
        logp = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, self.critic(state).squeeze(-1)

    def actor_payload(self) -> np.ndarray:
        """The actor's parameters as one float32 vector (what the environment federate loads)."""
        return flat_weights(self.actor)
