"""Generalized advantage estimation (Schulman et al. 2016, "High-dimensional continuous
control using generalized advantage estimation", eq. 11-16), for fragments of vector
environments with gymnasium's next-step autoreset.

For a transition ``t`` of one environment copy::

    delta_t = r_t + gamma * V(s_{t+1}) * (1 - terminated_t) - V(s_t)
    A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1},   done = terminated | truncated

A truncated episode (a time limit, not a failure) still bootstraps from the value of
the observation it ended in; a terminated one does not. Either way the sum stops at the
episode's end. After the fragment's last row the sum bootstraps from ``V`` of the
observation the fragment ends in (``values[T]``).

gymnasium's vector environments reset a finished copy on the step *after* the one that
ended its episode: that row is no transition (``resets``), its observation is the
final observation of the episode that ended, which is exactly ``s_{t+1}`` of the row
before. Such a row gets advantage 0 and must be left out of the loss.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gae", "lambda_returns"]


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    gamma: float,
    lam: float,
    resets: np.ndarray | None = None,
) -> np.ndarray:
    """Advantages shaped ``(T, k)`` (float32) of ``T`` rows of ``k`` copies.

    ``values`` is ``(T + 1, k)``: ``values[t]`` is the value of the observation row ``t``
    acted in, ``values[T]`` the value of the observation the fragment ends in. So
    ``values[t + 1]`` is the value of the observation step ``t`` produced (the final
    observation where the episode ended: next-step autoreset keeps it as the next row's
    observation). ``resets[t]`` marks rows that are an automatic reset (advantage 0).
    """
    T = rewards.shape[0]
    assert values.shape[0] == T + 1 and values.shape[1:] == rewards.shape[1:], (values.shape, rewards.shape)
    r = rewards.astype(np.float32, copy=False)
    v = values.astype(np.float32, copy=False)
    g, gl = np.float32(gamma), np.float32(gamma * lam)
    bootstrap = 1.0 - terminated.astype(np.float32)
    carry = 1.0 - (terminated | truncated).astype(np.float32)
    valid = np.ones_like(r) if resets is None else 1.0 - resets.astype(np.float32)
    adv = np.zeros_like(r)
    last = np.zeros_like(r[0])
    for t in range(T - 1, -1, -1):
        delta = r[t] + g * v[t + 1] * bootstrap[t] - v[t]
        last = (delta + gl * carry[t] * last) * valid[t]
        adv[t] = last
    return adv


def lambda_returns(advantages: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The value targets: ``A_t + V(s_t)`` (TD(lambda) returns), ``(T, k)``."""
    return (advantages + values[: advantages.shape[0]]).astype(np.float32)
