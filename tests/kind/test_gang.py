"""All or nothing in the kind cluster, with the two examples a new user tried: each waits with
every pod behind its scheduling gate (none bound, no container started, no restart), the
status naming the pod and why, instead of starting the RTI and the samplers and restarting
until failurePolicy.maxRestarts runs out.

* examples/k8s/seed-ppo-cartpole.yaml as shipped, without the fake nvidia.com/gpu the docs
  give the GPU worker (the conftest's ``operator`` fixture adds it; this module takes it
  away and puts it back);
* examples/k8s/ppo-minatar.yaml with its learner asking one core more than the largest
  worker has (what a 2-core machine's nodes make of its requests), then as shipped: a spec
  edit while every pod is gated makes them anew, and the operator's decision matches what
  the pure check makes of the same nodes.

Kept short: no federate process runs to any end here."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

from reactorfed_operator.manifests import Federation
from reactorfed_operator.placement import check, node_from_api
from reactorfed_operator.pods import federation_pods
from reactorfed_operator.spec import parse_spec

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import apply, clean_slate, describe, load_example, pods, status

pytestmark = [pytest.mark.kind, pytest.mark.timeout(300)]

GATE = "reactorfed.io/gang"
GPU = "nvidia.com~1gpu"


def _gpu_node(k: Kind) -> str:
    return next(n for n, v in k.nodes().items() if v["metadata"]["labels"].get("reactorfed.io/accelerator") == "nvidia")


@pytest.fixture
def without_fake_gpu(operator: Kind) -> Iterator[Kind]:
    """The GPU worker without its fake nvidia.com/gpu, for the test; put back after."""
    k, node = operator, _gpu_node(operator)

    def gpus() -> str | None:
        return (k.nodes()[node]["status"].get("allocatable") or {}).get("nvidia.com/gpu")

    had = gpus()
    for part in ("capacity", "allocatable"):
        k.kubectl("patch", "node", node, "--subresource=status", "--type=json",
                  "-p", json.dumps([{"op": "remove", "path": f"/status/{part}/{GPU}"}]), check=False)  # fmt: skip
    wait_for("no nvidia.com/gpu on the GPU worker", lambda: gpus() in (None, "0"), 30)
    try:
        yield k
    finally:
        if had is not None:
            k.kubectl("patch", "node", node, "--subresource=status", "--type=json", "-p", json.dumps(
                [{"op": "add", "path": f"/status/{part}/{GPU}", "value": had} for part in ("capacity", "allocatable")]))  # fmt: skip
            wait_for("the fake GPU back", lambda: gpus() == had, 30)


def held(k: Kind, name: str, fragment: str, incarnation: int | None = None) -> dict[str, Any]:
    """Wait for the hold; check that every pod is gated, on no node, with no container."""
    def probe() -> dict[str, Any] | None:
        st = status(k, name)
        ok = st.get("reason") == "Unschedulable" and fragment in st.get("message", "")
        return st if ok and (incarnation is None or st.get("incarnation") == incarnation) else None

    try:
        st = wait_for(f"{name} held: {fragment}", probe, 45)
    except AssertionError:
        print(describe(k, name))
        raise
    assert st["phase"] == "Pending" and st["restarts"] == 0
    placed = next(c for c in st["conditions"] if c["type"] == "Placed")
    assert placed["status"] == "False" and fragment in placed["message"]
    current = {n: p for n, p in pods(k, name).items() if not p["metadata"].get("deletionTimestamp")}
    assert {f"{name}-rti", f"{name}-learner", f"{name}-samplers-0", f"{name}-samplers-1"} == set(current)
    for pod in current.values():
        assert pod["spec"].get("schedulingGates") == [{"name": GATE}], pod["metadata"]["name"]
        assert not pod["spec"].get("nodeName") and not pod["status"].get("containerStatuses")
    return st


def delete(k: Kind, name: str) -> None:
    k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--ignore-not-found", "--wait=false")


def test_seed_ppo_cartpole_without_a_gpu_waits(without_fake_gpu: Kind) -> None:
    k = without_fake_gpu
    (doc,) = load_example("seed-ppo-cartpole.yaml")
    name = doc["metadata"]["name"]
    clean_slate(k, name)  # nothing of an earlier run of the example (instant when there is none)
    t0 = time.monotonic()
    apply(k, [doc])
    try:
        st = held(k, name, f"{name}-learner (learner) needs nvidia.com/gpu 1, no node it may use has any")
        record("gang_hold_s", time.monotonic() - t0, "s", "seed-ppo-cartpole applied -> status Unschedulable")
        time.sleep(4)  # passes go by (reconcileInterval 2 s): still held, nothing counted
        again = status(k, name)
        assert (again["phase"], again["incarnation"], again["restarts"]) == ("Pending", st["incarnation"], 0)
    finally:
        delete(k, name)


def _largest_worker_cpu(k: Kind) -> float:
    def cores(q: str) -> float:
        return float(q[:-1]) / 1000 if q.endswith("m") else float(q)

    return max(cores(n["status"]["allocatable"]["cpu"]) for n in k.nodes().values()
               if not any(t.get("effect") == "NoSchedule" for t in n["spec"].get("taints") or ()))  # fmt: skip


def _fits_now(k: Kind, doc: dict[str, Any]) -> tuple[bool, str]:
    """What the pure check makes of the example on the cluster's nodes as they are now, seen
    as the operator sees them (namespace scope: the pods bound in its own namespace)."""
    bound: dict[str, list[dict[str, Any]]] = {}
    alive = "status.phase!=Succeeded,status.phase!=Failed"
    for pod in k.get_json("pods", "-n", NAMESPACE, "--field-selector", alive)["items"]:
        if pod["spec"].get("nodeName") and pod["metadata"].get("labels", {}).get("reactorfed.io/federation") != \
                doc["metadata"]["name"]:  # fmt: skip
            bound.setdefault(pod["spec"]["nodeName"], []).append(pod)
    nodes = [node_from_api(n, bound.get(name, ())) for name, n in k.nodes().items()]
    fed = Federation(doc["metadata"]["name"], NAMESPACE, "uid", parse_spec(doc["spec"]))
    verdict = check(federation_pods(fed, 1), nodes)
    return verdict.fits, verdict.message


def test_ppo_minatar_with_a_learner_larger_than_a_node_waits(operator: Kind) -> None:
    k = operator
    (doc,) = load_example("ppo-minatar.yaml")
    name = doc["metadata"]["name"]
    shipped = json.loads(json.dumps(doc))
    largest = _largest_worker_cpu(k)
    big = math.floor(largest) + 1
    doc["spec"]["learner"]["resources"]["requests"]["cpu"] = str(big)
    clean_slate(k, name)
    apply(k, [doc])
    try:
        st = held(k, name, f"{name}-learner (learner) needs cpu {big}, the largest node it may use has {largest:g} "
                  "allocatable")  # fmt: skip
        # as shipped: the gated pods are made anew; the decision is the check's on the same nodes
        # (once no pod of an earlier test is still going away: the view must not change meanwhile)
        wait_for("no pod terminating in the namespace", lambda: not any(
            p["metadata"].get("deletionTimestamp") for p in k.get_json("pods", "-n", NAMESPACE)["items"]), 90)  # fmt: skip
        fits, why = _fits_now(k, shipped)
        apply(k, [shipped])
        if not fits:
            held(k, name, why.split(":")[0], incarnation=st["incarnation"] + 1)
        else:
            # released together: placed at once, or refused by the scheduler for what the
            # operator cannot see (other namespaces' pods): stopped, not a restart
            def decided() -> dict[str, Any] | None:
                s = status(k, name)
                cond = next((c for c in s.get("conditions") or () if c["type"] == "Placed"), {})
                done = cond.get("status") == "True" or s.get("reason") == "SchedulerRefused"
                return s if done and s.get("incarnation", 0) > st["incarnation"] else None

            try:
                now = wait_for("ppo-minatar as shipped placed at once, or refused whole", decided, 45)
            except AssertionError:
                print(describe(k, name))
                raise
            assert now["restarts"] == 0, now
            if now.get("reason") != "SchedulerRefused":
                assert all(p["spec"].get("nodeName") and not p["spec"].get("schedulingGates")
                           for p in pods(k, name).values() if not p["metadata"].get("deletionTimestamp"))  # fmt: skip
            why += f"; the operator: {now.get('reason')}"
        record("gang_ppo_minatar_as_shipped_fits", float(fits), "bool", f"the check on the kind nodes: {why}")
    finally:
        delete(k, name)
