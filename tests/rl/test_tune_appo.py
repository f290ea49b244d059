"""Population-based training of APPO, each trial on the asynchronous plan
(examples/rl/pbt_appo_cartpole.py): the samplers sample on their own clocks, yet one seed
gives the same population history and bit-identical final weights in one process and
launched (a federate per trial), with one trial slowed on purpose; ASHA refilling a slot
drops the fragments its samplers took with the previous trial's weights; an explore of the
learning rate reaches APPO's optimizer, and an exploit does not bring the donor's."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from reactorfed import Environment
from reactorfed.rl import APPOConfig, SpaceInfo
from reactorfed.rl.rollout import PolicyRunner
from reactorfed.rl.tune import ASHA, APPOSpace, ASHAConfig, SearchConfig, TuneProgram
from reactorfed.rl.tune.exchange import load_state, state_bytes

from .conftest import EXAMPLES, load_example, make_args

# 3 trials of 2 samplers x 2 copies x 32 rows, 4 updates of one fragment each; a round every 2
PARAMS: dict[str, Any] = {
    "pbt.population": 3,
    "pbt.perturbation_interval": 2,
    "pbt.iterations": 4,
    "num_samplers": 2,
    "num_envs": 2,
    "appo.update_epochs": 1,
    "appo.minibatch_size": 64,
    "seed": 3,
    "progress": False,
}


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    pbt = load_example("pbt_appo_cartpole")
    main = pbt.Main(make_args(pbt.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "decisions.jsonl").read_text().splitlines()]


def test_pbt_over_async_appo_exploits_at_one_tag_and_repeats(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=0, slow_ms=20)
    b = run_single(tmp_path / "b")
    ctl = a["Main.controller"]
    assert ctl["rounds"] == 2 and ctl["decisions"] == 3 + 4 + 4
    decided = rows(tmp_path / "a")
    exploits = [r for r in decided if r["kind"] == "exploit"]
    assert len(exploits) == 1 and exploits[0]["donor"] != exploits[0]["trial"]
    # a round's reports share one tag (after the first weights reach the samplers)
    tags = {r["iteration"]: r["tag"] for r in decided if r["kind"] == "rank"}
    assert sorted(tags) == [2, 4] and 0 < tags[2][0] < tags[4][0]
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (
        tmp_path / "b" / "decisions.jsonl"
    ).read_text()
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        assert a[key]["trials"][0]["iterations"] == 4


def test_asha_refilling_an_async_slot_repeats(tmp_path: Path) -> None:
    space = APPOSpace(vtrace_lambda=()).search_space()

    def run(folder: Path, slow: int) -> dict[str, Any]:
        asha = ASHA(
            SearchConfig(slots=2, num_samples=3, iterations=4, metric="env_steps"),
            ASHAConfig(grace_period=2, reduction_factor=2),
            space,
            seed=5,
        )
        main = TuneProgram(
            APPOConfig(minibatch_size=64),
            "CartPole-v1",
            asha,
            space,
            plan="async",
            num_samplers=2,
            num_envs=2,
            seed=5,
            decisions=str(folder / "decisions.jsonl"),
            slow_trial=slow,
            slow_ms=20,
        )
        return dict(Environment(fast=True).run(main).results)

    a, b = run(tmp_path / "a", 1), run(tmp_path / "b", -1)
    decided = rows(tmp_path / "a")
    starts = [r for r in decided if r["kind"] == "start"]
    assert [r["trial"] for r in starts] == [0, 1, 2] and starts[2]["tag"][
        0
    ] > 0  # trial 2 refills a slot
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (
        tmp_path / "b" / "decisions.jsonl"
    ).read_text()
    trials = {
        t["trial"]: t for k, r in a.items() if k != "TuneProgram.controller" for t in r["trials"]
    }
    again = {
        t["trial"]: t for k, r in b.items() if k != "TuneProgram.controller" for t in r["trials"]
    }
    assert sorted(trials) == [0, 1, 2]
    assert [trials[t]["weights_sha256"] for t in range(3)] == [
        again[t]["weights_sha256"] for t in range(3)
    ]
    # the refilled trial dropped what its samplers took with the trial before's weights
    # (until its own reached them, weights_delay later); the first trials had none to drop
    assert trials[2]["stale_fragments"] >= 1
    assert trials[0]["stale_fragments"] == trials[1]["stale_fragments"] == 0


def test_pbt_over_async_appo_launched_with_a_slow_trial_matches_one_process(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "reactorfed.cli",
        "launch",
        f"{EXAMPLES / 'pbt_appo_cartpole.py'}:Main",
        "--fast",
        "--no-progress",
    ]
    for k, v in {**PARAMS, "checkpoint": tmp_path / "fed", "slow_trial": 1, "slow_ms": 60}.items():
        cmd += ["--param", f"{k}={v}"]
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


def test_an_explore_reaches_the_appo_optimizer_and_an_exploit_keeps_the_receivers_rate() -> None:
    space = SpaceInfo((4,), 2)
    runner = PolicyRunner("CartPole-v1", 2, seed=1)

    def learner(lr: float, seed: int) -> Any:
        out = APPOConfig(learning_rate=lr, minibatch_size=32).make_learner(space, seed)
        actor = APPOConfig().make_actor(space, seed)
        actor.load(out.payload())
        out.learn([runner.rollout(16, actor)])
        return out

    a, b = learner(1e-3, 1), learner(3e-4, 2)
    a.config = dataclasses.replace(a.config, learning_rate=2e-4)  # explore, between updates
    actor = APPOConfig().make_actor(space, 1)
    actor.load(a.payload())
    a.learn([runner.rollout(16, actor)])
    assert a.optimizer.param_groups[0]["lr"] == 2e-4
    load_state(b, state_bytes(a))  # exploit: a's optimizer state (its rate 2e-4 in it)
    b.learn([runner.rollout(16, actor)])
    assert b.optimizer.param_groups[0]["lr"] == 3e-4


def test_pbt_over_async_appo_paused_at_a_round_resumes_the_same_way_every_time(
    tmp_path: Path,
) -> None:
    first = run_single(tmp_path / "run", pause_after=1)["Main.controller"]
    assert first["paused"] and first["rounds"] == 1 and first["decisions"] == 7
    head = (tmp_path / "run" / "decisions.jsonl").read_text()
    shutil.copytree(tmp_path / "run", tmp_path / "again")
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
