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
from .algos.apex.config import ApexDQNConfig
from .algos.apex.q_actor import QActor, apex_epsilons
from .algos.mlp_actor import MLPActor
from .algos.ppo.config import PPOConfig
from .algos.ppo.conv_actor import ConvActor
from .algos.ppo.conv_config import ConvPPOConfig
from .algos.ppo.gae import gae, lambda_returns
from .contracts import Actor, Algorithm, GradientLearner, Learner, SpaceInfo
from .envs.runner import (
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
from .envs.vector import VectorEnvRunner, VectorFragment, make_runner
from .plans.apex import ApexPlan, ApexSampler, priority_lag_bound, weights_lag_bound
from .plans.apex_trainer import ApexTrainer
from .plans.data_parallel import DataParallelPlan, DataParallelTrainer
from .plans.param_server import GradientWorker, ParameterServer, ParamServerPlan
from .plans.seed import SeedPlan, SeedSampler, step_dtype
from .plans.seed_trainer import SeedTrainer
from .plans.sync import SyncPlan, SyncSampler, SyncTrainer
from .replay.buffer import Batch, ReplayBuffer
from .replay.contracts import ReplayActor, ReplayAlgorithm, ReplayBatch, ReplayConfig, ReplayLearner
from .replay.nstep import NStepBuilder, transition_dtype
from .replay.prioritized import PrioritizedReplay, annealed_beta, importance_weights
from .replay.shard import ReplayShard
from .replay.sum_tree import SumTree
from .rollout import PolicyRunner, Rollout, pack_rollout, unpack_rollout
from .training import RunConfig, TrainingLog

if TYPE_CHECKING:
    from .algos.apex.learner import ApexDQNLearner, double_q_target, weighted_td_loss
    from .algos.dqn.learner import (
        DQNConfig,
        DQNLearner,
        EpsilonGreedy,
        linear_schedule,
        make_qnetwork,
    )
    from .algos.network import (
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
    from .algos.ppo.actor_critic import ActorCritic
    from .algos.ppo.conv_actor_critic import ConvActorCritic
    from .algos.ppo.conv_learner import ConvPPOLearner
    from .algos.ppo.learner import PPOLearner, clipped_surrogate_loss, value_loss
    from .plans.elastic_qlearning import ElasticDQNTrainer
    from .plans.qlearning import DQNTrainer, QSampler, TrainConfig
    from .plans.seed_inference import BatchedInference

#: the names that need torch, and their module
_LAZY = {
    **dict.fromkeys(["DQNTrainer", "QSampler", "TrainConfig"], "plans.qlearning"),
    **dict.fromkeys(["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork"], "algos.dqn.learner"),
    "ActorCritic": "algos.ppo.actor_critic",
    "ConvActorCritic": "algos.ppo.conv_actor_critic",
    "ConvPPOLearner": "algos.ppo.conv_learner",
    **dict.fromkeys(["ApexDQNLearner", "double_q_target", "weighted_td_loss"], "algos.apex.learner"),
    "ElasticDQNTrainer": "plans.elastic_qlearning",
    **dict.fromkeys(["PPOLearner", "clipped_surrogate_loss", "value_loss"], "algos.ppo.learner"),
    "BatchedInference": "plans.seed_inference",
    **dict.fromkeys(["AtariQNetwork", "QNetwork", "Weights", "default_device", "flat_weights", "get_weights",
                     "greedy_action", "load_flat_weights", "set_weights"], "algos.network"),
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
    "ApexPlan",
    "ApexSampler",
    "ApexTrainer",
    "AtariQNetwork",
    "Batch",
    "BatchedInference",
    "ConvActor",
    "ConvActorCritic",
    "ConvPPOConfig",
    "ConvPPOLearner",
    "DQNConfig",
    "DQNLearner",
    "DQNTrainer",
    "DataParallelPlan",
    "DataParallelTrainer",
    "ElasticDQNTrainer",
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
    "SeedPlan",
    "SeedSampler",
    "SeedTrainer",
    "SpaceInfo",
    "SumTree",
    "SyncPlan",
    "SyncSampler",
    "SyncTrainer",
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
