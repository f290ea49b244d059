"""Reinforcement-learning building blocks: environments, replay, Q-networks, DQN.

The pieces are plain Python/numpy/torch; the reactors that wire them into
reactorfed programs live beside them.
"""

from __future__ import annotations

from .buffer import Batch, ReplayBuffer
from .dqn import DQNConfig, DQNLearner, EpsilonGreedy, linear_schedule, make_qnetwork
from .envs import (
    ATARI_GAMES,
    GYM_ENVS,
    EnvRunner,
    Fragment,
    env_id,
    make_env,
    make_mpe,
    pack_fragment,
    unpack_fragment,
)
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

__all__ = [
    "ATARI_GAMES",
    "GYM_ENVS",
    "AtariQNetwork",
    "Batch",
    "DQNConfig",
    "DQNLearner",
    "EnvRunner",
    "EpsilonGreedy",
    "Fragment",
    "QNetwork",
    "ReplayBuffer",
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
    "pack_fragment",
    "set_weights",
    "unpack_fragment",
]
