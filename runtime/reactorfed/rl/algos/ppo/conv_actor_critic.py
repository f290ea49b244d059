"""The convolutional actor-critic network of on-policy algorithms on small image-like
observations (MinAtar): a shared torso, one 3x3 convolution of ``channels`` filters and
fully connected layers of ``hidden`` units, all ReLU (MinAtar's reference network: 16
filters, 128 units; Young and Tian 2019), then a policy head (logits) and a value head.

A shared torso, as CleanRL's ``ppo_atari.py`` and Stable-Baselines3's ``CnnPolicy`` have
it: the convolution is most of a step's work, and the two heads learn the same features.
Initialisation as theirs: orthogonal weights with gain sqrt(2) in the torso, 0.01 for the
policy head (near-uniform first actions), 1 for the value head, zero biases, drawn from a
seeded :class:`torch.Generator` (two learners built with one seed start bit-identical).

Observations come channels last, ``(batch, H, W, C)`` or flat ``(batch, H * W * C)``
(what :func:`~reactorfed.rl.algos.ppo.learner.make_batch` gives), and are permuted to torch's channels
first here. The policy half's flat parameters (:meth:`ConvActorCritic.actor_payload`) are
what samplers act with: :class:`~reactorfed.rl.algos.ppo.conv_actor.ConvActor` computes the same
logits in numpy.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .conv_actor import KERNEL, conv_shapes

__all__ = ["ConvActorCritic"]


class ConvActorCritic(nn.Module):
    """``torso(obs) -> features``; ``pi(features) -> logits``, ``v(features) -> value``."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, channels: int = 16,
                 hidden: tuple[int, ...] = (128,), seed: int = 0) -> None:
        super().__init__()
        shapes = conv_shapes(tuple(obs_shape), channels, hidden, num_actions)  # (checks the shape)
        self.obs_shape, self.num_actions, self.channels, self.hidden = tuple(obs_shape), num_actions, channels, hidden
        g = torch.Generator().manual_seed(seed)
        layers: list[nn.Module] = [nn.Conv2d(obs_shape[2], channels, KERNEL), nn.ReLU(), nn.Flatten()]
        for w in shapes[2:-2:2]:
            layers += [nn.Linear(w[1], w[0]), nn.ReLU()]
        self.torso = nn.Sequential(*layers)
        width = hidden[-1] if hidden else shapes[-2][1]
        self.pi = nn.Linear(width, num_actions)
        self.v = nn.Linear(width, 1)
        with torch.no_grad():
            for m, gain in [*((m, math.sqrt(2)) for m in self.torso if isinstance(m, nn.Conv2d | nn.Linear)),
                            (self.pi, 0.01), (self.v, 1.0)]:
                nn.init.orthogonal_(m.weight, gain=gain, generator=g)
                assert m.bias is not None
                m.bias.zero_()

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        h, w, c = self.obs_shape
        x = obs.reshape(len(obs), h, w, c).permute(0, 3, 1, 2).float()
        return self.torso(x)

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The policy's logits, shaped ``(batch, num_actions)``."""
        return self.pi(self.features(obs))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """``V(obs)``, shaped ``(batch,)``."""
        return self.v(self.features(obs)).squeeze(-1)

    def evaluate(self, obs: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log pi(a|s), entropy of pi(.|s), V(s)) for a batch, from one pass of the torso."""
        f = self.features(obs)
        logp_all = torch.log_softmax(self.pi(f), dim=-1)
        logp = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, self.v(f).squeeze(-1)

    def actor_payload(self) -> np.ndarray:
        """The torso's and the policy head's parameters as one float32 vector (what samplers load)."""
        with torch.no_grad():
            params = [*self.torso.parameters(), *self.pi.parameters()]
            return torch.nn.utils.parameters_to_vector(params).detach().cpu().numpy().copy()
