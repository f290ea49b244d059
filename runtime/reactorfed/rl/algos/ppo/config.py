"""PPO's settings, and the two sides of its policy they build (see
:mod:`reactorfed.rl.contracts`). No torch here: a sampler builds its actor from this module
alone; the learner's side (:mod:`reactorfed.rl.algos.ppo.learner`) is imported when it is built.

The defaults are rl-baselines3-zoo's tuned PPO for CartPole-v1 (``hyperparams/ppo.yml``:
8 environments x 32 steps a batch, minibatch 256, 20 epochs, gamma 0.98, lambda 0.8, no
entropy bonus, learning rate and clip range annealed linearly from 1e-3 and 0.2 to 0
over 100k steps) with Stable-Baselines3's PPO defaults for the rest (value coefficient
0.5, gradient norm 0.5, advantages normalised per minibatch, no value clipping, Adam's
epsilon 1e-5, separate 64-64 tanh networks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...contracts import SpaceInfo
from ..mlp_actor import MLPActor

if TYPE_CHECKING:
    from .learner import PPOLearner

__all__ = ["PPOConfig"]


@dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters of PPO (Schulman et al. 2017), named as in CleanRL's ``ppo.py``.

    The loss is Stable-Baselines3's: ``pg + ent_coef * (-entropy) + vf_coef * mean((V - R)^2)``
    (CleanRL halves the squared error: its ``vf_coef`` 0.5 weighs it 0.25).
    """

    learning_rate: float = 1e-3
    #: anneal the learning rate (and with ``anneal_clip`` the clip range) linearly to 0
    #: over ``total_timesteps`` transitions, as SB3's ``lin_`` schedules do
    anneal_lr: bool = True
    anneal_clip: bool = True
    total_timesteps: int = 100_000
    gamma: float = 0.98
    gae_lambda: float = 0.8
    update_epochs: int = 20
    #: transitions per gradient step (SB3's ``batch_size``); the last one of an epoch may be short
    minibatch_size: int = 256
    clip_coef: float = 0.2
    #: clip the value function's change too (CleanRL's ``clip_vloss``, with this range); None: no
    clip_vloss: float | None = None
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    #: stop an update's epochs early once the approximate KL passes 1.5 x this (SB3); None: never
    target_kl: float | None = None
    hidden: tuple[int, ...] = (64, 64)
    adam_eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.minibatch_size < 1 or self.update_epochs < 1 or self.total_timesteps < 1:
            raise ValueError("PPOConfig: minibatch_size, update_epochs and total_timesteps must be >= 1")
        if not 0.0 <= self.gae_lambda <= 1.0 or not 0.0 <= self.gamma <= 1.0:
            raise ValueError("PPOConfig: gamma and gae_lambda must lie in [0, 1]")

    def make_actor(self, space: SpaceInfo, seed: int) -> MLPActor:
        return MLPActor(space.obs_dim, space.num_actions, self.hidden, seed)

    def make_learner(self, space: SpaceInfo, seed: int) -> PPOLearner:
        from .learner import PPOLearner

        return PPOLearner(space, self, seed=seed)
