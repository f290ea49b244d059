"""Ape-X DQN's settings (Horgan et al. 2018, "Distributed prioritized experience replay"),
and the two sides of its policy they build (see :mod:`reactorfed.rl.replay.contracts`). No
torch here: a sampler builds its actor (:class:`~reactorfed.rl.algos.apex.q_actor.QActor`, numpy)
from this module alone; the learner's side (:mod:`reactorfed.rl.algos.apex.learner`) is imported
when it is built.

The paper's choices where they carry over: double Q-learning on 3-step returns, a target
network, Adam, gradients clipped by norm, and fixed per-actor epsilons
``0.4^(1 + 7 i / (N - 1))``. The network, learning rate and target period are sized for
CartPole (the paper's are Atari's: a duelling CNN, a target copied every 2500 updates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...contracts import SpaceInfo
from .q_actor import QActor, apex_epsilons

if TYPE_CHECKING:
    from .learner import ApexDQNLearner

__all__ = ["ApexDQNConfig"]


@dataclass(frozen=True)
class ApexDQNConfig:
    """Hyper-parameters of Ape-X DQN's policy. The loss of a batch is
    ``mean_i(w_i * huber(Q(s_i, a_i) - y_i))`` with the double-Q n-step target
    ``y_i = R_i + gamma^m * Q_target(s', argmax_a Q(s', a))`` (van Hasselt et al. 2016)
    and ``w_i`` the replay's importance-sampling weights; the new priorities are
    ``|Q(s_i, a_i) - y_i|``."""

    #: fields the samplers read (their actors and n-step builders are built once): a tuner
    #: cannot vary them (the learner reads the discount from the transitions)
    ACTOR_FIELDS: ClassVar[frozenset[str]] = frozenset({"hidden", "epsilon", "epsilon_alpha", "n_step", "gamma"})

    learning_rate: float = 5e-4
    gamma: float = 0.99
    #: steps of the n-step return
    n_step: int = 3
    #: copy the online network into the target every this many updates
    target_update_interval: int = 500
    #: Huber loss's threshold; None: the squared error
    huber_delta: float | None = 1.0
    max_grad_norm: float = 10.0
    adam_eps: float = 1e-8
    hidden: tuple[int, ...] = (128, 128)
    #: Ape-X's exploration: actor i of N explores with epsilon^(1 + i / (N - 1) * epsilon_alpha)
    epsilon: float = 0.4
    epsilon_alpha: float = 7.0

    def __post_init__(self) -> None:
        if self.n_step < 1 or self.target_update_interval < 1:
            raise ValueError("ApexDQNConfig: n_step and target_update_interval must be >= 1")
        if not 0.0 <= self.gamma <= 1.0 or not 0.0 <= self.epsilon <= 1.0:
            raise ValueError("ApexDQNConfig: gamma and epsilon must lie in [0, 1]")
        if self.huber_delta is not None and self.huber_delta <= 0:
            raise ValueError("ApexDQNConfig: huber_delta must be > 0 (or None)")

    def make_actor(self, space: SpaceInfo, seed: int, actors: Sequence[int] = (0,),
                   num_actors: int = 1) -> QActor:
        eps = apex_epsilons(actors, num_actors, self.epsilon, self.epsilon_alpha)
        return QActor(space.obs_dim, space.num_actions, self.hidden, seed, eps)

    def make_learner(self, space: SpaceInfo, seed: int) -> ApexDQNLearner:
        from .learner import ApexDQNLearner

        return ApexDQNLearner(space, self, seed=seed)
