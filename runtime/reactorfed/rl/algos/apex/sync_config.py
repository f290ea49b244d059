"""DQN on the synchronous plan: :class:`SyncDQNConfig`, Ape-X DQN's loss and networks with
the prioritized replay in the learner itself (no shards, no timers: a round of fragments,
then ``updates_per_iteration`` gradient steps), so it runs wherever a synchronous learner
does: :class:`~reactorfed.rl.SyncPlan`, or a tuner's trial slot (:mod:`reactorfed.rl.tune`).
No torch here: a sampler builds its actor from this module alone; the learner's side
(:mod:`reactorfed.rl.algos.apex.sync_learner`) is imported when it is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...contracts import SpaceInfo
from .config import ApexDQNConfig
from .q_actor import QActor

if TYPE_CHECKING:
    from .sync_learner import SyncDQNLearner

__all__ = ["SyncDQNConfig"]

_Q = ApexDQNConfig()  # the defaults of the fields the two configs share


@dataclass(frozen=True)
class SyncDQNConfig:
    """Double Q-learning on n-step returns with a target network, as
    :class:`~reactorfed.rl.ApexDQNConfig` (the fields it shares mean the same), and the
    replay the learner keeps: ``capacity`` transitions, proportional priorities
    (``alpha``; new transitions at the highest priority seen, as Schaul et al. 2016 add
    them), importance weights annealed from ``beta0`` to 1 over ``beta_steps`` gradient
    steps. Each iteration adds the round's n-step transitions, then takes
    ``updates_per_iteration`` steps on batches of ``batch_size`` (none before the replay
    holds ``learning_starts``). Every sampler explores with ``epsilon`` in every copy."""

    #: fields only the samplers read (their actors are built once): a tuner cannot vary them
    ACTOR_FIELDS: ClassVar[frozenset[str]] = frozenset({"hidden", "epsilon"})
    #: fields the replay has already used (the discount and length of the n-step returns it
    #: holds, its size, its priorities' exponent): fixed while a trial runs
    BUILT_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"n_step", "gamma", "capacity", "alpha", "replay_eps"}
    )

    # (the loss's and networks' fields: ApexDQNConfig's, with its defaults; q_config)
    learning_rate: float = _Q.learning_rate
    gamma: float = _Q.gamma
    n_step: int = _Q.n_step
    target_update_interval: int = _Q.target_update_interval
    huber_delta: float | None = _Q.huber_delta
    max_grad_norm: float = _Q.max_grad_norm
    adam_eps: float = _Q.adam_eps
    hidden: tuple[int, ...] = _Q.hidden
    epsilon: float = 0.1  # (one rate for every sampler: no Ape-X ladder here)
    capacity: int = 50_000
    alpha: float = 0.6
    beta0: float = 0.4
    beta_steps: int = 10_000
    replay_eps: float = 1e-6
    batch_size: int = 64
    learning_starts: int = 1_000
    updates_per_iteration: int = 4

    def __post_init__(self) -> None:
        self.q_config()  # (its own checks)
        if (
            self.capacity < 1
            or self.batch_size < 1
            or self.learning_starts < 0
            or self.beta_steps < 0
        ):
            raise ValueError(
                "SyncDQNConfig: capacity and batch_size must be >= 1, learning_starts and beta_steps >= 0"
            )
        if self.updates_per_iteration < 1:
            raise ValueError("SyncDQNConfig: updates_per_iteration must be >= 1")
        if self.alpha < 0 or self.replay_eps <= 0 or not 0.0 <= self.beta0 <= 1.0:
            raise ValueError("SyncDQNConfig: alpha must be >= 0, replay_eps > 0, beta0 in [0, 1]")

    def q_config(self) -> ApexDQNConfig:
        """The loss's and networks' settings (what the gradient step reads)."""
        shared = {f.name for f in dataclasses.fields(ApexDQNConfig)}
        return ApexDQNConfig(
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name in shared}
        )

    def make_actor(self, space: SpaceInfo, seed: int) -> QActor:
        return QActor(space.obs_dim, space.num_actions, self.hidden, seed, self.epsilon)

    def make_learner(self, space: SpaceInfo, seed: int) -> SyncDQNLearner:
        from .sync_learner import SyncDQNLearner

        return SyncDQNLearner(space, self, seed=seed)
