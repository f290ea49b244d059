"""The data-parallel plan: its learners hold bit-identical weights after every step, one
seed gives the same weights in one process and federated, checkpoints resume, and the
plan's mistakes are named."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import DataParallelPlan, PPOConfig, RunConfig, SpaceInfo
from reactorfed.rl.algos.apex.config import ApexDQNConfig
from reactorfed.rl.algos.appo.config import APPOConfig
from reactorfed.rl.algos.ppo.learner import PPOLearner
from reactorfed.rl.plans.gradient_rounds import gradient_learner, mean_gradient

from .conftest import EXAMPLES, load_example

# 2 copies x 16 rows a share, 16 a minibatch: 2 minibatches an epoch, 2 epochs a round
SMALL = PPOConfig(minibatch_size=16, update_epochs=2, total_timesteps=2_000)
LEARNERS = ["DataParallelPlan.learners[0]", "DataParallelPlan.learners[1]"]


def _plan(iterations: int = 3, seed: int = 0, checkpoint: str = "", resume: bool = False,
          num_learners: int = 2) -> DataParallelPlan:
    run = RunConfig(iterations=iterations, checkpoint=checkpoint, resume=resume)
    return DataParallelPlan(SMALL, "CartPole-v1", num_learners=num_learners, samplers_per_learner=1, num_envs=2,
                            fragment_len=16, run=run, seed=seed, trace=True)


def _single(**kw: Any) -> list[dict[str, Any]]:
    results = Environment(fast=True).run(_plan(**kw)).results
    return [dict(results[name]) for name in LEARNERS[: kw.get("num_learners", 2)]]


def test_learners_hold_the_same_weights_after_every_step(tmp_path: Path) -> None:
    ckpt = tmp_path / "dp.pt"
    a, b = _single(iterations=3, checkpoint=str(ckpt))
    # a hash over the weights' digest after each step: equal means equal after every one
    assert a["step_digests_sha256"] == b["step_digests_sha256"]
    assert a["weights_sha256"] == b["weights_sha256"] == PPOLearner.load(ckpt).digest()
    assert a["iterations"] == b["iterations"] == 3
    # env steps count both shares: 3 rounds of 2 learners x 2 copies x 16 rows, less the reset rows
    assert a["env_steps"] == b["env_steps"] and 3 * 64 * 0.8 < a["env_steps"] < 3 * 64
    assert a["updates"] == b["updates"] == 3 * 2 * 2
    assert a["episodes"] == b["episodes"] > 0 and a["mean_return_100"] == b["mean_return_100"]
    assert a["checkpoint"] and not b["checkpoint"]  # only the lead writes it
    other = _single(iterations=3, seed=1)
    assert other[0]["step_digests_sha256"] != a["step_digests_sha256"]


def test_the_steps_are_the_averaged_gradients_of_the_shares() -> None:
    """In one process the learners are at hand: after the run they agree on the parameters
    (not only on a digest), and they moved from the seed's initial weights."""
    main = _plan(iterations=2)
    Environment(fast=True).run(main)
    learners = [m.learner for m in main.learners]
    assert all(isinstance(x, PPOLearner) for x in learners)
    p0, p1 = (x.flat_parameters() for x in learners)  # type: ignore[union-attr]
    assert np.array_equal(p0, p1)
    start = PPOLearner(SpaceInfo.of_env("CartPole-v1"), SMALL, seed=0).flat_parameters()
    assert not np.array_equal(p0, start)


def test_mean_gradient_adds_in_the_order_given() -> None:
    rng = np.random.default_rng(0)
    grads = [(rng.standard_normal(1000) * 10.0 ** rng.integers(-6, 6)).astype(np.float32) for _ in range(3)]
    want = ((grads[0] + grads[1]) + grads[2]) / np.float32(3)
    assert mean_gradient(grads).dtype == np.float32
    assert np.array_equal(mean_gradient(grads), want)
    # float32 addition is not associative: why every learner adds in learner order
    assert not np.array_equal(mean_gradient(grads[::-1]), want)
    assert all(g is not mean_gradient(grads) for g in grads)


def test_one_seed_same_weights_in_one_process_and_federated() -> None:
    single = _single(iterations=3, seed=7)
    run = run_threads(lambda: _plan(iterations=3, seed=7))
    run.raise_errors()
    assert sorted(run.summaries) == ["learners[0]", "learners[1]", "samplers[0]", "samplers[1]"]
    for k, name in enumerate(LEARNERS):
        fed = run.summaries[f"learners[{k}]"].results[name]
        assert fed["env_steps"] == single[k]["env_steps"]
        assert fed["weights_sha256"] == single[k]["weights_sha256"]
        assert fed["step_digests_sha256"] == single[k]["step_digests_sha256"]


def test_resume_carries_on_and_the_learners_still_agree(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "dp.pt")
    first = _single(iterations=2, checkpoint=ckpt, resume=True)
    second = _single(iterations=4, checkpoint=ckpt, resume=True)
    assert [r["resumed_from_iteration"] for r in second] == [2, 2]
    assert second[0]["iterations"] == second[1]["iterations"] == 4
    assert second[0]["env_steps"] == second[1]["env_steps"] > first[0]["env_steps"]
    assert second[0]["weights_sha256"] == second[1]["weights_sha256"] != first[0]["weights_sha256"]
    assert second[0]["step_digests_sha256"] == second[1]["step_digests_sha256"]
    third = _single(iterations=4, checkpoint=ckpt, resume=True)  # finished already: nothing more to do
    assert [(r["iterations"], r["updates"], r["weights_sha256"]) for r in third] == [
        (4, second[0]["updates"], second[0]["weights_sha256"])] * 2


def test_one_learner_is_a_data_parallel_plan_too() -> None:
    (r,) = _single(iterations=2, num_learners=1)
    assert r["iterations"] == 2 and r["updates"] == 2 * 2 * 2  # a share of ~30 transitions: 2 minibatches of 16


def test_layout_mistakes_are_named() -> None:
    for name, kw in (("num_learners", {"num_learners": 0}), ("samplers_per_learner", {"samplers_per_learner": 0}),
                     ("num_envs", {"num_envs": 1.5}), ("fragment_len", {"fragment_len": True})):
        with pytest.raises(ValidationError, match=f"{name} must be an int >= 1"):
            DataParallelPlan(SMALL, "CartPole-v1", **kw)
    with pytest.raises(ValidationError, match="backend must be one of"):
        DataParallelPlan(SMALL, "CartPole-v1", backend="nope")


def test_an_algorithm_without_gradient_steps_is_named() -> None:
    with pytest.raises(ValidationError, match="cannot take an update a gradient step at a time"):
        gradient_learner(ApexDQNConfig(), SpaceInfo.of_env("CartPole-v1"), 0, "Main.learners[0]")  # type: ignore[arg-type]
    # APPO's learner inherits PPO's gradient steps, not its own V-trace update
    with pytest.raises(ValidationError, match="APPOLearner has an update of its own"):
        gradient_learner(APPOConfig(), SpaceInfo.of_env("CartPole-v1"), 0, "Main.learners[0]")
    assert isinstance(gradient_learner(SMALL, SpaceInfo.of_env("CartPole-v1"), 0, "x"), PPOLearner)


def test_example_short_run_shows_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dp = load_example("ppo_data_parallel_cartpole")
    main = dp.Main(dp.Args(ppo=replace(dp.Args().ppo, total_timesteps=1024), checkpoint=str(tmp_path / "p.pt"), progress_every=2))
    Environment(fast=True).run(main)
    assert main.learners[0].result["iterations"] == 4
    err = capsys.readouterr().err
    # the lead alone shows progress and the verdict
    assert err.count("iter     2/4") == 1 and err.count("iter     4/4") == 2 and "return(100)" in err
    assert err.count("result: not solved") == 1


def launched(program: str, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``reactorfed launch`` of the example's ``program``: every reported result, by reactor."""
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'ppo_data_parallel_cartpole.py'}:{program}",
           "--fast", "--no-progress"]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.findall(r"^\[\S+\] reactorfed: result of (\S+): (\{.*\})$", proc.stdout, re.MULTILINE)
    return {name: json.loads(body) for name, body in found}


@pytest.mark.slow
def test_example_launched_matches_single_process(tmp_path: Path) -> None:
    params = {"seed": 5, "progress": False, "trace": True}
    fed = launched("Main", {**params, "ppo.total_timesteps": 768, "checkpoint": tmp_path / "fed.pt"})
    assert sorted(fed) == ["Main.learners[0]", "Main.learners[1]"], fed
    dp = load_example("ppo_data_parallel_cartpole")
    ppo = replace(dp.Args().ppo, total_timesteps=768)
    main = dp.Main(dp.Args(**params, ppo=ppo, checkpoint=str(tmp_path / "single.pt")))
    single = Environment(fast=True).run(main).results
    for name, r in fed.items():
        assert r["iterations"] == 3 and r["env_steps"] == single[name]["env_steps"]
        assert r["weights_sha256"] == single[name]["weights_sha256"] == PPOLearner.load(tmp_path / "fed.pt").digest()
        assert r["step_digests_sha256"] == single[name]["step_digests_sha256"]


def test_building_either_plan_leaves_torch_unimported() -> None:
    """Every federate builds the whole program; a sampler process must not pay for torch:
    the learners, workers and server build theirs in their startup reactions."""
    code = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
import ppo_data_parallel_cartpole as m
m.Main(m.Args(checkpoint=""))
m.ParamServer(m.Args(checkpoint=""))
m.ParamServer(m.Args(checkpoint="", colocate=True))
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
