"""Bad tuner settings are refused before anything runs, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import ValidationError
from reactorfed.rl import PPOConfig
from reactorfed.rl.tune import (
    LogUniform,
    PBTConfig,
    SearchConfig,
    SearchSpace,
    Uniform,
    check_space,
)

from .conftest import load_example, make_args


def pbt_main(**params: Any) -> Any:
    pbt = load_example("pbt_cartpole")
    return pbt.Main(make_args(pbt.Args, {"checkpoint": "", "progress": False, **params}))


def asha_main(**params: Any) -> Any:
    asha = load_example("asha_cartpole")
    return asha.Main(make_args(asha.Args, {"checkpoint": "", "progress": False, **params}))


@pytest.mark.parametrize(("params", "field"), [
    # an empty search space: every range left out
    ({"space.learning_rate": (), "space.clip_coef": (), "space.gae_lambda": ()}, "space"),
    ({"space.learning_rate": (1e-2, 1e-4)}, "space.learning_rate"),  # low above high
    ({"space.learning_rate": (0.0, 1e-2)}, "space.learning_rate"),  # log-uniform from 0
    ({"space.clip_coef": (0.1, 0.2, 0.3)}, "space.clip_coef"),  # not a pair
    ({"pbt.metric": "episode_reward_mean"}, "pbt.metric"),  # a metric the trials do not report
    ({"pbt.population": 20}, "pbt.population"),  # more than the bank's maximum (16)
    ({"pbt.population": 5, "max_trials": 4}, "pbt.population"),
    ({"pbt.population": 1}, "pbt.population"),
    ({"pbt.quantile_fraction": 0.75}, "pbt.quantile_fraction"),
    ({"pbt.perturbation_interval": 0}, "pbt.perturbation_interval"),
    ({"pbt.iterations": 0}, "pbt.iterations"),
    ({"slow_ms": -1}, "slow_ms"),
])
def test_pbt_recipe_refuses(params: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=rf"^{field}\b"):
        pbt_main(**params)


@pytest.mark.parametrize(("params", "field"), [
    ({"search.metric": "loss"}, "search.metric"),
    ({"search.slots": 17}, "search.slots"),
    ({"search.num_samples": 0}, "search.num_samples"),
    ({"search.kind": "bayes"}, "search.kind"),
    ({"asha.grace_period": 300}, "asha.grace_period"),  # no rung below the budget (270)
    ({"asha.reduction_factor": 1}, "asha.reduction_factor"),
    ({"space.gae_lambda": (0.99, 0.99)}, "space.gae_lambda"),
])
def test_asha_recipe_refuses(params: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=rf"^{field}\b"):
        asha_main(**params)


def test_a_hyperparameter_the_config_lacks_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"^space\.lr: PPOConfig has no field 'lr'"):
        check_space(SearchSpace({"lr": LogUniform(1e-4, 1e-2)}), PPOConfig())
    with pytest.raises(ValidationError, match=r"^space\.hidden: .*not a number"):
        check_space(SearchSpace({"hidden": Uniform(1, 2)}), PPOConfig())


def test_configs_check_alone() -> None:
    with pytest.raises(ValidationError, match=r"^pbt\.mode"):
        PBTConfig(mode="best").check()  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"^search\.iterations"):
        SearchConfig(iterations=0).check()
    with pytest.raises(ValidationError, match=r"^space: the search space is empty"):
        SearchSpace({})
