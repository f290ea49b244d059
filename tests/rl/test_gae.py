"""GAE (Schulman et al. 2016, eq. 16) against hand-computed cases: bootstrapping at the
fragment's end, termination (no bootstrap) and truncation (bootstrap from the final
observation), gymnasium's reset rows, several copies, and the lambda = 0 / 1 limits."""

from __future__ import annotations

import numpy as np
import pytest

from reactorfed.rl.algos.ppo.gae import gae, lambda_returns


def col(*xs: float) -> np.ndarray:
    """One copy's values as a ``(len, 1)`` column."""
    return np.array(xs, dtype=np.float32)[:, None]


def flags(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.bool_)[:, None]


def test_no_episode_end_bootstraps_from_the_last_value() -> None:
    # gamma = lambda = 0.5; deltas: 1 + .5*1 - .5 = 1, 2 + .5*1.5 - 1 = 1.75, 3 + .5*2 - 1.5 = 2.5
    adv = gae(col(1, 2, 3), col(0.5, 1, 1.5, 2), flags(0, 0, 0), flags(0, 0, 0), 0.5, 0.5)
    np.testing.assert_allclose(adv[:, 0], [1.59375, 2.375, 2.5])
    np.testing.assert_allclose(lambda_returns(adv, col(0.5, 1, 1.5, 2))[:, 0], [2.09375, 3.375, 4.0])


def test_termination_stops_the_bootstrap_and_the_sum() -> None:
    # gamma 0.9, lambda 0.8: row 1 terminates (delta 1 + 0 - 2 = -1), row 2 is the reset row
    adv = gae(col(1, 1, 0), col(1, 2, 3, 4), flags(0, 1, 0), flags(0, 0, 0), 0.9, 0.8, resets=flags(0, 0, 1))
    np.testing.assert_allclose(adv[:, 0], [1.8 + 0.72 * -1, -1.0, 0.0], rtol=1e-6)


def test_truncation_bootstraps_from_the_final_observation_but_stops_the_sum() -> None:
    # row 1 is cut by the time limit: delta 1 + 0.9 * V(final obs = 3) - 2 = 1.7
    adv = gae(col(1, 1, 0), col(1, 2, 3, 4), flags(0, 0, 0), flags(0, 1, 0), 0.9, 0.8, resets=flags(0, 0, 1))
    np.testing.assert_allclose(adv[:, 0], [1.8 + 0.72 * 1.7, 1.7, 0.0], rtol=1e-6)


def test_an_episode_end_on_the_last_row() -> None:
    # the fragment's end: V(obs after) = 10 is the bootstrap unless the episode terminated
    assert gae(col(1), col(1, 10), flags(0), flags(0), 0.9, 0.8)[0, 0] == pytest.approx(9.0)
    assert gae(col(1), col(1, 10), flags(1), flags(0), 0.9, 0.8)[0, 0] == pytest.approx(0.0)
    assert gae(col(1), col(1, 10), flags(0), flags(1), 0.9, 0.8)[0, 0] == pytest.approx(9.0)


def test_a_new_episode_after_the_reset_row_is_independent_of_the_old() -> None:
    # rows: 0 terminates, 1 is the reset row, 2 and 3 the next episode; the last bootstrap is 5
    r, v = col(1, 0, 1, 1), col(2, 7, 1, 1, 5)
    adv = gae(r, v, flags(1, 0, 0, 0), flags(0, 0, 0, 0), 1.0, 1.0, resets=flags(0, 1, 0, 0))
    # row 3: 1 + 5 - 1 = 5; row 2: (1 + 1 - 1) + 5 = 6; row 1: reset, 0; row 0: 1 + 0 - 2 = -1
    np.testing.assert_allclose(adv[:, 0], [-1.0, 0.0, 6.0, 5.0])


def test_copies_are_independent_columns() -> None:
    r = np.concatenate([col(1, 1, 0), col(1, 1, 0)], axis=1)
    v = np.concatenate([col(1, 2, 3, 4), col(1, 2, 3, 4)], axis=1)
    term = np.concatenate([flags(0, 1, 0), flags(0, 0, 0)], axis=1)
    trunc = np.concatenate([flags(0, 0, 0), flags(0, 1, 0)], axis=1)
    resets = np.concatenate([flags(0, 0, 1), flags(0, 0, 1)], axis=1)
    adv = gae(r, v, term, trunc, 0.9, 0.8, resets=resets)
    np.testing.assert_allclose(adv[:, 0], [1.08, -1.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(adv[:, 1], [3.024, 1.7, 0.0], rtol=1e-6)


def test_lambda_limits() -> None:
    rng = np.random.default_rng(0)
    T, gamma = 6, 0.9
    r = rng.normal(size=(T, 2)).astype(np.float32)
    v = rng.normal(size=(T + 1, 2)).astype(np.float32)
    none = np.zeros((T, 2), dtype=np.bool_)
    # lambda = 0: the one-step TD error
    np.testing.assert_allclose(gae(r, v, none, none, gamma, 0.0), r + gamma * v[1:] - v[:-1], rtol=1e-5, atol=1e-6)
    # lambda = 1: the discounted return bootstrapped at the end, minus V
    mc = np.zeros_like(r)
    acc = v[T]
    for t in range(T - 1, -1, -1):
        acc = r[t] + gamma * acc
        mc[t] = acc
    np.testing.assert_allclose(gae(r, v, none, none, gamma, 1.0), mc - v[:-1], rtol=1e-5, atol=1e-5)
