"""APPO's settings (IMPALA's V-trace corrections under PPO's clipped objective: RLlib's
asynchronous PPO), and the two sides of its policy they build (see
:mod:`reactorfed.rl.contracts`). No torch here: a sampler builds its actor from this module
alone; the learner's side (:mod:`reactorfed.rl.algos.appo.learner`) is imported when it is built.

The defaults are RLlib's APPO for CartPole where they exist (clip 0.4, V-trace with
``rho_bar = c_bar = 1``, value coefficient 0.5, entropy 0.01, gradient norm 40 -> here
0.5 as in our PPO) with the learning rate and network of our PPO; one epoch over each
update's transitions, as IMPALA takes one step per batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...contracts import SpaceInfo
from ..mlp_actor import MLPActor

if TYPE_CHECKING:
    from .learner import APPOLearner

__all__ = ["APPOConfig"]


@dataclass(frozen=True)
class APPOConfig:
    """Hyper-parameters of APPO: PPO's clipped surrogate (Schulman et al. 2017, eq. 7) on
    V-trace advantages, the value function regressed on V-trace targets (Espeholt et al.
    2018, eq. 1 and section 4.2). The ratio in the surrogate is the learner's policy over
    the sampler's (the behaviour policy that acted), so a fragment sampled with weights
    some updates old is corrected, not discarded."""

    learning_rate: float = 5e-4
    gamma: float = 0.99
    #: V-trace's trace cut (IMPALA's lambda: ``c_t = lambda * min(c_bar, rho_t)``)
    vtrace_lambda: float = 1.0
    rho_bar: float = 1.0
    c_bar: float = 1.0
    clip_coef: float = 0.4
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    update_epochs: int = 1
    #: transitions per gradient step; the last one of an epoch may be short
    minibatch_size: int = 512
    hidden: tuple[int, ...] = (64, 64)
    adam_eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.minibatch_size < 1 or self.update_epochs < 1:
            raise ValueError("APPOConfig: minibatch_size and update_epochs must be >= 1")
        if not 0.0 <= self.vtrace_lambda <= 1.0 or not 0.0 <= self.gamma <= 1.0:
            raise ValueError("APPOConfig: gamma and vtrace_lambda must lie in [0, 1]")
        if self.rho_bar <= 0 or self.c_bar <= 0:
            raise ValueError("APPOConfig: rho_bar and c_bar must be > 0")

    def make_actor(self, space: SpaceInfo, seed: int) -> MLPActor:
        return MLPActor(space.obs_dim, space.num_actions, self.hidden, seed)

    def make_learner(self, space: SpaceInfo, seed: int) -> APPOLearner:
        from .learner import APPOLearner

        return APPOLearner(space, self, seed=seed)
