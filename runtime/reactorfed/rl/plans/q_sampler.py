"""The synchronized Q-learning plan's sampler: it steps one environment epsilon-greedily with
a copy of the learner's network each time a payload arrives (the plan:
:mod:`~reactorfed.rl.plans.qlearning`)."""

from __future__ import annotations

import numpy as np

from reactorfed import Input, Output, PortReader, PortWriter, Reactor, reaction

from ..algos.dqn.learner import DQNConfig, EpsilonGreedy
from ..envs.runner import EnvRunner, pack_fragment
from . import sampler_state

__all__ = ["QSampler"]


class QSampler(Reactor):
    """Collects ``fragment`` steps with an epsilon-greedy copy of the learner's network
    each time a payload arrives; emits the packed fragment. With ``snapshots`` it sends its
    state after each fragment (its environment, the episode under way, its generators) and
    carries on from a state that reaches :attr:`restore`
    (:mod:`~reactorfed.rl.plans.sampler_state`; :meth:`DQNTrainer.connect_samplers`)."""

    weights: Input[np.ndarray] = Input(np.ndarray)
    restore: Input[np.ndarray] = Input(np.ndarray)
    fragment: Output[np.ndarray] = Output(np.ndarray)
    state: Output[np.ndarray] = Output(np.ndarray)

    def __init__(
        self,
        env: str = "CartPole-v1",
        seed: int = 0,
        fragment_len: int = 100,
        hidden: tuple[int, ...] = DQNConfig.hidden,
        snapshots: bool = False,
    ) -> None:
        self.runner = EnvRunner(env, seed=seed, keep_next_obs=True)
        obs_dim = self.runner.obs_size
        self.policy = EpsilonGreedy(obs_dim, self.runner.num_actions, seed=seed + 7919, hidden=hidden)
        self.fragment_len = fragment_len
        self.snapshots = snapshots
        self.samples = 0  # env steps collected (and sent) by this process

    @reaction(triggers=[restore])
    def carry_on(self, restore: PortReader[np.ndarray]) -> None:
        """A resumed run's state for this sampler (before the weights of the same tag)."""
        data = restore.get()
        if data is None or not data.size:
            return
        state = sampler_state.unpack(data)
        self.runner.close()
        self.runner = state["runner"]
        self.policy.rng.bit_generator.state = state["policy_rng"]
        self.samples = int(state["samples"])

    @reaction(triggers=[weights], effects=[fragment, state])
    def collect(self, weights: PortReader[np.ndarray], fragment: PortWriter[np.ndarray],
                state: PortWriter[np.ndarray]) -> None:
        payload = weights.get()
        assert payload is not None
        self.policy.load_payload(payload)
        frag = self.runner.rollout(self.fragment_len, self.policy)
        fragment.set(pack_fragment(frag))
        self.samples += len(frag)
        if self.snapshots:
            state.set(sampler_state.pack(f"{self.fqn} ({self.runner.name})", {
                "runner": self.runner, "policy_rng": self.policy.rng.bit_generator.state, "samples": self.samples}))
        # reported as it goes: a member of an elastic bank that leaves runs no shutdown
        self.report_result({"samples": self.samples})
