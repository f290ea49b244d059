"""bench/pbt.py's pure parts: both sides get the same settings, the two PBT logs read into
one form of history (from files a tiny real run of each side wrote: ``data/``), the
comparison of two histories, Ray's judge, and the report's lines. The data came from
bench/pbt.py's quick settings, seed 1: reactorfed's decisions.jsonl (in one process, to 60),
its controller's progress lines as read from ``reactorfed launch`` (to 40), and Tune's
pbt_global.txt (to 40) with each config cut to six of its keys (the full ones hold RLlib's
whole config, 5 kB a line). The runs themselves take
minutes: ``python -m bench.pbt --quick``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from bench.common import Results
from bench.pbt import PEER, Settings, pbt_rule, per_iteration, ray_hp, repeat_figures, report
from bench.pbt_history import (
    compare,
    progress_round,
    ray_history,
    reactorfed_history,
    read_lines,
    tag_index,
)
from bench.pbt_plot import best_curve
from bench.pbt_ray import Judge
from bench.training import CASES

from reactorfed.rl import PPOConfig
from reactorfed.rl.tune import PBTConfig, PPOSpace

from .conftest import load_example

DATA = Path(__file__).parent / "data"


def test_both_sides_get_the_recipe_settings() -> None:
    recipe = load_example("pbt_cartpole").Args()
    hp, rule, ppo = ray_hp(), pbt_rule(), PPOConfig()
    assert recipe.ppo == ppo and recipe.space == PPOSpace()
    # the same sampling work per iteration: 8 copies x 32 steps
    assert recipe.num_samplers * recipe.num_envs == hp["num_envs_per_env_runner"] and hp["num_env_runners"] == 0
    assert recipe.num_steps == hp["rollout_fragment_length"]
    assert per_iteration() == recipe.num_samplers * recipe.num_envs * recipe.num_steps == 256
    for mine, theirs in ((ppo.learning_rate, hp["lr"]), (ppo.gamma, hp["gamma"]), (ppo.gae_lambda, hp["lambda_"]),
                         (ppo.update_epochs, hp["num_epochs"]), (ppo.minibatch_size, hp["minibatch_size"]),
                         (ppo.clip_coef, hp["clip_param"]), (ppo.ent_coef, hp["entropy_coeff"]),
                         (ppo.vf_coef, hp["vf_loss_coeff"]), (ppo.max_grad_norm, hp["grad_clip"]),
                         (list(ppo.hidden), hp["hidden"])):
        assert mine == theirs
    assert not isinstance(hp["lr"], list)  # a constant: PBT mutates it (neither side anneals here)
    assert CASES["ppo-cartpole"].rllib["num_env_runners"] == 2  # (the training bench's own layout is untouched)
    # the same rule and space
    c, s = PBTConfig(), PPOSpace()
    assert (rule["quantile"], rule["resample"], tuple(rule["factors"])) == (
        c.quantile_fraction, c.resample_probability, c.perturbation_factors) == (0.25, 0.25, (0.8, 1.2))
    assert rule["space"] == {"lr": list(s.learning_rate), "clip_param": list(s.clip_coef),
                             "lambda": list(s.gae_lambda)}
    assert Settings().interval == recipe.pbt.perturbation_interval and Settings().target == recipe.pbt.target
    assert Settings().iterations == recipe.pbt.iterations and Settings().population == recipe.pbt.population


def test_ray_history_from_a_real_pbt_global() -> None:
    lines = read_lines(DATA / "pbt_global.txt")
    history = ray_history(lines, ["lr", "clip_param", "lambda"])
    assert len(history) == len([x for x in lines if x.strip()]) >= 1
    raw = json.loads(lines[0])
    first = history[0]
    assert first["trial"] == int(raw[0].split("_")[0]) and first["donor"] == int(raw[1].split("_")[0])
    assert first["trial"] != first["donor"] and first["iteration"] == raw[2]
    assert first["hparams"] == {k: raw[5][k] for k in ("lr", "clip_param", "lambda")}


def test_reactorfed_history_from_a_real_record() -> None:
    rows = [json.loads(x) for x in read_lines(DATA / "decisions.jsonl")]
    history = reactorfed_history(rows)
    exploits = [r for r in rows if r["kind"] == "exploit"]
    assert len(history) == len(exploits) >= 1
    assert history[0] == {"trial": exploits[0]["trial"], "donor": exploits[0]["donor"],
                          "iteration": exploits[0]["iteration"], "hparams": exploits[0]["hparams"]}


def test_tag_index_refuses_what_is_not_a_tag() -> None:
    assert tag_index("12_lr=0.001@perturbed[lr=0.0012]") == 12
    try:
        tag_index("PPO_CartPole-v1_f05a2_00000")
    except ValueError as e:
        assert "trial index" in str(e)
    else:
        raise AssertionError("accepted a trial id for a tag")


def test_compare_finds_the_first_divergence() -> None:
    a = [{"trial": 1, "donor": 0}, {"trial": 2, "donor": 3}, {"trial": 0, "donor": 1}]
    assert compare(a, list(a)) == (True, None)
    assert compare(a, [a[0], {"trial": 2, "donor": 1}, a[2]]) == (False, 1)
    assert compare(a, a[:2]) == (False, 2)  # one ended first
    assert compare([], []) == (True, None)


def test_progress_lines_of_a_real_run() -> None:
    lines = read_lines(DATA / "controller_progress.txt")
    rounds = [r for r in map(progress_round, lines) if r is not None]
    assert rounds[0][0] == 0 and rounds[0][1] is None  # the start
    assert all(r[1] is not None for r in rounds[1:])
    assert rounds[-1][2] and not any(r[2] for r in rounds[:-1])  # the population stops once, at the end
    assert [r[0] for r in rounds] == sorted(r[0] for r in rounds)
    assert progress_round("[trials[0]] iter 20 ...") is None


def test_judge_checks_at_perturbation_iterations_and_hands_the_window_on() -> None:
    j = Judge(target=100.0, interval=5, time_limit_s=60.0)
    for trial in range(2):
        assert math.isnan(j.add(trial, 1, [], 256, wall=10.0 + trial, iter_s=1.0, now=11.0, population=2))
    assert j.start == 10.0  # the later of the first train()s' starts
    j.add(0, 4, [200.0] * 100, 256, 12.0, 1.0, 12.5, 2)
    assert j.reached is None  # above the target, but not a perturbation iteration
    j.add(1, 5, [50.0] * 100, 256, 13.0, 1.0, 13.5, 2)
    assert j.reached is None and j.mean(1) == 50.0
    j.exploit(1, 0)  # trial 1 takes trial 0's weights: and its recent returns
    assert j.mean(1) == 200.0
    j.add(0, 5, [200.0], 256, 14.0, 1.0, 14.5, 2)
    assert j.reached == {"time": 14.5, "env_steps": 5 * 256, "trial": 0, "iteration": 5, "metric": 200.0}
    assert j.done and j.best() == 200.0
    late = Judge(target=1e9, interval=1, time_limit_s=5.0)
    late.add(0, 1, [1.0], 256, 1.0, 1.0, 7.0, 1)
    assert late.timed_out and late.done and late.reached is None


def test_best_curve_takes_each_trials_latest() -> None:
    ray = {"curve": [[1.0, 0, 1, None], [2.0, 0, 2, 30.0], [3.0, 1, 2, 50.0], [4.0, 1, 3, 20.0]]}
    assert best_curve(ray) == [(2.0, 30.0), (3.0, 50.0), (4.0, 30.0)]
    ours = {"curve": [[0.0, 0, None], [5.0, 20, 40.0]]}
    assert best_curve(ours) == [(5.0, 40.0)]


def _run(seconds: float | None, best: float, history: list[Any], record: bool = True) -> dict[str, Any]:
    r: dict[str, Any] = {"reached": seconds is not None, "seconds": seconds,
                         "env_steps": None if seconds is None else 1000, "best_final": best, "history": history}
    if record:
        r.update(record=[json.dumps(h) for h in history], weights_sha256=["ab", "cd"])
    return r


def test_report_says_not_reached_and_where_each_side_repeats(tmp_path: Path) -> None:
    h = [{"trial": 3, "donor": 0, "iteration": 20, "hparams": {"lr": 1e-3}}]
    ours = [_run(100.0, 480.0, h), _run(120.0, 476.0, h), _run(90.0, 490.0, h)]
    theirs = [_run(200.0, 477.0, h, False), _run(None, 300.0, [], False), _run(None, 200.0, [], False)]
    repeats = {"federated": repeat_figures(ours[0], _run(100.0, 480.0, h)),
               PEER: repeat_figures(theirs[0], _run(210.0, 481.5, [dict(h[0], donor=1)], False))}
    assert repeats["federated"]["weights_equal"] and repeats["federated"]["record_equal"]
    res = Results("pbt_test", tmp_path)
    report(res, {"federated": ours, PEER: theirs}, repeats, [1, 2, 3], Settings())
    rows = {r["metric"]: r for r in res.rows}
    sec = rows["seconds_to_475"]
    assert sec["reactorfed"] == 100.0 and sec["peer_value"] == -1.0 and sec["ratio"] is None  # Ray's median: never
    assert sec["judged"] and sec["peer_reached"] == 1
    diff = rows["same_seed_return_diff"]
    assert diff["reactorfed"] == 0.0 and diff["peer_value"] == 4.5 and diff["ratio"] is None
    dec = rows["same_seed_decisions_equal"]
    assert dec["reactorfed"] == 1.0 and dec["peer_value"] == 0.0 and dec["peer_first_divergence"] == 0
    assert dataclasses.asdict(Settings())["target"] == 475.0
