"""Bad tuner settings are refused before anything runs, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import ValidationError
from reactorfed.rl import PPOConfig, SyncDQNConfig
from reactorfed.rl.tune import (
    PBT,
    IntUniform,
    LogUniform,
    PBTConfig,
    SearchConfig,
    SearchSpace,
    TuneProgram,
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


def recipe_main(name: str, **params: Any) -> Any:
    recipe = load_example(name)
    return recipe.Main(make_args(recipe.Args, {"checkpoint": "", "progress": False, **params}))


@pytest.mark.parametrize("recipe", ["pbt_appo_cartpole", "pbt_dqn_cartpole"])
@pytest.mark.parametrize(("params", "field"), [
    (None, "space"),  # an empty search space: every range left out
    ({"space.learning_rate": (3e-3, 1e-4)}, "space.learning_rate"),  # low above high
    ({"space.learning_rate": (-1.0, 1e-2)}, "space.learning_rate"),  # log-uniform below 0
    ({"pbt.metric": "episode_reward_mean"}, "pbt.metric"),  # a metric the trials do not report
    ({"pbt.population": 17}, "pbt.population"),  # more than the bank's maximum (16)
    ({"pbt.population": 3, "max_trials": 2}, "pbt.population"),
])
def test_the_new_slot_recipes_refuse(recipe: str, params: dict[str, Any] | None, field: str) -> None:
    if params is None:
        params = {f"space.{name}": () for name in vars(load_example(recipe).Args().space)}
    with pytest.raises(ValidationError, match=rf"^{field}\b"):
        recipe_main(recipe, **params)


def test_the_dqn_recipe_refuses_a_fraction_for_an_int() -> None:
    with pytest.raises(ValidationError, match=r"^space\.batch_size: an int range"):
        recipe_main("pbt_dqn_cartpole", **{"space.batch_size": (32.5, 64)})


def test_what_a_trial_cannot_change_is_refused() -> None:
    dqn = SyncDQNConfig()
    # read only by the samplers' actors: a new value would reach the learner alone
    with pytest.raises(ValidationError, match=r"^space\.epsilon: SyncDQNConfig\.epsilon is read by the samplers"):
        check_space(SearchSpace({"epsilon": Uniform(0.01, 0.2)}), dqn)
    # held by the replay: PBT cannot perturb it, a search can vary it from trial to trial
    gamma = SearchSpace({"gamma": Uniform(0.9, 0.99)})
    with pytest.raises(ValidationError, match=r"^space\.gamma: .*PBT cannot perturb it"):
        check_space(gamma, dqn, explores=True)
    check_space(gamma, dqn, explores=False)
    with pytest.raises(ValidationError, match=r"^space\.gamma"):
        TuneProgram(dqn, "CartPole-v1", PBT(PBTConfig(population=2), gamma), gamma)
    # an int field given a float range
    with pytest.raises(ValidationError, match=r"^space\.batch_size: SyncDQNConfig\.batch_size is an int"):
        check_space(SearchSpace({"batch_size": Uniform(16, 64)}), dqn)
    check_space(SearchSpace({"batch_size": IntUniform(16, 64)}), dqn)


def test_a_plan_the_tuner_lacks_is_refused() -> None:
    space = SearchSpace({"learning_rate": LogUniform(1e-4, 1e-2)})
    with pytest.raises(ValidationError, match=r"^plan: must be sync, async or apex"):
        TuneProgram(PPOConfig(), "CartPole-v1", PBT(PBTConfig(population=2), space), space,
                    plan="seed")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"^algo: the apex plan trains Ape-X DQN"):
        TuneProgram(PPOConfig(), "CartPole-v1", PBT(PBTConfig(population=2), space), space, plan="apex")
    with pytest.raises(ValidationError, match=r"^period: must be an int >= 1"):
        TuneProgram(PPOConfig(), "CartPole-v1", PBT(PBTConfig(population=2), space), space, plan="async", period=0)


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
