"""All or nothing, in the planner: an incarnation's pods wait behind their scheduling gate
until every one of them can be placed, and nothing counts as a restart meanwhile."""

from __future__ import annotations

import dataclasses
from typing import Any

from reactorfed_operator.placement import GATE, Node
from reactorfed_operator.planner import RETRY_SECONDS, retry_wait

from .helpers import NOW, FakeCluster, make_fed

GIB = 2.0**30
T0 = 1_767_225_600.0  # helpers.NOW (2026-01-01T00:00:00Z) in seconds


def node(name: str, cpu: float = 2) -> Node:
    return Node(name, {"cpu": cpu, "memory": 8 * GIB, "pods": 110})


TWO = [node("cpu-0"), node("cpu-1")]


def spec(learner_cpu: str = "4") -> dict[str, Any]:
    return {
        "samplers": {"replicas": 2, "resources": {"requests": {"cpu": "500m"}}},
        "learner": {"gpus": 0, "resources": {"requests": {"cpu": learner_cpu}}},
    }


def condition(c: FakeCluster, ctype: str) -> dict[str, Any]:
    return next(x for x in c.status["conditions"] if x["type"] == ctype)


def test_a_learner_that_fits_no_node_holds_every_pod() -> None:
    c = FakeCluster(make_fed(**spec()))
    p = c.step(nodes=TWO)
    assert p.phase == "Pending" and p.reason == "Unschedulable" and p.ungate == []
    assert "pong-learner (learner) needs cpu 4, the largest node it may use has 2 allocatable" in p.message
    assert sorted(c.pods) == ["pong-learner", "pong-rti", "pong-samplers-0", "pong-samplers-1"]
    assert all(p.gated for p in c.pods.values())
    assert all(m["spec"]["schedulingGates"] == [{"name": GATE}] for m in c.made)
    placed = condition(c, "Placed")
    assert placed["status"] == "False" and placed["reason"] == "Unschedulable" and "needs cpu 4" in placed["message"]
    assert condition(c, "Degraded")["status"] == "True"
    for _ in range(5):  # it waits: nothing runs, nothing fails, nothing is made again
        c.run_all()
        p = c.step(nodes=TWO)
        assert p.phase == "Pending" and not p.create and not p.delete and not p.ungate
    assert c.status["restarts"] == 0 and c.status["incarnation"] == 1
    assert c.events == ["Creating", "Unschedulable"]  # once, not every pass


def test_it_starts_once_a_node_that_fits_it_joins() -> None:
    c = FakeCluster(make_fed(**spec()))
    c.step(nodes=TWO)
    p = c.step(nodes=[*TWO, node("big", cpu=8)])
    assert p.phase == "Starting" and p.reason == "Placing" and p.create == [] and p.delete == []
    assert p.ungate[0] == "pong-learner" and sorted(p.ungate) == sorted(c.pods)  # largest first, all together
    assert "Placing" in c.events
    c.settle()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0 and c.status["incarnation"] == 1
    assert condition(c, "Placed")["status"] == "True"


def test_a_smaller_request_makes_the_held_pods_anew_without_a_restart() -> None:
    c = FakeCluster(make_fed(**spec()))
    c.step(nodes=TWO)
    c.set_spec(**spec("1"))
    p = c.step(nodes=TWO)
    assert p.phase == "Pending" and p.reason == "Regating" and sorted(p.delete) == sorted(c.pods)  # all at once
    p = c.step(nodes=TWO)
    assert p.incarnation == 2 and p.phase == "Starting" and len(p.create) == 4 and len(p.ungate) == 4
    c.settle()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0


def test_a_pod_the_scheduler_then_refuses_stops_the_incarnation_without_a_restart() -> None:
    # The check passed (it cannot see every pod bound in the cluster); the scheduler did not.
    c = FakeCluster(make_fed(**spec("1")))
    p = c.step(nodes=TWO, now=T0)
    assert p.phase == "Starting" and len(p.ungate) == 4
    c.run_all()
    c.pods["pong-learner"] = dataclasses.replace(c.pods["pong-learner"], phase="Pending", ready=False, node=None,
                                                 message="0/3 nodes are available: 3 Insufficient cpu.")  # fmt: skip
    p = c.step(nodes=TWO, now=T0)
    assert p.phase == "Pending" and p.reason == "SchedulerRefused" and p.delete == ["pong-learner"]
    assert "pong-learner: 0/3 nodes are available: 3 Insufficient cpu." in p.message and "not a restart" in p.message
    assert c.status["placement"]["refusedAt"] == NOW
    p = c.step(nodes=TWO, now=T0 + 1)
    assert p.phase == "Pending" and sorted(p.delete) == ["pong-rti", "pong-samplers-0", "pong-samplers-1"]
    p = c.step(nodes=TWO, now=T0 + 2)  # the next incarnation is made, gated, and waits a while
    assert p.incarnation == 2 and len(p.create) == 4 and p.ungate == [] and p.reason == "SchedulerRefused"
    assert f"again in {RETRY_SECONDS - 2:.0f}s" in p.message
    p = c.step(nodes=TWO, now=T0 + 10)
    assert p.ungate == [] and not p.delete and not p.create
    p = c.step(nodes=TWO, now=T0 + RETRY_SECONDS + 1)
    assert p.phase == "Starting" and len(p.ungate) == 4
    c.settle()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0 and c.status["incarnation"] == 2
    assert c.status.get("placement") is None and c.events.count("SchedulerRefused") == 1


def test_refusals_in_a_row_wait_longer() -> None:
    assert [retry_wait(n) for n in (1, 2, 3, 5, 9)] == [30, 60, 120, 480, 600]
    c = FakeCluster(make_fed(**spec("1")))
    for n in (1, 2, 3):
        p = c.step(nodes=TWO, now=T0 + 10_000 * n)
        assert p.ungate, p.message
        c.run_all()
        c.pods["pong-learner"] = dataclasses.replace(c.pods["pong-learner"], phase="Pending", ready=False, node=None,
                                                     message="0/2 nodes are available: 2 Insufficient cpu.")  # fmt: skip
        c.step(nodes=TWO, now=T0 + 10_000 * n)
        assert c.status["placement"]["refusals"] == n and c.status["restarts"] == 0
        c.step(nodes=TWO, now=T0 + 10_000 * n)
        p = c.step(nodes=TWO, now=T0 + 10_000 * n)  # the next incarnation, gated, waits
        assert p.reason == "SchedulerRefused" and not p.ungate
        assert f"again in {retry_wait(n):.0f}s" in p.message


def test_a_pod_waiting_for_its_volume_is_not_a_refusal() -> None:
    c = FakeCluster(make_fed(**spec("1")))
    c.step(nodes=TWO)
    c.pods["pong-learner"] = dataclasses.replace(c.pods["pong-learner"], message="0/3 nodes are available: pod has "
                                                 "unbound immediate PersistentVolumeClaims. preemption: ...")  # fmt: skip
    p = c.step()
    assert p.phase == "Starting" and p.reason == "PodsStarting" and not p.delete and "unbound immediate" in p.message


def test_an_interrupted_release_is_finished() -> None:
    c = FakeCluster(make_fed(**spec("1")))
    c.step(nodes=TWO)
    c.pods["pong-rti"] = dataclasses.replace(c.pods["pong-rti"], gated=True)
    p = c.step()
    assert p.ungate == ["pong-rti"] and p.reason == "Placing"
    c.settle()
    assert c.status["phase"] == "Running"


def test_a_held_pod_that_vanished_is_made_again_not_a_failure() -> None:
    c = FakeCluster(make_fed(**spec()))
    c.step(nodes=TWO)
    del c.pods["pong-samplers-1"]
    p = c.step(nodes=TWO)
    assert p.phase == "Pending" and [m["metadata"]["name"] for m in p.create] == ["pong-samplers-1"]
    assert p.create[0]["spec"]["schedulingGates"] == [{"name": GATE}] and c.status["restarts"] == 0


def test_suspend_while_held_and_unknown_nodes() -> None:
    c = FakeCluster(make_fed(**spec()))
    c.step(nodes=TWO)
    c.set_spec(suspend=True, **spec())
    c.step(nodes=TWO)
    c.step(nodes=TWO)
    c.step(nodes=TWO)
    assert c.pods == {} and c.status["phase"] == "Suspended"
    # the operator may not list nodes: the pods are released at once and the scheduler judges
    c.set_spec(**spec())
    p = c.step(nodes=None)
    assert p.phase == "Starting" and len(p.ungate) == 4
