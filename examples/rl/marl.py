"""Multi-agent inference as a reactorfed program (the paper's MARL workload).

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

from dataclasses import dataclass

from reactorfed import Bank, Reactor, bank, each
from reactorfed.rl import AgentGroup, AgentPolicy, MultiAgentEnv, make_mpe


@dataclass(frozen=True)
class Args:
    num_agents: int = 4
    steps: int = 1000
    seed: int = 0
    #: 0: a federate per agent; G: the agents in G federates
    groups: int = 0


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        n = args.num_agents
        if not 0 <= args.groups <= n:
            raise ValueError(f"groups must be between 0 (one federate per agent) and num_agents, got {args.groups}")
        probe = make_mpe(n)
        first = probe.possible_agents[0]
        obs_dim = int(probe.observation_space(first).shape[0])
        num_actions = int(probe.action_space(first).n)
        self.env = MultiAgentEnv(n, seed=args.seed, steps=args.steps)
        self.agents: Bank[AgentGroup] | Bank[AgentPolicy]
        if args.groups:
            # as even as possible: the first n % groups groups get one more agent
            sizes = [n // args.groups + (g < n % args.groups) for g in range(args.groups)]
            firsts = [sum(sizes[:g]) for g in range(args.groups)]
            self.agents = bank(AgentGroup, args.groups, k=each(lambda g: sizes[g]), obs_dim=obs_dim,
                               num_actions=num_actions, seed=args.seed * 1000, first=each(lambda g: firsts[g]))
        else:
            self.agents = bank(AgentPolicy, n, obs_dim, num_actions, seed=each(lambda i: args.seed * 1000 + i))
        self.connect(self.env.obs, self.agents.obs)
        self.connect(self.agents.action, self.env.actions, after=0)
