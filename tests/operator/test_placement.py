"""All or nothing: the pure check of whether every pod of an incarnation can be placed at once."""

from __future__ import annotations

from typing import Any

from reactorfed_operator.placement import (
    GATE,
    Node,
    check,
    gate,
    node_from_api,
    pod_requests,
    release_order,
)
from reactorfed_operator.pods import federation_pods

from .helpers import make_fed

GIB = 2.0**30
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_LABELS = {"reactorfed.io/accelerator": "nvidia"}


def cpu_node(name: str, cpu: float = 2, used: float = 0, **kw: Any) -> Node:
    return Node(name, {"cpu": cpu, "memory": 8 * GIB, "pods": 110}, used={"cpu": used} if used else {}, **kw)


def pods_of(**spec: Any) -> list[dict[str, Any]]:
    return federation_pods(make_fed(**spec), 1)


def minatar(**learner: Any) -> list[dict[str, Any]]:
    """examples/k8s/ppo-minatar.yaml's requests: samplers and learner a core each, the RTI 250m."""
    return pods_of(
        samplers={"replicas": 2, "resources": {"requests": {"cpu": "1", "memory": "768Mi"}}},
        learner={"gpus": 0, "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}, **learner},
        rti={"resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}},
    )


def test_a_learner_larger_than_any_node_is_named_with_the_figures() -> None:
    pods = minatar(resources={"requests": {"cpu": "4", "memory": "1Gi"}})
    v = check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1")])
    assert not v.fits and v.unplaced == ("pong-learner",)
    assert v.message == "pong-learner (learner) needs cpu 4, the largest node it may use has 2 allocatable"


def test_a_gpu_learner_without_gpus_in_the_cluster() -> None:
    pods = pods_of(learner={"gpus": 1})  # the shorthand: GPU node selector and toleration
    # no GPU-labelled node at all
    v = check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1")])
    assert not v.fits and v.unplaced == ("pong-learner",)
    assert "no node it may use" in v.message and "nodeSelector reactorfed.io/accelerator=nvidia (cpu-0, cpu-1)" in v.message
    # kind-config.yaml's GPU worker (labelled, tainted) without the fake nvidia.com/gpu
    gpu = cpu_node("gpu-0", labels=GPU_LABELS, taints=(GPU_TAINT,))
    v = check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1"), gpu])
    assert not v.fits and v.message == "pong-learner (learner) needs nvidia.com/gpu 1, no node it may use has any"
    # with it
    gpu = Node("gpu-0", {"cpu": 2, "memory": 8 * GIB, "pods": 110, "nvidia.com/gpu": 1}, GPU_LABELS, (GPU_TAINT,))
    v = check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1"), gpu])
    assert v.fits and v.placement["pong-learner"] == "gpu-0"
    assert all(node != "gpu-0" for pod, node in v.placement.items() if pod != "pong-learner")  # the taint


def test_pods_that_fit_alone_but_not_together() -> None:
    pods = minatar()  # 3.25 cores
    assert check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1")]).fits
    assert check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1", used=0.5)]).fits
    v = check(pods, [cpu_node("cpu-0"), cpu_node("cpu-1", used=1)])
    assert not v.fits and v.unplaced == ()
    assert v.message == "the 4 pods do not fit together on the nodes they may use (cpu-0, cpu-1): cpu 3.25 asked, 3 free"
    # enough in sum (3.3), but split so that no node takes the RTI after the three cores: the search proves it
    v = check(pods, [cpu_node("cpu-0", used=0.9), cpu_node("cpu-1", used=0.9), cpu_node("cpu-2", cpu=1.2)])
    assert not v.fits and "each fits a node, but no node has room for them together" in v.message


def test_a_pod_that_fits_no_node_now_names_what_is_free() -> None:
    pods = minatar()
    v = check(pods, [cpu_node("cpu-0", used=1.5), cpu_node("cpu-1", used=1.5)])
    assert not v.fits and "pong-learner (learner) needs cpu 1, the most free on a node it may use is 500m" in v.message


def test_a_placement_the_scheduler_s_spreading_misses_is_found() -> None:
    # 1.5, 1.5, 1, 1, 1 on two 3-core nodes: spreading puts a 1.5 on each and then has no room
    # for the third 1; 1.5+1.5 | 1+1+1 fits. The check searches, so it says yes.
    pods = pods_of(
        federateGroups=[
            {"name": "big", "bank": "big", "widthParam": "nb", "replicas": 2, "resources": {"requests": {"cpu": "1500m"}}},
            {"name": "small", "bank": "small", "widthParam": "ns", "replicas": 2, "resources": {"requests": {"cpu": "1"}}},
        ],
        rti={"resources": {"requests": {"cpu": "1"}}},
    )
    v = check(pods, [cpu_node("a", cpu=3), cpu_node("b", cpu=3)])
    assert v.fits and len(v.placement) == 5
    assert not check(pods, [cpu_node("a", cpu=3), cpu_node("b", cpu=2.9)]).fits  # 6 asked, 5.9 free
    # 6.1 free, but no split of 1.5, 1.5, 1, 1, 1 into 2.9 and 3.2: the search proves it
    tight = [cpu_node("a", cpu=2.9), cpu_node("b", cpu=3.2)]
    v = check(pods, tight)
    assert not v.fits and "each fits a node, but no node has room for them together" in v.message
    # out of search budget: the check does not refuse, the scheduler decides
    assert check(pods, tight, budget=1).fits


def test_taints_selectors_affinity_and_cordons() -> None:
    pods = pods_of(samplers={"replicas": 1, "nodeSelector": {"pool": "cpu"}}, learner={"gpus": 0})
    nodes = [cpu_node("a", labels={"pool": "cpu"}, unschedulable=True), cpu_node("b", labels={"pool": "gpu"})]
    v = check(pods, nodes)
    assert not v.fits and v.unplaced == ("pong-samplers-0",)
    assert "cordoned (a)" in v.message and "nodeSelector pool=cpu (b)" in v.message
    tainted = cpu_node("c", labels={"pool": "cpu"}, taints=({"key": "dedicated", "value": "x", "effect": "NoExecute"},))
    assert "taint dedicated=x:NoExecute (c)" in check(pods, [tainted]).message
    tolerant = pods_of(samplers={"replicas": 1, "tolerations": [{"key": "dedicated", "operator": "Exists"}]},
                       learner={"gpus": 0, "tolerations": [{"key": "dedicated", "operator": "Exists"}]},
                       rti={"tolerations": [{"key": "dedicated", "operator": "Exists"}]})
    soft = cpu_node("d", taints=({"key": "other", "effect": "PreferNoSchedule"},))
    assert check(tolerant, [tainted, soft]).fits
    fenced = pods_of(federateGroups=[{"name": "env", "federate": "env", "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}}}}])
    v = check(fenced, [cpu_node("z2", labels={"zone": "z2"})])
    assert not v.fits and "pong-env (env): no node it may use (required node affinity (z2))" in v.message
    assert check(fenced, [cpu_node("z2", labels={"zone": "z2"}), cpu_node("z1", labels={"zone": "z1"})]).fits
    assert not check(pods_of(), []).fits


def test_a_wide_bank_is_checked_without_deep_recursion() -> None:
    # 500 samplers of 100m: the sum proves 50 cores do not fit 16 nodes of 2; 300 fit greedily
    wide = pods_of(samplers={"replicas": 500, "resources": {"requests": {"cpu": "100m"}}}, learner={"gpus": 0})
    nodes = [cpu_node(f"n{i}") for i in range(16)]
    v = check(wide, nodes)
    assert not v.fits and "cpu 50 asked, 32 free" in v.message
    half = pods_of(samplers={"replicas": 300, "resources": {"requests": {"cpu": "100m"}}}, learner={"gpus": 0})
    v = check(half, nodes)
    assert v.fits and len(v.placement) == 302
    # the greedy pass fails without a proof: the scheduler decides
    tight = pods_of(samplers={"replicas": 70, "resources": {"requests": {"cpu": "300m"}}}, learner={"gpus": 0})
    assert check(tight, [cpu_node("a", cpu=10.6), cpu_node("b", cpu=10.6)]).fits


def test_requests_release_order_and_api_shapes() -> None:
    pod = {"metadata": {"name": "x"}, "spec": {"containers": [
        {"resources": {"limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1}, "requests": {"cpu": "500m"}}},
        {"resources": {"requests": {"cpu": "250m"}}}]}}  # fmt: skip
    assert pod_requests(pod) == {"pods": 1, "cpu": 0.75, "memory": GIB, "nvidia.com/gpu": 1}
    pods = pods_of(learner={"gpus": 1}, samplers={"replicas": 2, "resources": {"requests": {"cpu": "2"}}})
    assert release_order(pods) == ["pong-learner", "pong-samplers-0", "pong-samplers-1", "pong-rti"]
    assert gate(pods[0])["spec"]["schedulingGates"] == [{"name": GATE}]
    node = node_from_api(
        {"metadata": {"name": "n", "labels": {"a": "b"}},
         "spec": {"taints": [GPU_TAINT], "unschedulable": True},
         "status": {"allocatable": {"cpu": "1900m", "memory": "2Gi", "pods": "110", "nvidia.com/gpu": "1"}}},
        [{"spec": {"containers": [{"resources": {"requests": {"cpu": "100m"}}}]}}],
    )  # fmt: skip
    assert node.allocatable == {"cpu": 1.9, "memory": 2 * GIB, "pods": 110, "nvidia.com/gpu": 1}
    assert node.used == {"pods": 1, "cpu": 0.1} and node.unschedulable and node.taints == (GPU_TAINT,)
    assert abs(node.free("cpu") - 1.8) < 1e-9 and node.labels == {"a": "b"}
