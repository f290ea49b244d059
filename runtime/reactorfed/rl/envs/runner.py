"""Environment construction and stepping for samplers: gymnasium, ALE Atari, MinAtar
(``MinAtar/Breakout-v1``, ...: 10x10xC boolean frames, channels last), PettingZoo MPE.

One code path steps environments for every consumer: the reactor samplers, the
Ray actors in ``bench/`` and the raw-process ceiling, so that a comparison
measures the framework and nothing else.

Seeding is deterministic: an :class:`EnvRunner` built with seed ``s`` resets its
``k``-th environment with ``s + k`` on the first reset and draws random actions
from ``numpy.random.default_rng(s)``; later resets continue the environment's own
seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "ATARI_GAMES",
    "GYM_ENVS",
    "EnvRunner",
    "Fragment",
    "RandomActions",
    "env_id",
    "make_env",
    "make_mpe",
    "obs_converter",
    "pack_fragment",
    "record_dtype",
    "register_ale",
    "unpack_fragment",
    "vectorization_mode",
]

GYM_ENVS: tuple[str, ...] = ("CartPole-v1", "Blackjack-v1", "Pendulum-v1")
ATARI_GAMES: tuple[str, ...] = ("Pong", "MsPacman", "SpaceInvaders")

_ale_registered = False
_minatar_registered = False


def vectorization_mode(full_id: str) -> str:
    """gymnasium's mode for ``full_id``: its native vector implementation, or SyncVectorEnv."""
    _register_for(full_id)
    spec = gym.spec(full_id)
    return "vector_entry_point" if spec.vector_entry_point is not None else "sync"


def env_id(name: str) -> str:
    """Full gymnasium id: ``"Pong"`` -> ``"ALE/Pong-v5"``; gymnasium ids pass through."""
    if name in ATARI_GAMES or (name.isalpha() and name[:1].isupper() and "-" not in name):
        return f"ALE/{name}-v5"
    return name


def register_ale() -> None:
    global _ale_registered
    if not _ale_registered:
        import ale_py

        gym.register_envs(ale_py)
        _ale_registered = True


def _register_minatar() -> None:
    """MinAtar's gymnasium ids (``MinAtar/Breakout-v1``, ...): the package registers them only
    when asked (``pip install 'reactorfed[minatar]'``)."""
    global _minatar_registered
    if not _minatar_registered:
        try:
            from minatar.gym import register_envs
        except ImportError as e:
            raise ImportError(f"MinAtar environments need the minatar package (pip install 'reactorfed[minatar]'): {e}") from e
        register_envs()
        _minatar_registered = True


def _register_for(full_id: str) -> None:
    """Register the ids of the family ``full_id`` belongs to (ALE, MinAtar) with gymnasium."""
    if full_id.startswith("ALE/"):
        register_ale()
    elif full_id.startswith("MinAtar/"):
        _register_minatar()


def make_env(name: str, seed: int | None = None, **kwargs: Any) -> gym.Env[Any, Any]:
    """Build one environment by short or full name; reset it with ``seed`` when given.

    The passive environment checker is off: it only checks the first step, but its
    wrapper costs a call per step on every sampler.
    """
    full = env_id(name)
    _register_for(full)
    env = gym.make(full, disable_env_checker=True, **kwargs)
    if seed is not None:
        env.reset(seed=seed)
        env.action_space.seed(seed)
    return env


def make_mpe(num_agents: int, seed: int | None = None, max_cycles: int = 25) -> Any:
    """PettingZoo MPE ``simple_spread`` (from ``mpe2``) as a parallel env, reset with ``seed``."""
    from mpe2 import simple_spread_v3

    env = simple_spread_v3.parallel_env(N=num_agents, max_cycles=max_cycles, continuous_actions=False)
    if seed is not None:
        env.reset(seed=seed)
    return env


@dataclass(slots=True)
class Fragment:
    """A rollout fragment: ``n`` consecutive steps of one environment (several copies:
    :class:`~reactorfed.rl.envs.vector.VectorFragment`).

    ``obs[i]`` is the observation the action ``actions[i]`` was taken in; ``next_obs``
    (kept only when asked, for replay) is the observation that step produced, before
    any automatic reset.
    """

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    next_obs: np.ndarray | None = None
    episode_returns: tuple[float, ...] = ()

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def env_steps(self) -> int:
        """Environment steps taken (as :attr:`VectorFragment.env_steps`): the rows."""
        return len(self)


def record_dtype(
    obs_shape: tuple[int, ...],
    obs_dtype: np.dtype[Any],
    action_shape: tuple[int, ...],
    action_dtype: np.dtype[Any],
    vector: bool = False,
) -> np.dtype[Any]:
    """The row of a fragment record (:meth:`EnvRunner.record`): one step's whole data.

    Fields: ``obs`` (the observation the action was taken in), ``action``, ``reward``,
    ``terminated``, ``truncated``, ``episode_return`` (the episode's return on the step
    that ends it, 0 elsewhere) and, for several copies (``vector``), ``reset`` (the
    row was the copy's automatic reset, not a transition). Observations keep their own
    dtype (an Atari frame stays uint8): a record is as many bytes as the fragment's
    arrays together, and it is one numpy array, which crosses a federate boundary as a
    raw buffer.
    """
    fields: list[tuple[str, Any, tuple[int, ...]]] = [
        ("obs", obs_dtype, obs_shape),
        ("action", action_dtype, action_shape),
        ("reward", np.float32, ()),
        ("terminated", np.bool_, ()),
        ("truncated", np.bool_, ()),
        ("episode_return", np.float32, ()),
    ]
    if vector:
        fields.append(("reset", np.bool_, ()))
    return np.dtype(fields)


def pack_fragment(fragment: Fragment) -> np.ndarray:
    """A fragment of vector observations (with ``next_obs``) as one float32 array.

    Columns: obs, next_obs, action, reward, terminated, truncated, and the episode's
    return on the steps that end an episode (0 elsewhere). One array crosses a
    federate boundary as a raw buffer, without pickling.
    """
    if fragment.next_obs is None:
        raise ValueError("pack_fragment needs next_obs (EnvRunner(keep_next_obs=True))")
    n = len(fragment)
    obs = fragment.obs.reshape(n, -1)
    d = obs.shape[1]
    out = np.zeros((n, 2 * d + 5), dtype=np.float32)
    out[:, :d] = obs
    out[:, d : 2 * d] = fragment.next_obs.reshape(n, -1)
    out[:, 2 * d] = fragment.actions.reshape(n)
    out[:, 2 * d + 1] = fragment.rewards
    out[:, 2 * d + 2] = fragment.terminated
    out[:, 2 * d + 3] = fragment.truncated
    ends = np.flatnonzero(fragment.terminated | fragment.truncated)
    out[ends, 2 * d + 4] = np.asarray(fragment.episode_returns, dtype=np.float32)
    return out


def unpack_fragment(packed: np.ndarray) -> Fragment:
    """Inverse of :func:`pack_fragment` (observations come back flat, float32)."""
    d = (packed.shape[1] - 5) // 2
    terminated = packed[:, 2 * d + 2] != 0
    truncated = packed[:, 2 * d + 3] != 0
    ends = np.flatnonzero(terminated | truncated)
    return Fragment(
        obs=packed[:, :d],
        actions=packed[:, 2 * d].astype(np.int64),
        rewards=packed[:, 2 * d + 1],
        terminated=terminated,
        truncated=truncated,
        next_obs=packed[:, d : 2 * d],
        episode_returns=tuple(float(x) for x in packed[ends, 2 * d + 4]),
    )


def obs_converter(space: gym.Space[Any]) -> tuple[Any, tuple[int, ...], np.dtype[Any]]:
    """How to turn an observation into an array: (function or None, shape, dtype)."""
    if isinstance(space, gym.spaces.Box):
        return None, tuple(space.shape), np.dtype(space.dtype)
    if isinstance(space, gym.spaces.Discrete):
        return (lambda o: np.asarray(o, dtype=np.int64)), (), np.dtype(np.int64)
    if isinstance(space, gym.spaces.Tuple) and all(
        isinstance(s, gym.spaces.Discrete) for s in space.spaces
    ):
        n = len(space.spaces)
        return (lambda o: np.asarray(o, dtype=np.int64)), (n,), np.dtype(np.int64)
    raise TypeError(f"unsupported observation space {space}")


@dataclass(frozen=True, slots=True)
class RandomActions:
    """What seeded random actions need of an action space (Discrete or Box)."""

    discrete: bool
    num_actions: int  # Discrete: n; Box: 0
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    low: Any = None
    high: Any = None

    @classmethod
    def of(cls, space: gym.Space[Any]) -> RandomActions:
        if isinstance(space, gym.spaces.Discrete):
            return cls(True, int(space.n), (), np.dtype(np.int64))
        assert isinstance(space, gym.spaces.Box)
        return cls(False, 0, tuple(space.shape), np.dtype(space.dtype), space.low, space.high)

    def sample(self, rng: np.random.Generator, lead: tuple[int, ...]) -> np.ndarray:
        """Uniform random actions shaped ``lead + shape``."""
        if self.discrete:
            return rng.integers(0, self.num_actions, size=lead)
        return rng.uniform(self.low, self.high, size=(*lead, *self.shape)).astype(self.dtype)


class EnvRunner:
    """Steps one environment with automatic reset; random or supplied actions.

    ``step()`` is the per-step pattern (one step, return its observation);
    ``rollout(n)`` is the fragment pattern (``n`` steps into preallocated arrays).
    """

    def __init__(self, name: str, seed: int = 0, keep_next_obs: bool = False, **kwargs: Any) -> None:
        self.name = name
        self.seed = seed
        self.keep_next_obs = keep_next_obs
        self.env = make_env(name, **kwargs)
        self.rng = np.random.default_rng(seed)
        self._convert, self.obs_shape, self.obs_dtype = obs_converter(self.env.observation_space)
        self._actions = a = RandomActions.of(self.env.action_space)
        self.discrete, self.num_actions, self.action_shape, self.action_dtype = a.discrete, a.num_actions, a.shape, a.dtype
        self.record_dtype = record_dtype(self.obs_shape, self.obs_dtype, self.action_shape, self.action_dtype)
        obs, _ = self.env.reset(seed=seed)
        self.obs: np.ndarray = self._as_array(obs)
        self.episode_return = 0.0
        self.episodes = 0
        self.steps = 0

    @property
    def obs_size(self) -> int:
        """Elements of one observation, flattened (what a fully connected network takes)."""
        return int(np.prod(self.obs_shape))

    def _as_array(self, obs: Any) -> np.ndarray:
        return obs if self._convert is None else self._convert(obs)

    def random_actions(self, n: int) -> np.ndarray:
        """``n`` uniformly random actions from this runner's seeded generator."""
        return self._actions.sample(self.rng, (n,))

    def step(self, action: Any = None) -> tuple[np.ndarray, float, bool]:
        """One step (random action when ``action`` is None): (observation, reward, done).

        On the end of an episode the environment is reset and the returned
        observation is the first of the next episode.
        """
        if action is None:
            action = self.random_actions(1)[0]
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self.steps += 1
        self.episode_return += float(reward)
        done = bool(terminated or truncated)
        if done:
            self.episodes += 1
            self.episode_return = 0.0
            obs, _ = self.env.reset()
        self.obs = self._as_array(obs)
        return self.obs, float(reward), done

    def rollout(self, n: int, policy: Any = None) -> Fragment:
        """``n`` steps into a fresh :class:`Fragment`.

        ``policy(obs) -> action`` picks actions; random actions when None.
        """
        obs_buf = np.empty((n, *self.obs_shape), dtype=self.obs_dtype)
        next_buf = np.empty_like(obs_buf) if self.keep_next_obs else None
        actions = (
            self.random_actions(n)
            if policy is None
            else np.empty((n, *self.action_shape), dtype=self.action_dtype)
        )
        rewards = np.empty(n, dtype=np.float32)
        terminated = np.zeros(n, dtype=np.bool_)
        truncated = np.zeros(n, dtype=np.bool_)
        returns = self._run(n, policy, obs_buf, next_buf, actions, rewards, terminated, truncated)
        return Fragment(obs_buf, actions, rewards, terminated, truncated, next_buf, tuple(returns))

    def record(self, n: int) -> np.ndarray:
        """``n`` random-action steps as one structured array of :attr:`record_dtype`
        (see :func:`record_dtype`): the whole fragment, what a sampler sends. The steps
        are written straight into the record (no copy of the observations after)."""
        rec = np.empty(n, dtype=self.record_dtype)
        actions = self.random_actions(n)  # stepped from this (contiguous) array, as rollout does
        rec["action"] = actions
        terminated, truncated = rec["terminated"], rec["truncated"]
        terminated[:] = False
        truncated[:] = False
        returns = self._run(n, None, rec["obs"], None, actions, rec["reward"], terminated, truncated)
        ep = rec["episode_return"]
        ep[:] = 0.0
        if returns:
            ep[np.flatnonzero(terminated | truncated)] = returns
        return rec

    def _run(
        self,
        n: int,
        policy: Any,
        obs_buf: np.ndarray,
        next_buf: np.ndarray | None,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> list[float]:
        """The stepping loop of :meth:`rollout` and :meth:`record`: ``n`` steps into the
        given arrays (``terminated`` and ``truncated`` come zeroed: only the steps that
        end an episode are written); returns the returns of the episodes that ended.
        A hot loop (every sampler's every step): kept in one piece, locals only."""
        returns: list[float] = []
        env, convert = self.env, self._convert
        obs = self.obs
        ep_ret = self.episode_return
        for i in range(n):
            obs_buf[i] = obs
            if policy is None:
                a = actions[i]
            else:
                a = policy(obs)
                actions[i] = a
            nxt, r, term, trunc, _ = env.step(a)
            if convert is not None:
                nxt = convert(nxt)
            if next_buf is not None:
                next_buf[i] = nxt
            rewards[i] = r
            ep_ret += float(r)
            if term or trunc:
                terminated[i] = term
                truncated[i] = trunc
                returns.append(ep_ret)
                ep_ret = 0.0
                nxt, _ = env.reset()
                if convert is not None:
                    nxt = convert(nxt)
            obs = nxt
        self.obs = obs
        self.episode_return = ep_ret
        self.steps += n
        self.episodes += len(returns)
        return returns

    def close(self) -> None:
        self.env.close()
