"""Vectorised sampling: ``num_envs`` copies of one environment stepped as a batch.

Where gymnasium has a native vectorised implementation (CartPole: one numpy step for
all copies, ~2 us per environment step at 16 copies here against ~5 us for one
environment) that is used; otherwise the copies are stepped one after the other in
the process (gymnasium's ``SyncVectorEnv``: no faster per step, but one fragment
covers ``num_envs`` episodes at once).

ALE Atari games have one too (ale-py's ``AtariVectorEnv``, stepping the copies on its
own threads): its observations are preprocessed as Atari agents are usually trained
(84x84 grayscale, 4 frames stacked), not the 210x160 RGB frames of one environment.

Seeding: copy ``k`` is reset with ``first_copy_seed(seed, num_envs) + k``
(:func:`~reactorfed.rl.envs.backends.first_copy_seed`: so that runners seeded ``s`` and
``s + 1`` share no copy's seed), random actions come from ``numpy.random.default_rng(seed)``.

gymnasium's vector environments reset a finished copy on the *next* step (its action is
ignored, its reward is 0): that row of a fragment is no transition, and
:attr:`VectorFragment.resets` marks it.

``backend="envpool"`` (or ``"auto"``) steps the copies with EnvPool's C++ engine instead
(:mod:`~reactorfed.rl.envs.backends`): the same layout and meaning, other random draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends import make_vector_env, resolve_backend, vectorization_mode
from .runner import EnvRunner, RandomActions, env_id, obs_converter, record_dtype

__all__ = ["VectorEnvRunner", "VectorFragment", "make_runner"]


@dataclass(slots=True)
class VectorFragment:
    """``n`` consecutive steps of ``num_envs`` copies: arrays shaped ``(n, num_envs, ...)``.

    ``resets[i, k]``: row ``i`` of copy ``k`` was its automatic reset after the episode
    that ended at row ``i - 1`` (or in the previous fragment), not a transition.
    ``episode_returns`` lists the returns of the episodes that ended in this fragment,
    by row, then by copy.
    """

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    resets: np.ndarray
    episode_returns: tuple[float, ...] = ()

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def env_steps(self) -> int:
        """Environment steps taken: rows times copies (reset rows included: each was a step call)."""
        return int(self.rewards.size)


class VectorEnvRunner:
    """Steps ``num_envs`` copies of one environment with seeded random actions;
    ``rollout(n)`` returns an ``n``-row :class:`VectorFragment`. ``backend`` (``"gymnasium"``,
    ``"envpool"`` or ``"auto"``: :mod:`~reactorfed.rl.envs.backends`) steps them; :attr:`backend`
    is the one used."""

    def __init__(self, name: str, num_envs: int, seed: int = 0, backend: str = "gymnasium") -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.name = name
        self.num_envs = num_envs
        self.seed = seed
        self.env, obs, self.backend = make_vector_env(name, num_envs, seed, backend)
        #: gymnasium's vectorization mode ("vector_entry_point" or "sync"), or "envpool"
        self.mode = "envpool" if self.backend == "envpool" else vectorization_mode(env_id(name))
        self.rng = np.random.default_rng(seed)
        single_obs = self.env.single_observation_space
        self._convert, self.obs_shape, self.obs_dtype = obs_converter(single_obs)
        self._actions = a = RandomActions.of(self.env.single_action_space)
        self.num_actions = a.num_actions
        #: a row of :meth:`record`: every copy's step (see :func:`~reactorfed.rl.envs.runner.record_dtype`)
        self.record_dtype = record_dtype(self.obs_shape, self.obs_dtype, a.shape, a.dtype, vector=True)
        self.obs: np.ndarray = self._as_array(obs)
        self.episode_return = np.zeros(num_envs, dtype=np.float64)
        self._resetting = np.zeros(num_envs, dtype=np.bool_)  # ended at the last step: reset at the next
        self.episodes = 0
        self.steps = 0

    def _as_array(self, obs: Any) -> np.ndarray:
        if self._convert is None:
            return np.asarray(obs)
        if isinstance(obs, tuple):  # a Tuple space comes batched per element: (k,) arrays
            return np.stack(obs, axis=-1).astype(np.int64)
        return np.asarray(obs, dtype=np.int64)

    def random_actions(self, n: int) -> np.ndarray:
        """``(n, num_envs, ...)`` uniformly random actions from the seeded generator."""
        return self._actions.sample(self.rng, (n, self.num_envs))

    def rollout(self, n: int) -> VectorFragment:
        """``n`` steps of every copy into a fresh :class:`VectorFragment`."""
        k = self.num_envs
        obs_buf = np.empty((n, k, *self.obs_shape), dtype=self.obs_dtype)
        actions = self.random_actions(n)
        rewards = np.empty((n, k), dtype=np.float32)
        terminated = np.empty((n, k), dtype=np.bool_)
        truncated = np.empty((n, k), dtype=np.bool_)
        resets = np.empty((n, k), dtype=np.bool_)
        returns = self._run(n, obs_buf, actions, rewards, terminated, truncated, resets)
        return VectorFragment(obs_buf, actions, rewards, terminated, truncated, resets, tuple(returns))

    def record(self, n: int) -> np.ndarray:
        """``n`` steps of every copy as one structured array shaped ``(n, num_envs)`` of
        :attr:`record_dtype`: the whole fragment, what a sampler sends (written straight
        into the record). ``episode_return`` holds an episode's return where it ended."""
        rec = np.empty((n, self.num_envs), dtype=self.record_dtype)
        actions = self.random_actions(n)  # stepped from this (contiguous) array, as rollout does
        rec["action"] = actions
        terminated, truncated = rec["terminated"], rec["truncated"]
        returns = self._run(n, rec["obs"], actions, rec["reward"], terminated, truncated, rec["reset"])
        ep = rec["episode_return"]
        ep[...] = 0.0
        if returns:
            rows, cols = np.nonzero(terminated | truncated)  # by row, then by copy: the order of returns
            ep[rows, cols] = returns
        return rec

    def _run(self, n: int, obs_buf: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             terminated: np.ndarray, truncated: np.ndarray, resets: np.ndarray) -> list[float]:
        """The stepping loop of :meth:`rollout` and :meth:`record`: every row of the given
        arrays is written; returns the returns of the episodes that ended. A hot loop."""
        k = self.num_envs
        returns: list[float] = []
        env, obs, resetting, ep_ret = self.env, self.obs, self._resetting, self.episode_return
        for i in range(n):
            obs_buf[i] = obs
            resets[i] = resetting
            nxt, r, term, trunc, _ = env.step(actions[i])
            rewards[i] = r
            terminated[i] = term
            truncated[i] = trunc
            ep_ret += r
            resetting = np.logical_or(term, trunc)
            if resetting.any():
                for j in np.flatnonzero(resetting):
                    returns.append(float(ep_ret[j]))
                ep_ret[resetting] = 0.0
            obs = self._as_array(nxt)
        self.obs, self._resetting = obs, resetting
        self.steps += n * k
        self.episodes += len(returns)
        return returns

    def close(self) -> None:
        self.env.close()


def make_runner(name: str, seed: int = 0, num_envs: int = 1, backend: str = "gymnasium") -> EnvRunner | VectorEnvRunner:
    """The runner a sampler of ``num_envs`` copies uses: one :class:`EnvRunner` (gymnasium's
    single environment), or a :class:`VectorEnvRunner` for more than one copy, or whenever
    EnvPool steps them (a vector engine: one copy is a vector of one, records ``(n, 1)``)."""
    if num_envs > 1 or resolve_backend(name, backend)[0] == "envpool":
        return VectorEnvRunner(name, num_envs, seed=seed, backend=backend)
    return EnvRunner(name, seed=seed)
