"""All or nothing on a real control plane: a federation whose learner no node can take waits
with every pod behind its scheduling gate (none bound, nothing counted as a restart, the
status naming the pod and why), and starts once it fits (a smaller request; a node added).
A pod the scheduler refuses after the release (capacity the operator cannot see) stops the
incarnation without a restart, and the next one is released after the wait.

The control plane's kwok nodes: three CPU nodes of 16 cores, a GPU node of 16 cores and 4
``nvidia.com/gpu`` (tests/e2e/controlplane.py)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import NAMESPACE, rfed
from .controlplane import CPU_NODES, ControlPlane, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

GATE = "reactorfed.io/gang"


def manifest(name: str, learner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "reactorfed.io/v1alpha1",
        "kind": "ReactorFederation",
        "metadata": {"name": name},
        "spec": {
            "program": {"image": "reactorfed-runtime:e2e", "entrypoint": "counting:Main"},
            "samplers": {"replicas": 2, "resources": {"requests": {"cpu": "100m"}}},
            "learner": learner,
            "rti": {"resources": {"requests": {"cpu": "100m"}}},
            "failurePolicy": {"maxRestarts": 1},
        },
    }


def apply(cp: ControlPlane, obj: dict[str, Any]) -> None:
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(obj))


def pods(cp: ControlPlane, name: str) -> dict[str, dict[str, Any]]:
    items = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={name}")["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["labels"].get("reactorfed.io/role") != "discovery"}  # federate pods (and the RTI's)


def status(cp: ControlPlane, name: str) -> dict[str, Any]:
    return rfed(cp, name).get("status") or {}


def condition(st: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in st.get("conditions") or [] if c["type"] == ctype), {})


def until(cp: ControlPlane, what: str, probe: Any, timeout: float = 60) -> Any:
    try:
        return wait_for(what, probe, timeout)
    except TimeoutError:
        print(cp.log_tail("operator", 60))
        print(cp.kubectl("get", "pods,rfed", "-n", NAMESPACE, "-o", "wide", check=False).stdout)
        raise


def held(cp: ControlPlane, name: str, fragment: str) -> dict[str, Any]:
    """Wait for the Unschedulable hold; check that every pod exists, gated, on no node."""
    st = until(cp, f"{name} held", lambda: (s := status(cp, name)).get("reason") == "Unschedulable" and s)
    assert st["phase"] == "Pending" and fragment in st["message"], st["message"]
    placed = condition(st, "Placed")
    assert placed["status"] == "False" and placed["reason"] == "Unschedulable" and fragment in placed["message"]
    current = pods(cp, name)
    assert sorted(current) == sorted([f"{name}-rti", f"{name}-learner", f"{name}-samplers-0", f"{name}-samplers-1"])
    for pod in current.values():
        assert pod["spec"].get("schedulingGates") == [{"name": GATE}], pod["metadata"]["name"]
        assert not pod["spec"].get("nodeName") and pod["status"].get("phase") == "Pending"
    events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={name}")["items"]
    assert any(e["reason"] == "Unschedulable" and fragment in e["message"] for e in events)
    return st


def runs(cp: ControlPlane, name: str, incarnation: int) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        st = status(cp, name)
        current = pods(cp, name)
        ok = st.get("phase") == "Running" and st.get("incarnation") == incarnation and len(current) == 4 \
            and all(p["status"].get("phase") == "Running" for p in current.values())  # fmt: skip
        return st if ok else None

    st = until(cp, f"{name} running, incarnation {incarnation}", probe, 90)
    assert st["restarts"] == 0 and condition(st, "Placed")["status"] == "True"
    return st


@pytest.fixture
def cleanup(installed: ControlPlane) -> Iterator[list[tuple[str, ...]]]:
    """kubectl delete arguments, run at the end whatever happens."""
    todo: list[tuple[str, ...]] = []
    yield todo
    for args in reversed(todo):
        installed.kubectl("delete", *args, "--wait=false", "--ignore-not-found", check=False)


def test_a_learner_larger_than_any_node_waits_then_starts_when_scaled_down(
    installed: ControlPlane, operator: subprocess.Popen[bytes], cleanup: list[tuple[str, ...]]
) -> None:
    """examples/k8s/ppo-minatar.yaml's situation: the learner asks for more CPU than a node has."""
    cp, name = installed, "gang-cpu"
    cleanup.append(("rfed", name, "-n", NAMESPACE))
    apply(cp, manifest(name, {"gpus": 0, "resources": {"requests": {"cpu": "20"}}}))
    held(cp, name, f"{name}-learner (learner) needs cpu 20, the largest node it may use has 16 allocatable")
    # it waits: passes go by (the operator's interval is 1 s), nothing is bound, made again or counted
    for _ in range(3):
        time.sleep(1)
        st = status(cp, name)
        assert (st["phase"], st["incarnation"], st["restarts"]) == ("Pending", 1, 0)
        assert all(not p["spec"].get("nodeName") for p in pods(cp, name).values())
    apply(cp, manifest(name, {"gpus": 0, "resources": {"requests": {"cpu": "1"}}}))
    runs(cp, name, 2)  # the held pods were made anew with the new request


def test_a_gpu_learner_waits_until_a_node_with_enough_gpus_joins(
    installed: ControlPlane, operator: subprocess.Popen[bytes], cleanup: list[tuple[str, ...]]
) -> None:
    """examples/k8s/seed-ppo-cartpole.yaml's situation: the learner's GPUs are nowhere."""
    cp, name, node = installed, "gang-gpu", "gpu-big"
    cleanup.append(("node", node))
    cleanup.append(("rfed", name, "-n", NAMESPACE))
    apply(cp, manifest(name, {"gpus": 5}))
    held(cp, name, f"{name}-learner (learner) needs nvidia.com/gpu 5, the largest node it may use has 4 allocatable")
    capacity = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}
    cp.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node, "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                     "labels": {"kubernetes.io/hostname": node, "type": "kwok", "reactorfed.io/accelerator": "nvidia"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {"capacity": capacity, "allocatable": capacity},
    }))  # fmt: skip
    runs(cp, name, 1)  # the same pods, released once the node was there
    assert pods(cp, name)[f"{name}-learner"]["spec"]["nodeName"] == node
    cp.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=true", timeout=60)


def test_a_pod_the_scheduler_refuses_after_the_release_is_no_restart(
    installed: ControlPlane, operator: subprocess.Popen[bytes], cleanup: list[tuple[str, ...]]
) -> None:
    """The operator (namespace scope) sees only its namespace's pods: pods of another
    namespace fill the CPU nodes, the check passes, the scheduler finds no node for the
    learner. The incarnation stops (not a restart) and the next is released after the wait."""
    cp, name = installed, "gang-race"
    fillers = [f"filler-{n}" for n in CPU_NODES]
    for filler, node in zip(fillers, CPU_NODES, strict=True):
        cleanup.append(("pod", filler, "-n", "default"))
        cp.kubectl("apply", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": filler, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "image": "filler", "resources": {"requests": {"cpu": "15500m"}}}]},
        }))  # fmt: skip
    cleanup.append(("rfed", name, "-n", NAMESPACE))
    apply(cp, manifest(name, {"gpus": 0, "resources": {"requests": {"cpu": "1"}}}))
    st = until(cp, "the scheduler's refusal", lambda: (s := status(cp, name)).get("reason") == "SchedulerRefused"
               and (s.get("placement") or {}).get("refusedAt") and s)  # fmt: skip
    assert st["phase"] == "Pending" and st["restarts"] == 0
    assert f"{name}-learner" in st["placement"]["message"] and "Insufficient cpu" in st["placement"]["message"]
    # the next incarnation waits, gated, and counts no restart
    st = until(cp, "the next incarnation, gated", lambda: (s := status(cp, name)).get("incarnation") == 2
               and len(p := pods(cp, name)) == 4 and all(x["spec"].get("schedulingGates") for x in p.values()) and s)  # fmt: skip
    assert st["phase"] == "Pending" and st["restarts"] == 0 and "placing the pods again in" in st["message"]
    for filler in fillers:
        cp.kubectl("delete", "pod", filler, "-n", "default", "--grace-period=0", "--force", check=False)
    st = runs(cp, name, 2)
    assert st.get("placement") is None
    events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={name}")["items"]
    assert any(e["reason"] == "SchedulerRefused" for e in events)
    assert not any(e["reason"] in ("FederateFailed", "RestartLimitExceeded") for e in events)
