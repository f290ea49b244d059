"""APPO's learner: PPO's clipped surrogate on V-trace advantages, the value function
regressed on V-trace targets (see :mod:`reactorfed.rl.algos.appo.config` and
:mod:`reactorfed.rl.algos.appo.vtrace`). It takes fragments sampled by older weights (the
asynchronous plan, :mod:`reactorfed.rl.plans.async_`, bounds how much older) and corrects
for them with the importance weights of the learner's policy over the sampler's.

Everything but the update is PPO's learner: the network, Adam, the payload, the digest,
checkpoints. Determinism as there: a seed and the same fragments in the same order give
bit-identical weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...contracts import SpaceInfo
from ...rollout import Rollout
from ..network import set_adam
from ..ppo.learner import PPOLearner, clipped_surrogate_loss
from .vtrace import vtrace

if TYPE_CHECKING:
    from .config import APPOConfig

__all__ = ["APPOLearner"]


class APPOLearner(PPOLearner):
    """An :class:`~reactorfed.rl.algos.ppo.actor_critic.ActorCritic`, Adam, and APPO's update."""

    config: APPOConfig  # type: ignore[assignment]

    def __init__(self, space: SpaceInfo, config: APPOConfig, seed: int = 0,
                 device: torch.device | None = None) -> None:
        super().__init__(space, config, seed, device)  # type: ignore[arg-type]

    def _targets(self, rollouts: Sequence[Rollout]) -> tuple[np.ndarray, ...]:
        """V-trace per rollout under the current weights; every transition flat, in
        rollout order, row-major, reset rows left out: (obs, actions, behaviour log-probs,
        advantages, value targets, clipped importance weights)."""
        c = self.config
        values = self.rollout_values(rollouts)
        parts = []
        for r, v in zip(rollouts, values, strict=True):
            T, k = r.actions.shape
            obs = torch.from_numpy(r.obs[:-1].reshape(T * k, -1).astype(np.float32)).to(self.device)
            with torch.no_grad():
                logp, _, _ = self.model.evaluate(obs, torch.from_numpy(r.actions.reshape(-1)).to(self.device))
            log_rhos = logp.cpu().numpy().reshape(T, k) - r.logp.astype(np.float32)
            vt = vtrace(log_rhos, r.rewards, v, r.terminated, r.truncated, c.gamma, lam=c.vtrace_lambda,
                        rho_bar=c.rho_bar, c_bar=c.c_bar, resets=r.resets)
            keep = ~r.resets
            o = r.obs[:-1][keep]
            parts.append((o.reshape(len(o), -1), r.actions[keep], r.logp[keep], vt.advantages[keep],
                          vt.targets[keep], vt.rhos[keep]))
        cols = [np.concatenate(col) for col in zip(*parts, strict=True)]
        return (cols[0].astype(np.float32), *cols[1:])

    def learn(self, rollouts: Sequence[Rollout]) -> dict[str, float]:
        c = self.config
        self.model.train()
        obs_np, actions_np, mu_logp_np, adv_np, tgt_np, rhos_np = self._targets(rollouts)
        n = len(actions_np)
        self.env_steps += n
        set_adam(self.optimizer, c.learning_rate, c.adam_eps)
        dev = self.device
        obs = torch.from_numpy(obs_np).to(dev)
        actions = torch.from_numpy(actions_np).to(dev)
        mu_logp = torch.from_numpy(mu_logp_np.astype(np.float32)).to(dev)
        adv_all = torch.from_numpy(adv_np).to(dev)
        tgt_all = torch.from_numpy(tgt_np).to(dev)
        sums = np.zeros(3)
        steps = 0
        for idx in self.minibatches(n, c.minibatch_size):
            logp, entropy, values = self.model.evaluate(obs[idx], actions[idx])
            pg = clipped_surrogate_loss(logp, mu_logp[idx], self.normalized_advantages(adv_all[idx]), c.clip_coef)
            vl = ((values - tgt_all[idx]) ** 2).mean()
            ent = entropy.mean()
            self.gradient_step(pg - c.ent_coef * ent + c.vf_coef * vl)
            steps += 1
            sums += (pg.item(), vl.item(), ent.item())
        mean = sums / max(steps, 1)
        self.stats = {"policy_loss": mean[0], "value_loss": mean[1], "entropy": mean[2],
                      "mean_rho": float(rhos_np.mean()) if n else float("nan"),
                      "learning_rate": c.learning_rate, "transitions": float(n), "gradient_steps": float(steps)}
        return self.stats
