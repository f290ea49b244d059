"""Central batched inference (SEED RL's): every sampler's observations of a step in one
forward pass of the learner's own policy network, on its device; each sampler's actions
routed back; the trajectories assembled on the learner's side.

Nothing here knows about reactors: :class:`~reactorfed.rl.plans.seed_trainer.SeedTrainer` hands
:meth:`BatchedInference.observe` the step records of a tag (:func:`~reactorfed.rl.plans.seed.step_dtype`,
in sampler order) and sends out what :meth:`BatchedInference.act` returns.

The trajectories mean what a sampler's own would (:class:`~reactorfed.rl.rollout.PolicyRunner`):
``fragment_len`` rows of observations, actions, the acting policy's log-probabilities,
rewards and ends, the reset rows of next-step autoreset marked, the observation the
fragment ends in, and the returns of the episodes that ended, by row then copy. The values
are not carried: the learner computes them when it learns, in one pass over the whole
fragment, with the very weights that acted (no update falls inside a fragment), which is
what an on-policy learner's ``learn`` takes (:class:`~reactorfed.rl.contracts.Learner`).

Actions are drawn by inverting the cumulative probabilities with one uniform number a copy
from a seeded numpy generator, as :class:`~reactorfed.rl.algos.mlp_actor.MLPActor` draws them:
the same seed, weights and observations give the same actions in every process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ..contracts import Learner
from ..rollout import Rollout

__all__ = ["BatchedInference", "central_policy", "sample_actions"]


def central_policy(learner: Learner, device: str) -> tuple[nn.Module, torch.device]:
    """``learner``'s policy network (``learner.model.actor``: observations to logits) and
    the device it acts on: ``device``, ``"auto"`` being CUDA when this process has it, else
    the CPU. The learner is moved there first (its model, and its ``device``, where every
    tensor of its update is made): an algorithm builds its learner on the CPU. A
    ``TypeError`` for a learner without such a network."""
    model = getattr(learner, "model", None)
    policy = getattr(model, "actor", None)
    if not isinstance(model, nn.Module) or not isinstance(policy, nn.Module):
        raise TypeError(f"central inference needs a learner with a policy network (model.actor), "
                        f"as PPO's and APPO's have; {type(learner).__name__} has none")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if getattr(learner, "device", None) != dev:
        model.to(dev)  # before the first update: the optimizer holds the same parameters, and no state yet
        learner.device = dev  # type: ignore[attr-defined]
    return policy, dev


def sample_actions(logp_all: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Actions drawn from the rows of log-probabilities ``logp_all`` (``(batch, actions)``,
    float32), and their log-probabilities."""
    cdf = np.cumsum(np.exp(logp_all), axis=1)
    u = rng.random((len(logp_all), 1), dtype=np.float32)
    # the first action whose cumulative probability exceeds u (rounding can leave the last
    # sum a hair under 1: the last action then)
    actions = np.minimum((u >= cdf).sum(axis=1), logp_all.shape[1] - 1).astype(np.int64)
    return actions, logp_all[np.arange(len(actions)), actions].astype(np.float32)


class _Fragment:
    """The rows of one fragment of every sampler's copies: ``(T + 1, n, k, ...)`` for the
    observations, ``(T, n, k)`` for the rest."""

    def __init__(self, T: int, n: int, k: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype[Any]) -> None:
        self.obs = np.empty((T + 1, n, k, *obs_shape), dtype=obs_dtype)
        self.actions = np.empty((T, n, k), dtype=np.int64)
        self.logp = np.empty((T, n, k), dtype=np.float32)
        self.rewards = np.empty((T, n, k), dtype=np.float32)
        self.terminated = np.empty((T, n, k), dtype=np.bool_)
        self.truncated = np.empty((T, n, k), dtype=np.bool_)
        self.resets = np.empty((T, n, k), dtype=np.bool_)
        self.returns: list[list[float]] = [[] for _ in range(n)]

    def rollout(self, i: int) -> Rollout:
        """Sampler ``i``'s rows, copied out (the buffers are refilled by the next fragment)."""
        def own(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a[:, i])

        return Rollout(own(self.obs), own(self.actions), own(self.logp), own(self.rewards), own(self.terminated),
                       own(self.truncated), own(self.resets), tuple(self.returns[i]))


class BatchedInference:
    """Acts for ``num_samplers`` samplers of ``num_envs`` copies with ``policy`` (a network
    from flat observations to logits) on ``device``, and assembles their fragments of
    ``fragment_len`` rows. ``seed`` seeds the action draws.

    Each step: :meth:`observe` the samplers' step records (in sampler order), which returns
    every sampler's :class:`~reactorfed.rl.rollout.Rollout` when they complete a fragment;
    then :meth:`act`, which returns each sampler's actions.

    Under an elastic bank the samplers acted for change between fragments: a new one's
    first record :meth:`arrive` s, each fragment :meth:`start` s with the samplers chosen
    (:attr:`batch`), and one that left is :meth:`drop` ped from the fragment under way. The
    buffers and each sampler's episode state are kept by bank index (``num_samplers``: the
    bank's slots), so a fragment of fewer samplers draws fewer actions, in bank order."""

    def __init__(self, policy: nn.Module, device: torch.device, num_samplers: int, num_envs: int,
                 fragment_len: int, seed: int) -> None:
        self.policy, self.device = policy, device
        self.n, self.k, self.T = num_samplers, num_envs, fragment_len
        self.rng = np.random.default_rng(seed)
        self.row = 0  # the row whose observation comes next
        self.acted = False  # whether a step's outcome is due (not before the first act)
        self.resetting = np.zeros((self.n, self.k), dtype=np.bool_)
        self.episode_return = np.zeros((self.n, self.k), dtype=np.float64)
        self.fragment: _Fragment | None = None
        #: the samplers acted for, in order (every one, unless an elastic plan says otherwise)
        self.batch: tuple[int, ...] = tuple(range(num_samplers))
        #: forward passes taken: one per step, for every sampler at once
        self.forward_passes = 0

    def observe(self, records: Sequence[np.ndarray]) -> list[Rollout] | None:
        """Take one step record of each sampler of :attr:`batch` (in its order: the outcome
        of the actions last sent, and the observations to act on next); their fragments
        when this completes them."""
        batch = list(self.batch)
        if len(records) != len(batch):
            raise ValueError(f"{len(records)} step records, {len(batch)} samplers")
        for i, rec in zip(batch, records, strict=True):
            if rec.shape != (self.k,):
                raise ValueError(f"sampler {i} sent {rec.shape[0] if rec.ndim else 0} copies' steps, {self.k} expected")
        obs = np.stack([rec["obs"] for rec in records])  # (batch, k, *obs_shape): a fresh, aligned copy
        f = self._buffers(obs)
        if self.acted:
            r = self.row - 1
            reward = np.stack([rec["reward"] for rec in records])
            f.rewards[r, batch] = reward
            terminated = np.stack([rec["terminated"] for rec in records])
            truncated = np.stack([rec["truncated"] for rec in records])
            f.terminated[r, batch], f.truncated[r, batch] = terminated, truncated
            self.episode_return[batch] += reward
            done = terminated | truncated
            for b, j in zip(*np.nonzero(done), strict=True):  # sampler, then copy: by row, then copy for each
                f.returns[batch[b]].append(float(self.episode_return[batch[b], j]))
            self.episode_return[batch] = np.where(done, 0.0, self.episode_return[batch])
            self.resetting[batch] = done
        f.obs[self.row, batch] = obs
        if self.row < self.T:
            return None
        rollouts = [f.rollout(i) for i in batch]
        # the observation a fragment ends in is the next one's first
        f.obs[0, batch] = obs
        for i in batch:
            f.returns[i] = []
        self.row = 0
        return rollouts

    def state(self) -> dict[str, Any]:
        """What acting on goes on from, at a fragment's end (after :meth:`observe` returned
        it): the generator, the episodes under way, the observations the next fragment
        starts from. For a checkpoint."""
        assert self.row == 0 and self.fragment is not None, "a fragment's end"
        return {"rng": self.rng.bit_generator.state, "resetting": self.resetting.copy(),
                "episode_return": self.episode_return.copy(), "obs": self.fragment.obs[0].copy()}

    def restore(self, state: dict[str, Any]) -> None:
        """Carry on from :meth:`state`'s: the next :meth:`act` acts on its observations (a
        resumed run's samplers' first records, fresh resets, are not observed)."""
        self.rng.bit_generator.state = state["rng"]
        self.resetting[:] = state["resetting"]
        self.episode_return[:] = state["episode_return"]
        f = self._buffers(state["obs"])
        f.obs[0] = state["obs"]
        f.returns = [[] for _ in range(self.n)]
        self.row, self.acted = 0, True

    def _buffers(self, obs: np.ndarray) -> _Fragment:
        if self.fragment is None:
            self.fragment = _Fragment(self.T, self.n, self.k, obs.shape[2:], obs.dtype)
        return self.fragment

    # -- a batch whose samplers change (an elastic bank's members: the SEED plan's ElasticSeedTrainer)
    def arrive(self, i: int, record: np.ndarray) -> None:
        """Sampler ``i``'s first step record (a new process's: its copies just reset): its
        observations wait for the next fragment (:meth:`start`)."""
        f = self._buffers(np.stack([record["obs"]]))
        f.obs[0, i] = record["obs"]
        f.returns[i] = []
        self.episode_return[i] = 0.0
        self.resetting[i] = False

    def start(self, batch: Sequence[int]) -> None:
        """A fragment of the samplers ``batch`` (in order) begins: each has arrived, or
        ended the fragment before (its observations wait in the fragment's first row)."""
        self.batch = tuple(batch)
        self.row, self.acted = 0, False

    def drop(self, i: int) -> int:
        """Sampler ``i`` of :attr:`batch` sends no more (it left): its rows of the fragment
        under way are not learned from. The transitions it sampled in them."""
        assert self.fragment is not None
        self.batch = tuple(b for b in self.batch if b != i)
        stepped = max(self.row - 1, 0)  # (the outcome of the last actions sent never came)
        return int(stepped * self.k - np.count_nonzero(self.fragment.resets[:stepped, i]))

    def act(self) -> list[np.ndarray]:
        """One forward pass over the observations of this step of every sampler of
        :attr:`batch`; the actions drawn, ``num_envs`` for each, in its order."""
        f, r, batch = self.fragment, self.row, list(self.batch)
        assert f is not None and r < self.T, "act after observe, once a step"
        f.resets[r, batch] = self.resetting[batch]
        x = torch.from_numpy(f.obs[r, batch].reshape(len(batch) * self.k, -1).astype(np.float32)).to(self.device)
        with torch.no_grad():
            logp_all = torch.log_softmax(self.policy(x), dim=-1).cpu().numpy()
        self.forward_passes += 1
        actions, logp = sample_actions(logp_all, self.rng)
        f.actions[r, batch] = actions.reshape(len(batch), self.k)
        f.logp[r, batch] = logp.reshape(len(batch), self.k)
        self.row += 1
        self.acted = True
        return [f.actions[r, i].copy() for i in batch]
