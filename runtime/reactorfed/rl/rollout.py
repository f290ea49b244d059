"""On-policy rollouts: ``T`` steps of ``k`` environment copies acted on by a policy's
:class:`~reactorfed.rl.contracts.Actor`, and their one-array wire format.

A :class:`Rollout` keeps ``T + 1`` observations: the one each row acted in, and the one
the fragment ends in (a learner bootstraps from its value). gymnasium's vector
environments reset a finished copy on the next step (next-step autoreset): that row's
observation is the final observation of the episode that ended, its action is ignored,
and it is no transition (``resets``). Seeding follows
:class:`~reactorfed.rl.envs.vector.VectorEnvRunner`: the copies are reset with ``seed``
(copy ``j`` with ``seed + j``). ``backend`` says which engine steps them (gymnasium or
EnvPool: :mod:`~reactorfed.rl.envs.backends`); the rollouts mean the same under either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from .envs.backends import make_vector_env

__all__ = ["PolicyRunner", "Rollout", "pack_rollout", "rollout_dtype", "unpack_rollout"]


class _Acts(Protocol):
    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(slots=True)
class Rollout:
    """``T`` rows of ``k`` copies. ``obs`` is ``(T + 1, k, *obs_shape)``; the other arrays
    ``(T, k)``. ``logp`` is the acting policy's log-probability of each action.
    ``episode_returns``: the returns of the episodes that ended here, by row, then copy."""

    obs: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    resets: np.ndarray
    episode_returns: tuple[float, ...] = ()
    #: the tag (elapsed ns, microstep) at which the weights that acted here reached the
    #: sampler (None: not known): the learner tells its policy lag from it
    policy_tag: tuple[int, int] | None = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def transitions(self) -> int:
        """Rows that are transitions (an automatic reset is not), over every copy."""
        return int(self.resets.size - np.count_nonzero(self.resets))


def rollout_dtype(obs_shape: tuple[int, ...], obs_dtype: np.dtype[Any]) -> np.dtype[Any]:
    """One row of a packed rollout (:func:`pack_rollout`), for one copy."""
    return np.dtype([
        ("obs", obs_dtype, obs_shape),
        ("action", np.int64),
        ("logp", np.float32),
        ("reward", np.float32),
        ("terminated", np.bool_),
        ("truncated", np.bool_),
        ("reset", np.bool_),
        ("episode_return", np.float32),
    ])


def pack_rollout(r: Rollout) -> np.ndarray:
    """A rollout as one structured array shaped ``(T + 1, k)``: row ``T`` carries only the
    observation the fragment ends in (marked ``reset``: no transition). One array crosses a
    federate boundary as a raw buffer, without pickling."""
    T, k = r.actions.shape
    rec = np.zeros((T + 1, k), dtype=rollout_dtype(r.obs.shape[2:], r.obs.dtype))
    rec["obs"] = r.obs
    body = rec[:T]
    body["action"] = r.actions
    body["logp"] = r.logp
    body["reward"] = r.rewards
    body["terminated"] = r.terminated
    body["truncated"] = r.truncated
    body["reset"] = r.resets
    rec["reset"][T] = True
    rows, cols = np.nonzero(r.terminated | r.truncated)  # by row, then copy: the order of the returns
    body["episode_return"][rows, cols] = r.episode_returns
    if r.policy_tag is not None:
        # Row T holds no transition: its first copy's action, reward (as the bits of a
        # uint32) and terminated flag carry the policy's tag, at no extra byte.
        last = rec[T:]
        last["action"][0, 0] = r.policy_tag[0]
        last["reward"].view(np.uint32)[0, 0] = r.policy_tag[1]
        last["terminated"][0, 0] = True
    return rec


def unpack_rollout(rec: np.ndarray) -> Rollout:
    """Inverse of :func:`pack_rollout`; every array is a fresh, aligned copy (a received
    record may be read-only and unaligned)."""
    body = rec[:-1]
    last = rec[-1:]
    policy_tag = ((int(last["action"][0, 0]), int(last["reward"].view(np.uint32)[0, 0]))
                  if last["terminated"][0, 0] else None)
    terminated = np.array(body["terminated"], dtype=np.bool_)
    truncated = np.array(body["truncated"], dtype=np.bool_)
    rows, cols = np.nonzero(terminated | truncated)
    return Rollout(
        obs=np.array(rec["obs"]),
        actions=np.array(body["action"], dtype=np.int64),
        logp=np.array(body["logp"], dtype=np.float32),
        rewards=np.array(body["reward"], dtype=np.float32),
        terminated=terminated,
        truncated=truncated,
        resets=np.array(body["reset"], dtype=np.bool_),
        episode_returns=tuple(float(x) for x in body["episode_return"][rows, cols]),
        policy_tag=policy_tag,
    )


class PolicyRunner:
    """Steps ``num_envs`` copies of one environment with actions from an actor: gymnasium's
    vector environment (its native vector implementation where there is one) or EnvPool's,
    as ``backend`` says (``"gymnasium"``, ``"envpool"`` or ``"auto"``); :attr:`backend` is
    the one used."""

    def __init__(self, name: str, num_envs: int, seed: int = 0, backend: str = "gymnasium") -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.name, self.num_envs, self.seed = name, num_envs, seed
        self.env, obs, self.backend = make_vector_env(name, num_envs, seed, backend)
        space = self.env.single_observation_space
        if not isinstance(space, gym.spaces.Box):
            raise ValueError(f"{name}: a policy runner needs a Box observation space, not {space}")
        self.obs_shape: tuple[int, ...] = tuple(space.shape)
        self.obs_dtype: np.dtype[Any] = np.dtype(space.dtype)
        self.obs = np.asarray(obs, dtype=self.obs_dtype)
        self.episode_return = np.zeros(num_envs, dtype=np.float64)
        self._resetting = np.zeros(num_envs, dtype=np.bool_)
        self.steps = 0
        self.episodes = 0

    def rollout(self, n: int, actor: _Acts) -> Rollout:
        """``n`` steps of every copy, acting with ``actor``. A hot loop."""
        k = self.num_envs
        obs_buf = np.empty((n + 1, k, *self.obs_shape), dtype=self.obs_dtype)
        actions = np.empty((n, k), dtype=np.int64)
        logp = np.empty((n, k), dtype=np.float32)
        rewards = np.empty((n, k), dtype=np.float32)
        terminated = np.empty((n, k), dtype=np.bool_)
        truncated = np.empty((n, k), dtype=np.bool_)
        resets = np.empty((n, k), dtype=np.bool_)
        returns: list[float] = []
        env, obs, resetting, ep_ret = self.env, self.obs, self._resetting, self.episode_return
        for i in range(n):
            obs_buf[i] = obs
            resets[i] = resetting
            a, lp = actor.act(obs)
            actions[i] = a
            logp[i] = lp
            nxt, r, term, trunc, _ = env.step(a)
            rewards[i] = r
            terminated[i] = term
            truncated[i] = trunc
            ep_ret += r
            resetting = np.logical_or(term, trunc)
            if resetting.any():
                for j in np.flatnonzero(resetting):
                    returns.append(float(ep_ret[j]))
                ep_ret[resetting] = 0.0
            obs = np.asarray(nxt, dtype=self.obs_dtype)
        obs_buf[n] = obs
        self.obs, self._resetting = obs, resetting
        self.steps += n * k
        self.episodes += len(returns)
        return Rollout(obs_buf, actions, logp, rewards, terminated, truncated, resets, tuple(returns))

    def state(self) -> dict[str, Any]:
        """Everything the next rollouts depend on: the environments (their state and
        generators, pickled with them), the observation they are at, the episodes under way.
        For a checkpoint (:mod:`~reactorfed.rl.plans.sampler_state`)."""
        return {"env": self.env, "obs": self.obs, "episode_return": self.episode_return,
                "resetting": self._resetting, "steps": self.steps, "episodes": self.episodes}

    def restore(self, state: dict[str, Any]) -> None:
        """Carry on from :meth:`state`'s (the environments built at start are closed)."""
        self.env.close()
        self.env = state["env"]
        self.obs = np.asarray(state["obs"], dtype=self.obs_dtype)
        self.episode_return = np.array(state["episode_return"], dtype=np.float64)
        self._resetting = np.array(state["resetting"], dtype=np.bool_)
        self.steps, self.episodes = int(state["steps"]), int(state["episodes"])

    def close(self) -> None:
        self.env.close()
