"""Every plan's manifest in examples/k8s/, made short, and the same program under
``reactorfed launch`` with the same parameters: the table the kind suite
(test_plans.py) and the e2e suite (tests/e2e/test_plans.py) run, and how their results
are compared.

A plan's run is cut to a few iterations by its own parameters (the manifest's budget
lowered, no target to stop early at, no checkpoint); the cluster's and the local run's
results, by reactor, must then be equal in everything but wall-clock figures: the
learners' weights digests bit for bit (every process, in pods and here, runs torch with
the run's thread count, spec.program.threads and --threads, both 1 by default).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "k8s"
IMAGE_EXAMPLES = "/opt/reactorfed/examples/"  # where images/runtime*.Dockerfile copy examples/
#: result fields that measure the machine, not the run
CLOCK = ("seconds", "steps_per_s", "reached_seconds", "wall_s", "fps", "checkpoint")


@dataclass(frozen=True)
class Plan:
    manifest: str
    #: the short run's parameters (on top of the manifest's)
    params: dict[str, str] = field(default_factory=dict)
    #: the width of the scaled group in the short run (None: the manifest's)
    replicas: int | None = None
    #: a shape the CI kind suite runs; the others run with -m kind_plans (docs/kubernetes.md)
    in_ci: bool = False

    @property
    def name(self) -> str:
        return self.manifest.removesuffix(".yaml")


_NO_CHECKPOINT = {"checkpoint": "", "resume": "false", "progress": "false"}
PLANS = [
    Plan("ppo-cartpole.yaml", {"ppo.total_timesteps": "2560", "target_return": "1000", **_NO_CHECKPOINT}),
    Plan("appo-cartpole.yaml", {"total_timesteps": "2560", "target_return": "1000", **_NO_CHECKPOINT}),
    Plan("apex-dqn-cartpole.yaml", {"total_timesteps": "2000", "replay.learning_starts": "500",
                                    "target_return": "1000", **_NO_CHECKPOINT}, in_ci=True),
    Plan("ppo-data-parallel-cartpole.yaml", {"ppo.total_timesteps": "2560", "target_return": "1000",
                                             **_NO_CHECKPOINT}, in_ci=True),
    Plan("ppo-param-server-cartpole.yaml", {"ppo.total_timesteps": "2560", "target_return": "1000",
                                            **_NO_CHECKPOINT}),
    Plan("seed-ppo-cartpole.yaml", {"ppo.total_timesteps": "2560", "target_return": "1000", "device": "cpu",
                                    **_NO_CHECKPOINT}),
    Plan("marl-inference.yaml", {"steps": "200"}, replicas=3, in_ci=True),
    Plan("qlearning.yaml", {"iterations": "20", "checkpoint": "", "resume": "false"}, replicas=2),
    Plan("sensor-fusion.yaml", {"ticks": "300"}, in_ci=True),
    # tuners: two trial slots, a round every 2 iterations (PBT exploits at least once), no target
    Plan("pbt-cartpole.yaml", {"pbt.iterations": "6", "pbt.perturbation_interval": "2", "pbt.target": "1000",
                               **_NO_CHECKPOINT}, replicas=2, in_ci=True),
    Plan("pbt-appo-cartpole.yaml", {"pbt.iterations": "6", "pbt.perturbation_interval": "2", "pbt.target": "1000",
                                    **_NO_CHECKPOINT}, replicas=2),
    Plan("pbt-dqn-cartpole.yaml", {"pbt.iterations": "6", "pbt.perturbation_interval": "2", "pbt.target": "1000",
                                   **_NO_CHECKPOINT}, replicas=2),
    Plan("pbt-apex-cartpole.yaml", {"pbt.iterations": "6", "pbt.perturbation_interval": "2", "pbt.target": "1000",
                                    "replay.learning_starts": "64", "updates_per_iteration": "2", **_NO_CHECKPOINT},
         replicas=2),
    Plan("asha-cartpole.yaml", {"search.num_samples": "3", "search.iterations": "6", "asha.grace_period": "2",
                                "asha.reduction_factor": "2", **_NO_CHECKPOINT}, replicas=2, in_ci=True),
    # multi-agent PPO: two rounds of 200 env steps per environment pod
    Plan("ippo-spread.yaml", {"ppo.total_timesteps": "400", "ppo.minibatch_size": "100", **_NO_CHECKPOINT},
         replicas=1, in_ci=True),
    Plan("mappo-spread.yaml", {"mappo.total_timesteps": "800", "mappo.minibatch_size": "100", **_NO_CHECKPOINT},
         in_ci=True),
]


def load(plan: Plan) -> list[dict[str, Any]]:
    """The plan's manifest, made short: its documents, the federation's spec changed."""
    docs = [d for d in yaml.safe_load_all((EXAMPLES / plan.manifest).read_text()) if d]
    fed = federation(docs)
    spec = fed["spec"]
    spec["program"].setdefault("params", {}).update(plan.params)
    if plan.params.get("checkpoint") == "":
        spec.pop("checkpoint", None)
    if plan.replicas is not None:
        spec.setdefault("samplers", {})["replicas"] = plan.replicas
    return docs


def federation(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "ReactorFederation")


def local_entrypoint(docs: list[dict[str, Any]]) -> str:
    entry = str(federation(docs)["spec"]["program"]["entrypoint"])
    assert entry.startswith(IMAGE_EXAMPLES), entry
    return str(REPO / "examples" / entry[len(IMAGE_EXAMPLES):])


def launch_command(docs: list[dict[str, Any]], params: dict[str, str]) -> list[str]:
    """``reactorfed launch`` of the program with ``params`` (the ones its pods got)."""
    return [sys.executable, "-m", "reactorfed.cli", "launch", local_entrypoint(docs), "--fast",
            *[a for kv in sorted(params.items()) for a in ("--param", f"{kv[0]}={kv[1]}")]]  # fmt: skip


def start_local(docs: list[dict[str, Any]], params: dict[str, str], log: Path) -> subprocess.Popen[str]:
    """The local run, started (it runs while the cluster runs the same program); one torch
    thread per process, as the pods with requests under a core have."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with log.open("w") as out:
        return subprocess.Popen(launch_command(docs, params), stdout=out, stderr=subprocess.STDOUT, text=True,
                                cwd=REPO, env=env)  # fmt: skip


def pod_params(pod: dict[str, Any]) -> dict[str, str]:
    """The ``--param`` pairs of a pod's command (every pod of an incarnation has the same)."""
    cmd = pod["spec"]["containers"][0]["command"]
    return dict(cmd[i + 1].split("=", 1) for i, arg in enumerate(cmd) if arg == "--param")


def comparable(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Results by reactor without the wall-clock figures."""
    return {fqn: {k: v for k, v in r.items() if k not in CLOCK and not k.endswith("_s")} for fqn, r in results.items()}


def record_line(plan: Plan, where: str, seconds: float, results: dict[str, Any]) -> str:
    return json.dumps({"plan": plan.name, "where": where, "apply_to_succeeded_s": round(seconds, 1),
                       "results": sorted(results)})  # fmt: skip
