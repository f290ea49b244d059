"""Learning curves: every RL example's learner writes TensorBoard event files with SB3's
scalar names, read back here with TensorBoard's own reader; a log directory that cannot
be written costs training nothing."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from reactorfed.rl.curves import LOGDIR_ENV, Curves, scalar_names

REPO = Path(__file__).resolve().parents[2]


def scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the event files in ``folder``: tag -> [(step, value)]."""
    acc = EventAccumulator(str(folder))
    acc.Reload()
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


def test_scalars_are_read_back_with_sb3s_names(tmp_path: Path) -> None:
    c = Curves(tmp_path, "Main.learner")
    c.write(100, {"rollout/ep_rew_mean": 21.5, **scalar_names({"entropy": 0.6, "approx_kl": 0.01})})
    c.write(200, {"rollout/ep_rew_mean": float("nan")})  # no episode finished yet: nothing written
    c.close()
    got = scalars(tmp_path / "Main.learner")
    assert got["rollout/ep_rew_mean"] == [(100, 21.5)]
    assert got["train/entropy_loss"] == [(100, pytest.approx(-0.6))]  # SB3: minus the entropy
    assert got["train/approx_kl"] == [(100, pytest.approx(0.01))]


def test_a_logdir_that_cannot_be_written_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING, "reactorfed.rl"):
        c = Curves(blocker / "runs", "learner")
        for i in range(10):
            c.write(i, {"time/fps": 1.0})
        c.close()
    assert c.failed
    assert len([r for r in caplog.records if "no learning curves" in r.getMessage()]) == 1


#: each RL example for a few iterations: (program, params)
EXAMPLES = [
    ("qlearning.py:Main", ["iterations=5"]),
    ("dqn_cartpole.py:Main", ["iterations=3", "progress=false", "dqn.learning_starts=100"]),
    ("ppo_cartpole.py:Main", ["ppo.total_timesteps=512", "progress=false"]),
    ("appo_cartpole.py:Main", ["total_timesteps=1024", "progress=false"]),
    ("ppo_data_parallel_cartpole.py:Main", ["ppo.total_timesteps=512", "progress=false"]),
    ("ppo_data_parallel_cartpole.py:ParamServer", ["ppo.total_timesteps=512", "progress=false"]),
    ("apex_dqn_cartpole.py:Main", ["total_timesteps=2048", "progress=false"]),
    ("ppo_minatar.py:Main", ["ppo.total_timesteps=2048", "num_steps=16", "progress=false"]),
    ("seed_ppo_cartpole.py:Main", ["ppo.total_timesteps=512", "progress=false", "device=cpu"]),
    # the tuners: a folder per trial; the multi-agent trainers: a folder per policy
    ("pbt_cartpole.py:Main", ["pbt.population=2", "pbt.perturbation_interval=1", "pbt.iterations=2", "num_samplers=1",
                              "progress=false"]),
    ("pbt_appo_cartpole.py:Main", ["pbt.population=2", "pbt.perturbation_interval=1", "pbt.iterations=2",
                                   "num_samplers=1", "progress=false"]),
    ("pbt_dqn_cartpole.py:Main", ["pbt.population=2", "pbt.perturbation_interval=1", "pbt.iterations=3",
                                  "num_samplers=1", "progress=false"]),
    ("asha_cartpole.py:Main", ["search.slots=2", "search.num_samples=2", "search.iterations=4", "asha.grace_period=1",
                               "num_samplers=1", "progress=false"]),
    ("ippo_spread.py:Main", ["ppo.total_timesteps=40", "ppo.minibatch_size=20", "progress=false"]),
    ("mappo_spread.py:Main", ["mappo.total_timesteps=40", "mappo.minibatch_size=20", "progress=false"]),
]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("program", "params"), EXAMPLES, ids=[p for p, _ in EXAMPLES])
def test_every_rl_example_writes_learning_curves(program: str, params: list[str], tmp_path: Path) -> None:
    args = [f"--param={p}" for p in (*params, f"checkpoint={tmp_path / 'ck.pt'}")]
    env = {**os.environ, LOGDIR_ENV: str(tmp_path / "runs"), "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-m", "reactorfed", "run", f"examples/rl/{program}", "--fast", *args],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=540)
    assert r.returncode == 0, r.stdout + r.stderr
    folders = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert folders, "no learner wrote curves"
    for folder in folders:  # one per learner (the data-parallel plan has two)
        got = scalars(folder)
        assert {"time/fps", "time/iterations", "reactorfed/logical_time_s"} <= set(got), sorted(got)
        assert any(k.startswith("train/") for k in got), sorted(got)
        steps = [s for s, _ in got["time/iterations"]]
        assert steps == sorted(steps) and steps[-1] > 0  # x: env steps, growing


def test_launch_gives_its_federates_the_logdir(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != LOGDIR_ENV}
    r = subprocess.run([sys.executable, "-m", "reactorfed", "launch", "examples/rl/ppo_cartpole.py:Main", "--fast",
                        "--no-progress", "--logdir", str(tmp_path / "tb"), "--param=ppo.total_timesteps=512",
                        "--param=progress=false", f"--param=checkpoint={tmp_path / 'ck.pt'}"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    got = scalars(tmp_path / "tb" / "Main.learner")
    assert "rollout/ep_rew_mean" in got and "train/approx_kl" in got


def test_points_thin_out_as_iterations_grow_and_the_same_every_run() -> None:
    from reactorfed.rl.curves import due

    points = [i for i in range(1, 30_001) if due(i)]
    assert points[:3] == [1, 2, 3] and 199 in points and 201 not in points and 210 in points
    assert len(points) == 199 + 180 + 180 + 11  # 20,000 to 30,000 by 1,000s


def test_a_curve_ends_at_the_last_iteration_even_when_it_was_not_due(tmp_path: Path) -> None:
    from reactorfed.rl.training import RunConfig, TrainingLog

    log = TrainingLog(RunConfig(logdir=str(tmp_path)))
    log.start("Main.learner", iter(range(0, 10**12, 10**6)).__next__)
    for i in range(1, 206):  # points every iteration to 199, then every 10th: 205 is not due
        log.write(i, 10 * i, {"loss": float(i)})
    log.close()
    got = scalars(tmp_path / "Main.learner")["time/iterations"]
    assert got[-2:] == [(2000, 200.0), (2050, 205.0)]
    assert len(got) == 201
