"""bench/training.py: every side of a comparison gets the same hyperparameters (read from
the examples' own ``Args`` and from the settings handed to RLlib and SB3), and the report
judges runs as it says (a run that never reached the threshold is infinitely slow; the
bars). The runs themselves take minutes each: ``python -m bench.training --quick``."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from bench.common import Results
from bench.training import CASES, Case, report, return_at

from .conftest import load_example


def ours(case: Case) -> dict[str, Any]:
    """The example's settings as the benchmark runs it: its Args defaults and the case's
    overrides, a nested config's fields by dotted names (``ppo.learning_rate``), as
    ``--param`` spells them."""
    module = load_example(case.program.split(":")[0].split("/")[-1].removesuffix(".py"))
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(module.Args):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        if dataclasses.is_dataclass(default):
            fields.update({f"{f.name}.{k}": v for k, v in vars(default).items()})
        else:
            fields[f.name] = default
    assert set(case.ours) <= set(fields), f"unknown Args fields: {set(case.ours) - set(fields)}"
    assert case.budget_param in fields
    return {**fields, **case.ours}


def first(value: Any) -> float:
    """A constant, or a schedule's starting value ([[step, value], ...])."""
    return float(value[0][1]) if isinstance(value, list) else float(value)


@pytest.mark.parametrize("name", ["ppo-cartpole", "ppo-acrobot", "ppo-minatar"])
def test_ppo_cases_hand_every_side_the_same_settings(name: str) -> None:
    case = CASES[name]
    a, r, s = ours(case), case.rllib, case.sb3
    assert s is not None
    assert a["env"] == case.env

    def ppo(name: str) -> Any:
        return a[f"ppo.{name}"]

    triples = [  # (reactorfed, RLlib, SB3)
        (ppo("learning_rate"), first(r["lr"]), s["learning_rate"]),
        (ppo("gamma"), r["gamma"], s["gamma"]),
        (ppo("gae_lambda"), r["lambda_"], s["gae_lambda"]),
        (ppo("update_epochs"), r["num_epochs"], s["n_epochs"]),
        (ppo("minibatch_size"), r["minibatch_size"], s["batch_size"]),
        (ppo("clip_coef"), r["clip_param"], s["clip_range"]),
        (ppo("ent_coef"), r["entropy_coeff"], s["ent_coef"]),
        (ppo("vf_coef"), r["vf_loss_coeff"], 0.5),  # SB3's default
        (ppo("max_grad_norm"), r["grad_clip"], 0.5),  # SB3's default
        (list(ppo("hidden")), r["hidden"], s["hidden"]),
        (a.get("ppo.channels"), r["conv_filters"][0][0] if "conv_filters" in r else None, s.get("conv_channels")),
        (a["num_samplers"] * a["num_envs"], r["num_env_runners"] * r["num_envs_per_env_runner"], s["n_envs"]),
        (a["num_steps"], r["rollout_fragment_length"], s["n_steps"]),
    ]
    for mine, rllib, sb3 in triples:
        assert mine == rllib == sb3, triples
    batch = a["num_samplers"] * a["num_envs"] * a["num_steps"]
    assert r["train_batch_size_per_learner"] == batch
    # annealed on every side, over the same horizon, or on none
    assert ppo("anneal_lr") == isinstance(r["lr"], list) == s["anneal"]
    if ppo("anneal_lr"):
        assert r["lr"][-1] == [case.total, 0.0] and ppo("total_timesteps") == case.total
    assert case.budget_param == "ppo.total_timesteps"  # the budget is the horizon PPO anneals over
    # the clip range: annealed where reactorfed's config does (RLlib cannot)
    assert s.get("anneal_clip", s["anneal"]) == ppo("anneal_clip")


def test_appo_case_hands_rllib_the_same_settings_and_gradient_steps_per_sample() -> None:
    case = CASES["appo-cartpole"]
    a, r = ours(case), case.rllib
    appo = {k.removeprefix("appo."): v for k, v in a.items() if k.startswith("appo.")}
    assert (appo["learning_rate"], appo["gamma"], appo["vtrace_lambda"], appo["clip_coef"], appo["ent_coef"],
            appo["vf_coef"], appo["max_grad_norm"], list(appo["hidden"])) == (
        r["lr"], r["gamma"], r["lambda_"], r["clip_param"], r["entropy_coeff"], r["vf_loss_coeff"], r["grad_clip"],
        r["hidden"])
    assert a["num_samplers"] * a["num_envs"] == r["num_env_runners"] * r["num_envs_per_env_runner"]
    assert a["num_steps"] == r["rollout_fragment_length"]
    fragment = a["num_envs"] * a["num_steps"]
    ours_steps = appo["update_epochs"] * math.ceil(fragment / appo["minibatch_size"])  # per fragment
    rllib_steps = fragment // r["train_batch_size_per_learner"] * r["circular_buffer_iterations_per_batch"]
    assert ours_steps == rllib_steps and appo["minibatch_size"] == r["train_batch_size_per_learner"]


def test_dqn_case_hands_rllib_the_same_settings_and_replay_ratio() -> None:
    case = CASES["dqn-cartpole"]
    a, r = ours(case), case.rllib
    assert (a["dqn.learning_rate"], a["dqn.gamma"], a["dqn.n_step"], a["replay.batch_size"], a["dqn.max_grad_norm"],
            list(a["dqn.hidden"]), a["replay.learning_starts"]) == (
        r["lr"], r["gamma"], r["n_step"], r["train_batch_size_per_learner"], r["grad_clip"], r["hidden"],
        r["num_steps_sampled_before_learning_starts"])
    replay = r["replay_buffer_config"]
    assert (a["replay.capacity"], a["replay.alpha"], a["replay.beta0"]) == (
        replay["capacity"], replay["alpha"], replay["beta"])
    steps_per_update = a["num_samplers"] * a["num_envs"] * a["num_steps"] * a["learn_period_ms"] / a["period_ms"]
    assert r["training_intensity"] == a["replay.batch_size"] / steps_per_update  # rows trained per row sampled
    assert r["target_network_update_freq"] == a["dqn.target_update_interval"] * steps_per_update  # RLlib: env steps


def run(reached_at: tuple[float, int] | None, curve: list[tuple[float, int, float]]) -> dict[str, Any]:
    return {"reached": reached_at is not None, "seconds": reached_at[0] if reached_at else None,
            "env_steps": reached_at[1] if reached_at else None, "curve": curve}


def test_return_at_reads_the_curve_and_counts_an_early_stop_at_the_threshold() -> None:
    curve = [(1.0, 10_000, math.nan), (2.0, 20_000, 150.0), (3.0, 30_000, 300.0)]
    assert return_at(run(None, curve), 20_000, 475.0) == 150.0
    assert return_at(run(None, curve), 15_000, 475.0) == 150.0
    assert return_at(run(None, curve[:1]), 5_000, 475.0) is None  # fewer than 100 episodes yet
    assert return_at(run((2.5, 25_000), curve[:2]), 30_000, 475.0) == 475.0  # stopped at the threshold
    assert return_at(run(None, curve), 40_000, 475.0) is None  # ended short of it, not reached


def test_the_report_counts_unreached_runs_as_infinitely_slow_and_judges_the_bars() -> None:
    case = CASES["ppo-cartpole"]
    curve = [(1.0, 30_000, 400.0)]
    runs = {"reactorfed": [run((10.0, 60_000), curve), run((12.0, 70_000), curve), run(None, curve)],
            "rllib": [run((30.0, 90_000), curve), run(None, curve), run(None, curve)],
            "sb3": [run((11.0, 65_000), curve), run((13.0, 66_000), curve), run((9.0, 64_000), curve)]}
    res = Results("training_test")
    report(res, "ppo-cartpole", case, runs, [1, 2, 3], 475.0)
    by = {(r["peer"], r["metric"]): r for r in res.rows}
    ours_s = by[("rllib", "seconds_to_threshold")]
    assert ours_s["reactorfed"] == 12.0  # median of 10, 12, inf
    assert ours_s["peer_value"] == -1.0  # RLlib's median is inf: two of three never reached it
    assert ours_s["meets_bar"] is True and ours_s["reached"] == 2 and ours_s["peer_reached"] == 1
    assert ours_s["ratio"] is None  # no ratio against a median that never reached it
    vs_sb3 = by[("sb3", "seconds_to_threshold")]
    assert vs_sb3["peer_value"] == 11.0 and vs_sb3["meets_bar"] is False  # 11 / 12 < 1
    assert by[("sb3", "env_steps_to_threshold")]["reactorfed"] == 70_000
    assert by[("sb3", "return_100_at_30k_steps")]["within_or_above_peer_spread"] is True


def test_negative_returns_are_compared_by_their_difference() -> None:
    case = CASES["ppo-acrobot"]
    runs = {"reactorfed": [run((8.0, 80_000), [(1.0, 50_000, -120.0)])],
            "rllib": [run(None, [(1.0, 50_000, -400.0)])]}
    res = Results("training_test")
    report(res, "ppo-acrobot", case, runs, [1], -100.0)
    row = next(r for r in res.rows if r["metric"].startswith("return_100"))
    assert row["ratio"] is None and row["difference"] == 280.0 and row["within_or_above_peer_spread"] is True


@pytest.mark.peers
def test_sb3_is_judged_after_each_update_as_reactorfed_is() -> None:
    """SB3's run to a threshold reports the step count of a rollout's end (a multiple of
    ``n_envs * n_steps``), as reactorfed's learner judges after each update, not the step
    within a rollout at which the last 100 episodes first averaged the threshold."""
    from bench.sb3_runner import train

    hp = {**CASES["ppo-cartpole"].sb3, "n_envs": 2, "n_steps": 48, "batch_size": 96, "n_epochs": 2}  # type: ignore[dict-item]
    r = train("CartPole-v1", 1, hp, threshold=15.0, total=20_000)
    assert r["reached"] and r["env_steps"] % 96 == 0, r["env_steps"]
    rollout_ends = [steps for _, steps, _ in r["curve"]]
    assert r["env_steps"] in rollout_ends
