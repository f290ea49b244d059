"""Population-based training of DQN (examples/rl/pbt_dqn_cartpole.py: the synchronous plan
with :class:`~reactorfed.rl.SyncDQNConfig`, its prioritized replay in the learner): one
seed gives the same population history and bit-identical final weights in one process and
launched (a federate per trial), with one trial slowed on purpose; an exploit copies the
donor's networks, optimizer and counters and leaves the receiver its own replay; a run
paused at a round resumes from checkpoints that hold the replay, the same way every time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reactorfed import Environment
from reactorfed.rl import SpaceInfo, SyncDQNConfig
from reactorfed.rl.algos.apex.sync_learner import SyncDQNLearner
from reactorfed.rl.contracts import EPISODES_UNDER_WAY
from reactorfed.rl.rollout import PolicyRunner
from reactorfed.rl.tune import report_path
from reactorfed.rl.tune.exchange import load_state, state_bytes

from .conftest import EXAMPLES, load_example, make_args

# 3 trials of 1 sampler x 2 copies x 32 rows, 4 iterations of 2 gradient steps (from the 2nd)
PARAMS: dict[str, Any] = {
    "pbt.population": 3,
    "pbt.perturbation_interval": 2,
    "pbt.iterations": 4,
    "num_samplers": 1,
    "num_envs": 2,
    "dqn.learning_starts": 64,
    "dqn.batch_size": 32,
    "dqn.capacity": 2000,
    "dqn.updates_per_iteration": 2,
    "dqn.target_update_interval": 3,
    "space.target_update_interval": (2, 6),
    "space.batch_size": (16, 48),
    "seed": 3,
    "progress": False,
}


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    pbt = load_example("pbt_dqn_cartpole")
    main = pbt.Main(make_args(pbt.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def test_pbt_over_dqn_exploits_and_is_deterministic(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=0, slow_ms=20)
    b = run_single(tmp_path / "b")
    ctl = a["Main.controller"]
    assert ctl["rounds"] == 2 and ctl["decisions"] == 3 + 4 + 4
    rows = [
        json.loads(line) for line in (tmp_path / "a" / "decisions.jsonl").read_text().splitlines()
    ]
    exploits = [r for r in rows if r["kind"] == "exploit"]
    assert len(exploits) == 1 and exploits[0]["donor"] != exploits[0]["trial"]
    assert isinstance(exploits[0]["hparams"]["batch_size"], int)
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (
        tmp_path / "b" / "decisions.jsonl"
    ).read_text()
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        assert a[key]["trials"][0]["iterations"] == 4
        # the last report's checkpoint holds the final weights (online and target)
        assert (
            SyncDQNLearner.load(report_path(tmp_path / "a", s, 2)).digest()
            == a[key]["weights_sha256"]
        )


def learner_after(seed: int, iterations: int) -> SyncDQNLearner:
    """A learner that has learned from ``iterations`` rollouts of 2 copies x 32 rows."""
    config = SyncDQNConfig(
        learning_starts=32,
        batch_size=16,
        capacity=500,
        updates_per_iteration=2,
        learning_rate=1e-3 * (seed + 1),
    )
    space = SpaceInfo((4,), 2)
    learner = SyncDQNLearner(space, config, seed=seed)
    runner = PolicyRunner("CartPole-v1", 2, seed=seed)
    actor = config.make_actor(space, seed)
    for _ in range(iterations):
        actor.load(learner.payload())
        learner.learn([runner.rollout(32, actor)])
    return learner


def test_an_exploit_takes_the_networks_optimizer_and_counters_not_the_replay() -> None:
    donor, receiver = learner_after(0, 3), learner_after(1, 2)
    replay_before = receiver.replay.rows.copy()  # type: ignore[union-attr]
    masses_before = receiver.replay.tree.leaves()
    draws_before = receiver.rng.bit_generator.state
    pending_before = [[s[1] for s in steps] for steps in receiver.builders[0].pending]
    taken = load_state(receiver, state_bytes(donor))
    assert "replay" not in taken and "rng" not in taken and "config" not in taken
    assert receiver.digest() == donor.digest()  # online and target networks
    for name in ("q", "target"):
        for key, value in getattr(donor.q, name).state_dict().items():
            assert torch.equal(getattr(receiver.q, name).state_dict()[key], value)
    donor_opt = donor.q.optimizer.state_dict()["state"]
    for k, st in receiver.q.optimizer.state_dict()["state"].items():
        assert torch.equal(st["exp_avg"], donor_opt[k]["exp_avg"])
    assert (receiver.updates, receiver.env_steps) == (donor.updates, donor.env_steps)
    # its own replay, priorities, open n-step returns and draws' generator stay
    assert np.array_equal(receiver.replay.rows, replay_before)  # type: ignore[arg-type]
    assert np.array_equal(receiver.replay.tree.leaves(), masses_before)
    assert [[s[1] for s in steps] for steps in receiver.builders[0].pending] == pending_before
    assert receiver.rng.bit_generator.state == draws_before
    # and its own learning rate: the optimizer state brought the donor's, the next update sets its own
    receiver.learn([])
    assert (
        receiver.q.optimizer.param_groups[0]["lr"]
        == receiver.config.learning_rate
        != donor.config.learning_rate
    )


def test_pbt_over_dqn_paused_at_a_round_resumes_with_its_replay(tmp_path: Path) -> None:
    first = run_single(tmp_path / "run", pause_after=1)["Main.controller"]
    assert first["paused"] and first["rounds"] == 1
    head = (tmp_path / "run" / "decisions.jsonl").read_text()
    shutil.copytree(tmp_path / "run", tmp_path / "again")
    paused = [
        torch.load(report_path(tmp_path / "again", s, 1), weights_only=False)["replay"]
        for s in range(3)
    ]
    a = run_single(tmp_path / "run", resume=True)
    b = run_single(tmp_path / "again", resume=True)
    ctl = a["Main.controller"]
    assert ctl["resumed"] and ctl["rounds"] == 2 and ctl["decisions"] == 11
    assert (tmp_path / "run" / "decisions.jsonl").read_text().startswith(head)
    assert ctl["decisions_sha256"] == b["Main.controller"]["decisions_sha256"]
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["trials"][-1]["iterations"] == 4
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        # the resumed trial's replay still holds what it held at the pause, and more
        end = torch.load(report_path(tmp_path / "run", s, 2), weights_only=False)["replay"]
        held = paused[s]["added"]
        assert end["added"] > held > 0
        assert np.array_equal(end["rows"][:held], paused[s]["rows"][:held])
    # the run that was not paused ends with the same weights (the slots' checkpoints hold
    # their samplers' states and their replays)
    whole = run_single(tmp_path / "whole")
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == whole[key]["weights_sha256"], key


def test_pbt_over_dqn_resumed_without_its_open_returns_is_another_run(tmp_path: Path) -> None:
    """The control: the n-step returns still open taken out of the slots' checkpoints
    (their samplers' states left in), the resumed run learns from other transitions."""
    run_single(tmp_path / "run", pause_after=1)
    for path in (tmp_path / "run").glob("slot*/report*.pt"):
        state = torch.load(path, map_location="cpu", weights_only=False)
        assert any(any(b["pending"]) for b in state[EPISODES_UNDER_WAY]) and "samplers" in state, path
        state[EPISODES_UNDER_WAY] = []
        torch.save(state, path)
    a = run_single(tmp_path / "run", resume=True)
    whole = run_single(tmp_path / "whole")
    assert any(a[f"Main.trials[{s}].learner"]["weights_sha256"] != whole[f"Main.trials[{s}].learner"]["weights_sha256"]
               for s in range(3))


def test_pbt_over_dqn_launched_with_a_slow_trial_matches_one_process(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "reactorfed.cli",
        "launch",
        f"{EXAMPLES / 'pbt_dqn_cartpole.py'}:Main",
        "--fast",
        "--no-progress",
    ]
    params = {**PARAMS, "checkpoint": tmp_path / "fed", "slow_trial": 2, "slow_ms": 60}
    for k, v in params.items():
        value = ",".join(str(x) for x in v) if isinstance(v, tuple) else v
        cmd += ["--param", f"{k}={value}"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = dict(
        re.findall(
            r"^\[\S+\] reactorfed: result of (Main\.[^:]+): (\{.*\})$", proc.stdout, re.MULTILINE
        )
    )
    assert len(found) == 4, proc.stdout[-3000:]
    single = run_single(tmp_path / "one")
    for name, value in found.items():
        fed = json.loads(value)
        if name == "Main.controller":
            assert fed["decisions_sha256"] == single[name]["decisions_sha256"]
        else:
            assert fed["weights_sha256"] == single[name]["weights_sha256"], name
            assert fed["hparams"] == single[name]["hparams"], name
    assert (tmp_path / "fed" / "decisions.jsonl").read_text() == (
        tmp_path / "one" / "decisions.jsonl"
    ).read_text()
