"""PPO's learner: the clipped surrogate objective, the value loss, the entropy bonus, and
minibatch epochs over GAE advantages (Schulman et al. 2017, "Proximal policy
optimization algorithms", eq. 7 and 9; the implementation details of CleanRL's ``ppo.py``
and Stable-Baselines3: advantage normalisation per minibatch, gradient clipping, Adam
with epsilon 1e-5, annealed learning rate and clip range).

Nothing here knows about reactors: a plan (:mod:`reactorfed.rl.plans.sync`) hands it
rollouts and broadcasts its :meth:`PPOLearner.payload`.

Determinism: initial weights from a seeded generator, minibatch order from the learner's
own seeded numpy generator, rollouts consumed in the order given: one seed and the same
rollouts give bit-identical weights (on one device, with one torch thread count).
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...contracts import SpaceInfo
from ...rollout import Rollout
from ...training import write_checkpoint
from ..network import adam, clip_grad_norm, set_adam
from .actor_critic import ActorCritic
from .gae import gae, lambda_returns

if TYPE_CHECKING:  # the config builds this learner (PPOConfig.make_learner): no import back
    from .config import PPOConfig

__all__ = ["Batch", "PPOLearner", "clipped_surrogate_loss", "make_batch", "value_loss"]


def clipped_surrogate_loss(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """``-mean(min(rho * A, clip(rho, 1 - eps, 1 + eps) * A))`` with ``rho = exp(logp - old_logp)``:
    PPO's objective (eq. 7), negated to be minimised."""
    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    return -torch.min(unclipped, clipped).mean()


def value_loss(values: torch.Tensor, returns: torch.Tensor, old_values: torch.Tensor, clip: float | None) -> torch.Tensor:
    """``mean((V - R)^2)``; with ``clip``, the larger of that and the error of
    ``V_old + clip(V - V_old, -clip, clip)`` (CleanRL's ``clip_vloss``), per sample."""
    err = (values - returns) ** 2
    if clip is None:
        return err.mean()
    clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    return torch.max(err, (clipped - returns) ** 2).mean()


class Batch:
    """The transitions of one update, flat: observations, actions, the acting policy's
    log-probabilities, advantages, value targets and the values they were computed with."""

    def __init__(self, obs: np.ndarray, actions: np.ndarray, logp: np.ndarray, advantages: np.ndarray,
                 returns: np.ndarray, values: np.ndarray) -> None:
        self.obs, self.actions, self.logp = obs, actions, logp
        self.advantages, self.returns, self.values = advantages, returns, values

    def __len__(self) -> int:
        return len(self.actions)


def make_batch(rollouts: Sequence[Rollout], values: Sequence[np.ndarray], gamma: float, lam: float) -> Batch:
    """GAE per rollout (``values[i]`` is rollout ``i``'s ``(T + 1, k)`` values), then every
    transition flat, in rollout order, row-major; reset rows left out."""
    parts: list[tuple[np.ndarray, ...]] = []
    for r, v in zip(rollouts, values, strict=True):
        adv = gae(r.rewards, v, r.terminated, r.truncated, gamma, lam, r.resets)
        ret = lambda_returns(adv, v)
        keep = ~r.resets
        obs = r.obs[:-1][keep]
        parts.append((obs.reshape(len(obs), -1), r.actions[keep], r.logp[keep], adv[keep], ret[keep], v[:-1][keep]))
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
    return Batch(cols[0].astype(np.float32), *cols[1:])



class PPOLearner:
    """An :class:`ActorCritic`, its Adam optimizer, and PPO's update."""

    def __init__(self, space: SpaceInfo, config: PPOConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        self.space, self.config, self.seed = space, config, seed
        self.device = device or torch.device("cpu")
        c = self.config
        self.model = self._build_model(seed).to(self.device)
        self.optimizer = adam(self.model, c.learning_rate, c.adam_eps)
        self.rng = np.random.default_rng(seed)
        self.env_steps = 0
        self.updates = 0
        self.stats: dict[str, float] = {}
        # an update taken a gradient step at a time (prepare ... finish_update)
        self._tensors: tuple[torch.Tensor, ...] = ()
        self._pending: deque[torch.Tensor] = deque()
        self._clip = 0.0
        self._round = (0.0, 0.0, 0.0)
        self._sums, self._steps = np.zeros(5), 0

    def _build_model(self, seed: int) -> ActorCritic:
        """The network this learner trains (a subclass may train another)."""
        return ActorCritic(self.space.obs_dim, self.space.num_actions, self.config.hidden, seed)

    def rollout_values(self, rollouts: Sequence[Rollout]) -> list[np.ndarray]:
        """Every rollout's ``(T + 1, k)`` values, from one forward pass over all of them."""
        flat = [r.obs.reshape(r.obs.shape[0] * r.obs.shape[1], -1) for r in rollouts]
        with torch.no_grad():
            v = self.model.value(torch.from_numpy(np.concatenate(flat).astype(np.float32)).to(self.device))
        out, at = [], 0
        for r, f in zip(rollouts, flat, strict=True):
            out.append(self.critic_values(v[at : at + len(f)].cpu().numpy().reshape(r.obs.shape[:2])))
            at += len(f)
        return out

    def critic_values(self, out: np.ndarray) -> np.ndarray:
        """The critic's outputs as values in the returns' units (PPO's are; a learner
        whose critic learns normalized values denormalizes them here)."""
        return out

    def critic_targets(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        """The value targets and the old values in the critic's units, for the loss (PPO:
        the returns and the values as they are; a normalizing learner updates its
        statistics with the batch's returns and normalizes both)."""
        return batch.returns, batch.values

    def critic_loss(self, values: torch.Tensor, returns: torch.Tensor, old_values: torch.Tensor) -> torch.Tensor:
        """The value loss of a minibatch (PPO's: :func:`value_loss`)."""
        return value_loss(values, returns, old_values, self.config.clip_vloss)

    def schedule(self) -> tuple[float, float]:
        """(learning rate, clip range) now: annealed by the share of ``total_timesteps`` left."""
        c = self.config
        left = max(0.0, 1.0 - self.env_steps / c.total_timesteps)
        return c.learning_rate * (left if c.anneal_lr else 1.0), c.clip_coef * (left if c.anneal_clip else 1.0)

    def minibatches(self, n: int, size: int) -> Iterator[torch.Tensor]:
        """Indices of ``size`` rows of ``n`` at a time, each epoch in a fresh order drawn when
        the epoch begins (breaking off draws no further order)."""
        for _ in range(self.config.update_epochs):
            order = torch.from_numpy(self.rng.permutation(n))
            for start in range(0, n, size):
                yield order[start : start + size]

    def normalized_advantages(self, adv: torch.Tensor) -> torch.Tensor:
        """The minibatch's advantages, normalized when the config says so (and it can be)."""
        if self.config.norm_adv and len(adv) > 1:
            return (adv - adv.mean()) / (adv.std() + 1e-8)
        return adv

    def gradient_step(self, loss: torch.Tensor) -> None:
        """One gradient step on ``loss``, the gradient's norm clipped."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        clip_grad_norm(self.model.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        self.updates += 1

    def _minibatch_loss(self, tensors: tuple[torch.Tensor, ...], idx: torch.Tensor, clip: float
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float, float]:
        """The loss of the minibatch ``idx`` of ``tensors`` (observations, actions, old
        log-probabilities, advantages, returns, old values), its terms (policy, value,
        entropy), the approximate KL and the clip fraction."""
        c = self.config
        obs, actions, old_logp, adv_all, ret_all, old_v = tensors
        logp, entropy, values = self.model.evaluate(obs[idx], actions[idx])
        adv = self.normalized_advantages(adv_all[idx])
        pg = clipped_surrogate_loss(logp, old_logp[idx], adv, clip)
        vl = self.critic_loss(values, ret_all[idx], old_v[idx])
        ent = entropy.mean()
        with torch.no_grad():
            log_ratio = logp - old_logp[idx]
            kl = float(((log_ratio.exp() - 1) - log_ratio).mean())  # (Schulman's k3 estimator)
            clipped = float(((log_ratio.exp() - 1.0).abs() > clip).float().mean())
        return pg - c.ent_coef * ent + c.vf_coef * vl, pg, vl, ent, kl, clipped

    def _kl_stop(self, kl: float) -> bool:
        """SB3's early stop: the policy moved too far for another step this update."""
        return self.config.target_kl is not None and kl > 1.5 * self.config.target_kl

    def learn(self, rollouts: Sequence[Rollout]) -> dict[str, float]:
        c = self.config
        self.model.train()
        batch = make_batch(rollouts, self.rollout_values(rollouts), c.gamma, c.gae_lambda)
        self.env_steps += len(batch)
        lr, clip = self.schedule()
        set_adam(self.optimizer, lr, c.adam_eps)
        dev = self.device
        obs = torch.from_numpy(batch.obs).to(dev)
        actions = torch.from_numpy(batch.actions).to(dev)
        old_logp = torch.from_numpy(batch.logp).to(dev)
        adv_all = torch.from_numpy(batch.advantages).to(dev)
        targets, critic_old = self.critic_targets(batch)
        ret_all = torch.from_numpy(targets).to(dev)
        old_v = torch.from_numpy(critic_old).to(dev)
        n, mb = len(batch), c.minibatch_size
        tensors = (obs, actions, old_logp, adv_all, ret_all, old_v)
        sums = np.zeros(5)
        steps = 0
        for idx in self.minibatches(n, mb):
            loss, pg, vl, ent, kl, clipped = self._minibatch_loss(tensors, idx, clip)
            # SB3's early stop: this minibatch is not stepped on once the policy moved too far
            if self._kl_stop(kl):
                break
            self.gradient_step(loss)
            steps += 1
            sums += (pg.item(), vl.item(), ent.item(), kl, clipped)
        mean = sums / max(steps, 1)
        var_ret = float(np.var(batch.returns))
        explained = float("nan") if var_ret == 0 else 1.0 - float(np.var(batch.returns - batch.values)) / var_ret
        self.stats = {"policy_loss": mean[0], "value_loss": mean[1], "entropy": mean[2], "approx_kl": mean[3],
                      "clipfrac": mean[4], "learning_rate": lr, "clip_range": clip, "explained_variance": explained,
                      "transitions": float(n), "gradient_steps": float(steps)}
        return self.stats

    # -- one gradient step at a time (the data-parallel and parameter-server plans) -----
    def prepare(self, rollouts: Sequence[Rollout]) -> int:
        """Begin an update from this learner's share of a round: GAE under the current
        weights. Returns its transitions (what :meth:`plan_update` takes from every learner)."""
        c = self.config
        self.model.train()
        batch = make_batch(rollouts, self.rollout_values(rollouts), c.gamma, c.gae_lambda)
        cols = (batch.obs, batch.actions, batch.logp, batch.advantages, *self.critic_targets(batch))
        self._tensors = tuple(torch.from_numpy(a).to(self.device) for a in cols)
        return len(batch)

    def plan_update(self, counts: Sequence[int], rng: np.random.Generator | None = None) -> int:
        """The round's schedule, the same on every learner given every learner's transitions
        ``counts`` (in learner order): env steps, learning rate and clip range count all of
        them; each epoch cuts this learner's share, in an order ``rng`` draws, into ``m``
        nearly equal minibatches, ``m`` the most any learner needs at ``minibatch_size``, so
        that every learner takes the same steps (None: a learner that only applies
        gradients). Returns the gradient steps planned."""
        c = self.config
        self.env_steps += sum(counts)
        lr, self._clip = self.schedule()
        set_adam(self.optimizer, lr, c.adam_eps)
        m = max(math.ceil(n / c.minibatch_size) for n in counts)
        self._pending = deque()
        if rng is not None:
            n = len(self._tensors[1])
            if n < m:
                raise ValueError(f"{n} transitions for {m} minibatches: the learners' shares differ too much")
            for _ in range(c.update_epochs):
                self._pending.extend(torch.from_numpy(part) for part in np.array_split(rng.permutation(n), m))
        self._round = (lr, self._clip, float(sum(counts)))
        self._sums, self._steps = np.zeros(5), 0
        return c.update_epochs * m

    def gradient(self) -> np.ndarray:
        """The next planned minibatch's gradient, flat float32 in :meth:`flat_parameters`'
        order, then its statistics (policy loss, value loss, entropy, approximate KL, clip
        fraction): what :meth:`apply_gradient` takes, averaged over learners."""
        idx = self._pending.popleft()
        loss, pg, vl, ent, kl, clipped = self._minibatch_loss(self._tensors, idx, self._clip)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = [torch.zeros_like(p).reshape(-1) if p.grad is None else p.grad.reshape(-1)
                 for p in self.model.parameters()]
        stats = torch.tensor([pg.item(), vl.item(), ent.item(), kl, clipped], dtype=torch.float32)
        return torch.cat([*grads, stats.to(self.device)]).cpu().numpy()

    def apply_gradient(self, mean: np.ndarray) -> bool:
        """One step of the optimizer on ``mean`` (:meth:`gradient`'s, averaged over the
        learners), its norm clipped. False, and no step, when the KL early stop ends the
        update (the averaged KL past 1.5 x ``target_kl``)."""
        stats = mean[-5:].astype(np.float64)
        if self._kl_stop(float(stats[3])):
            return False
        flat = torch.from_numpy(mean[:-5]).to(self.device)
        at = 0
        for p in self.model.parameters():
            p.grad = flat[at : at + p.numel()].view_as(p).clone()  # (clipping scales it in place)
            at += p.numel()
        clip_grad_norm(self.model.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        self._sums += stats
        self._steps += 1
        return True

    def finish_update(self) -> dict[str, float]:
        """The update's statistics (averaged over learners and steps), as :meth:`learn`'s."""
        mean = self._sums / max(self._steps, 1)
        lr, clip, n = self._round
        self._tensors, self._pending = (), deque()
        self.stats = {"policy_loss": mean[0], "value_loss": mean[1], "entropy": mean[2], "approx_kl": mean[3],
                      "clipfrac": mean[4], "learning_rate": lr, "clip_range": clip, "transitions": n,
                      "gradient_steps": float(self._steps)}
        return self.stats

    def flat_parameters(self) -> np.ndarray:
        """Every parameter (actor and critic), flat float32: what a gradient worker needs."""
        return torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().cpu().numpy()

    def load_flat_parameters(self, flat: np.ndarray) -> None:
        """Take :meth:`flat_parameters`' array as the weights (copied: the array may be shared)."""
        src = torch.from_numpy(np.asarray(flat, dtype=np.float32)).to(self.device)
        at = 0
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(src[at : at + p.numel()].view_as(p))
                at += p.numel()

    def payload(self) -> np.ndarray:
        return self.model.actor_payload()

    def digest(self) -> str:
        h = hashlib.sha256()
        for k, v in self.model.state_dict().items():
            h.update(k.encode())
            h.update(v.detach().cpu().numpy().tobytes())
        return h.hexdigest()

    def state(self) -> dict[str, Any]:
        """Everything needed to resume: the network, the optimizer, the counters, the generator."""
        # the config as data (to read) and as the object itself (to rebuild the learner)
        return {"config": asdict(self.config), "config_object": self.config, "space": asdict(self.space),
                "seed": self.seed,
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "env_steps": self.env_steps, "updates": self.updates, "rng": self.rng.bit_generator.state}

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write a checkpoint atomically (a temporary file, then a rename)."""
        return write_checkpoint(path, {**self.state(), **(extra or {})})

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]:
        state: dict[str, Any] = torch.load(path, map_location=self.device, weights_only=False)
        self.load_state(state)
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take what ``state`` (:meth:`state`'s, or part of it) holds of the network, the
        optimizer, the counters and the generator; what it leaves out stays (a tuner's
        exploit copies another learner's network and optimizer, not its generator)."""
        if "model" in state:
            self.model.load_state_dict(state["model"])
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        if "env_steps" in state:
            self.env_steps = int(state["env_steps"])
        if "updates" in state:
            self.updates = int(state["updates"])
        if "rng" in state:
            self.rng.bit_generator.state = state["rng"]

    @classmethod
    def load(cls, path: str | Path, device: torch.device | None = None) -> PPOLearner:
        """Rebuild a learner from a checkpoint written by :meth:`save`."""
        state = torch.load(path, map_location=device or torch.device("cpu"), weights_only=False)
        saved = state["space"]
        space = SpaceInfo(tuple(saved["obs_shape"]), int(saved["num_actions"]), int(saved.get("state_dim", 0)))
        learner = cls(space, state["config_object"], seed=int(state["seed"]), device=device)
        learner.load_checkpoint(path)
        return learner
