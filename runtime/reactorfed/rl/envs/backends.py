"""Which engine steps a sampler's vector of environment copies: the ``backend`` parameter.

* ``"gymnasium"`` (the default): gymnasium's vector environments, its native vectorised
  implementation where the environment has one (CartPole, ALE Atari's ``AtariVectorEnv``),
  ``SyncVectorEnv`` otherwise;
* ``"envpool"``: EnvPool's C++ engine (:mod:`reactorfed.rl.envs.envpool_env`); an error where
  it is missing or lacks the environment;
* ``"auto"``: EnvPool where it is installed and supports the environment, gymnasium
  otherwise.

Either backend's fragments have the same layout and meaning (next-step autoreset rows,
truncation apart from termination, copy ``k`` seeded ``first_copy_seed(seed, num_envs) + k``),
and a seed fixes them;
but the two draw from different generators, so one seed gives different fragments under
each. That is why the default is not ``"auto"``: what a seed produces would depend on
what is installed where each sampler runs. Every runner logs which backend steps its
copies, and why when ``"auto"`` fell back to gymnasium.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import gymnasium as gym

from .envpool_env import EnvPoolVectorEnv, envpool_support, envpool_version
from .runner import env_id, vectorization_mode

__all__ = ["BACKENDS", "Backend", "check_backend", "first_copy_seed", "make_vector_env", "resolve_backend",
           "vectorization_mode"]

Backend = Literal["auto", "gymnasium", "envpool"]
BACKENDS: tuple[str, ...] = ("auto", "gymnasium", "envpool")

log = logging.getLogger("reactorfed.rl")


def check_backend(backend: object) -> None:
    """A clear error for anything but one of :data:`BACKENDS`."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")


def resolve_backend(name: str, backend: str = "gymnasium") -> tuple[str, str]:
    """``(backend used, why)`` for stepping ``name``: ``"gymnasium"`` or ``"envpool"``;
    ``why`` says why ``"auto"`` fell back to gymnasium (empty otherwise)."""
    check_backend(backend)
    if backend == "gymnasium":
        return "gymnasium", ""
    task, why = envpool_support(name)
    if task is not None:
        return "envpool", ""
    if backend == "envpool":
        raise ValueError(f"backend='envpool' cannot step {name}: {why}")
    return "gymnasium", why


#: copy seeds stay below 2**31 (EnvPool takes 32-bit signed seeds), up to 65,536 copies a vector
_SEED_SPACE = 2**31 - 2**16


def first_copy_seed(seed: int, num_envs: int) -> int:
    """The seed of copy 0 of a vector of ``num_envs`` copies seeded ``seed``; copy ``k`` gets
    this plus ``k`` (every backend but CartPole's native vector seeds its copies so). Samplers
    seeded ``s`` and ``s + 1`` would otherwise share all but one of their copies' seeds and
    replay the same episode starts; spaced ``num_envs`` apart, no two copies of a run share one."""
    return seed * num_envs % _SEED_SPACE


def make_vector_env(name: str, num_envs: int, seed: int, backend: str = "gymnasium") -> tuple[Any, Any, str]:
    """``num_envs`` copies of ``name`` under ``backend``, reset (copy ``k`` with
    ``first_copy_seed(seed, num_envs) + k``):
    ``(vector environment, first observations, backend used)``. Logs which backend it is."""
    used, why = resolve_backend(name, backend)
    full = env_id(name)
    first = first_copy_seed(seed, num_envs)
    env: Any
    if used == "envpool":
        env = EnvPoolVectorEnv(name, num_envs, first)
        obs, _ = env.reset()
        engine = f"EnvPool {envpool_version()} ({env.task})"
    else:
        mode = vectorization_mode(full)
        env = gym.make_vec(full, num_envs=num_envs, vectorization_mode=mode)
        if isinstance(env, gym.vector.SyncVectorEnv):
            # a SyncVectorEnv keeps what it built its copies from and never uses it again: a
            # spent generator (gymnasium 1.2) or a list of local closures (1.3 on), neither of
            # which pickles, and a sampler's state is its environments pickled
            env.env_fns = ()
        obs, _ = env.reset(seed=first)
        engine = f"gymnasium's {type(env).__name__}"
    note = f"; envpool not used: {why}" if why else ""
    log.info("%s x%d (seeds %d-%d): stepped by %s, backend=%r%s", name, num_envs, first, first + num_envs - 1,
             engine, backend, note)
    return env, obs, used
