"""MAPPO's settings: PPO's (:class:`~reactorfed.rl.algos.ppo.config.PPOConfig`, every field
means the same), and a centralized critic. No torch here: the environment federate builds
its actors (the same numpy MLP as PPO's) from this module alone.

The defaults are the MAPPO paper's for MPE (Yu et al. 2022, appendix: learning rate 7e-4,
gamma 0.99, GAE lambda 0.95, 10 epochs, clip 0.2, entropy 0.01, 64-64 networks, no
annealing); the minibatch is this runtime's (PPO's minibatch of rows, not the paper's
count of minibatches). The critic's value normalization and Huber loss, which the paper
finds MAPPO needs (its section 4, "value normalization"; appendix: ``use_valuenorm``,
``use_huber_loss``, ``huber_delta`` 10), are the nested ``value`` settings
(``--param mappo.value.norm=false``, ``--param mappo.value.huber_delta=0``: squared error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ...contracts import SpaceInfo
from ..ppo.config import PPOConfig

if TYPE_CHECKING:
    from .learner import MAPPOLearner

__all__ = ["MAPPOConfig", "ValueConfig"]


@dataclass(frozen=True)
class ValueConfig:
    """How the centralized critic learns its values."""

    #: train the critic on targets normalized by their running mean and deviation (the
    #: paper's ValueNorm), its outputs denormalized for GAE
    norm: bool = True
    #: the running statistics' decay per batch (debiased; the paper's 0.99999)
    norm_beta: float = 0.99999
    #: the value loss: Huber's with this delta (the paper's 10.0); 0: the squared error
    huber_delta: float = 10.0

    def __post_init__(self) -> None:
        if not 0.0 < self.norm_beta < 1.0:
            raise ValueError(f"value.norm_beta: must lie in (0, 1), got {self.norm_beta}")
        if not self.huber_delta >= 0.0:
            raise ValueError(f"value.huber_delta: must be >= 0 (0: squared error), got {self.huber_delta}")


@dataclass(frozen=True)
class MAPPOConfig(PPOConfig):
    """PPO with a critic over the global state: a multi-agent plan carries it in each row
    after the agent's observation (the learner's :class:`SpaceInfo` says its size,
    ``state_dim``)."""

    #: a plan gives this algorithm's rows the global state (see the multi-agent plan)
    centralized_critic: ClassVar[bool] = True

    learning_rate: float = 7e-4
    anneal_lr: bool = False
    anneal_clip: bool = False
    gamma: float = 0.99
    gae_lambda: float = 0.95
    update_epochs: int = 10
    minibatch_size: int = 400
    ent_coef: float = 0.01
    value: ValueConfig = field(default_factory=ValueConfig)

    def make_learner(self, space: SpaceInfo, seed: int) -> MAPPOLearner:
        from .learner import MAPPOLearner

        return MAPPOLearner(space, self, seed=seed)
