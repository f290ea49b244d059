"""Federate groups on a real control plane: a federation of three groups applied, its pods
planned and scheduled (a GPU group on the GPU node, the others on CPU nodes), `kubectl
scale` acting on the group marked scale, a group's width changed while it runs, and a spec
the API server accepts but a pod would not (refused by the operator before any pod)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import NAMESPACE, rfed
from .controlplane import CPU_NODES, GPU_NODE, ControlPlane, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

NAME = "groups"
REFUSED = sorted((Path(__file__).parent / "refused").glob("*.yaml"))


def manifest(learners: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "reactorfed.io/v1alpha1",
        "kind": "ReactorFederation",
        "metadata": {"name": NAME},
        "spec": {
            "program": {"image": "reactorfed-runtime:e2e", "entrypoint": "three_groups:Main"},
            "samplers": {"replicas": 3},
            "federateGroups": [
                {"name": "learners", "bank": "learners", "widthParam": "num_learners", "replicas": learners,
                 "gpus": 1, "image": "reactorfed-runtime-gpu:e2e", "checkpoint": True},
                {"name": "actors", "bank": "actors", "widthParam": "num_actors", "scale": True,
                 "resources": {"requests": {"cpu": "100m"}}},
                {"name": "env", "federate": "env", "env": [{"name": "RENDER", "value": "0"}]},
            ],
        },
    }  # fmt: skip


def pods(cp: ControlPlane, name: str = NAME) -> dict[str, dict[str, Any]]:
    items = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={name}")["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["labels"].get("reactorfed.io/role") != "discovery"}  # federate pods (and the RTI's)


def running(cp: ControlPlane, actors: int, learners: int, incarnation: int) -> dict[str, dict[str, Any]] | None:
    status = rfed(cp, NAME).get("status") or {}
    if status.get("phase") != "Running" or status.get("incarnation") != incarnation:
        return None
    current = pods(cp)
    expected = {f"{NAME}-rti", f"{NAME}-env"} | {f"{NAME}-actors-{i}" for i in range(actors)} \
        | {f"{NAME}-learners-{i}" for i in range(learners)}  # fmt: skip
    if set(current) != expected or any(p["status"].get("phase") != "Running" for p in current.values()):
        return None
    return current


def _apply(cp: ControlPlane, obj: dict[str, Any]) -> None:
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(obj))


def _wait(cp: ControlPlane, what: str, actors: int, learners: int, incarnation: int) -> dict[str, dict[str, Any]]:
    try:
        return wait_for(what, lambda: running(cp, actors, learners, incarnation), 90)
    except TimeoutError:
        print(cp.log_tail("operator", 60))
        print(cp.kubectl("get", "pods,rfed", "-n", NAMESPACE, "-o", "wide", check=False).stdout)
        raise


def test_groups_are_planned_and_placed(installed: ControlPlane, operator: subprocess.Popen[bytes]) -> None:
    cp = installed
    _apply(cp, manifest())
    current = _wait(cp, "the three groups to run", 3, 2, 1)
    roles = {n: p["metadata"]["labels"]["reactorfed.io/role"] for n, p in current.items()}
    assert roles == {f"{NAME}-rti": "rti", f"{NAME}-env": "env", **{f"{NAME}-actors-{i}": "actors" for i in range(3)},
                     **{f"{NAME}-learners-{i}": "learners" for i in range(2)}}  # fmt: skip
    for name, pod in current.items():
        node = pod["spec"]["nodeName"]
        assert (node == GPU_NODE) if "learners" in name else (node in CPU_NODES), f"{name} on {node}"
    learner = current[f"{NAME}-learners-1"]["spec"]["containers"][0]
    assert learner["image"] == "reactorfed-runtime-gpu:e2e" and learner["resources"]["limits"]["nvidia.com/gpu"] == "1"
    cmd = learner["command"]
    assert cmd[cmd.index("--federate") + 1] == "learners[1]"
    assert {"num_actors=3", "num_learners=2"} <= set(cmd)
    env = {e["name"]: e.get("value") for e in current[f"{NAME}-env"]["spec"]["containers"][0]["env"]}
    assert env["RENDER"] == "0"
    status = rfed(cp, NAME)["status"]
    assert [(g["name"], g["desired"], g["ready"]) for g in status["groups"]] == [
        ("learners", 2, 2), ("actors", 3, 3), ("env", 1, 1)]
    assert status["samplers"]["readyText"] == "3/3"
    assert status["samplers"]["selector"] == f"reactorfed.io/federation={NAME},reactorfed.io/role=actors"
    assert status["federates"]["desired"] == 7


def test_kubectl_scale_acts_on_the_scaled_group(installed: ControlPlane) -> None:
    cp = installed
    cp.kubectl("scale", "rfed", NAME, "-n", NAMESPACE, "--replicas", "2")
    current = _wait(cp, "the actors to be 2 wide", 2, 2, 2)  # a fixed bank: a new incarnation
    cmd = current[f"{NAME}-env"]["spec"]["containers"][0]["command"]
    assert "num_actors=2" in cmd
    path = f"/apis/reactorfed.io/v1alpha1/namespaces/{NAMESPACE}/reactorfederations/{NAME}/scale"
    scale = json.loads(cp.kubectl("get", "--raw", path).stdout)
    assert scale["status"]["replicas"] == 2 and "role=actors" in scale["status"]["selector"]


def test_a_group_width_change_restarts_the_federation(installed: ControlPlane) -> None:
    cp = installed
    obj = manifest(learners=1)
    obj["spec"]["samplers"]["replicas"] = 2
    _apply(cp, obj)
    current = _wait(cp, "one learner", 2, 1, 3)
    assert "num_learners=1" in current[f"{NAME}-actors-0"]["spec"]["containers"][0]["command"]
    assert rfed(cp, NAME)["status"]["restarts"] == 0  # a reshape is no failure
    cp.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--wait=false")


@pytest.mark.parametrize("path", REFUSED, ids=[p.stem for p in REFUSED])
def test_refused_by_the_operator_before_any_pod(installed: ControlPlane, operator: subprocess.Popen[bytes],
                                                path: Path) -> None:  # fmt: skip
    cp = installed
    field = next(line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
                 if line.startswith("# expect-field:"))  # fmt: skip
    name = yaml.safe_load(path.read_text())["metadata"]["name"]
    cp.kubectl("apply", "-n", NAMESPACE, "-f", str(path))
    try:
        status = wait_for("InvalidSpec", lambda: (s := rfed(cp, name).get("status") or {}).get("reason") == "InvalidSpec"
                          and s, 60)  # fmt: skip
        assert status["phase"] == "Failed" and status["message"].startswith(f"{field}:"), status["message"]
        assert pods(cp, name) == {}
        events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={name}")["items"]
        assert any(e["reason"] == "InvalidSpec" and field in e["message"] for e in events)
    finally:
        cp.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=false", check=False)


def test_refused_corpus_exists() -> None:
    assert REFUSED
