"""Multi-agent training, as a reactor program: independent PPO (IPPO) or MAPPO on a
cooperative MPE task, the agents' policies placed by a
:class:`~reactorfed.rl.plans.policy_mapping.PolicyMapping` (one shared policy, a policy per agent,
or groups).

::

    policies[p].weights --(after 0, broadcast)--> samplers[s].weights[p]
    samplers[s].fragments[a] --------------------> policies[p].fragments[s * |p| + j]   (a: p's j-th agent)

The environment is a federate (a bank of ``num_samplers``, each with ``num_envs`` copies of
the task and a numpy actor per policy: :class:`~reactorfed.rl.plans.multi_agent_sampler.MultiAgentSampler`),
and each policy's learner is one (a :class:`~reactorfed.rl.plans.sync.SyncTrainer`): with
``per_agent`` every agent learns in a process of its own, with ``groups`` each group does,
with ``shared`` one learner trains the policy every agent acts with. Each round every
policy's weights go out at one tag, every sampler steps its copies ``fragment_len`` rows with
them and sends each agent's rollout to its policy's learner, and every learner updates
from its agents' rollouts in (sampler, agent) order. Logical time orders all of it, so one
seed gives bit-identical weights for every policy in one process and federated.

The algorithm is PPO's (:class:`~reactorfed.rl.PPOConfig`: IPPO, each critic on the agent's
observation) or MAPPO's (:class:`~reactorfed.rl.algos.mappo.MAPPOConfig`, whose rows carry
the global state for its centralized critic). Action inference runs beside the environment,
on a numpy copy of each policy (RLlib's EnvRunner), so no step crosses a process boundary;
per-step inference in the agents' processes is the inference workload
(:mod:`~reactorfed.rl.plans.marl`).

With ``run.checkpoint`` (a directory) each policy's learner saves ``<policy>.pt`` there, and
``run.resume`` carries every policy on from its file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path

from reactorfed import Reactor, ValidationError, bank, each

from ..contracts import Algorithm, SpaceInfo
from ..envs.multi_agent import TASKS, MultiAgentSpec
from ..rollout import Rollout
from ..training import RunConfig
from .multi_agent_sampler import MultiAgentSampler
from .policy_mapping import PolicyMapping, PolicySlot
from .sampler import sampler_seed
from .sync import SyncTrainer

__all__ = ["MultiAgentPlan", "PolicyTrainer", "policy_seed"]


def policy_seed(seed: int, p: int) -> int:
    """Policy ``p``'s learner seed (its initial weights, its minibatch order) in a run seeded ``seed``."""
    return seed * 1000 + p


class PolicyTrainer(SyncTrainer):
    """A policy's learner: a :class:`SyncTrainer` whose fragments are, for each sampler in
    turn, the rollouts of the policy's ``agents`` agents. Its returns (the log, the curve, the
    result's ``mean_return``) count each episode once, as the mean of its agents' returns in
    it: for a policy shared by every agent, the team's return divided by the agents (on a
    task whose agents share the team's reward, what each agent earned), over the last 100
    episodes, not over the last 100 agents' episodes."""

    def __init__(self, n: int, agents: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0) -> None:
        super().__init__(n, algo, space, run=run, seed=seed)
        self.agents = agents

    def episode_returns(self, rollouts: Sequence[Rollout]) -> Iterable[float]:
        m = self.agents
        for s in range(0, len(rollouts), m):
            # (an MPE episode ends for every agent at once: each agent's returns are the same episodes')
            for returns in zip(*(ro.episode_returns for ro in rollouts[s : s + m]), strict=True):
                yield sum(returns) / m


class MultiAgentPlan(Reactor):
    """``algo`` (PPO: IPPO; MAPPO) on ``task`` (:data:`~reactorfed.rl.envs.multi_agent.TASKS`;
    ``num_agents`` for ``simple_spread``), its policies placed by ``mapping``; ``num_samplers``
    environment federates of ``num_envs`` copies, ``fragment_len`` rows each a round; ``run``:
    iterations, checkpoints (a directory), progress (the team's return, from the first sampler).

    Subclass it for a program with its own settings (``super().__init__(...)``)."""

    def __init__(self, algo: Algorithm, task: str = "simple_spread", *, mapping: PolicyMapping | None = None,
                 num_agents: int = 3, max_cycles: int = 25, num_samplers: int = 1, num_envs: int = 4,
                 fragment_len: int = 25, run: RunConfig | None = None, seed: int = 0) -> None:
        for name, value in (("num_agents", num_agents), ("max_cycles", max_cycles), ("num_samplers", num_samplers),
                            ("num_envs", num_envs), ("fragment_len", fragment_len)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if task not in TASKS:
            raise ValidationError(f"{self.fqn}: task must be one of {', '.join(TASKS)}, got {task!r}")
        mapping = mapping or PolicyMapping()
        run = run or RunConfig()
        spec = MultiAgentSpec.of_task(task, num_agents, max_cycles)
        slots = mapping.resolve(spec.agents, spec.spaces)
        central = bool(getattr(algo, "centralized_critic", False))
        state_dim = spec.state_dim + len(spec.agents) if central else 0
        spaces = [dataclasses.replace(spec.spaces[s.agents[0]], state_dim=state_dim) for s in slots]
        #: the policies, in order (policy ``p`` is ``policies[p]``), and the task's agents
        self.slots: tuple[PolicySlot, ...] = slots
        self.agent_names = spec.agents
        self.samplers = bank(MultiAgentSampler, num_samplers, algo, task, slots, spec.spaces, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)), num_agents=num_agents,
                             max_cycles=max_cycles, run=run, show=each(lambda i: i == 0))
        self.policies = bank(PolicyTrainer, len(slots), n=each(lambda p: num_samplers * len(slots[p].agents)),
                             agents=each(lambda p: len(slots[p].agents)), algo=algo, space=each(lambda p: spaces[p]), run=each(lambda p: _policy_run(run, slots[p])),
                             seed=each(lambda p: policy_seed(seed, p)))
        for p, slot in enumerate(slots):
            self.connect([self.samplers[s].fragments[a] for s in range(num_samplers) for a in slot.agents],
                         self.policies[p].fragments)
            self.connect(self.policies[p].weights, [self.samplers[s].weights[p] for s in range(num_samplers)],
                         after=0, broadcast=True)


def _policy_run(run: RunConfig, slot: PolicySlot) -> RunConfig:
    """A policy learner's run: the plan's, its checkpoint ``<run.checkpoint>/<policy>.pt``; no
    progress lines of its own (the first sampler shows the team's), no target (policies stop
    together, after ``run.iterations``)."""
    checkpoint = str(Path(run.checkpoint) / f"{slot.name}.pt") if run.checkpoint else ""
    return dataclasses.replace(run, checkpoint=checkpoint, progress=False, target_return=None)
