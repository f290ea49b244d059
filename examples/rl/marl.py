"""Multi-agent inference (the paper's workload 4) as a reactorfed program.

An MPE ``simple_spread`` environment with ``num_agents`` agents scatters each
agent's observation to that agent's policy reactor (one torch network per agent)
and gathers the actions (after 0) to take the next step, ``steps`` times.

    reactorfed run examples/rl/marl.py:Main --fast --param num_agents=10
"""

from __future__ import annotations

from reactorfed import Reactor, bank, each
from reactorfed.rl import make_mpe
from reactorfed.rl.agents import AgentPolicy, MultiAgentEnv


class Main(Reactor):
    def __init__(self, num_agents: int = 4, steps: int = 1000, seed: int = 0, result_path: str = "") -> None:
        probe = make_mpe(num_agents)
        first = probe.possible_agents[0]
        obs_dim = int(probe.observation_space(first).shape[0])
        num_actions = int(probe.action_space(first).n)
        self.env = MultiAgentEnv(num_agents, seed=seed, steps=steps, result_path=result_path)
        self.agents = bank(AgentPolicy, num_agents, obs_dim, num_actions, seed=each(lambda i: seed * 1000 + i))
        self.connect(self.env.obs, self.agents.obs)
        self.connect(self.agents.action, self.env.actions, after=0)
