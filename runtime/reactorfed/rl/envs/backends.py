"""Which engine steps a sampler's vector of environment copies: the ``backend`` parameter.

* ``"gymnasium"`` (the default): gymnasium's vector environments, its native vectorised
  implementation where the environment has one (CartPole, ALE Atari's ``AtariVectorEnv``),
  ``SyncVectorEnv`` otherwise;
* ``"envpool"``: EnvPool's C++ engine (:mod:`reactorfed.rl.envs.envpool_env`); an error where
  it is missing or lacks the environment;
* ``"auto"``: EnvPool where it is installed and supports the environment, gymnasium
  otherwise.

Either backend's fragments have the same layout and meaning (next-step autoreset rows,
truncation apart from termination, copy ``k`` seeded ``seed + k``), and a seed fixes them;
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

__all__ = ["BACKENDS", "Backend", "check_backend", "make_vector_env", "resolve_backend", "vectorization_mode"]

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


def make_vector_env(name: str, num_envs: int, seed: int, backend: str = "gymnasium") -> tuple[Any, Any, str]:
    """``num_envs`` copies of ``name`` under ``backend``, reset (copy ``k`` with ``seed + k``):
    ``(vector environment, first observations, backend used)``. Logs which backend it is."""
    used, why = resolve_backend(name, backend)
    full = env_id(name)
    env: Any
    if used == "envpool":
        env = EnvPoolVectorEnv(name, num_envs, seed)
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
        obs, _ = env.reset(seed=seed)
        engine = f"gymnasium's {type(env).__name__}"
    note = f"; envpool not used: {why}" if why else ""
    log.info("%s x%d (seed %d): stepped by %s, backend=%r%s", name, num_envs, seed, engine, backend, note)
    return env, obs, used
