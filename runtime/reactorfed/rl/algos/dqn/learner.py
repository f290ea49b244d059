"""DQN, CleanRL style: the update rule, the learner's state, the samplers' policy.

Nothing here knows about reactors or Ray: the learner reactor, the Ray driver and
the example all call the same :class:`DQNLearner` and :class:`EpsilonGreedy`.

Determinism: the network initialisation uses its own seeded torch generator and
replay sampling uses a seeded numpy generator owned by the learner, so two
learners built with one seed and fed the same fragments in the same order hold
bit-identical weights (on one device, with one torch thread count).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...envs.runner import Fragment
from ...replay.buffer import ReplayBuffer
from ...training import write_checkpoint
from ..network import (
    QNetwork,
    Weights,
    clip_grad_norm,
    default_device,
    flat_weights,
    get_weights,
    greedy_action,
    load_flat_weights,
    set_weights,
)

__all__ = ["DQNConfig", "DQNLearner", "EpsilonGreedy", "linear_schedule", "make_qnetwork", "td_loss", "td_target"]


@dataclass(frozen=True)
class DQNConfig:
    """Hyper-parameters (defaults solve CartPole-v1 in a few tens of thousands of steps)."""

    learning_rate: float = 1e-3
    gamma: float = 0.99
    batch_size: int = 64
    buffer_size: int = 50_000
    learning_starts: int = 1_000
    target_update_interval: int = 250
    hidden: tuple[int, ...] = (120, 84)
    start_e: float = 1.0
    end_e: float = 0.05
    exploration_steps: int = 20_000
    max_grad_norm: float = 10.0


def td_target(rewards: torch.Tensor, dones: torch.Tensor, next_q: torch.Tensor, gamma: float) -> torch.Tensor:
    """DQN's one-step target (Mnih et al. 2015): ``r + gamma * max_a' Q_target(s', a')``,
    without the bootstrap where the episode terminated (``dones`` is 1 there).
    ``next_q`` holds the target network's values of the next states, one row each."""
    return rewards + gamma * next_q.max(dim=1).values * (1.0 - dones)


def td_loss(q: torch.Tensor, actions: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared TD error of the actions taken: ``mean((Q(s, a) - target)^2)``."""
    taken = q.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    return F.mse_loss(taken, target)


def linear_schedule(start: float, end: float, duration: int, t: int) -> float:
    """Linear interpolation from ``start`` to ``end`` over ``duration`` steps, then ``end``."""
    if duration <= 0:
        return end
    slope = (end - start) / duration
    value = start + slope * t
    return max(value, end) if end <= start else min(value, end)

_GLOBAL_RNG_LOCK = threading.Lock()


def make_qnetwork(obs_dim: int, num_actions: int, hidden: tuple[int, ...], seed: int) -> QNetwork:
    """A Q-network initialised from ``seed`` without touching torch's global generator."""
    # fork_rng still draws from the global generator inside: serialise, so that programs
    # built concurrently (federates in threads) get the same weights as built alone.
    with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return QNetwork(obs_dim, num_actions, hidden)


class EpsilonGreedy:
    """The samplers' policy: greedy on a local Q-network copy, random with probability epsilon."""

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        seed: int,
        hidden: tuple[int, ...] = DQNConfig.hidden,
        net_seed: int = 0,
    ) -> None:
        self.q = make_qnetwork(obs_dim, num_actions, hidden, net_seed)
        self.q.eval()
        self.num_actions = num_actions
        self.rng = np.random.default_rng(seed)
        self.epsilon = 1.0

    def load(self, weights: Weights) -> None:
        set_weights(self.q, weights)

    def load_payload(self, payload: np.ndarray) -> None:
        """Load a :meth:`DQNLearner.payload`: flat weights then epsilon."""
        load_flat_weights(self.q, payload[:-1])
        self.epsilon = float(payload[-1])

    def __call__(self, obs: np.ndarray) -> int:
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.num_actions))
        return greedy_action(self.q, obs)


class DQNLearner:
    """Replay buffer + online/target Q-networks + Adam; consumes fragments, emits weights."""

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        config: DQNConfig | None = None,
        seed: int = 0,
        device: torch.device | None = None,
    ) -> None:
        self.config = config or DQNConfig()
        self.seed = seed
        self.device = device or default_device()
        c = self.config
        self.q = make_qnetwork(obs_dim, num_actions, c.hidden, seed).to(self.device)
        self.target = make_qnetwork(obs_dim, num_actions, c.hidden, seed).to(self.device)
        self.target.load_state_dict(self.q.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=c.learning_rate)
        self.buffer = ReplayBuffer(c.buffer_size, (obs_dim,))
        self.rng = np.random.default_rng(seed)
        self.obs_dim, self.num_actions = obs_dim, num_actions
        self.env_steps = 0
        self.updates = 0
        self.last_loss = float("nan")

    def observe(self, fragment: Fragment) -> None:
        """Add a fragment's transitions (it must carry ``next_obs``) to the replay buffer."""
        if fragment.next_obs is None:
            raise ValueError("DQN needs fragments with next_obs (EnvRunner(keep_next_obs=True))")
        self.buffer.add(
            fragment.obs, fragment.actions, fragment.rewards, fragment.next_obs, fragment.terminated
        )
        self.env_steps += len(fragment)

    @property
    def epsilon(self) -> float:
        c = self.config
        return linear_schedule(c.start_e, c.end_e, c.exploration_steps, self.env_steps)

    def update(self, num_updates: int = 1) -> float:
        """``num_updates`` gradient steps (none before ``learning_starts``); the last loss."""
        c = self.config
        if self.env_steps < c.learning_starts or len(self.buffer) < c.batch_size:
            return self.last_loss
        dev = self.device
        for _ in range(num_updates):
            b = self.buffer.sample(c.batch_size, self.rng)
            obs = torch.from_numpy(b.obs).to(dev)
            next_obs = torch.from_numpy(b.next_obs).to(dev)
            actions = torch.from_numpy(b.actions).to(dev)
            rewards = torch.from_numpy(b.rewards).to(dev)
            dones = torch.from_numpy(b.dones).to(dev)
            with torch.no_grad():
                target = td_target(rewards, dones, self.target(next_obs), c.gamma)
            loss = td_loss(self.q(obs), actions, target)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            clip_grad_norm(self.q.parameters(), c.max_grad_norm)
            self.optimizer.step()
            self.updates += 1
            if self.updates % c.target_update_interval == 0:
                self.target.load_state_dict(self.q.state_dict())
            self.last_loss = float(loss.item())
        return self.last_loss

    def weights(self) -> Weights:
        """The online network's weights as a dict of arrays."""
        return get_weights(self.q)

    def payload(self) -> np.ndarray:
        """What the learner broadcasts: flat weights followed by the current epsilon."""
        return np.append(flat_weights(self.q), np.float32(self.epsilon)).astype(np.float32)

    def state(self) -> dict[str, Any]:
        """Everything needed to resume: networks, optimizer, counters, generator."""
        return {
            "config": asdict(self.config),
            "q": self.q.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "env_steps": self.env_steps,
            "updates": self.updates,
            "rng": self.rng.bit_generator.state,
            "obs_dim": self.obs_dim,
            "num_actions": self.num_actions,
        }

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write a checkpoint (atomically: temp file then rename); ``extra`` entries (a
        trainer's own counters) are saved beside the learner's state."""
        return write_checkpoint(path, {**self.state(), **(extra or {})})

    def load_state(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state["q"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.env_steps = int(state["env_steps"])
        self.updates = int(state["updates"])
        self.rng.bit_generator.state = state["rng"]

    @classmethod
    def load(cls, path: str | Path, device: torch.device | None = None) -> DQNLearner:
        """Rebuild a learner from a checkpoint written by :meth:`save` (replay buffer empty)."""
        state = torch.load(path, map_location=device or default_device(), weights_only=False)
        cfg = dict(state["config"])
        cfg["hidden"] = tuple(cfg["hidden"])
        learner = cls(state["obs_dim"], state["num_actions"], DQNConfig(**cfg), device=device)
        learner.load_state(state)
        return learner
