"""A disturbed run ends where an undisturbed one does: stopped at a checkpoint (paused, or a
process killed) and resumed with ``resume=true``, a plan that promises it ends with the
weights of the run that was never stopped (docs/training.md, "Resuming: what a checkpoint
holds")."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from reactorfed import Environment

from . import killed
from .conftest import load_example, make_args

# 2 samplers x 2 copies x 16 rows a round, 2 epochs of minibatches of 32: a few ms an update
PPO = {"num_samplers": 2, "num_envs": 2, "num_steps": 16, "seed": 5, "progress": False,
       "ppo.update_epochs": 2, "ppo.minibatch_size": 32}


def _ppo(checkpoint: Path, rounds: int, **params: Any) -> dict[str, Any]:
    ppo = load_example("ppo_cartpole")
    args = make_args(ppo.Args, {**PPO, "ppo.total_timesteps": 64 * rounds, "checkpoint": str(checkpoint),
                                "checkpoint_every": 3, **params})
    return dict(Environment(fast=True).run(ppo.Main(args)).results["Main.learner"])


def test_sync_ppo_paused_twice_ends_with_the_undisturbed_weights(tmp_path: Path) -> None:
    whole = _ppo(tmp_path / "whole.pt", 10)
    ckpt = tmp_path / "paused.pt"
    first = _ppo(ckpt, 10, pause_after=4)
    assert first["iterations"] == 4 and first["weights_sha256"] != whole["weights_sha256"]
    assert len(torch.load(ckpt, weights_only=False)["samplers"]["states"]) == 2, "the samplers' states are kept"
    second = _ppo(ckpt, 10, resume=True, pause_after=3)
    assert (second["resumed_from_iteration"], second["iterations"]) == (4, 7)
    last = _ppo(ckpt, 10, resume=True)
    assert (last["resumed_from_iteration"], last["iterations"]) == (7, 10)
    for key in ("weights_sha256", "env_steps", "episodes", "mean_return_100"):
        assert last[key] == whole[key], key


def test_sync_ppo_resumed_without_the_samplers_states_is_another_run(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The samplers' states are what makes the difference (the test above could not pass
    without them): a checkpoint stripped of them resumes with fresh environments, says so,
    and ends elsewhere."""
    whole = _ppo(tmp_path / "whole.pt", 8)
    ckpt = tmp_path / "paused.pt"
    _ppo(ckpt, 8, pause_after=4)
    state = torch.load(ckpt, weights_only=False)
    del state["samplers"]
    torch.save(state, ckpt)
    resumed = _ppo(ckpt, 8, resume=True)
    assert resumed["iterations"] == 8 and resumed["weights_sha256"] != whole["weights_sha256"]
    assert "holds no state of the 2 samplers at iteration 4" in caplog.text


def test_sync_ppo_resumed_after_reaching_its_target_does_nothing_more(tmp_path: Path) -> None:
    """A run that stopped at its target stays stopped: a resume (a pod restarted as the run
    ends) neither trains on nor changes the weights."""
    ckpt = tmp_path / "solved.pt"
    # a policy that barely learns stays near random, whose CartPole episodes last about 22
    # steps: 100 of them end within about 35 rounds, whatever the seed's streams
    slow = {"target_return": 10.0, "ppo.learning_rate": 1e-7}
    first = _ppo(ckpt, 80, **slow)
    assert first["reached"] and first["iterations"] < 80
    again = _ppo(ckpt, 80, resume=True, **slow)
    assert again["iterations"] == first["iterations"] and again["weights_sha256"] == first["weights_sha256"]
    assert again["reached_iteration"] == first["reached_iteration"]


# -- federated, with real process kills ---------------------------------------------------


def _launch(checkpoint: Path, params: dict[str, Any], program: str = "ppo_cartpole.py:Main") -> subprocess.Popen[str]:
    return killed.launch(checkpoint, params, program)


def _checkpoint_iteration(checkpoint: Path) -> int:
    """The iteration of the checkpoint (written by a rename: always whole); 0: none yet."""
    if not checkpoint.exists():
        return 0
    return int(torch.load(checkpoint, weights_only=False)["iteration"])


def _kill_after_checkpoint(proc: subprocess.Popen[str], federate: str, checkpoint: Path, beyond: int) -> str:
    """Once ``checkpoint`` is past iteration ``beyond``, SIGKILL ``federate``'s process; the
    launch fails naming it. Its output."""
    deadline = time.monotonic() + 120
    while _checkpoint_iteration(checkpoint) <= beyond:
        assert proc.poll() is None, "the run ended before it could be disturbed"
        assert time.monotonic() < deadline, "no checkpoint in 120 s"
        time.sleep(0.02)
    os.kill(killed.pid_of(federate, checkpoint), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and f"{federate} was killed by SIGKILL" in out + err, (out + err)[-3000:]
    return out


def _result(out: str) -> dict[str, Any]:
    found = re.findall(r"^\[learner\] reactorfed: result of Main\.learner: (\{.*\})$", out, re.MULTILINE)
    assert len(found) == 1, out[-3000:]
    return dict(json.loads(found[0]))


@pytest.mark.slow
def test_sync_ppo_federated_learner_and_sampler_killed_ends_with_the_undisturbed_weights(tmp_path: Path) -> None:
    """The learner killed (SIGKILL) after a checkpoint, the federation launched again with
    ``resume=true``; then a sampler killed, and launched again: the weights, env steps and
    episodes are those of one undisturbed process (which the federated run equals:
    test_ppo_launch.py)."""
    rounds = 40
    params = {**PPO, "ppo.total_timesteps": 64 * rounds, "checkpoint_every": 2}
    whole = _ppo(tmp_path / "whole.pt", rounds, checkpoint_every=2)
    ckpt = tmp_path / "fed.pt"
    _kill_after_checkpoint(_launch(ckpt, params), "learner", ckpt, beyond=0)
    killed_at = _checkpoint_iteration(ckpt)
    _kill_after_checkpoint(_launch(ckpt, {**params, "resume": True}), "samplers[1]", ckpt, beyond=killed_at)
    again_at = _checkpoint_iteration(ckpt)
    assert killed_at < again_at < rounds
    proc = _launch(ckpt, {**params, "resume": True})
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    last = _result(out)
    assert last["resumed_from_iteration"] == again_at and last["iterations"] == rounds
    for key in ("weights_sha256", "env_steps", "episodes", "mean_return_100"):
        assert last[key] == whole[key], key


# -- DQN (the qlearning example: the synchronized Q-learning plan) ------------------------


def _dqn(checkpoint: Path, resume: bool = False, pause_after: int = 0) -> dict[str, Any]:
    qlearning = load_example("qlearning")
    args = qlearning.Args(num_samplers=2, iterations=12, seed=3, fragment_len=50, checkpoint=str(checkpoint),
                          resume=resume, pause_after=pause_after)
    return dict(Environment(fast=True).run(qlearning.Main(args)).results["Main.learner"])


@pytest.mark.parametrize("strip", [None, "replay", "samplers"])
def test_dqn_stopped_and_resumed_ends_with_the_undisturbed_weights(tmp_path: Path, strip: str | None) -> None:
    """Stopped after 5 of 12 iterations (of 100 steps; DQN learns from the 1,000th) and
    resumed: the same weights, steps and returns; without the replay's contents or the
    samplers' states in the checkpoint, other weights (each part is needed)."""
    whole = _dqn(tmp_path / "whole.pt")
    ckpt = tmp_path / "stopped.pt"
    assert _dqn(ckpt, pause_after=5)["iterations"] == 5
    if strip is not None:
        state = torch.load(ckpt, weights_only=False)
        del state[strip]
        torch.save(state, ckpt)
    resumed = _dqn(ckpt, resume=True)
    assert resumed["resumed_from_iteration"] == 5 and resumed["iterations"] == 12
    if strip is None:
        for key in ("weights_sha256", "env_steps", "episodes", "mean_return_100"):
            assert resumed[key] == whole[key], key
    else:
        assert resumed["weights_sha256"] != whole["weights_sha256"]


# -- the other plans, one process --------------------------------------------------------

#: (example, program, small settings, rounds in all, whether a resume is exact): a few ms a round
PLANS: dict[str, tuple[str, str, dict[str, Any], int, bool]] = {
    "minatar": ("ppo_minatar", "Main", {"num_envs": 2, "num_steps": 16, "ppo.update_epochs": 1,
                                        "ppo.total_timesteps": 6 * 64}, 6, True),
    "data_parallel": ("ppo_data_parallel_cartpole", "Main", {"ppo.total_timesteps": 6 * 256, "ppo.update_epochs": 2},
                      6, True),
    "param_server": ("ppo_data_parallel_cartpole", "ParamServer",
                     {"ppo.total_timesteps": 6 * 256, "ppo.update_epochs": 2}, 6, True),
    "appo": ("appo_cartpole", "Main", {"total_timesteps": 6 * 128}, 6, False),
    "apex": ("apex_dqn_cartpole", "Main", {"dqn.hidden": (16,), "replay.learning_starts": 100,
                                          "total_timesteps": 100 + 6 * 8}, 6, False),
    "seed": ("seed_ppo_cartpole", "Main", {"ppo.total_timesteps": 6 * 256, "ppo.update_epochs": 2}, 6, True),
    "ippo": ("ippo_spread", "Main", {"num_envs": 2, "num_steps": 10, "max_cycles": 8, "ppo.total_timesteps": 6 * 20,
                                     "ppo.minibatch_size": 40, "ppo.update_epochs": 2}, 6, False),
}


def _plan(plan: str, checkpoint: Path, **params: Any) -> dict[str, dict[str, Any]]:
    """Every learner's result (those with weights) of ``plan``'s example, small."""
    name, program, small, _, _ = PLANS[plan]
    example = load_example(name)
    args = make_args(example.Args, {"seed": 3, "progress": False, **small, "checkpoint": str(checkpoint), **params})
    results = Environment(fast=True).run(getattr(example, program)(args)).results
    return {k: dict(v) for k, v in results.items() if isinstance(v, dict) and "weights_sha256" in v}


def _checkpoint(plan: str, folder: Path) -> Path:
    return folder / ("ckpt" if plan == "ippo" else "ckpt.pt")  # (IPPO: a folder of a file per policy)


@pytest.mark.parametrize("plan", [pytest.param(p, marks=[pytest.mark.slow] if p == "minatar" else [])  # (a CNN: ~30 s)
                                  for p in sorted(PLANS) if PLANS[p][4]])
def test_a_plan_paused_and_resumed_ends_with_the_undisturbed_weights(tmp_path: Path, plan: str) -> None:
    """Paused after 3 of 6 rounds and resumed: every learner ends with the weights, steps
    and returns of the run that was never paused."""
    rounds = PLANS[plan][3]
    whole = _plan(plan, _checkpoint(plan, tmp_path / "whole"))
    ckpt = _checkpoint(plan, tmp_path / "run")
    first = _plan(plan, ckpt, pause_after=3)
    assert first and all(r["iterations"] == 3 for r in first.values()), first
    resumed = _plan(plan, ckpt, resume=True)
    assert resumed.keys() == whole.keys()
    for key, r in resumed.items():
        assert (r["resumed_from_iteration"], r["iterations"]) == (3, rounds), key
        for field in ("weights_sha256", "env_steps", "episodes", "mean_return_100"):
            assert r[field] == whole[key][field], (key, field)


@pytest.mark.parametrize("plan", sorted(p for p in PLANS if not PLANS[p][4]))
def test_a_plan_that_promises_less_resumes_the_same_way_every_time(tmp_path: Path, plan: str) -> None:
    """Paused after 3 of 6 rounds, resumed twice from copies of one checkpoint: both
    resumed runs carry the iteration count on and end with the same weights (not those of
    an undisturbed run: docs/training.md says what each of these plans leaves out)."""
    rounds = PLANS[plan][3]
    ckpt = _checkpoint(plan, tmp_path / "run")
    first = _plan(plan, ckpt, pause_after=3)
    assert first and all(r["iterations"] == 3 for r in first.values()), first
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "run", copy)
    a = _plan(plan, ckpt, resume=True)
    b = _plan(plan, copy / ckpt.name, resume=True)
    assert a.keys() == b.keys() == first.keys()
    for key, r in a.items():
        assert (r["resumed_from_iteration"], r["iterations"]) == (3, rounds), key
        assert r["weights_sha256"] == b[key]["weights_sha256"], key


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["data_parallel", "seed"])
def test_a_plan_paused_and_resumed_federated_ends_with_the_undisturbed_weights(tmp_path: Path, plan: str) -> None:
    """Launched (a process per federate), paused after 3 of 6 rounds and launched again
    with ``resume=true``: the samplers' states cross the federation to the learner (the
    lead) and back; the weights are those of one undisturbed process."""
    name, program, small, rounds, _ = PLANS[plan]
    whole = _plan(plan, tmp_path / "whole.pt")
    ckpt = tmp_path / "fed.pt"
    params = {"seed": 3, "progress": False, **small}
    for more in ({"pause_after": 3}, {"resume": True}):
        proc = _launch(ckpt, {**params, **more}, f"{name}.py:{program}")
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
    lead = "learners[0]" if plan == "data_parallel" else "learner"
    found = re.findall(rf"^\[{re.escape(lead)}\] reactorfed: result of Main\.{re.escape(lead)}: (\{{.*\}})$", out, re.MULTILINE)
    assert len(found) == 1, out[-3000:]
    last = json.loads(found[0])
    assert (last["resumed_from_iteration"], last["iterations"]) == (3, rounds)
    assert last["weights_sha256"] == whole[f"Main.{lead}"]["weights_sha256"]
