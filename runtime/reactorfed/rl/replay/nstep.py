"""n-step transitions from rollouts, as an Ape-X actor builds them before pushing them into
replay (Horgan et al. 2018, "Distributed prioritized experience replay", section 3.1, and
Sutton & Barto's n-step return):

    R_t = sum_{u=0}^{m-1} gamma^u r_{t+u},   target = R_t + gamma^m * Q(s_{t+m}, .)

with ``m = n``, or fewer where the episode ends first. A transition carries its
``discount``: ``gamma^m`` where the learner bootstraps from ``next_obs`` (``s_{t+m}``),
0 where the episode terminated within the ``m`` steps (no bootstrap), and ``gamma^m``
from the final observation where it was truncated (a time limit is no terminal state).

:class:`NStepBuilder` keeps, for each environment copy, the last ``n - 1`` steps whose
return is not complete yet, across fragments: a fragment's last rows become transitions
in the next one, and no step is lost or counted twice. Reset rows of a vector
environment (:class:`~reactorfed.rl.rollout.Rollout`'s ``resets``) are no step. The
order of the transitions is fixed (by row, then copy; at an episode's end, oldest
first), so one rollout gives the same transitions in every process. numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rollout import Rollout

__all__ = ["NStepBuilder", "transition_dtype"]


def transition_dtype(obs_shape: tuple[int, ...], obs_dtype: np.dtype[Any] | type) -> np.dtype[Any]:
    """One n-step transition, as a row of a structured array (one array crosses a federate
    boundary as a raw buffer): the observation, the action, the n-step return, the
    observation to bootstrap from, its discount, the priority its sampler gave it, and the
    tag of the weights that acted."""
    return np.dtype([
        ("obs", obs_dtype, obs_shape),
        ("action", np.int64),
        ("ret", np.float32),
        ("next_obs", obs_dtype, obs_shape),
        ("discount", np.float32),
        ("priority", np.float32),
        # the tag (elapsed ns, microstep) the acting weights reached the sampler at: the
        # learner's policy lag (-1: not known)
        ("policy_time", np.int64),
        ("policy_microstep", np.uint32),
    ])


#: a pending step: (observation, action, reward, the acting weights' tag)
_Step = tuple[np.ndarray, int, float, tuple[int, int]]


class NStepBuilder:
    """n-step transitions of ``num_envs`` copies, fed one rollout at a time."""

    def __init__(self, num_envs: int, n: int, gamma: float) -> None:
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n-step: n must be an int >= 1, got {n!r}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"n-step: gamma must lie in [0, 1], got {gamma}")
        self.num_envs, self.n, self.gamma = num_envs, n, gamma
        #: per copy, the steps not yet emitted: (observation, action, reward, the acting
        #: weights' tag), oldest first
        self.pending: list[list[_Step]] = [[] for _ in range(num_envs)]

    def _return(self, steps: list[_Step], start: int) -> float:
        g, total, scale = self.gamma, 0.0, 1.0
        for _, _, r, _ in steps[start:]:
            total += scale * r
            scale *= g
        return total

    def add(self, r: Rollout) -> np.ndarray:
        """The transitions that ``r``'s rows complete (priorities 0: its sampler's to set)."""
        T, k = r.actions.shape
        if k != self.num_envs:
            raise ValueError(f"n-step: a rollout of {k} copies, the builder has {self.num_envs}")
        obs, nxt, acts, rets, discs = [], [], [], [], []
        tags: list[tuple[int, int]] = []
        policy = r.policy_tag if r.policy_tag is not None else (-1, 0)

        def emit(steps: list[_Step], start: int, next_obs: np.ndarray, discount: float) -> None:
            obs.append(steps[start][0])
            acts.append(steps[start][1])
            rets.append(self._return(steps, start))
            nxt.append(next_obs)
            discs.append(discount)
            tags.append(steps[start][3])

        g, n = self.gamma, self.n
        for i in range(T):
            for j in range(k):
                if r.resets[i, j]:
                    continue  # the row after an episode's end: the automatic reset, no step
                steps = self.pending[j]
                steps.append((np.array(r.obs[i, j]), int(r.actions[i, j]), float(r.rewards[i, j]), policy))
                last = r.obs[i + 1, j]
                if r.terminated[i, j] or r.truncated[i, j]:
                    # the episode ended: every pending step's return is complete
                    for q in range(len(steps)):
                        emit(steps, q, last, 0.0 if r.terminated[i, j] else g ** (len(steps) - q))
                    steps.clear()
                elif len(steps) == n:
                    emit(steps, 0, last, g**n)
                    del steps[0]
        out = np.zeros(len(acts), dtype=transition_dtype(r.obs.shape[2:], r.obs.dtype))
        if acts:
            out["obs"] = np.stack(obs)
            out["action"] = acts
            out["ret"] = rets
            out["next_obs"] = np.stack(nxt)
            out["discount"] = discs
            out["policy_time"] = [t for t, _ in tags]
            out["policy_microstep"] = [m for _, m in tags]
        return out
