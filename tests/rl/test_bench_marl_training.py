"""bench/marl_training.py: both sides get the same settings (the examples' own ``Args`` with
the benchmark's ``--param`` values against what RLlib is handed), both sides' returns mean
the same figure (an episode's return per agent), and one judge reads both curves; RLlib's
tuned variant gets RLlib's own settings and rows of its own. The runs themselves take
minutes: ``python -m bench.marl_training --quick``."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any

import pytest
from bench.common import Results
from bench.marl_judge import (
    first_crossing,
    judged,
    median_curve,
    ours_curve,
    return_at,
    warmup_steps,
)
from bench.marl_rllib import PEER, TUNED, TUNED_PEER, tuned_hp
from bench.marl_settings import CASES, SETTINGS, TASK, example_settings, rllib_hp, settings_differ
from bench.marl_training import (
    QUICK_THRESHOLD,
    THRESHOLD,
    TOTAL,
    case_label,
    parse_args,
    report,
    wants_tuned,
)
from bench.rllib_marl_runner import build_marl_config, per_agent_return

from reactorfed.rl.plans import PolicyTrainer


@pytest.mark.parametrize("name", list(CASES))
def test_both_sides_get_the_same_settings(name: str) -> None:
    case = CASES[name]
    ours = example_settings(case, seed=1, total=10_000)
    assert ours[f"{case.algo}.total_timesteps"] == 10_000 and ours["curve"] is True
    assert settings_differ(ours, case.algo, rllib_hp()) == {}
    assert ours[f"{case.algo}.hidden"] == SETTINGS["hidden"]  # (the configs' default network, not passed)
    assert not ours[f"{case.algo}.anneal_lr"] and not ours[f"{case.algo}.anneal_clip"]
    assert ours[f"{case.algo}.clip_vloss"] is None and rllib_hp()["vf_clip_param"] >= 1e9  # no value clipping
    assert ours["num_agents"] == TASK["num_agents"] and ours["max_cycles"] == TASK["max_cycles"]
    assert ours["task"] == "simple_spread" and ours["mapping.kind"] == "shared"


def test_a_setting_that_differs_is_named() -> None:
    with pytest.raises(ValueError, match="not parameters of its Args"):
        example_settings(dataclasses.replace(CASES["ippo"], algo="mappo"))
    ours = example_settings(CASES["ippo"])
    theirs = {**rllib_hp(), "lr": 5e-4, "train_batch_size_per_learner": 400}
    differ = settings_differ(ours, "ppo", theirs)
    assert differ == {"learning_rate": (7e-4, 5e-4), "rows_per_round": (200, 400)}
    assert settings_differ({**ours, "num_envs": 4}, "ppo", rllib_hp())["envs"] == (4, 8)


def test_the_networks_are_tanh_mlps_of_the_settings_size() -> None:
    import torch

    from reactorfed.rl import MAPPOConfig, PPOConfig
    from reactorfed.rl.contracts import SpaceInfo

    space = SpaceInfo((18,), 5)
    for config, sp in ((PPOConfig(), space), (MAPPOConfig(), dataclasses.replace(space, state_dim=57))):
        model = config.make_learner(sp, 0).model
        acts = {type(m) for m in model.modules() if not isinstance(m, torch.nn.Linear | torch.nn.Sequential)}
        assert torch.nn.Tanh in acts and torch.nn.ReLU not in acts
        widths = {m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)}
        assert set(SETTINGS["hidden"]) <= widths and config.hidden == SETTINGS["hidden"]
    assert SETTINGS["activation"] == rllib_hp()["activation"] == "tanh"


def test_both_sides_report_an_episode_s_return_per_agent() -> None:
    """reactorfed's shared-policy learner counts each episode once, as its agents' mean
    return; RLlib's callback divides the team's return by the agents: the same figure."""
    agents = [SimpleNamespace(episode_returns=r) for r in ((-10.0, -20.0), (-12.0, -21.0), (-14.0, -22.5))]
    two_samplers = agents + agents
    ours = list(PolicyTrainer.episode_returns(SimpleNamespace(agents=3), two_samplers))  # type: ignore[arg-type]
    team = [sum(a.episode_returns[e] for a in agents) for e in range(2)]
    assert ours == [per_agent_return(t, 3) for t in team] * 2 == [-12.0, -21.166666666666668] * 2
    with pytest.raises(ValueError, match="num_agents"):
        per_agent_return(-1.0, 0)


def test_the_judge_reads_both_curves_alike() -> None:
    warm = warmup_steps()
    assert warm == (100 + 8) * 25  # (100 episodes can have ended, every copy's current one aside)
    curve = [(1.0, 600, -29.0), (2.0, warm - 1, -19.0), (3.0, warm, math.nan), (4.0, warm + 200, -21.0),
             (5.0, warm + 400, -19.5), (6.0, 20_000, -18.0)]
    assert first_crossing(curve, -20.0, warm) == (5.0, warm + 400)  # (the early -19 is before the window fills)
    assert first_crossing(curve, -17.0, warm) is None
    assert return_at(curve, 20_000) == -18.0 and return_at(curve, warm) is None and return_at(curve, 30_000) is None
    j = judged(curve, -20.0, 20_000, time_limit=100.0)
    assert j == {"reached": True, "seconds": 5.0, "env_steps": warm + 400, "return_at": -18.0, "final_env_steps": 20_000}
    # past the time limit nothing counts: not reached, no return at 20k
    cut = judged(curve, -20.0, 20_000, time_limit=4.5)
    assert cut == {"reached": False, "seconds": None, "env_steps": None, "return_at": None, "final_env_steps": warm + 200}
    # reactorfed's shared learner counts agent rows: 3 a step
    assert ours_curve([[1.5, 1800, -25.0], [2.5, 3600, None]], 3)[1] == (2.5, 1200, pytest.approx(math.nan, nan_ok=True))


def test_the_report_gives_no_ratio_when_a_side_never_reaches_the_threshold(tmp_path: Any) -> None:
    res = Results("marl_training_test", tmp_path)
    ours = [{"reached": True, "seconds": s, "env_steps": n, "return_at": r}
            for s, n, r in ((30.0, 50_000, -21.0), (40.0, 60_000, -22.0), (35.0, 55_000, -20.5))]
    theirs = [{"reached": False, "seconds": None, "env_steps": None, "return_at": r} for r in (-26.0, -25.0, None)]
    report(res, "ippo", ours, theirs, [1, 2, 3], -20.0, 20_000)
    rows = {r["metric"]: r for r in res.rows}
    assert set(rows) == {"seconds_to_threshold", "env_steps_to_threshold", "return_at_20k_steps"}
    sec = rows["seconds_to_threshold"]
    assert sec["reactorfed"] == 35.0 and sec["peer_value"] == -1.0 and sec["ratio"] is None
    assert sec["reached"] == 3 and sec["peer_reached"] == 0 and sec["peer"] == "rllib" and sec["better"] == "lower"
    ret = rows["return_at_20k_steps"]
    assert ret["reactorfed"] == -21.0 and ret["peer_value"] == -25.5 and ret["difference"] == 4.5
    assert ret["ratio"] is None and ret["peer_per_seed"] == [-26.0, -25.0, None]
    both = Results("marl_training_test", tmp_path)
    report(both, "mappo", ours, ours[::-1], [1, 2, 3], -20.0, 20_000)
    assert {r["metric"]: r["ratio"] for r in both.rows}["seconds_to_threshold"] == 1.0


def test_the_median_curve_reads_each_run_as_a_step_function() -> None:
    a = [(0.0, 0, -30.0), (1.0, 100, -20.0), (2.0, 200, -10.0)]
    b = [(0.0, 0, -28.0), (1.0, 100, -26.0), (2.0, 150, -24.0)]
    c = [(0.0, 0, -29.0), (1.0, 100, -25.0), (2.0, 300, math.nan), (3.0, 300, -5.0)]
    xs, ys = median_curve([a, b, c], axis=1, points=4)
    assert xs == [0.0, 50.0, 100.0, 150.0]  # (up to where the shortest run ends)
    assert ys == [-29.0, -29.0, -25.0, -24.0]
    assert median_curve([a, []], axis=1) == ([], [])


def test_the_arguments_make_a_plan(tmp_path: Any) -> None:
    plan = parse_args([])
    assert plan.seeds == [1, 2, 3] and plan.cases == ["ippo", "mappo"] and plan.tuned == "auto"
    assert (plan.threshold, plan.total, plan.time_limit, plan.bench) == (THRESHOLD, TOTAL, 100.0, "marl_training")
    plan = parse_args(["--seeds", "4,5", "--cases", "mappo", "--tuned", "never", "--time-limit", "60",
                       "--out", str(tmp_path / "m.jsonl")])
    assert (plan.seeds, plan.cases, plan.tuned, plan.time_limit) == ([4, 5], ["mappo"], "never", 60.0)
    assert (plan.out_dir, plan.bench) == (tmp_path, "m")
    quick = parse_args(["--quick", "--out", str(tmp_path)])  # (one seed, a low bar, every side)
    assert quick.seeds == [1] and quick.threshold == QUICK_THRESHOLD and quick.total < TOTAL
    assert quick.tuned == "always" and quick.bench == "marl_training_quick" and quick.out_dir == tmp_path
    assert parse_args(["--quick", "--tuned", "never"]).tuned == "never"
    with pytest.raises(SystemExit):
        parse_args(["--cases", "ippo,qmix"])
    with pytest.raises(SystemExit):
        parse_args(["--tuned", "sometimes"])


def test_the_tuned_variant_runs_when_rllib_s_median_never_reached() -> None:
    reached, missed = {"seconds": 40.0}, {"seconds": None}
    assert wants_tuned("auto", [missed, missed, reached]) and wants_tuned("auto", [missed])
    assert not wants_tuned("auto", [reached, missed, reached])
    assert wants_tuned("always", [reached]) and not wants_tuned("never", [missed])


def test_the_tuned_settings_are_rllib_s_own_on_the_benchmark_s_layout() -> None:
    """RLlib's multi_agent_cartpole_ppo example's settings, one env runner as the shared
    settings have, and nothing of the shared settings besides (RLlib's defaults)."""
    hp = tuned_hp()
    assert hp == {**TUNED, "num_env_runners": 1} and rllib_hp()["num_env_runners"] == 1
    assert {k: hp[k] for k in ("hidden", "activation", "vf_share_layers", "lr", "num_epochs", "vf_loss_coeff")} == {
        "hidden": [32], "activation": "linear", "vf_share_layers": True, "lr": 3e-4, "num_epochs": 6,
        "vf_loss_coeff": 0.01}
    shared_only = set(rllib_hp()) - {"hidden", "activation", "vf_share_layers", "lr", "num_epochs", "vf_loss_coeff",
                                     "num_env_runners", "num_envs_per_env_runner", "rollout_fragment_length"}
    assert not shared_only & set(hp)  # (gamma, lambda, clip, minibatch, batch...: RLlib's defaults)
    assert settings_differ(example_settings(CASES["ippo"]), "ppo", hp)["vf_share_layers"] == (False, True)


@pytest.mark.peers
def test_rllib_s_configs_carry_the_settings_they_are_handed() -> None:
    from ray.rllib.algorithms.ppo import PPOConfig

    defaults = PPOConfig()
    tuned = build_marl_config(TASK, 1, tuned_hp())
    model = tuned.model_config
    assert model["fcnet_hiddens"] == [32] and model["fcnet_activation"] == "linear" and model["vf_share_layers"]
    assert (tuned.lr, tuned.num_epochs, tuned.vf_loss_coeff) == (3e-4, 6, 0.01)
    assert (tuned.num_env_runners, tuned.num_envs_per_env_runner) == (1, 2)
    for name in ("train_batch_size_per_learner", "minibatch_size", "lambda_", "clip_param", "entropy_coeff",
                 "use_kl_loss", "vf_clip_param", "grad_clip", "gamma"):
        assert getattr(tuned, name) == getattr(defaults, name), name
    shared = build_marl_config(TASK, 1, rllib_hp())
    assert shared.model_config["fcnet_hiddens"] == [64, 64] and not shared.model_config["vf_share_layers"]
    assert (shared.lr, shared.minibatch_size, shared.train_batch_size_per_learner) == (7e-4, 200, 200)


def test_the_tuned_variant_has_rows_of_its_own(tmp_path: Any) -> None:
    res = Results("marl_training_test", tmp_path)
    ours = [{"reached": True, "seconds": 30.0, "env_steps": 50_000, "return_at": -21.0}]
    tuned = [{"reached": True, "seconds": 60.0, "env_steps": 40_000, "return_at": -23.0}]
    report(res, "ippo", ours, tuned, [1], -22.0, 20_000, peer=TUNED_PEER)
    report(res, "ippo", ours, tuned, [1], -22.0, 20_000)
    by_peer = {(r["peer"], r["metric"]): r for r in res.rows}
    row = by_peer[(TUNED_PEER, "seconds_to_threshold")]
    assert row["case"] == case_label("ippo", TUNED_PEER) != case_label("ippo", PEER)
    assert "RLlib's tuned settings (multi_agent_cartpole_ppo)" in row["case"] and row["ratio"] == 2.0
    assert row["peer_settings"]["source"].endswith("multi_agent_cartpole_ppo.py") and row["peer_settings"]["lr"] == 3e-4
    assert "tuned" in row["why"] and "peer_settings" not in by_peer[(PEER, "seconds_to_threshold")]
    assert by_peer[(PEER, "seconds_to_threshold")]["case"] == (
        "ippo federated: IPPO (shared policy) vs RLlib PPO (shared policy), simple_spread N=3")  # (as before)
