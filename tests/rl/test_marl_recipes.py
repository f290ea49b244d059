"""The multi-agent recipes (examples/rl/ippo_spread.py, mappo_spread.py): short runs with
progress, checkpoints and resume, the mapping set by dotted parameters, and the IPPO recipe
under ``reactorfed launch`` (a process per agent's policy) ending with the weights one
process computes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment
from reactorfed.cli.loader import load_program
from reactorfed.errors import ValidationError
from reactorfed.rl.algos.mappo import MAPPOLearner
from reactorfed.rl.algos.ppo.learner import PPOLearner

from .conftest import EXAMPLES, load_example, make_args

#: 2 rounds of 2 copies x 10 rows, episodes of 8 steps
SHORT = {"num_envs": 2, "num_steps": 10, "max_cycles": 8, "seed": 3}


def test_ippo_recipe_progress_checkpoints_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ippo = load_example("ippo_spread")
    params = {**SHORT, "checkpoint": str(tmp_path), "progress_every": 1, "resume": True, "ppo.total_timesteps": 40,
              "ppo.minibatch_size": 40, "ppo.update_epochs": 2}
    first = Environment(fast=True).run(ippo.Main(make_args(ippo.Args, params))).results
    err = capsys.readouterr().err
    assert "round     1  env steps       18  episodes      2  team return(100)" in err
    assert err.count("round     2  env steps       36  episodes      4") == 1
    shared = first["Main.policies[0]"]
    assert shared["iterations"] == 2 and PPOLearner.load(tmp_path / "shared.pt").digest() == shared["weights_sha256"]
    second = Environment(fast=True).run(ippo.Main(make_args(ippo.Args, {**params, "ppo.total_timesteps": 60}))).results
    assert second["Main.policies[0]"]["resumed_from_iteration"] == 2 and second["Main.policies[0]"]["iterations"] == 3


def _program(name: str, params: dict[str, object]) -> Any:
    """The recipe's ``Main`` as the command line builds it (``--param`` texts)."""
    return load_program(f"{EXAMPLES / name}.py:Main", {k: str(v) for k, v in params.items()})


def test_mappo_recipe_with_a_policy_per_agent(tmp_path: Path) -> None:
    main = _program("mappo_spread", {**SHORT, "checkpoint": tmp_path, "progress": False, "mapping.kind": "per_agent",
                                     "mappo.total_timesteps": 40, "mappo.minibatch_size": 20,
                                     "mappo.update_epochs": 1})
    results = Environment(fast=True).run(main).results
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent_0.pt", "agent_1.pt", "agent_2.pt"]
    for p, agent in enumerate(("agent_0", "agent_1", "agent_2")):
        r = results[f"Main.policies[{p}]"]
        assert r["iterations"] == 2 and r["env_steps"] == 36
        assert MAPPOLearner.load(tmp_path / f"{agent}.pt").digest() == r["weights_sha256"]


def test_a_mapping_mistake_on_the_command_line_is_named() -> None:
    with pytest.raises(ValidationError, match=r"mapping\.groups: no group places 'agent_2'"):
        _program("ippo_spread", {"mapping.kind": "groups", "mapping.groups": "pair:agent_0+agent_1"})


@pytest.mark.slow
def test_ippo_recipe_launched_a_process_per_group_matches_one_process(tmp_path: Path) -> None:
    """``reactorfed launch`` with a policy per group: the RTI, the environment and two learner
    processes; every policy's weights as one process computes them. (A process per agent is
    the same program with a learner more: test_multi_agent runs it federated in threads.)"""
    params: dict[str, object] = {**SHORT, "progress": False, "ppo.total_timesteps": 40, "ppo.minibatch_size": 40,
                                 "ppo.update_epochs": 2, "mapping.kind": "groups",
                                 "mapping.groups": "pair:agent_0+agent_2,solo:agent_1"}
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'ippo_spread.py'}:Main", "--fast",
           "--no-progress"]
    for k, v in {**params, "checkpoint": tmp_path / "fed"}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = dict(re.findall(r"^\[policies\[\d\]\] reactorfed: result of Main\.(policies\[\d\]): (\{.*\})$",
                            proc.stdout, re.MULTILINE))
    assert sorted(found) == ["policies[0]", "policies[1]"], proc.stdout[-3000:]
    fed = {k: json.loads(v) for k, v in found.items()}
    assert PPOLearner.load(tmp_path / "fed" / "solo.pt").digest() == fed["policies[1]"]["weights_sha256"]
    assert fed["policies[0]"]["env_steps"] == 2 * fed["policies[1]"]["env_steps"] == 2 * 36

    single = Environment(fast=True).run(_program("ippo_spread", {**params, "checkpoint": tmp_path / "one"})).results
    for name, r in fed.items():
        assert r["iterations"] == 2 and r["weights_sha256"] == single[f"Main.{name}"]["weights_sha256"]


def test_the_environment_federate_never_imports_torch() -> None:
    """Building the MAPPO program (every federate builds all of it) and the environment
    federate's work (its copies, a numpy actor per policy, MAPPO's rows, packed rollouts)
    leave torch unimported: only the learners need it."""
    code = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
import numpy as np
import mappo_spread
from reactorfed.rl.envs import MultiAgentRunner
from reactorfed.rl.plans import central_rows
from reactorfed.rl.rollout import pack_rollout
from reactorfed.rl import PolicyMapping
main = mappo_spread.Main(mappo_spread.Args(checkpoint="", num_envs=2, mapping=PolicyMapping("per_agent")))
s = main.samplers[0]
s.runner = MultiAgentRunner(s.task, s.num_envs, seed=1)
s.actors = [s.algo.make_actor(s.spaces[p], p) for p in range(3)]
for actor in s.actors:
    actor.load(np.zeros(actor.size, dtype=np.float32))
packed = [pack_rollout(r) for r in central_rows(s.runner.rollout(4, s.act))]
assert packed[0].shape == (5, 2), packed[0].shape
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
