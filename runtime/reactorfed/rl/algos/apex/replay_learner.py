"""Ape-X DQN's learner with its prioritized replay beside it, in one process: what a
tuner's Ape-X trial slot trains (:mod:`reactorfed.rl.tune.apex_trial`). The samplers
build the n-step transitions and give them their initial priorities (Ape-X's actors do,
with their copy of the network); this learner adds them to its replay with those
priorities, then takes ``updates_per_iteration`` gradient steps of
:class:`~reactorfed.rl.algos.apex.learner.ApexDQNLearner` on batches drawn from it, whose
|TD errors| become their new priorities.

Determinism: the initial weights and the draws come from generators seeded by ``seed``,
and the transitions are added in the slot's order, so one seed and the same transitions
give bit-identical weights.

Its state (:meth:`state`) holds the replay under ``replay`` (the transitions, their
priorities) and the draws' generator under ``rng``: a checkpoint resumes with everything
learned from so far; a tuner's exploit leaves both out (:mod:`reactorfed.rl.tune.exchange`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ...contracts import SpaceInfo
from ...replay.contracts import ReplayConfig
from ...replay.prioritized import PrioritizedReplay
from .config import ApexDQNConfig
from .learner import ApexDQNLearner

__all__ = ["ApexReplayLearner"]


class ApexReplayLearner:
    """An :class:`ApexDQNLearner` (its :attr:`config` read at each update: a tuner
    replaces it between updates) and the replay ``replay`` it learns from."""

    def __init__(self, space: SpaceInfo, config: ApexDQNConfig, replay: ReplayConfig,
                 updates_per_iteration: int = 1, seed: int = 0, device: torch.device | None = None) -> None:
        self.space, self.seed, self.replay_config = space, seed, replay
        self.updates_per_iteration = updates_per_iteration
        self.q = ApexDQNLearner(space, config, seed=seed, device=device)
        self.replay = PrioritizedReplay(replay.capacity, replay.alpha, replay.eps)
        self.rng = np.random.default_rng(seed)  # the replay's draws

    @property
    def config(self) -> ApexDQNConfig:
        return self.q.config

    @config.setter
    def config(self, config: ApexDQNConfig) -> None:
        self.q.config = config

    @property
    def env_steps(self) -> int:
        return self.q.env_steps

    @env_steps.setter
    def env_steps(self, value: int) -> None:
        self.q.env_steps = value

    @property
    def updates(self) -> int:
        return self.q.updates

    def learn_transitions(self, rows: np.ndarray, env_steps: int) -> dict[str, float]:
        """Add ``rows`` (n-step transitions, their samplers' priorities in ``priority``) and
        count ``env_steps``; then the gradient steps, once the replay holds
        ``learning_starts`` transitions."""
        r = self.replay_config
        if len(rows):
            self.replay.add(rows, rows["priority"])
        self.q.env_steps += env_steps
        stats: dict[str, float] = {"replay": float(len(self.replay))}
        if len(self.replay) >= max(r.learning_starts, 1):
            stats.update(self.q.learn_from_replay(self.replay, self.rng, self.updates_per_iteration, r.batch_size,
                                                  r.beta0, r.beta_steps)[0])
        return stats

    def payload(self) -> np.ndarray:
        return self.q.payload()

    def digest(self) -> str:
        """SHA-256 of the online, then the target network's parameters."""
        return self.q.digest()

    def state(self) -> dict[str, Any]:
        """Everything needed to resume: the networks, the optimizer, the counters, the
        draws' generator and the replay."""
        return {**self.q.state(), "rng": self.rng.bit_generator.state, "replay": self.replay.state()}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take what ``state`` holds (:meth:`state`'s, or part of it: an exploit's has no
        generator and no replay); what it leaves out stays."""
        self.q.load_state(state)
        if "rng" in state:
            self.rng.bit_generator.state = state["rng"]
        if "replay" in state:
            self.replay.restore(state["replay"])
