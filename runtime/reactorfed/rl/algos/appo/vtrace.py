"""V-trace (Espeholt et al. 2018, "IMPALA: scalable distributed deep-RL with importance
weighted actor-learner architectures", eq. 1 and section 4.2): off-policy value targets
and policy-gradient advantages for fragments sampled by an older policy, in the layout of
:mod:`reactorfed.rl.algos.ppo.gae` (rows of vector environments with gymnasium's next-step
autoreset).

With ``rho_t = pi(a_t | x_t) / mu(a_t | x_t)`` (the learner's policy over the sampler's),
``rho_bar`` and ``c_bar`` the truncation levels and ``lambda`` IMPALA's trace cut
(``c_t = lambda * min(c_bar, rho_t)``)::

    delta_t = min(rho_bar, rho_t) * (r_t + gamma * V(x_{t+1}) - V(x_t))
    v_t     = V(x_t) + delta_t + gamma * c_t * (v_{t+1} - V(x_{t+1}))
    A_t     = min(pg_rho_bar, rho_t) * (r_t + gamma * v_{t+1} - V(x_t))

which is eq. 1's sum written backwards. After the fragment's last row ``v_T = V(x_T)``.
Episode ends as in GAE: a terminated step bootstraps nothing, a truncated one from the
value of the observation it ended in; either way the trace stops there. A reset row
(gymnasium's autoreset, no transition) gets ``v_t = V(x_t)`` and advantage 0, so that the
row before it, which ended its episode, reads ``v_{t+1} = V`` of the final observation.

On-policy (every ``rho_t = 1``) with ``rho_bar, c_bar >= 1`` the targets are the
TD(lambda) returns GAE gives, and ``A_t`` at ``lambda = 1`` its advantages (tested).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["VTrace", "vtrace"]


class VTrace(NamedTuple):
    """``targets``: the values' regression targets ``v_t``; ``advantages``: the policy
    gradient's ``A_t``; both ``(T, k)`` float32. ``rhos``: the clipped ``min(rho_bar,
    rho_t)``, for diagnostics (how off-policy the fragment was)."""

    targets: np.ndarray
    advantages: np.ndarray
    rhos: np.ndarray


def vtrace(
    log_rhos: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    gamma: float,
    *,
    lam: float = 1.0,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
    pg_rho_bar: float | None = None,
    resets: np.ndarray | None = None,
) -> VTrace:
    """V-trace over ``T`` rows of ``k`` copies.

    ``log_rhos`` ``(T, k)``: ``log pi(a_t | x_t) - log mu(a_t | x_t)``. ``values`` ``(T + 1, k)``
    under the learner's current value function, ``values[T]`` the observation the fragment
    ends in (as in :func:`reactorfed.rl.algos.ppo.gae.gae`). ``pg_rho_bar`` defaults to ``rho_bar``.
    """
    T = rewards.shape[0]
    assert values.shape[0] == T + 1 and values.shape[1:] == rewards.shape[1:], (values.shape, rewards.shape)
    assert log_rhos.shape == rewards.shape, (log_rhos.shape, rewards.shape)
    if not (rho_bar > 0 and c_bar > 0 and 0 <= lam <= 1 and 0 <= gamma <= 1):
        raise ValueError(f"V-trace needs rho_bar, c_bar > 0 and lambda, gamma in [0, 1]; got rho_bar={rho_bar}, "
                         f"c_bar={c_bar}, lambda={lam}, gamma={gamma}")
    r = rewards.astype(np.float32, copy=False)
    v = values.astype(np.float32, copy=False)
    rho = np.exp(log_rhos.astype(np.float32, copy=False))
    clipped = np.minimum(np.float32(rho_bar), rho)
    cs = np.float32(lam) * np.minimum(np.float32(c_bar), rho)
    pg_rho = np.minimum(np.float32(rho_bar if pg_rho_bar is None else pg_rho_bar), rho)
    g = np.float32(gamma)
    bootstrap = 1.0 - terminated.astype(np.float32)
    carry = 1.0 - (terminated | truncated).astype(np.float32)
    valid = np.ones_like(r) if resets is None else 1.0 - resets.astype(np.float32)

    targets = np.empty_like(r)
    acc = np.zeros_like(r[0])  # v_{t+1} - V(x_{t+1}); 0 after the last row
    for t in range(T - 1, -1, -1):
        delta = clipped[t] * (r[t] + g * bootstrap[t] * v[t + 1] - v[t])
        acc = (delta + g * carry[t] * cs[t] * acc) * valid[t]
        targets[t] = v[t] + acc
    following = np.concatenate([targets[1:], v[T:]], axis=0)  # v_{t+1}; v_T = V(x_T)
    advantages = pg_rho * (r + g * bootstrap * following - v[:T]) * valid
    return VTrace(targets.astype(np.float32), advantages.astype(np.float32), clipped.astype(np.float32))
