"""Ape-X DQN's learner: double Q-learning on n-step returns with a target network, the
replay's importance-sampling weights applied to the loss, and the new priorities
``|TD error|`` (Horgan et al. 2018, section 3.1; van Hasselt et al. 2016 for the double
target; Schaul et al. 2016 for the weights). See :class:`~reactorfed.rl.algos.apex.config.ApexDQNConfig`.

Nothing here knows about reactors: the plan (:mod:`reactorfed.rl.plans.apex`) hands it
batches that replay shards drew and sends its payload and priorities on.

Determinism: initial weights from a seeded generator, no randomness of its own (the
shards draw the batches): one seed and the same batches in the same order give
bit-identical weights (on one device, with one torch thread count).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from ...contracts import SpaceInfo
from ...replay.contracts import ReplayBatch
from ...replay.prioritized import PrioritizedReplay, annealed_beta
from ...training import write_checkpoint
from ..dqn.learner import make_qnetwork
from ..network import adam, clip_grad_norm, flat_weights, set_adam

if TYPE_CHECKING:
    from .config import ApexDQNConfig

__all__ = ["ApexDQNLearner", "double_q_target", "weighted_td_loss"]


def double_q_target(returns: torch.Tensor, discounts: torch.Tensor, next_q_online: torch.Tensor,
                    next_q_target: torch.Tensor) -> torch.Tensor:
    """``R + gamma^m * Q_target(s', argmax_a Q_online(s', a))``: the online network picks
    the action, the target network values it. ``discounts`` is ``gamma^m`` (0 where the
    episode terminated: no bootstrap)."""
    best = next_q_online.argmax(dim=1, keepdim=True)
    return returns + discounts * next_q_target.gather(1, best).squeeze(1)


def weighted_td_loss(q_taken: torch.Tensor, target: torch.Tensor, weights: torch.Tensor,
                     huber_delta: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``mean(w * l(Q(s, a) - y))`` with ``l`` the Huber loss (threshold ``huber_delta``)
    or, with None, the squared error; and the TD errors ``Q(s, a) - y`` (no gradient)."""
    if huber_delta is None:
        per = (q_taken - target) ** 2
    else:
        per = F.huber_loss(q_taken, target, reduction="none", delta=huber_delta)
    return (weights * per).mean(), (q_taken - target).detach()


class ApexDQNLearner:
    """Online and target :class:`~reactorfed.rl.algos.network.QNetwork`, Adam, and the update."""

    def __init__(self, space: SpaceInfo, config: ApexDQNConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        self.space, self.config, self.seed = space, config, seed
        self.device = device or torch.device("cpu")
        c = config
        self.q = make_qnetwork(space.obs_dim, space.num_actions, c.hidden, seed).to(self.device)
        self.target = copy.deepcopy(self.q)
        self.target.requires_grad_(False)
        self.optimizer = adam(self.q, c.learning_rate, c.adam_eps)
        self.env_steps = 0
        self.updates = 0

    def learn(self, batch: ReplayBatch) -> tuple[dict[str, float], np.ndarray]:
        c, dev = self.config, self.device
        set_adam(self.optimizer, c.learning_rate, c.adam_eps)
        obs = torch.from_numpy(batch.obs).to(dev)
        next_obs = torch.from_numpy(batch.next_obs).to(dev)
        actions = torch.from_numpy(batch.actions).to(dev)
        with torch.no_grad():
            # one forward pass of the online network over s and s' (it picks the next action)
            both = self.q(torch.cat([obs, next_obs]))
            target = double_q_target(torch.from_numpy(batch.returns).to(dev),
                                     torch.from_numpy(batch.discounts).to(dev),
                                     both[len(obs):], self.target(next_obs))
        self.q.train()
        q_taken = self.q(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss, td = weighted_td_loss(q_taken, target, torch.from_numpy(batch.weights).to(dev), c.huber_delta)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        clip_grad_norm(self.q.parameters(), c.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        if self.updates % c.target_update_interval == 0:
            self.target.load_state_dict(self.q.state_dict())
        td_abs = td.abs().cpu().numpy()
        stats = {"loss": float(loss.item()), "q_mean": float(q_taken.mean().item()),
                 "td_error": float(td_abs.mean()), "transitions": float(len(batch))}
        return stats, td_abs

    def learn_from_replay(self, replay: PrioritizedReplay, rng: np.random.Generator, steps: int, batch_size: int,
                          beta0: float, beta_steps: int) -> tuple[dict[str, float], float]:
        """``steps`` gradient steps on prioritized batches of ``replay`` (drawn with ``rng``,
        importance weights annealed from ``beta0`` over ``beta_steps`` updates), whose |TD
        errors| become their priorities: the mean statistics and the largest TD error."""
        sums, top, beta = np.zeros(3), 0.0, beta0
        for _ in range(steps):
            beta = annealed_beta(beta0, beta_steps, self.updates)
            rows, ids, weights = replay.sample_weighted(batch_size, rng, beta)
            step, td = self.learn(ReplayBatch.of_rows(rows, weights))
            replay.update(ids, td)
            top = max(top, float(td.max()))
            sums += (step["loss"], step["q_mean"], step["td_error"])
        mean = sums / max(steps, 1)
        return {"loss": mean[0], "q_mean": mean[1], "td_error": mean[2], "beta": beta,
                "gradient_steps": float(steps)}, top

    def payload(self) -> np.ndarray:
        """The online network's parameters, flat (what :class:`~reactorfed.rl.algos.apex.q_actor.QActor` loads)."""
        return flat_weights(self.q)

    def digest(self) -> str:
        """SHA-256 of the online, then the target network's parameters."""
        h = hashlib.sha256()
        for prefix, net in (("q.", self.q), ("target.", self.target)):
            for k, v in net.state_dict().items():
                h.update((prefix + k).encode())
                h.update(v.detach().cpu().numpy().tobytes())
        return h.hexdigest()

    def state(self) -> dict[str, Any]:
        """Everything needed to resume (the replay is the shards': it starts empty)."""
        return {"config": asdict(self.config), "config_object": self.config, "space": asdict(self.space),
                "seed": self.seed, "q": self.q.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "env_steps": self.env_steps, "updates": self.updates}

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write a checkpoint atomically (a temporary file, then a rename)."""
        return write_checkpoint(path, {**self.state(), **(extra or {})})

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]:
        state: dict[str, Any] = torch.load(path, map_location=self.device, weights_only=False)
        self.load_state(state)
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take what ``state`` (:meth:`state`'s, or part of it) holds of the networks, the
        optimizer and the counters; what it leaves out stays."""
        for key, net in (("q", self.q), ("target", self.target)):
            if key in state:
                net.load_state_dict(state[key])
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        if "env_steps" in state:
            self.env_steps = int(state["env_steps"])
        if "updates" in state:
            self.updates = int(state["updates"])

    @classmethod
    def load(cls, path: str | Path, device: torch.device | None = None) -> ApexDQNLearner:
        """Rebuild a learner from a checkpoint written by :meth:`save`."""
        state = torch.load(path, map_location=device or torch.device("cpu"), weights_only=False)
        space = SpaceInfo(tuple(state["space"]["obs_shape"]), int(state["space"]["num_actions"]))
        learner = cls(space, state["config_object"], seed=int(state["seed"]), device=device)
        learner.load_checkpoint(path)
        return learner
