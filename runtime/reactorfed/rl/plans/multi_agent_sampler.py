"""The multi-agent plan's environment reactor: ``num_envs`` copies of a cooperative task, and
a numpy actor for each policy of the mapping (RLlib's EnvRunner, which holds every policy's
module for inference). Each round, when every policy's weights have arrived, it steps the
copies ``fragment_len`` rows, each policy acting for its agents in one batch, and sends one
packed rollout per agent (channel ``a`` of :attr:`MultiAgentSampler.fragments` is agent ``a``).

For an algorithm with a centralized critic (MAPPO: ``centralized_critic``) each row of an
agent's rollout is ``[its observation | every agent's observation | one-hot of the agent]``:
the global state MAPPO's critic takes, agent-specific so that a critic shared by several
agents tells them apart (Yu et al. 2022, "agent-specific global state"). The actors see the
observation only.

It also keeps the team's returns (every agent's rewards summed over an episode: RLlib's
``episode_return_mean``) and, with ``run.progress`` on the first sampler, prints them.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from reactorfed import SHUTDOWN, STARTUP, Input, MultiReader, MultiWriter, Output, Reactor, reaction

from ..contracts import Actor, Algorithm, SpaceInfo
from ..envs.multi_agent import MultiAgentRunner
from ..rollout import Rollout, pack_rollout
from ..training import RunConfig
from .policy_mapping import PolicySlot
from .sampler import actor_seed

__all__ = ["MultiAgentSampler", "central_rows", "copy_seed"]


def copy_seed(sampler_seed: int) -> int:
    """The seed of the first copy of the sampler seeded ``sampler_seed`` (copy ``j``: ``+ j``,
    for up to 1,000 copies a sampler)."""
    return sampler_seed * 1000


def central_rows(rollouts: Sequence[Rollout]) -> list[Rollout]:
    """Each agent's rollout with its rows ``[observation | every agent's observation |
    one-hot of the agent]`` (what a centralized critic reads after the observation)."""
    T1, k = rollouts[0].obs.shape[:2]
    joint = np.concatenate([r.obs.reshape(T1, k, -1) for r in rollouts], axis=2)
    out = []
    for a, r in enumerate(rollouts):
        who = np.zeros((T1, k, len(rollouts)), dtype=np.float32)
        who[:, :, a] = 1.0
        obs = np.concatenate([r.obs.reshape(T1, k, -1), joint, who], axis=2)
        out.append(Rollout(obs, r.actions, r.logp, r.rewards, r.terminated, r.truncated, r.resets,
                           r.episode_returns, r.policy_tag))
    return out


class MultiAgentSampler(Reactor):
    """``policies``: the mapping's policies (each with its agents); ``spaces``: each agent's
    :class:`SpaceInfo` (observation only); weights channel ``p`` is policy ``p``'s."""

    weights: Input[np.ndarray] = Input(np.ndarray, width="num_policies")
    fragments: Output[np.ndarray] = Output(np.ndarray, width="num_agents")

    def __init__(self, algo: Algorithm, task: str, policies: Sequence[PolicySlot], spaces: Sequence[SpaceInfo],
                 num_envs: int, fragment_len: int, seed: int, num_agents: int = 3, max_cycles: int = 25,
                 run: RunConfig | None = None, show: bool = False) -> None:
        self.algo, self.task, self.policies, self.spaces = algo, task, tuple(policies), tuple(spaces)
        self.num_policies, self.num_agents = len(self.policies), len(self.spaces)
        self.num_envs, self.fragment_len, self.seed = num_envs, fragment_len, seed
        self.task_agents, self.max_cycles = num_agents, max_cycles
        self.central = bool(getattr(algo, "centralized_critic", False))
        self.run, self.show = run or RunConfig(), show
        self.runner: MultiAgentRunner | None = None
        self.actors: list[Actor] = []
        self.rounds = 0
        self.recent: deque[float] = deque(maxlen=100)
        self.result: dict[str, Any] = {}

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        # copy j first reset with copy_seed(seed) + j: no two samplers' copies share a seed
        self.runner = MultiAgentRunner(self.task, self.num_envs, seed=copy_seed(self.seed), num_agents=self.task_agents,
                                       max_cycles=self.max_cycles)
        # policy p's actor draws its actions from its own stream (one per sampler and policy)
        self.actors = [self.algo.make_actor(self.spaces[slot.agents[0]], actor_seed(self.seed) + 1000 * p)
                       for p, slot in enumerate(self.policies)]

    def act(self, obs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Every agent's actions: each policy acts once, for its agents' copies stacked."""
        actions: list[np.ndarray] = [np.empty(0, np.int64)] * self.num_agents
        logp: list[np.ndarray] = [np.empty(0, np.float32)] * self.num_agents
        k = self.num_envs
        for slot, actor in zip(self.policies, self.actors, strict=True):
            a, lp = actor.act(np.concatenate([obs[i] for i in slot.agents]))
            for j, i in enumerate(slot.agents):
                actions[i], logp[i] = a[j * k : (j + 1) * k], lp[j * k : (j + 1) * k]
        return actions, logp

    @reaction(triggers=[weights], effects=[fragments])
    def collect(self, weights: MultiReader[np.ndarray], fragments: MultiWriter[np.ndarray]) -> None:
        present = weights.present()
        if len(present) != self.num_policies:
            # (policies stop together; only learners resumed from checkpoints of different rounds differ)
            have = [self.policies[p].name for p, _ in present]
            raise RuntimeError(f"{self.fqn}: weights of {have} only, of {[s.name for s in self.policies]}: "
                               f"the policies' learners are not at the same round (resumed from different checkpoints?)")
        for (_, payload), actor in zip(present, self.actors, strict=True):
            actor.load(payload)
        assert self.runner is not None
        t = self.elapsed_tag()
        rollouts = self.runner.rollout(self.fragment_len, self.act)
        for r in rollouts:
            r.policy_tag = (t.time, t.microstep)
        self.recent.extend(self.runner.team_returns)
        self.runner.team_returns.clear()
        for a, r in enumerate(central_rows(rollouts) if self.central else rollouts):
            fragments[a].set(pack_rollout(r))
        self.rounds += 1
        if self.show and self.run.progress and self.rounds % self.run.progress_every == 0:
            self._show()

    @property
    def team_return(self) -> float:
        """The mean team return of the last 100 episodes (nan before the first ends)."""
        return sum(self.recent) / len(self.recent) if self.recent else float("nan")

    def _show(self) -> None:
        assert self.runner is not None
        print(f"round {self.rounds:5d}  env steps {self.runner.steps:8d}  episodes {self.runner.episodes:6d}  "
              f"team return(100) {self.team_return:8.2f}", file=sys.stderr, flush=True)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        runner = self.runner
        if runner is None:
            return
        if self.show and self.run.progress and self.rounds % self.run.progress_every:
            self._show()  # (the last round, unless its line is out already)
        self.result = {"rounds": self.rounds, "env_steps": runner.steps, "episodes": runner.episodes,
                       "team_return_100": self.team_return}
        runner.close()
        self.report_result(self.result)
