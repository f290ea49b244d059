"""Population-based training of Ape-X DQN, each trial on Ape-X's plan
(examples/rl/pbt_apex_cartpole.py: samplers on their own clocks exploring with Ape-X's
ladder of epsilons, building and prioritising n-step transitions; the prioritized replay in
the learner): one seed gives the same population history and bit-identical final weights
in one process and launched (a federate per trial), with one trial slowed on purpose; an
exploit copies the donor's networks, optimizer and counters and leaves the receiver its
own replay; a run paused at a round resumes from checkpoints that hold the replay; ASHA
refilling a slot drops the transitions its samplers took with the previous trial's
weights; what the samplers hold, a search cannot vary."""

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
import pytest
import torch

from reactorfed import Environment, ValidationError
from reactorfed.rl import ApexDQNConfig, ReplayConfig, SpaceInfo, SyncDQNConfig
from reactorfed.rl.algos.apex.replay_learner import ApexReplayLearner
from reactorfed.rl.replay.nstep import NStepBuilder
from reactorfed.rl.rollout import PolicyRunner
from reactorfed.rl.tune import (
    ASHA,
    PBT,
    ApexSpace,
    ASHAConfig,
    Domain,
    IntUniform,
    PBTConfig,
    SearchConfig,
    SearchSpace,
    TuneProgram,
    Uniform,
    check_space,
    report_path,
)
from reactorfed.rl.tune.exchange import load_state, state_bytes

from .conftest import EXAMPLES, load_example, make_args

# 3 trials of 2 samplers x 2 copies x 16 rows, 4 iterations of one fragment and 2 gradient
# steps each (from the 2nd: the replay then holds 32 transitions); a round every 2
PARAMS: dict[str, Any] = {
    "pbt.population": 3,
    "pbt.perturbation_interval": 2,
    "pbt.iterations": 4,
    "num_samplers": 2,
    "num_envs": 2,
    "updates_per_iteration": 2,
    "replay.learning_starts": 32,
    "replay.batch_size": 16,
    "replay.capacity": 2000,
    "dqn.target_update_interval": 3,
    "space.target_update_interval": (2, 6),
    "seed": 3,
    "progress": False,
}
SPACE = SpaceInfo((4,), 2)


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    pbt = load_example("pbt_apex_cartpole")
    main = pbt.Main(make_args(pbt.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "decisions.jsonl").read_text().splitlines()]


def saved_learner(path: Path) -> ApexReplayLearner:
    """The learner a slot's checkpoint holds."""
    state = torch.load(path, weights_only=False)
    learner = ApexReplayLearner(SPACE, state["config_object"], ReplayConfig(capacity=2000), seed=0)
    learner.load_state(state)
    return learner


def test_pbt_over_apex_exploits_at_one_tag_and_repeats(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=0, slow_ms=20)
    b = run_single(tmp_path / "b")
    ctl = a["Main.controller"]
    assert ctl["rounds"] == 2 and ctl["decisions"] == 3 + 4 + 4
    decided = rows(tmp_path / "a")
    exploits = [r for r in decided if r["kind"] == "exploit"]
    assert len(exploits) == 1 and exploits[0]["donor"] != exploits[0]["trial"]
    assert isinstance(exploits[0]["hparams"]["target_update_interval"], int)
    # a round's reports share one tag (after the first weights reach the samplers)
    tags = {r["iteration"]: r["tag"] for r in decided if r["kind"] == "rank"}
    assert sorted(tags) == [2, 4] and 0 < tags[2][0] < tags[4][0]
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (tmp_path / "b" / "decisions.jsonl").read_text()
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        assert a[key]["trials"][0]["iterations"] == 4
        assert a[key]["trials"][0]["env_steps"] > 0
        # the last report's checkpoint holds the final weights (online and target) and the replay
        saved = saved_learner(report_path(tmp_path / "a", s, 2))
        assert saved.digest() == a[key]["weights_sha256"]
        assert len(saved.replay) > 32 and saved.updates == 6


def learner_after(seed: int, iterations: int) -> tuple[ApexReplayLearner, NStepBuilder]:
    """A learner that has learned from ``iterations`` fragments of 2 copies x 32 rows,
    built and prioritised as an Ape-X sampler does."""
    config = ApexDQNConfig(learning_rate=1e-3 * (seed + 1))
    learner = ApexReplayLearner(SPACE, config, ReplayConfig(capacity=500, batch_size=16, learning_starts=32),
                                updates_per_iteration=2, seed=seed)
    runner = PolicyRunner("CartPole-v1", 2, seed=seed)
    actor = config.make_actor(SPACE, seed, (0, 1), 2)
    nstep = NStepBuilder(2, config.n_step, config.gamma)
    for _ in range(iterations):
        actor.load(learner.payload())
        rollout = runner.rollout(32, actor)
        t = nstep.add(rollout)
        t["priority"] = actor.priorities(t)
        learner.learn_transitions(t, rollout.transitions)
    return learner, nstep


def test_an_exploit_takes_the_networks_optimizer_and_counters_not_the_replay() -> None:
    (donor, _), (receiver, _) = learner_after(0, 3), learner_after(1, 2)
    replay_before = np.array(receiver.replay.rows)
    masses_before = receiver.replay.tree.leaves()
    draws_before = receiver.rng.bit_generator.state
    taken = load_state(receiver, state_bytes(donor))
    assert "replay" not in taken and "rng" not in taken and "config" not in taken
    assert receiver.digest() == donor.digest()  # online and target networks
    donor_opt = donor.q.optimizer.state_dict()["state"]
    for k, st in receiver.q.optimizer.state_dict()["state"].items():
        assert torch.equal(st["exp_avg"], donor_opt[k]["exp_avg"])
    assert (receiver.updates, receiver.env_steps) == (donor.updates, donor.env_steps)
    # its own replay, priorities and draws' generator stay
    assert np.array_equal(receiver.replay.rows, replay_before)  # type: ignore[arg-type]
    assert np.array_equal(receiver.replay.tree.leaves(), masses_before)
    assert receiver.rng.bit_generator.state == draws_before
    # and its own learning rate: the optimizer state brought the donor's, the next update sets its own
    receiver.learn_transitions(receiver.replay.rows[:0], 0)  # type: ignore[index]
    assert receiver.q.optimizer.param_groups[0]["lr"] == receiver.config.learning_rate != donor.config.learning_rate


def test_a_checkpoint_of_the_learner_holds_its_replay_and_draws(tmp_path: Path) -> None:
    learner, _ = learner_after(2, 3)
    torch.save(learner.state(), tmp_path / "learner.pt")
    again = ApexReplayLearner(SPACE, learner.config, learner.replay_config, updates_per_iteration=2, seed=9)
    again.load_state(torch.load(tmp_path / "learner.pt", weights_only=False))
    assert again.digest() == learner.digest() and len(again.replay) == len(learner.replay)
    fresh = learner.replay.rows[:0]  # type: ignore[index]
    learner.learn_transitions(fresh, 0)
    again.learn_transitions(fresh, 0)
    assert again.digest() == learner.digest()  # the same draws from the same replay


def test_pbt_over_apex_paused_at_a_round_resumes_with_its_replay(tmp_path: Path) -> None:
    first = run_single(tmp_path / "run", pause_after=1)["Main.controller"]
    assert first["paused"] and first["rounds"] == 1
    head = (tmp_path / "run" / "decisions.jsonl").read_text()
    shutil.copytree(tmp_path / "run", tmp_path / "again")
    paused = [torch.load(report_path(tmp_path / "again", s, 1), weights_only=False)["replay"] for s in range(3)]
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


def test_asha_refilling_an_apex_slot_drops_the_previous_trials_transitions(tmp_path: Path) -> None:
    space = ApexSpace().search_space()

    def run(folder: Path, slow: int) -> dict[str, Any]:
        asha = ASHA(SearchConfig(slots=2, num_samples=3, iterations=4, metric="env_steps"),
                    ASHAConfig(grace_period=2, reduction_factor=2), space, seed=5)
        main = TuneProgram(ApexDQNConfig(), "CartPole-v1", asha, space, plan="apex", num_samplers=2, num_envs=2,
                           fragment_len=16, replay=ReplayConfig(capacity=1000, batch_size=16, learning_starts=32),
                           updates_per_iteration=2, seed=5, decisions=str(folder / "decisions.jsonl"),
                           slow_trial=slow, slow_ms=20)
        return dict(Environment(fast=True).run(main).results)

    a, b = run(tmp_path / "a", 1), run(tmp_path / "b", -1)
    starts = [r for r in rows(tmp_path / "a") if r["kind"] == "start"]
    assert [r["trial"] for r in starts] == [0, 1, 2] and starts[2]["tag"][0] > 0  # trial 2 refills a slot
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (tmp_path / "b" / "decisions.jsonl").read_text()
    trials = {t["trial"]: t for k, r in a.items() if k != "TuneProgram.controller" for t in r["trials"]}
    again = {t["trial"]: t for k, r in b.items() if k != "TuneProgram.controller" for t in r["trials"]}
    assert sorted(trials) == [0, 1, 2]
    assert [trials[t]["weights_sha256"] for t in range(3)] == [again[t]["weights_sha256"] for t in range(3)]
    # the refilled trial dropped what its samplers took with the trial before's weights
    assert trials[2]["stale_fragments"] >= 1
    assert trials[0]["stale_fragments"] == trials[1]["stale_fragments"] == 0


@pytest.mark.parametrize("name, domain", [("n_step", IntUniform(2, 5)), ("gamma", Uniform(0.9, 0.99)),
                                          ("epsilon", Uniform(0.1, 0.5)), ("epsilon_alpha", Uniform(3, 7))])
def test_what_the_apex_samplers_hold_is_refused_by_name(name: str, domain: Domain) -> None:
    # the samplers' actors and n-step builders are built once per slot: under any scheduler
    space = SearchSpace({name: domain})
    with pytest.raises(ValidationError, match=rf"^space\.{name}: ApexDQNConfig\.{name} is read by the samplers"):
        check_space(space, ApexDQNConfig())
    with pytest.raises(ValidationError, match=rf"^space\.{name}"):
        TuneProgram(ApexDQNConfig(), "CartPole-v1", PBT(PBTConfig(population=2), space), space, plan="apex")
    # what the learner alone reads, PBT may perturb
    check_space(ApexSpace(huber_delta=(0.5, 2.0), max_grad_norm=(1.0, 10.0)).search_space(), ApexDQNConfig(),
                explores=True)


def test_the_apex_plan_refuses_another_algorithm() -> None:
    space = ApexSpace(target_update_interval=()).search_space()
    with pytest.raises(ValidationError, match=r"algo: the apex plan trains Ape-X DQN"):
        TuneProgram(SyncDQNConfig(), "CartPole-v1", PBT(PBTConfig(population=2), space, seed=1), space, plan="apex")


def test_pbt_over_apex_launched_with_a_slow_trial_matches_one_process(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'pbt_apex_cartpole.py'}:Main", "--fast",
           "--no-progress"]
    params = {**PARAMS, "checkpoint": tmp_path / "fed", "slow_trial": 2, "slow_ms": 60}
    for k, v in params.items():
        value = ",".join(str(x) for x in v) if isinstance(v, tuple) else v
        cmd += ["--param", f"{k}={value}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = dict(re.findall(r"^\[\S+\] reactorfed: result of (Main\.[^:]+): (\{.*\})$", proc.stdout, re.MULTILINE))
    assert len(found) == 4, proc.stdout[-3000:]
    single = run_single(tmp_path / "one")
    for name, value in found.items():
        fed = json.loads(value)
        if name == "Main.controller":
            assert fed["decisions_sha256"] == single[name]["decisions_sha256"]
        else:
            assert fed["weights_sha256"] == single[name]["weights_sha256"], name
            assert fed["hparams"] == single[name]["hparams"], name
    assert (tmp_path / "fed" / "decisions.jsonl").read_text() == (tmp_path / "one" / "decisions.jsonl").read_text()
