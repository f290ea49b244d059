"""V-trace (Espeholt et al. 2018, eq. 1 and section 4.2) against hand-computed cases, the
paper's sum written out term by term, and its on-policy limit (GAE's TD(lambda) returns)."""

from __future__ import annotations

import numpy as np
import pytest

from reactorfed.rl.algos.appo.vtrace import vtrace
from reactorfed.rl.algos.ppo.gae import gae, lambda_returns


def col(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32)[:, None]


def flags(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.bool_)[:, None]


def test_two_off_policy_steps_by_hand() -> None:
    # gamma 0.5, rho = (2, 0.5), rho_bar = c_bar = 1: clipped rho (1, 0.5), c (1, 0.5).
    # t=1: delta = 0.5 * (1 + 0.5*3 - 2) = 0.25, v_1 = 2 + 0.25 = 2.25
    # t=0: delta = 1 * (1 + 0.5*2 - 1) = 1, v_0 = 1 + 1 + 0.5*1*0.25 = 2.125
    # A_0 = 1 * (1 + 0.5*2.25 - 1) = 1.125; A_1 = 0.5 * (1 + 0.5*3 - 2) = 0.25
    out = vtrace(np.log(col(2.0, 0.5)), col(1, 1), col(1, 2, 3), flags(0, 0), flags(0, 0), 0.5)
    np.testing.assert_allclose(out.targets[:, 0], [2.125, 2.25], rtol=1e-6)
    np.testing.assert_allclose(out.advantages[:, 0], [1.125, 0.25], rtol=1e-6)
    np.testing.assert_allclose(out.rhos[:, 0], [1.0, 0.5], rtol=1e-6)


def test_truncation_levels_cap_the_importance_weights() -> None:
    args = (col(1, 1), col(1, 2, 3), flags(0, 0), flags(0, 0), 0.5)
    high = vtrace(np.log(col(10.0, 10.0)), *args)
    one = vtrace(np.log(col(1.0, 1.0)), *args)
    np.testing.assert_allclose(high.targets, one.targets, rtol=1e-6)
    np.testing.assert_allclose(high.advantages, one.advantages, rtol=1e-6)
    # rho_bar raised: the targets follow the larger weights, the trace (c_bar = 1) does not
    loose = vtrace(np.log(col(10.0, 10.0)), *args, rho_bar=100.0)
    # t=1: delta = 10 * 0.5 = 5, v_1 = 7; t=0: delta = 10 * 1 = 10, v_0 = 1 + 10 + 0.5*1*5 = 13.5
    np.testing.assert_allclose(loose.targets[:, 0], [13.5, 7.0], rtol=1e-6)
    # the policy gradient's weight has its own cap
    capped_pg = vtrace(np.log(col(10.0, 10.0)), *args, rho_bar=100.0, pg_rho_bar=1.0)
    np.testing.assert_allclose(capped_pg.advantages[:, 0], [1 + 0.5 * 7 - 1, 1 + 0.5 * 3 - 2], rtol=1e-6)


def _by_the_sum(log_rhos: np.ndarray, r: np.ndarray, v: np.ndarray, gamma: float, lam: float,
                rho_bar: float, c_bar: float) -> np.ndarray:
    """Eq. 1 as written, one copy, no episode end: v_s = V(x_s) + sum_t gamma^(t-s)
    (prod_{i=s}^{t-1} c_i) delta_t, delta_t = min(rho_bar, rho_t) (r_t + gamma V(x_{t+1}) - V(x_t))."""
    rho = np.exp(log_rhos.astype(np.float64))
    T = len(r)
    out = np.empty(T)
    for s in range(T):
        total, prod = 0.0, 1.0
        for t in range(s, T):
            delta = min(rho_bar, rho[t]) * (r[t] + gamma * v[t + 1] - v[t])
            total += gamma ** (t - s) * prod * delta
            prod *= lam * min(c_bar, rho[t])
        out[s] = v[s] + total
    return out


@pytest.mark.parametrize(("lam", "rho_bar", "c_bar"), [(1.0, 1.0, 1.0), (0.9, 2.0, 0.8), (0.5, 0.7, 1.5)])
def test_the_recursion_equals_the_papers_sum(lam: float, rho_bar: float, c_bar: float) -> None:
    rng = np.random.default_rng(7)
    T = 12
    log_rhos = rng.normal(0, 0.7, size=(T, 1)).astype(np.float32)
    r = rng.normal(size=(T, 1)).astype(np.float32)
    v = rng.normal(size=(T + 1, 1)).astype(np.float32)
    none = np.zeros((T, 1), dtype=np.bool_)
    out = vtrace(log_rhos, r, v, none, none, 0.95, lam=lam, rho_bar=rho_bar, c_bar=c_bar)
    want = _by_the_sum(log_rhos[:, 0], r[:, 0], v[:, 0], 0.95, lam, rho_bar, c_bar)
    np.testing.assert_allclose(out.targets[:, 0], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_on_policy_targets_are_gaes_td_lambda_returns(lam: float) -> None:
    """Several copies, with a termination, a truncation and gymnasium's reset rows."""
    rng = np.random.default_rng(3)
    T, k = 9, 3
    r = rng.normal(size=(T, k)).astype(np.float32)
    v = rng.normal(size=(T + 1, k)).astype(np.float32)
    term = np.zeros((T, k), dtype=np.bool_)
    trunc = np.zeros((T, k), dtype=np.bool_)
    resets = np.zeros((T, k), dtype=np.bool_)
    term[3, 0] = True
    resets[4, 0] = True
    trunc[5, 1] = True
    resets[6, 1] = True
    out = vtrace(np.zeros((T, k), dtype=np.float32), r, v, term, trunc, 0.9, lam=lam, resets=resets)
    adv = gae(r, v, term, trunc, 0.9, lam, resets)
    np.testing.assert_allclose(out.targets, lambda_returns(adv, v) * ~resets + v[:T] * resets, rtol=1e-5, atol=1e-5)
    if lam == 1.0:  # A_t = r_t + gamma v_{t+1} - V(x_t) is then GAE's lambda = 1 advantage
        np.testing.assert_allclose(out.advantages, adv, rtol=1e-5, atol=1e-5)


def test_episode_ends_stop_the_trace() -> None:
    # gamma 1, on-policy. Row 0 terminates, row 1 is its reset row, row 2 runs on.
    # v_2 = 5 + (1 + 1*9 - 5) = 10; v_1 = V (reset row) = 100; v_0 = 1 + 0 (terminated)
    out = vtrace(np.zeros((3, 1), np.float32), col(1, 7, 1), col(4, 100, 5, 9), flags(1, 0, 0), flags(0, 0, 0), 1.0,
                 resets=flags(0, 1, 0))
    np.testing.assert_allclose(out.targets[:, 0], [1.0, 100.0, 10.0])
    np.testing.assert_allclose(out.advantages[:, 0], [1 - 4, 0, 1 + 9 - 5])
    # truncated instead: row 0 bootstraps from the final observation's value (row 1's V)
    out = vtrace(np.zeros((3, 1), np.float32), col(1, 7, 1), col(4, 100, 5, 9), flags(0, 0, 0), flags(1, 0, 0), 1.0,
                 resets=flags(0, 1, 0))
    np.testing.assert_allclose(out.targets[:, 0], [101.0, 100.0, 10.0])
    np.testing.assert_allclose(out.advantages[:, 0], [1 + 100 - 4, 0, 1 + 9 - 5])


def test_bad_levels_are_refused_with_the_values() -> None:
    with pytest.raises(ValueError, match="rho_bar=0"):
        vtrace(np.zeros((1, 1), np.float32), col(1), col(0, 0), flags(0), flags(0), 0.9, rho_bar=0.0)
