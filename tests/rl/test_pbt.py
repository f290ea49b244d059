"""Population-based training of PPO (examples/rl/pbt_cartpole.py): one seed gives the same
population history (the decisions' record) and bit-identical final weights in one process
and launched (a federate per trial), with one trial slowed on purpose; a run paused at a
round, or with a trial's process killed, resumes from its checkpoints into the run that
was not disturbed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment
from reactorfed.rl.algos.ppo.learner import PPOLearner
from reactorfed.rl.tune import report_path

from . import killed
from .conftest import load_example, make_args, untagged_decisions

# 3 trials of 1 sampler x 2 copies x 32 rows, 2 iterations of 2 epochs; a round after each
PARAMS: dict[str, Any] = {"pbt.population": 3, "pbt.perturbation_interval": 1, "pbt.iterations": 2,
                          "num_samplers": 1, "num_envs": 2, "ppo.update_epochs": 2, "ppo.minibatch_size": 32,
                          "seed": 3, "progress": False}


def run_single(checkpoint: Path, **params: Any) -> dict[str, Any]:
    pbt = load_example("pbt_cartpole")
    main = pbt.Main(make_args(pbt.Args, {**PARAMS, "checkpoint": str(checkpoint), **params}))
    return dict(Environment(fast=True).run(main).results)


def test_pbt_one_process_exploits_and_is_deterministic(tmp_path: Path) -> None:
    a = run_single(tmp_path / "a", slow_trial=0, slow_ms=20)
    b = run_single(tmp_path / "b")
    ctl = a["Main.controller"]
    assert ctl["rounds"] == 2 and ctl["decisions"] == 3 + 4 + 4  # starts; rank + 3 each round
    rows = [json.loads(line) for line in (tmp_path / "a" / "decisions.jsonl").read_text().splitlines()]
    exploits = [r for r in rows if r["kind"] == "exploit"]
    assert len(exploits) == 1 and exploits[0]["iteration"] == 1 and exploits[0]["donor"] != exploits[0]["trial"]
    assert (tmp_path / "a" / "decisions.jsonl").read_text() == (tmp_path / "b" / "decisions.jsonl").read_text()
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
        assert a[key]["trials"][0]["iterations"] == 2
        # the last report's checkpoint holds the final weights
        assert PPOLearner.load(report_path(tmp_path / "a", s, 2)).digest() == a[key]["weights_sha256"]


def test_pbt_paused_at_a_round_resumes_from_its_checkpoints(tmp_path: Path) -> None:
    """Resumed twice from one checkpoint, the same; and the run that was not paused: the
    slots' checkpoints hold their samplers' states."""
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
    whole = run_single(tmp_path / "whole")
    # the same decisions; their tags not (a resumed run's logical time starts again at 0)
    assert untagged_decisions(tmp_path / "run") == untagged_decisions(tmp_path / "whole")
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        assert a[key]["trials"][-1]["iterations"] == 2
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"] == whole[key]["weights_sha256"], key
        assert a[key]["trials"][-1]["env_steps"] == whole[key]["trials"][-1]["env_steps"]
        assert a[key]["trials"][-1]["episodes"] == whole[key]["trials"][-1]["episodes"]


def test_pbt_resumed_without_the_samplers_states_is_another_run(tmp_path: Path) -> None:
    """The control: the same pause with the samplers' states taken out of the slots'
    checkpoints resumes into other weights (so the test above could fail)."""
    import torch

    run_single(tmp_path / "run", pause_after=1)
    for path in (tmp_path / "run").glob("slot*/report*.pt"):
        state = torch.load(path, map_location="cpu", weights_only=False)
        assert "samplers" in state, path
        del state["samplers"]
        torch.save(state, path)
    a = run_single(tmp_path / "run", resume=True)
    whole = run_single(tmp_path / "whole")
    assert any(a[f"Main.trials[{s}].learner"]["weights_sha256"] != whole[f"Main.trials[{s}].learner"]["weights_sha256"]
               for s in range(3))


@pytest.mark.slow
def test_pbt_launched_with_a_slow_trial_killed_ends_with_the_undisturbed_population(tmp_path: Path) -> None:
    """Launched (a federate per trial), one trial slowed on purpose and another's process
    killed (SIGKILL) after the first round, the federation launched again with
    ``resume=true`` (what the operator does when a trial's pod dies): the same decisions,
    the same best trial and every trial's weights and hyperparameters as one undisturbed
    process."""
    params = {**PARAMS, "pbt.perturbation_interval": 2, "pbt.iterations": 8, "slow_trial": 0, "slow_ms": 250}
    ckpt = tmp_path / "fed"
    proc = killed.launch(ckpt, params, "pbt_cartpole.py:Main")
    deadline = time.monotonic() + 120
    while not (ckpt / "decisions.jsonl").exists() or '"rank"' not in (ckpt / "decisions.jsonl").read_text():
        assert proc.poll() is None, "the run ended before it could be disturbed"
        assert time.monotonic() < deadline, "no round in 120 s"
        time.sleep(0.02)
    os.kill(killed.pid_of("trials[2]", ckpt), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "trials[2] was killed by SIGKILL" in out + err, (out + err)[-3000:]
    assert '"complete"' not in (ckpt / "decisions.jsonl").read_text(), "killed after the end"
    again = killed.launch(ckpt, {**params, "resume": True}, "pbt_cartpole.py:Main")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-3000:]
    found = dict(re.findall(r"^\[\S+\] reactorfed: result of (Main\.[^:]+): (\{.*\})$", out, re.MULTILINE))
    whole = run_single(tmp_path / "whole", **{k: v for k, v in params.items() if k in ("pbt.perturbation_interval",
                                                                                       "pbt.iterations")})
    assert len(found) == 4, out[-3000:]
    ctl = json.loads(found["Main.controller"])
    assert ctl["resumed"] and ctl["best_trial"] == whole["Main.controller"]["best_trial"]
    assert untagged_decisions(ckpt) == untagged_decisions(tmp_path / "whole")
    for s in range(3):
        key = f"Main.trials[{s}].learner"
        fed = json.loads(found[key])
        assert fed["weights_sha256"] == whole[key]["weights_sha256"], key
        assert fed["hparams"] == whole[key]["hparams"], key
