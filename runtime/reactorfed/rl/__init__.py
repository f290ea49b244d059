"""Reinforcement-learning building blocks: environments, replay, Q-networks, DQN, PPO,
and execution plans (policy and plan apart: :mod:`reactorfed.rl.policy`).

The pieces are plain Python/numpy/torch; the reactors that wire them into
reactorfed programs live beside them.

torch is imported on first use of a torch-based name (networks, DQN): a process
that only steps environments (a sampler federate) starts without it, about 2 s
and 300 MB sooner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from .buffer import Batch, ReplayBuffer
from .envs import (
    ATARI_GAMES,
    GYM_ENVS,
    EnvRunner,
    Fragment,
    env_id,
    make_env,
    make_mpe,
    pack_fragment,
    record_dtype,
    unpack_fragment,
)
from .gae import gae, lambda_returns
from .mlp_actor import MLPActor
from .policy import Actor, Algorithm, Learner, SpaceInfo
from .ppo_config import PPOConfig
from .rollout import PolicyRunner, Rollout, pack_rollout, unpack_rollout
from .sync_plan import SyncLearner, SyncPlan, SyncSampler
from .training import RunConfig, TrainingLog
from .vector import VectorEnvRunner, VectorFragment, make_runner

if TYPE_CHECKING:
    from .actor_critic import ActorCritic
    from .dqn import DQNConfig, DQNLearner, EpsilonGreedy, linear_schedule, make_qnetwork
    from .elastic_learner import ElasticDQNLearnerReactor
    from .learner import DQNLearnerReactor, QSampler, TrainConfig
    from .network import (
        AtariQNetwork,
        QNetwork,
        Weights,
        default_device,
        flat_weights,
        get_weights,
        greedy_action,
        load_flat_weights,
        set_weights,
    )
    from .ppo import PPOLearner, clipped_surrogate_loss, value_loss

#: the names that need torch, and their module
_LAZY = {
    **dict.fromkeys(["DQNLearnerReactor", "QSampler", "TrainConfig"], "learner"),
    **dict.fromkeys(["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork"], "dqn"),
    "ActorCritic": "actor_critic",
    "ElasticDQNLearnerReactor": "elastic_learner",
    **dict.fromkeys(["PPOLearner", "clipped_surrogate_loss", "value_loss"], "ppo"),
    **dict.fromkeys(["AtariQNetwork", "QNetwork", "Weights", "default_device", "flat_weights", "get_weights",
                     "greedy_action", "load_flat_weights", "set_weights"], "network"),
}


__getattr__ = lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "ATARI_GAMES",
    "GYM_ENVS",
    "Actor",
    "ActorCritic",
    "Algorithm",
    "AtariQNetwork",
    "Batch",
    "DQNConfig",
    "DQNLearner",
    "DQNLearnerReactor",
    "ElasticDQNLearnerReactor",
    "EnvRunner",
    "EpsilonGreedy",
    "Fragment",
    "Learner",
    "MLPActor",
    "PPOConfig",
    "PPOLearner",
    "PolicyRunner",
    "QNetwork",
    "QSampler",
    "ReplayBuffer",
    "Rollout",
    "RunConfig",
    "SpaceInfo",
    "SyncLearner",
    "SyncPlan",
    "SyncSampler",
    "TrainConfig",
    "TrainingLog",
    "VectorEnvRunner",
    "VectorFragment",
    "Weights",
    "clipped_surrogate_loss",
    "default_device",
    "env_id",
    "flat_weights",
    "gae",
    "get_weights",
    "greedy_action",
    "lambda_returns",
    "linear_schedule",
    "load_flat_weights",
    "make_env",
    "make_mpe",
    "make_qnetwork",
    "make_runner",
    "pack_fragment",
    "pack_rollout",
    "record_dtype",
    "set_weights",
    "unpack_fragment",
    "unpack_rollout",
    "value_loss",
]
