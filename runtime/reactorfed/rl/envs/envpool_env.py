"""EnvPool's C++ engine (``pip install 'reactorfed[envpool]'``) stepping a vector of copies,
where it has the environment, as gymnasium's vector environment would.

EnvPool steps ``num_envs`` copies of an environment in C++, on its own threads, one call
for the batch. :class:`EnvPoolVectorEnv` puts it behind the part of gymnasium's
``VectorEnv`` interface the runners use (:class:`~reactorfed.rl.envs.vector.VectorEnvRunner`,
:class:`~reactorfed.rl.rollout.PolicyRunner`), and :func:`envpool_support` says whether it
steps an environment with the meaning gymnasium gives it. What was checked (EnvPool 1.2.5,
gymnasium 1.4; ``tests/rl/test_envpool_env.py`` keeps checking it):

* **Autoreset** is next-step, as gymnasium 1.x's vector environments: the step after a
  copy's episode ended returns the next episode's first observation, reward 0, neither
  terminated nor truncated, and ignores its action. The runners mark that row ``resets``.
  There is no ``final_obs`` in ``info`` (gymnasium's next-step mode has none either; the
  runners use no ``info``).
* **Time limits** come out as truncation: EnvPool reports ``terminated = done & ~trunc``,
  so CartPole-v1's 500th step is truncated, not terminated.
* **Seeding**: copy ``k`` is seeded ``seed + k`` (passed as a list, not left to EnvPool's
  default, which is the same today), as gymnasium's vector environments reset copy ``k``
  with ``seed + k`` (a sampler's ``seed`` here is already spaced from the others':
  :func:`~reactorfed.rl.envs.backends.first_copy_seed`). Each copy draws from its own C++
  ``std::mt19937``, not numpy's PCG64: one seed gives the same fragments every time, but
  not gymnasium's fragments.
* **Copy order**: in synchronous mode (a batch of every copy) EnvPool returns the copies in
  order; :meth:`EnvPoolVectorEnv.step` checks ``info["env_id"]`` every step and puts them
  in order if they ever are not.
* **Atari** (``ALE/<Game>-v5`` -> EnvPool's ``<Game>-v5``) is configured as gymnasium's ALE
  v5 vector environment (ale-py's ``AtariVectorEnv``): the spec's sticky actions (0.25),
  frame skip (4) and frame limit (108,000 frames: 27,000 steps), rewards clipped, 84x84
  grayscale frames stacked by 4, up to 30 no-ops and FIRE at reset.

An environment counts as supported when EnvPool has it under that id and its observation
and action spaces equal gymnasium's vector environment's (Blackjack-v1 does not: EnvPool
gives a Box where gymnasium gives a Tuple). ``import envpool`` takes 1.5-4 s (it imports
matplotlib for its renderers): it happens once per process, and only where EnvPool may be
used.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import gymnasium as gym
import numpy as np

from .runner import env_id, register_ale, vectorization_mode

__all__ = ["EnvPoolVectorEnv", "envpool_installed", "envpool_support", "envpool_version"]

_INT32_MAX = 2**31 - 1


@cache
def envpool_installed() -> bool:
    """Whether ``envpool`` can be imported (found without importing it)."""
    return importlib.util.find_spec("envpool") is not None


def envpool_version() -> str:
    import envpool

    return str(envpool.__version__)


@contextmanager
def _quiet() -> Iterator[None]:
    """EnvPool's spaces make gymnasium warn that their float64 bounds are cast to float32
    (every time one is built): noise in every sampler's log."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*precision lowered by casting", category=UserWarning)
        yield


def _task(full: str) -> tuple[str, dict[str, Any]]:
    """EnvPool's id and settings for the gymnasium id ``full``: those that give it
    gymnasium's time limit (and, for Atari, its v5 vector environment's preprocessing)."""
    if full.startswith("ALE/"):
        register_ale()
        kw = gym.spec(full).kwargs
        frameskip = kw.get("frameskip", 4)
        if not isinstance(frameskip, int):
            raise ValueError(f"{full}: a random frame skip {frameskip!r} has no EnvPool equivalent")
        game = full.removeprefix("ALE/")
        return game, {
            "frame_skip": frameskip,
            "repeat_action_probability": float(kw.get("repeat_action_probability", 0.25)),
            "max_episode_steps": int(kw.get("max_num_frames_per_episode", 108_000)) // frameskip,
            "full_action_space": bool(kw.get("full_action_space", False)),
            "reward_clip": True,  # AtariVectorEnv's reward_clipping default
        }
    limit = gym.spec(full).max_episode_steps
    return full, ({"max_episode_steps": int(limit)} if limit is not None else {})


def _gym_spaces(full: str) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """The single-copy spaces of gymnasium's vector environment for ``full`` (built once)."""
    env = gym.make_vec(full, num_envs=1, vectorization_mode=vectorization_mode(full))
    try:
        return env.single_observation_space, env.single_action_space
    finally:
        env.close()


@cache
def envpool_support(name: str) -> tuple[str | None, str]:
    """``(EnvPool id, "")`` when EnvPool steps ``name`` as gymnasium's vector environment
    does (see the module's notes), else ``(None, why not)``. Cached per process."""
    if not envpool_installed():
        return None, "envpool is not installed (pip install 'reactorfed[envpool]')"
    full = env_id(name)
    try:
        task, config = _task(full)
    except (gym.error.Error, ValueError) as e:
        return None, str(e)
    import envpool

    if task not in envpool.list_all_envs():
        return None, f"EnvPool {envpool.__version__} has no {task}"
    try:
        with _quiet():
            spec = envpool.make_spec(task, **config)
            obs, act = spec.gymnasium_observation_space, spec.gymnasium_action_space
    except (TypeError, ValueError) as e:  # a setting its family does not have
        return None, f"EnvPool's {task} does not take {sorted(config)}: {e}"
    gym_obs, gym_act = _gym_spaces(full)
    if obs != gym_obs or act != gym_act:
        return None, f"EnvPool's {task} has spaces {obs}, {act}; gymnasium's {full}: {gym_obs}, {gym_act}"
    return task, ""


class EnvPoolVectorEnv:
    """``num_envs`` copies of ``name`` in EnvPool, copy ``k`` seeded ``seed + k``, as much of
    gymnasium's ``VectorEnv`` as the runners use: ``single_observation_space``,
    ``single_action_space``, ``reset()``, ``step(actions)`` and ``close()``."""

    def __init__(self, name: str, num_envs: int, seed: int) -> None:
        task, why = envpool_support(name)
        if task is None:
            raise ValueError(f"EnvPool cannot step {name}: {why}")
        seeds = [seed + k for k in range(num_envs)]
        if seeds[0] < -_INT32_MAX or seeds[-1] >= _INT32_MAX:  # EnvPool's seeds are C++ ints
            raise ValueError(f"EnvPool seeds copies with 32-bit ints: seed {seed} + {num_envs - 1} is out of range")
        import envpool

        _, config = _task(env_id(name))
        with _quiet():
            self.env = envpool.make(task, env_type="gymnasium", num_envs=num_envs, seed=seeds, **config)
            self.single_observation_space: gym.Space[Any] = self.env.observation_space
            self.single_action_space: gym.Space[Any] = self.env.action_space
        self.task, self.num_envs = task, num_envs
        self._order = np.arange(num_envs, dtype=np.int32)

    def reset(self) -> tuple[Any, dict[str, Any]]:
        """Every copy's first observation (the seeds were given at construction)."""
        obs, info = self.env.reset()
        return self._ordered(info, obs)[0], info

    def step(self, actions: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One step of every copy (``actions[k]`` for copy ``k``), results in copy order."""
        obs, reward, terminated, truncated, info = self.env.step(actions)
        obs, reward, terminated, truncated = self._ordered(info, obs, reward, terminated, truncated)
        return obs, reward, terminated, truncated, info

    def _ordered(self, info: dict[str, Any], *arrays: Any) -> tuple[Any, ...]:
        ids = info["env_id"]
        if np.array_equal(ids, self._order):
            return arrays
        idx = np.argsort(ids)  # EnvPool's synchronous mode keeps copy order; this keeps the promise if not
        return tuple(np.asarray(a)[idx] for a in arrays)

    def close(self) -> None:
        self.env.close()
