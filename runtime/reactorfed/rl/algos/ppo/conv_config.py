"""PPO with the convolutional actor-critic (:mod:`reactorfed.rl.algos.ppo.conv_actor_critic`), for
small image-like observations such as MinAtar's 10x10xC frames; the two sides of its
policy (see :mod:`reactorfed.rl.contracts`). No torch here: a sampler builds its numpy
:class:`~reactorfed.rl.algos.ppo.conv_actor.ConvActor` from this module alone; the learner's side
(:mod:`reactorfed.rl.algos.ppo.conv_learner`) is imported when it is built.

The network is MinAtar's reference one (Young and Tian 2019: a 3x3 convolution of 16
filters, 128 units). The defaults of the rest are for MinAtar, from the two published
PPO configurations for it: purejaxrl's (Lu et al. 2022, ``examples/brax_minatar.ipynb``:
gamma 0.99, lambda 0.95, 4 epochs of 8 minibatches a batch, clip 0.2, entropy 0.01,
value 0.5, gradient norm 0.5, the learning rate annealed linearly) and gymnax-blines'
(``agents/Breakout-MinAtar/ppo.yaml``: the same, with learning rate 5e-4, which is taken
here: purejaxrl's 5e-3 is for a 64-64 MLP). The loss is
:class:`~reactorfed.rl.algos.ppo.config.PPOConfig`'s (Stable-Baselines3's weighting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...contracts import SpaceInfo
from .config import PPOConfig
from .conv_actor import ConvActor

if TYPE_CHECKING:
    from .conv_learner import ConvPPOLearner

__all__ = ["ConvPPOConfig"]


@dataclass(frozen=True)
class ConvPPOConfig(PPOConfig):
    """:class:`PPOConfig` with a convolutional network: ``channels`` 3x3 filters, then the
    fully connected ``hidden`` layers (shared by the policy and the value heads)."""

    learning_rate: float = 5e-4
    total_timesteps: int = 2_000_000
    gamma: float = 0.99
    gae_lambda: float = 0.95
    update_epochs: int = 4
    minibatch_size: int = 256
    ent_coef: float = 0.01
    anneal_clip: bool = False
    hidden: tuple[int, ...] = (128,)
    channels: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.channels < 1:
            raise ValueError("ConvPPOConfig: channels must be >= 1")

    def make_actor(self, space: SpaceInfo, seed: int) -> ConvActor:  # type: ignore[override]
        return ConvActor(space.obs_shape, space.num_actions, self.channels, self.hidden, seed)

    def make_learner(self, space: SpaceInfo, seed: int) -> ConvPPOLearner:
        from .conv_learner import ConvPPOLearner

        return ConvPPOLearner(space, self, seed=seed)
