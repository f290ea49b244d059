"""Multi-agent inference: one policy reactor per agent around a
PettingZoo environment reactor, with per-step scatter (observations) and gather
(actions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    MultiReader,
    MultiWriter,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    bank,
    each,
    reaction,
)

from ..algos.dqn.learner import make_qnetwork
from ..algos.network import greedy_action
from ..envs.runner import make_mpe

__all__ = ["AgentGroup", "AgentPolicy", "MultiAgentEnv"]


class MultiAgentEnv(Reactor):
    """Holds an MPE ``simple_spread`` env with ``n`` agents; scatters each agent's
    observation, gathers every agent's action, steps, repeats for ``steps`` steps."""

    actions: Input[int] = Input(int, width="n")
    obs: Output[np.ndarray] = Output(np.ndarray, width="n")

    def __init__(self, n: int, seed: int = 0, steps: int = 1000) -> None:
        self.n = n
        self.env = make_mpe(n)
        self.seed = seed
        self.agents = list(self.env.possible_agents)
        self.steps = steps
        self.done = 0
        self.episodes = 0
        self.total_reward = 0.0
        self.result: dict[str, Any] = {}
        self.t0 = self.t_last = 0  # physical time, ns (the clock's)

    def _scatter(self, observations: dict[str, np.ndarray], obs: MultiWriter[np.ndarray]) -> None:
        for i, name in enumerate(self.agents):
            obs[i].set(observations[name])

    @reaction(triggers=[STARTUP], effects=[obs])
    def start(self, obs: MultiWriter[np.ndarray]) -> None:
        observations, _ = self.env.reset(seed=self.seed)
        self.t0 = self.t_last = self.physical_time()
        self._scatter(observations, obs)

    @reaction(triggers=[actions], effects=[obs])
    def step(self, actions: MultiReader[int], obs: MultiWriter[np.ndarray]) -> None:
        acts = {name: int(a.get() or 0) for name, a in zip(self.agents, actions, strict=True)}
        observations, rewards, _, _, _ = self.env.step(acts)
        self.total_reward += float(sum(rewards.values()))
        self.done += 1
        self.t_last = self.physical_time()
        if not self.env.agents:  # the episode ended for everyone
            self.episodes += 1
            observations, _ = self.env.reset(seed=self.seed + self.episodes)
        if self.done < self.steps:
            self._scatter(observations, obs)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        seconds = (self.t_last - self.t0) / 1e9
        self.result = {
            "steps": self.done,
            "episodes": self.episodes,
            "total_reward": self.total_reward,
            "seconds": seconds,
            "steps_per_s": self.done / seconds if seconds > 0 else 0.0,
        }
        self.report_result(self.result)


class AgentPolicy(Reactor):
    """One agent's torch policy (a Q-network acting greedily), seeded per agent."""

    obs: Input[np.ndarray] = Input(np.ndarray)
    action: Output[int] = Output(int)

    def __init__(self, obs_dim: int, num_actions: int, seed: int = 0) -> None:
        self.q = make_qnetwork(obs_dim, num_actions, (64, 64), seed)
        self.q.eval()

    @reaction(triggers=[obs], effects=[action])
    def act(self, obs: PortReader[np.ndarray], action: PortWriter[int]) -> None:
        o = obs.get()
        assert o is not None
        action.set(greedy_action(self.q, o))


class AgentGroup(Reactor):
    """``k`` agent policies in one reactor: agents ``first`` .. ``first + k - 1``.

    A federated program's federates are the main reactor's children, so a group is
    how several agents share one process (one federate per group instead of one per
    agent); each policy and its seed stay what they are in a bank of
    :class:`AgentPolicy`, so the results are the same.
    """

    obs: Input[np.ndarray] = Input(np.ndarray, width="k")
    action: Output[int] = Output(int, width="k")

    def __init__(self, k: int, obs_dim: int, num_actions: int, seed: int = 0, first: int = 0) -> None:
        self.k = k
        self.agents = bank(AgentPolicy, k, obs_dim, num_actions, seed=each(lambda j: seed + first + j))
        self.connect(self.obs, self.agents.obs)
        self.connect(self.agents.action, self.action)
