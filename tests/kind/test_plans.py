"""Every plan on the cluster: each manifest of tests/kind/plans.py (examples/k8s/, made
short, CPU requests lowered for 2-core nodes) applied, run to Succeeded, every group on the
nodes it asks for (a GPU group on the GPU-labelled worker, with its fake nvidia.com/gpu);
every reactor's result, read from its pod's log, equals the same program's under
``reactorfed launch`` on this machine with the parameters the pods got (run meanwhile):
the learners' weights bit for bit (one torch thread a process on both sides).

The CI kind suite runs the plans whose shape is new (Ape-X's shards in pods of their own,
data-parallel learners with their samplers, three groups of a program that is not RL),
multi-agent inference (which test_federations.py ran to its end before, uncompared), and
the tuners' and multi-agent training's recipes (PBT and ASHA: a controller and a pod per
trial slot; IPPO and MAPPO); the others carry the marker ``plans``: ``scripts/kind-test.sh -m plans`` runs them
(docs/kubernetes.md, "How it is tested")."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from bench.rf_runner import results_by_reactor

from reactorfed_operator.manifests import Federation
from reactorfed_operator.pods import federation_pods
from reactorfed_operator.spec import parse_spec

from .conftest import NAMESPACE, Kind, record
from .federations import apply, clean_slate, pods, run_to_success, small_requests, tear_down
from .plans import PLANS, Plan, comparable, federation, load, pod_params, start_local

pytestmark = [pytest.mark.kind, pytest.mark.timeout(1200)]


def _cases() -> list[Any]:
    return [pytest.param(p, id=p.name, marks=() if p.in_ci else (pytest.mark.plans,)) for p in PLANS]


@pytest.mark.parametrize("plan", _cases())
def test_plan_runs_in_pods_as_launched_here(operator: Kind, plan: Plan) -> None:
    k = operator
    docs = load(plan)
    fed = small_requests(federation(docs))
    name = fed["metadata"]["name"]
    # the parameters the operator gives every pod (the same pure functions as in its image)
    planned = federation_pods(Federation(name, NAMESPACE, "uid", parse_spec(fed["spec"])), 1)
    params = pod_params(planned[1])
    clean_slate(k, name)
    local_log = Path(tempfile.mkdtemp(prefix=f"plan-{name}-")) / "launch.log"
    local = start_local(docs, params, local_log)  # the same program on this machine, meanwhile
    t0 = time.monotonic()
    apply(k, docs)
    try:
        run_to_success(k, name, 900)
        seconds = time.monotonic() - t0
        ran = pods(k, name)
        assert {p["metadata"]["name"] for p in planned} == set(ran), sorted(ran)
        gpu_nodes = {n for n, v in k.nodes().items()
                     if v["metadata"]["labels"].get("reactorfed.io/accelerator") == "nvidia"}  # fmt: skip
        in_pods: dict[str, dict[str, Any]] = {}
        for pod_name, pod in ran.items():
            gpus = pod["spec"]["containers"][0]["resources"].get("limits", {}).get("nvidia.com/gpu")
            assert (pod["spec"]["nodeName"] in gpu_nodes) == bool(gpus), (pod_name, pod["spec"]["nodeName"])
            assert pod_params(pod) == params or pod["metadata"]["labels"]["reactorfed.io/role"] == "rti"
            in_pods.update(results_by_reactor(k.kubectl("logs", "-n", NAMESPACE, pod_name).stdout))
        record(f"plan_{plan.name}_apply_to_succeeded_s", seconds, "s",
               f"kubectl apply examples/k8s/{plan.manifest} (short: {plan.params}) -> Succeeded, {len(ran)} pods")  # fmt: skip
        assert local.wait(timeout=600) == 0, local_log.read_text()[-3000:]
        here = results_by_reactor(local_log.read_text())
        assert in_pods and comparable(in_pods) == comparable(here), (in_pods, here)
        print(f"plan {plan.name}: {json.dumps(comparable(in_pods))}")
    finally:
        tear_down(k, name, local)
