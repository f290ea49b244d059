"""PPO's clipped surrogate objective (Schulman et al. 2017, eq. 7) and value loss against
hand-computed cases: the probability ratio inside and outside the clip range, for both
signs of the advantage, values and gradients."""

from __future__ import annotations

import math

import pytest
import torch

from reactorfed.rl.algos.ppo.learner import clipped_surrogate_loss, value_loss

EPS = 0.2

# (ratio, advantage, the per-sample objective min(rho A, clip(rho) A), whether its gradient flows)
CASES = [
    (1.1, 1.0, 1.1, True),  # inside the range: unclipped
    (0.9, -1.0, -0.9, True),
    (1.5, 1.0, 1.2, False),  # A > 0, ratio above 1 + eps: clipped, no gradient
    (0.5, 1.0, 0.5, True),  # A > 0, ratio below 1 - eps: the unclipped term is smaller, it stays
    (1.5, -1.0, -1.5, True),  # A < 0, ratio above 1 + eps: the unclipped term is smaller, it stays
    (0.5, -1.0, -0.8, False),  # A < 0, ratio below 1 - eps: clipped, no gradient
    (1.5, 2.0, 2.4, False),  # the clip scales with the advantage
]


@pytest.mark.parametrize(("ratio", "adv", "objective", "flows"), CASES)
def test_clipped_surrogate_one_sample(ratio: float, adv: float, objective: float, flows: bool) -> None:
    old = torch.tensor([-0.7])
    logp = (old + math.log(ratio)).requires_grad_(True)
    loss = clipped_surrogate_loss(logp, old, torch.tensor([adv]), EPS)
    assert loss.item() == pytest.approx(-objective, rel=1e-6)
    loss.backward()
    assert logp.grad is not None
    # d(-rho A)/d logp = -rho A where the unclipped term is the minimum, else 0
    expected = -ratio * adv if flows else 0.0
    assert logp.grad.item() == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_clipped_surrogate_is_the_batch_mean() -> None:
    ratios = torch.tensor([c[0] for c in CASES])
    advs = torch.tensor([c[1] for c in CASES])
    old = torch.zeros(len(CASES))
    loss = clipped_surrogate_loss(torch.log(ratios), old, advs, EPS)
    assert loss.item() == pytest.approx(-sum(c[2] for c in CASES) / len(CASES), rel=1e-6)


def test_value_loss_plain_and_clipped() -> None:
    v, ret, old = torch.tensor([1.0, 1.0]), torch.tensor([2.0, 0.5]), torch.tensor([0.0, 0.0])
    assert value_loss(v, ret, old, None).item() == pytest.approx((1.0 + 0.25) / 2)
    # clipped to old + 0.2: errors (0.2 - 2)^2 = 3.24 and (0.2 - 0.5)^2 = 0.09; the larger of each pair
    assert value_loss(v, ret, old, 0.2).item() == pytest.approx((3.24 + 0.25) / 2)
