""":class:`~reactorfed.rl.algos.apex.sync_config.SyncDQNConfig`'s learner: the samplers'
rollouts become n-step transitions (one builder per sampler, as Ape-X's actors build
them), go into a prioritized replay this learner holds, and each update takes
``updates_per_iteration`` gradient steps of :class:`~reactorfed.rl.algos.apex.learner.ApexDQNLearner`
(double Q, a target network, importance-weighted Huber loss) on batches drawn from it,
whose |TD errors| become their new priorities.

Determinism: the initial weights and the draws come from generators seeded by ``seed``,
the rollouts are taken in the plan's order (sampler ``i``'s is the ``i``-th of each
update), so one seed and the same rollouts give bit-identical weights.

Its state (:meth:`state`) holds the replay under one key, ``replay``: the transitions,
their priorities and the highest priority seen; a checkpoint with it resumes with
everything learned from so far, and a tuner's exploit leaves it out (the receiver keeps
its own: :mod:`reactorfed.rl.tune.exchange`). The n-step returns still open are under
another, :data:`~reactorfed.rl.contracts.EPISODES_UNDER_WAY`: they belong to the samplers'
episodes under way, so a resume loads them only with the samplers' states (completing
them with a fresh episode's steps would make false transitions), and an exploit leaves
them (the receiver's samplers go on with its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...contracts import EPISODES_UNDER_WAY, SpaceInfo
from ...replay.nstep import NStepBuilder
from ...replay.prioritized import PrioritizedReplay
from ...rollout import Rollout
from ...training import write_checkpoint
from .learner import ApexDQNLearner

if TYPE_CHECKING:  # (the config builds this learner: imported lazily there)
    from .sync_config import SyncDQNConfig

__all__ = ["SyncDQNLearner"]


class SyncDQNLearner:
    """An :class:`ApexDQNLearner` and the replay it learns from."""

    def __init__(
        self,
        space: SpaceInfo,
        config: SyncDQNConfig,
        seed: int = 0,
        device: torch.device | None = None,
    ) -> None:
        self.space, self.seed = space, seed
        self._config = config
        self.q = ApexDQNLearner(space, config.q_config(), seed=seed, device=device)
        self.replay = PrioritizedReplay(config.capacity, config.alpha, config.replay_eps)
        self.builders: list[NStepBuilder] = []  # sampler i's, made at its first rollout
        self.rng = np.random.default_rng(seed)  # the replay's draws
        self.max_priority = 1.0
        self.stats: dict[str, float] = {}

    @property
    def config(self) -> SyncDQNConfig:
        return self._config

    @config.setter
    def config(self, config: SyncDQNConfig) -> None:
        # (read at each update: a tuner replaces it between updates)
        self._config = config
        self.q.config = config.q_config()

    @property
    def env_steps(self) -> int:
        return self.q.env_steps

    @env_steps.setter
    def env_steps(self, value: int) -> None:
        self.q.env_steps = value

    @property
    def updates(self) -> int:
        return self.q.updates

    @updates.setter
    def updates(self, value: int) -> None:
        self.q.updates = value

    def learn(self, rollouts: Sequence[Rollout]) -> dict[str, float]:
        c = self._config
        for i, ro in enumerate(rollouts):
            if i == len(self.builders):
                self.builders.append(NStepBuilder(ro.actions.shape[1], c.n_step, c.gamma))
            rows = self.builders[i].add(ro)
            if len(rows):
                self.replay.add(rows, np.full(len(rows), self.max_priority))
            self.q.env_steps += ro.transitions
        stats: dict[str, float] = {"replay": float(len(self.replay))}
        if len(self.replay) >= max(c.learning_starts, 1):
            steps, top = self.q.learn_from_replay(self.replay, self.rng, c.updates_per_iteration, c.batch_size,
                                                  c.beta0, c.beta_steps)
            self.max_priority = max(self.max_priority, top)
            stats.update(steps)
        self.stats = stats
        return stats

    def payload(self) -> np.ndarray:
        return self.q.payload()

    def digest(self) -> str:
        """SHA-256 of the online, then the target network's parameters."""
        return self.q.digest()

    def state(self) -> dict[str, Any]:
        """Everything needed to resume: the networks, the optimizer, the counters, the
        draws' generator, the replay and the n-step returns still open."""
        replay = {**self.replay.state(), "max_priority": self.max_priority}
        return {
            **self.q.state(),
            "config": asdict(self._config),
            "config_object": self._config,
            "rng": self.rng.bit_generator.state,
            "replay": replay,
            EPISODES_UNDER_WAY: [{"num_envs": b.num_envs, "pending": b.pending} for b in self.builders],
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take what ``state`` holds (:meth:`state`'s, or part of it: an exploit's has no
        generator and no replay); what it leaves out stays."""
        self.q.load_state(state)
        if "rng" in state:
            self.rng.bit_generator.state = state["rng"]
        if "replay" in state:
            r = state["replay"]
            self.replay.restore(r)
            self.max_priority = float(r["max_priority"])
            self.builders = []  # (unless the samplers carry on their episodes: below)
        if EPISODES_UNDER_WAY in state:
            self.builders = [self._builder(saved) for saved in state[EPISODES_UNDER_WAY]]

    def _builder(self, saved: Mapping[str, Any]) -> NStepBuilder:
        """A sampler's n-step builder with the returns it had open (:meth:`state`'s)."""
        c = self._config
        builder = NStepBuilder(int(saved["num_envs"]), c.n_step, c.gamma)
        builder.pending = [list(steps) for steps in saved["pending"]]
        return builder

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write a checkpoint atomically (a temporary file, then a rename)."""
        return write_checkpoint(path, {**self.state(), **(extra or {})})

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]:
        state: dict[str, Any] = torch.load(path, map_location=self.q.device, weights_only=False)
        self.load_state(state)
        return state

    @classmethod
    def load(cls, path: str | Path, device: torch.device | None = None) -> SyncDQNLearner:
        """Rebuild a learner from a checkpoint written by :meth:`save`."""
        state = torch.load(path, map_location=device or torch.device("cpu"), weights_only=False)
        space = SpaceInfo(tuple(state["space"]["obs_shape"]), int(state["space"]["num_actions"]))
        learner = cls(space, state["config_object"], seed=int(state["seed"]), device=device)
        learner.load_state(state)
        return learner
