"""Reinforcement-learning building blocks: environments, replay, Q-networks, DQN.

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
from .vector import VectorEnvRunner, VectorFragment, make_runner

if TYPE_CHECKING:
    from .dqn import DQNConfig, DQNLearner, EpsilonGreedy, linear_schedule, make_qnetwork
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

#: the names that need torch, and their module
_LAZY = {
    **dict.fromkeys(["DQNLearnerReactor", "QSampler", "TrainConfig"], "learner"),
    **dict.fromkeys(["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork"], "dqn"),
    **dict.fromkeys(["AtariQNetwork", "QNetwork", "Weights", "default_device", "flat_weights", "get_weights",
                     "greedy_action", "load_flat_weights", "set_weights"], "network"),
}


__getattr__ = lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "ATARI_GAMES",
    "GYM_ENVS",
    "AtariQNetwork",
    "Batch",
    "DQNConfig",
    "DQNLearner",
    "DQNLearnerReactor",
    "EnvRunner",
    "EpsilonGreedy",
    "Fragment",
    "QNetwork",
    "QSampler",
    "ReplayBuffer",
    "TrainConfig",
    "VectorEnvRunner",
    "VectorFragment",
    "Weights",
    "default_device",
    "env_id",
    "flat_weights",
    "get_weights",
    "greedy_action",
    "linear_schedule",
    "load_flat_weights",
    "make_env",
    "make_mpe",
    "make_qnetwork",
    "make_runner",
    "pack_fragment",
    "record_dtype",
    "set_weights",
    "unpack_fragment",
]
