"""Multi-agent inference (the paper's workload 4) as a reactorfed program.

An MPE ``simple_spread`` environment with ``num_agents`` agents scatters each
agent's observation to that agent's policy reactor (one torch network per agent)
and gathers the actions (after 0) to take the next step, ``steps`` times.

Federated, every child of ``Main`` is a federate: by default each agent is one
(a process per agent); ``groups=G`` puts the agents into G groups, one federate
each (e.g. one per core). The policies, their seeds and so the results are the
same either way.

    reactorfed run examples/rl/marl.py:Main --fast --param num_agents=10
    reactorfed launch examples/rl/marl.py:Main --fast --param num_agents=4 --param groups=2
"""

from __future__ import annotations

from reactorfed import Reactor, bank, each
from reactorfed.rl import make_mpe
from reactorfed.rl.agents import AgentGroup, AgentPolicy, MultiAgentEnv


class Main(Reactor):
    def __init__(
        self, num_agents: int = 4, steps: int = 1000, seed: int = 0, groups: int = 0, result_path: str = ""
    ) -> None:
        if not 0 <= groups <= num_agents:
            raise ValueError(f"groups must be between 0 (one federate per agent) and num_agents, got {groups}")
        probe = make_mpe(num_agents)
        first = probe.possible_agents[0]
        obs_dim = int(probe.observation_space(first).shape[0])
        num_actions = int(probe.action_space(first).n)
        self.env = MultiAgentEnv(num_agents, seed=seed, steps=steps, result_path=result_path)
        if groups:
            # as even as possible: the first num_agents % groups groups get one more agent
            sizes = [num_agents // groups + (g < num_agents % groups) for g in range(groups)]
            firsts = [sum(sizes[:g]) for g in range(groups)]
            self.agents = bank(AgentGroup, groups, k=each(lambda g: sizes[g]), obs_dim=obs_dim, num_actions=num_actions,
                               seed=seed * 1000, first=each(lambda g: firsts[g]))
        else:
            self.agents = bank(AgentPolicy, num_agents, obs_dim, num_actions, seed=each(lambda i: seed * 1000 + i))
        self.connect(self.env.obs, self.agents.obs)
        self.connect(self.agents.action, self.env.actions, after=0)
