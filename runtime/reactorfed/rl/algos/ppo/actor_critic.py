"""The actor-critic network of on-policy algorithms (PPO): a categorical policy and a
value function, two separate MLPs with ``tanh`` (Stable-Baselines3's ``MlpPolicy`` and
CleanRL's ``ppo.py``: no shared layers, 64-64 by default).

Initialisation as both: orthogonal weights with gain sqrt(2) in the hidden layers,
0.01 for the policy's output (near-uniform first actions), 1 for the value's output;
zero biases. The weights come from a seeded :class:`torch.Generator`, not torch's global
one, so that two learners built with one seed in one process (federates in threads)
start bit-identical.

The actor half's flat parameters (:meth:`ActorCritic.actor_payload`) are what samplers
act with: :class:`~reactorfed.rl.algos.mlp_actor.MLPActor` computes the same logits in numpy.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ..network import flat_weights

__all__ = ["ActorCritic", "mlp"]


def mlp(sizes: list[int], out_gain: float, generator: torch.Generator) -> nn.Sequential:
    """``Linear, Tanh, ..., Linear`` through ``sizes``, initialised orthogonally."""
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        with torch.no_grad():
            nn.init.orthogonal_(lin.weight, gain=out_gain if last else math.sqrt(2), generator=generator)
            lin.bias.zero_()
        layers.append(lin)
        if not last:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """``actor(obs) -> logits``, ``critic(obs) -> value``, for flat observations."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple[int, ...] = (64, 64), seed: int = 0) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.obs_dim, self.num_actions, self.hidden = obs_dim, num_actions, hidden
        self.actor = mlp([obs_dim, *hidden, num_actions], 0.01, g)
        self.critic = mlp([obs_dim, *hidden, 1], 1.0, g)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """``V(obs)``, shaped ``(batch,)``."""
        return self.critic(obs.reshape(len(obs), -1)).squeeze(-1)

    def evaluate(self, obs: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log pi(a|s), entropy of pi(.|s), V(s)) for a batch: what the loss needs."""
        flat = obs.reshape(len(obs), -1)
        # log_softmax by hand: torch.distributions.Categorical computes the same, plus
        # argument checks that cost a tenth of a gradient step here
        logp_all = torch.log_softmax(self.actor(flat), dim=-1)
        logp = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, self.critic(flat).squeeze(-1)

    def actor_payload(self) -> np.ndarray:
        """The actor's parameters as one float32 vector (what samplers load)."""
        return flat_weights(self.actor)
