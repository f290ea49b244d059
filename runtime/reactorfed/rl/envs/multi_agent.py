"""Cooperative multi-agent environments (PettingZoo's MPE, from the ``mpe2`` package) and
what steps ``num_envs`` copies of one for on-policy training.

:class:`MultiAgentRunner` keeps gymnasium's next-step autoreset, so that every agent's
rollout means what a :class:`~reactorfed.rl.rollout.Rollout` of a vector environment means
(GAE, the reset rows): when a copy's episode ends (MPE ends every agent's at once, at
``max_cycles``), the next row holds the final observation, its action is ignored, and the
copy is reset instead of stepped. Copy ``j`` is reset with ``seed + j`` the first time,
then draws its next episodes from its own generator: one seed, the same episodes.

No torch here: the environment federate steps copies and acts with numpy actors.

MPE builds a pygame font with each environment and its ``close()`` quits pygame for the
whole process: federates in threads (and a probe closed while a copy is being built) would
pull the font from under each other. So environments are built under one lock and dropped,
never closed (nothing here renders).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import ValidationError
from ..contracts import SpaceInfo
from ..rollout import Rollout

__all__ = ["TASKS", "MultiAgentRunner", "MultiAgentSpec", "make_task"]

#: the cooperative MPE tasks (every agent shares the team's goal), and their module in mpe2
TASKS: dict[str, str] = {
    "simple_spread": "simple_spread_v3",  # N agents cover N landmarks, without colliding
    "simple_speaker_listener": "simple_speaker_listener_v4",  # a speaker guides a listener (unlike agents)
    "simple_reference": "simple_reference_v3",  # two agents, each told the other's goal landmark
}

#: (observations per agent, ``(k, *obs_shape)``) -> (actions, log-probabilities) per agent, ``(k,)`` each
_BUILDING = threading.Lock()

ActFn = Callable[[Sequence[np.ndarray]], tuple[Sequence[np.ndarray], Sequence[np.ndarray]]]


def make_task(task: str, num_agents: int = 3, max_cycles: int = 25) -> Any:
    """A PettingZoo parallel environment of the MPE ``task`` (discrete actions); ``num_agents``
    is read by ``simple_spread`` only (the others have a fixed cast)."""
    if task not in TASKS:
        raise ValidationError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    import importlib

    module = importlib.import_module(f"mpe2.{TASKS[task]}")
    kw: dict[str, Any] = {"N": num_agents} if task == "simple_spread" else {}
    with _BUILDING:
        return module.parallel_env(max_cycles=max_cycles, continuous_actions=False, **kw)


@dataclass(frozen=True)
class MultiAgentSpec:
    """A task's agents (in the environment's order) and each one's :class:`SpaceInfo`."""

    agents: tuple[str, ...]
    spaces: tuple[SpaceInfo, ...]

    @classmethod
    def of_task(cls, task: str, num_agents: int = 3, max_cycles: int = 25) -> MultiAgentSpec:
        env = make_task(task, num_agents, max_cycles)  # (dropped, not closed: see the module)
        agents = tuple(env.possible_agents)
        return cls(agents, tuple(SpaceInfo(tuple(env.observation_space(a).shape), int(env.action_space(a).n))
                                 for a in agents))

    @property
    def state_dim(self) -> int:
        """The size of the joint observation (every agent's, concatenated)."""
        return sum(s.obs_dim for s in self.spaces)


class MultiAgentRunner:
    """Steps ``num_envs`` copies of ``task``; :meth:`rollout` gives a rollout per agent."""

    def __init__(self, task: str, num_envs: int, seed: int = 0, num_agents: int = 3, max_cycles: int = 25) -> None:
        self.envs = [make_task(task, num_agents, max_cycles) for _ in range(num_envs)]
        self.agents = tuple(self.envs[0].possible_agents)
        self.num_envs = num_envs
        first = [env.reset(seed=seed + j)[0] for j, env in enumerate(self.envs)]
        self.obs = [np.stack([np.asarray(o[a], dtype=np.float32) for o in first]) for a in self.agents]
        self.episode_return = np.zeros((len(self.agents), num_envs), dtype=np.float64)
        self._resetting = np.zeros(num_envs, dtype=np.bool_)
        self.steps = 0  # env steps (of every copy, all agents acting at once), reset rows excluded
        self.episodes = 0
        #: the team's return (every agent's reward, summed) of each episode that ended, in order
        self.team_returns: list[float] = []

    def rollout(self, n: int, act: ActFn) -> list[Rollout]:
        """``n`` rows of every copy; one :class:`Rollout` an agent (its observations,
        actions, log-probabilities, rewards, the episode ends, and its own returns)."""
        A, k = len(self.agents), self.num_envs
        obs = [np.empty((n + 1, k, *o.shape[1:]), dtype=np.float32) for o in self.obs]
        actions = np.empty((A, n, k), dtype=np.int64)
        logp = np.empty((A, n, k), dtype=np.float32)
        rewards = np.zeros((A, n, k), dtype=np.float32)
        terminated = np.zeros((A, n, k), dtype=np.bool_)
        truncated = np.zeros((A, n, k), dtype=np.bool_)
        resets = np.empty((n, k), dtype=np.bool_)
        returns: list[list[float]] = [[] for _ in range(A)]
        for i in range(n):
            for a in range(A):
                obs[a][i] = self.obs[a]
            resets[i] = self._resetting
            acts, lps = act(self.obs)
            for a in range(A):
                actions[a, i], logp[a, i] = acts[a], lps[a]
            ended = np.zeros(k, dtype=np.bool_)
            for j, env in enumerate(self.envs):
                if self._resetting[j]:
                    o = env.reset()[0]
                else:
                    o, r, te, tr, _ = env.step({name: int(actions[a, i, j]) for a, name in enumerate(self.agents)})
                    for a, name in enumerate(self.agents):
                        rewards[a, i, j], terminated[a, i, j], truncated[a, i, j] = r[name], te[name], tr[name]
                    ended[j] = not env.agents
                    if ended[j] != bool(terminated[:, i, j].all() | truncated[:, i, j].all()):
                        raise RuntimeError(f"{self.agents}: an agent's episode ended without the others'")
                for a, name in enumerate(self.agents):
                    self.obs[a][j] = o[name]
            self.episode_return += rewards[:, i, :]
            for j in np.flatnonzero(ended).tolist():  # by row, then copy: the order pack_rollout keeps
                for a in range(A):
                    returns[a].append(float(self.episode_return[a, j]))
                self.team_returns.append(float(self.episode_return[:, j].sum()))
                self.episode_return[:, j] = 0.0
            self.steps += int(k - np.count_nonzero(self._resetting))
            self.episodes += int(np.count_nonzero(ended))
            self._resetting = ended
        for a in range(A):
            obs[a][n] = self.obs[a]
        return [Rollout(obs[a], actions[a], logp[a], rewards[a], terminated[a], truncated[a], resets.copy(),
                        tuple(returns[a])) for a in range(A)]

    def close(self) -> None:
        """Drop the copies (not closed: MPE's close quits pygame for the process, see the module)."""
        self.envs = []
