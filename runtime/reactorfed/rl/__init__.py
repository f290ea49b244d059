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
from .apex_config import ApexDQNConfig
from .apex_learner import ApexLearner
from .apex_plan import ApexPlan, ApexSampler, priority_lag_bound, weights_lag_bound
from .buffer import Batch, ReplayBuffer
from .conv_actor import ConvActor
from .conv_ppo_config import ConvPPOConfig
from .data_parallel_plan import DataParallelLearner, DataParallelPlan
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
from .nstep import NStepBuilder, transition_dtype
from .param_server_plan import GradientWorker, ParameterServer, ParamServerPlan
from .policy import Actor, Algorithm, GradientLearner, Learner, SpaceInfo
from .ppo_config import PPOConfig
from .prioritized_replay import PrioritizedReplay, annealed_beta, importance_weights
from .q_actor import QActor, apex_epsilons
from .replay_policy import ReplayActor, ReplayAlgorithm, ReplayBatch, ReplayConfig, ReplayLearner
from .replay_shard import ReplayShard
from .rollout import PolicyRunner, Rollout, pack_rollout, unpack_rollout
from .seed_learner import SeedLearner
from .seed_plan import SeedPlan, SeedSampler, step_dtype
from .sum_tree import SumTree
from .sync_plan import SyncLearner, SyncPlan, SyncSampler
from .training import RunConfig, TrainingLog
from .vector import VectorEnvRunner, VectorFragment, make_runner

if TYPE_CHECKING:
    from .actor_critic import ActorCritic
    from .apex_dqn import ApexDQNLearner, double_q_target, weighted_td_loss
    from .conv_actor_critic import ConvActorCritic
    from .conv_ppo import ConvPPOLearner
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
    from .seed_inference import BatchedInference

#: the names that need torch, and their module
_LAZY = {
    **dict.fromkeys(["DQNLearnerReactor", "QSampler", "TrainConfig"], "learner"),
    **dict.fromkeys(["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork"], "dqn"),
    "ActorCritic": "actor_critic",
    "ConvActorCritic": "conv_actor_critic",
    "ConvPPOLearner": "conv_ppo",
    **dict.fromkeys(["ApexDQNLearner", "double_q_target", "weighted_td_loss"], "apex_dqn"),
    "ElasticDQNLearnerReactor": "elastic_learner",
    **dict.fromkeys(["PPOLearner", "clipped_surrogate_loss", "value_loss"], "ppo"),
    "BatchedInference": "seed_inference",
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
    "ApexDQNConfig",
    "ApexDQNLearner",
    "ApexLearner",
    "ApexPlan",
    "ApexSampler",
    "AtariQNetwork",
    "Batch",
    "BatchedInference",
    "ConvActor",
    "ConvActorCritic",
    "ConvPPOConfig",
    "ConvPPOLearner",
    "DQNConfig",
    "DQNLearner",
    "DQNLearnerReactor",
    "DataParallelLearner",
    "DataParallelPlan",
    "ElasticDQNLearnerReactor",
    "EnvRunner",
    "EpsilonGreedy",
    "Fragment",
    "GradientLearner",
    "GradientWorker",
    "Learner",
    "MLPActor",
    "NStepBuilder",
    "PPOConfig",
    "PPOLearner",
    "ParamServerPlan",
    "ParameterServer",
    "PolicyRunner",
    "PrioritizedReplay",
    "QActor",
    "QNetwork",
    "QSampler",
    "ReplayActor",
    "ReplayAlgorithm",
    "ReplayBatch",
    "ReplayBuffer",
    "ReplayConfig",
    "ReplayLearner",
    "ReplayShard",
    "Rollout",
    "RunConfig",
    "SeedLearner",
    "SeedPlan",
    "SeedSampler",
    "SpaceInfo",
    "SumTree",
    "SyncLearner",
    "SyncPlan",
    "SyncSampler",
    "TrainConfig",
    "TrainingLog",
    "VectorEnvRunner",
    "VectorFragment",
    "Weights",
    "annealed_beta",
    "apex_epsilons",
    "clipped_surrogate_loss",
    "default_device",
    "double_q_target",
    "env_id",
    "flat_weights",
    "gae",
    "get_weights",
    "greedy_action",
    "importance_weights",
    "lambda_returns",
    "linear_schedule",
    "load_flat_weights",
    "make_env",
    "make_mpe",
    "make_qnetwork",
    "make_runner",
    "pack_fragment",
    "pack_rollout",
    "priority_lag_bound",
    "record_dtype",
    "set_weights",
    "step_dtype",
    "transition_dtype",
    "unpack_fragment",
    "unpack_rollout",
    "value_loss",
    "weighted_td_loss",
    "weights_lag_bound",
]
