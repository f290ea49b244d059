"""Environments: one copy (:mod:`.runner`), vectors of copies (:mod:`.vector`), cooperative
multi-agent tasks and their copies (:mod:`.multi_agent`), and what steps them (:mod:`.backends`: gymnasium's vector environments or EnvPool's C++ engine,
:mod:`.envpool_env`). No torch here: a sampler process steps environments without it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from .backends import BACKENDS, Backend, make_vector_env, resolve_backend
from .runner import (
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
    from .multi_agent import TASKS, MultiAgentRunner, MultiAgentSpec, make_task

# (on first use: the multi-agent tasks build SpaceInfo and Rollout, whose modules import this package)
__getattr__ = lazy_attributes(__name__, globals(), dict.fromkeys(
    ["TASKS", "MultiAgentRunner", "MultiAgentSpec", "make_task"], "multi_agent"))

__all__ = [
    "ATARI_GAMES",
    "BACKENDS",
    "GYM_ENVS",
    "TASKS",
    "Backend",
    "EnvRunner",
    "Fragment",
    "MultiAgentRunner",
    "MultiAgentSpec",
    "VectorEnvRunner",
    "VectorFragment",
    "env_id",
    "make_env",
    "make_mpe",
    "make_runner",
    "make_task",
    "make_vector_env",
    "pack_fragment",
    "record_dtype",
    "resolve_backend",
    "unpack_fragment",
]
