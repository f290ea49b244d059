"""The reconcile planner, driven through whole lifecycles against an in-memory cluster."""

from __future__ import annotations

import dataclasses

from reactorfed_operator.cluster import observe_pod
from reactorfed_operator.planner import ObservedPod

from .helpers import FakeCluster, make_fed


def test_create_then_running() -> None:
    c = FakeCluster(make_fed())
    p = c.step()
    assert p.phase == "Starting" and p.incarnation == 1
    assert sorted(c.pods) == ["pong-learner", "pong-rti", "pong-samplers-0", "pong-samplers-1"]
    assert c.status["samplers"]["readyText"] == "0/2"
    c.run_all()
    assert c.step().phase == "Running"
    assert c.status["samplers"] == {"desired": 2, "replicas": 2, "ready": 2, "readyText": "2/2",
                                    "selector": "reactorfed.io/federation=pong,reactorfed.io/role=sampler"}  # fmt: skip
    assert c.status["federates"]["ready"] == 4
    ready = next(x for x in c.status["conditions"] if x["type"] == "Ready")
    assert ready["status"] == "True" and ready["reason"] == "AllPodsReady"
    assert c.events == ["Creating", "Running"]
    assert c.step().events == []  # steady state: no actions, no events
    assert c.step().create == [] and c.step().delete == []


def test_rescale_stops_learner_first_and_keeps_restart_count() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    c.set_spec(samplers={"replicas": 4})
    p = c.step()
    assert p.phase == "Scaling" and p.delete == ["pong-learner"]  # the learner checkpoints first
    p = c.step()
    assert p.phase == "Scaling" and sorted(p.delete) == ["pong-rti", "pong-samplers-0", "pong-samplers-1"]
    c.step()  # everything gone -> new incarnation
    assert c.status["incarnation"] == 2
    assert sorted(c.pods) == ["pong-learner", "pong-rti"] + [f"pong-samplers-{i}" for i in range(4)]
    c.settle()
    assert c.status["phase"] == "Running" and c.status["samplers"]["readyText"] == "4/4"
    assert c.status["restarts"] == 0
    assert c.deleted.index("pong-learner") < c.deleted.index("pong-rti")
    # and back to 2
    c.set_spec(samplers={"replicas": 2})
    c.settle()
    assert c.status["samplers"]["readyText"] == "2/2" and c.status["incarnation"] == 3
    assert "pong-samplers-3" not in c.pods


def test_failure_restarts_up_to_the_limit_then_fails() -> None:
    c = FakeCluster(make_fed(failurePolicy={"maxRestarts": 2}))
    c.settle()
    for attempt in (1, 2):
        c.set_phase("pong-samplers-1", "Failed", "exit code 3")
        p = c.step()
        assert p.phase == "Restarting" and p.reason == "FederateFailed" and p.restarts == attempt
        assert "exit code 3" in p.message
        c.settle()
        assert c.status["incarnation"] == attempt + 1
    c.set_phase("pong-samplers-0", "Failed", "OOMKilled")
    p = c.step()
    assert p.phase == "Failed" and p.reason == "RestartLimitExceeded"
    assert "pong-samplers-0" not in p.delete and "pong-rti" in p.delete  # keep the failed pod's logs
    assert c.events.count("FederateFailed") == 2 and "RestartLimitExceeded" in c.events
    assert c.step().phase == "Failed"  # terminal until the spec changes
    c.set_spec(failurePolicy={"maxRestarts": 2}, samplers={"replicas": 3})
    c.settle()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0


def test_vanished_pod_is_a_failure() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    del c.pods["pong-samplers-0"]
    p = c.step()
    assert p.phase == "Restarting" and "pong-samplers-0 vanished" in p.message


def test_success() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    for name in list(c.pods):
        c.set_phase(name, "Succeeded")
    assert c.step().phase == "Succeeded"
    assert c.step().phase == "Succeeded" and c.step().create == []


def test_suspend_and_resume() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    c.set_spec(suspend=True)
    assert c.step().delete == ["pong-learner"]
    c.step()
    c.step()
    assert c.pods == {} and c.status["phase"] == "Suspended"
    c.set_spec(suspend=False)
    c.settle()
    assert c.status["phase"] == "Running" and c.status["incarnation"] == 2


def test_missing_dependency_is_a_condition_not_an_error() -> None:
    c = FakeCluster(make_fed(secretRef={"name": "nope"}))
    p = c.step(missing=("Secret/nope (key 'secret')",))
    assert p.phase == "Pending" and p.reason == "MissingDependency" and not p.create
    assert c.events == ["MissingDependency"]
    c.step(missing=("Secret/nope (key 'secret')",))
    assert c.events == ["MissingDependency"]  # not repeated every pass
    degraded = next(x for x in c.status["conditions"] if x["type"] == "Degraded")
    assert degraded["status"] == "True" and "Secret/nope" in degraded["message"]
    c.settle()
    assert c.status["phase"] == "Running"


def test_unschedulable_is_reported() -> None:
    c = FakeCluster(make_fed())
    c.step()
    c.run_all()
    c.pods["pong-learner"] = dataclasses.replace(
        c.pods["pong-learner"], phase="Pending", ready=False, node=None, message="0/3 nodes have nvidia.com/gpu"
    )
    p = c.step()  # all or nothing: the incarnation stops, not counted as a restart (tests/operator/test_gang.py)
    assert p.reason == "SchedulerRefused" and "nvidia.com/gpu" in p.message and p.restarts == 0


def test_condition_transition_time_is_kept() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    c.status["conditions"][0]["lastTransitionTime"] = "2000-01-01T00:00:00Z"
    c.step()
    assert c.status["conditions"][0]["lastTransitionTime"] == "2000-01-01T00:00:00Z"


def test_observe_pod_reads_api_shapes() -> None:
    raw = {
        "metadata": {"name": "p", "labels": {"reactorfed.io/incarnation": "3", "reactorfed.io/role": "sampler"},
                     "annotations": {"reactorfed.io/samplers": "4"}, "deletionTimestamp": "x"},
        "spec": {"nodeName": "cpu-0"},
        "status": {"phase": "Failed", "podIP": "10.1.1.1", "conditions": [{"type": "Ready", "status": "False"}],
                   "containerStatuses": [{"state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]},
    }  # fmt: skip
    pod = observe_pod(raw)
    assert pod == ObservedPod("p", "sampler", 3, 4, "Failed", False, True, "cpu-0", "10.1.1.1",
                              "exit code 137, OOMKilled")  # fmt: skip
    assert observe_pod({"metadata": {"name": "x"}}) is None


def test_interrupted_creation_is_finished_not_counted_as_failure() -> None:
    c = FakeCluster(make_fed())
    p = c.step()
    del c.pods["pong-learner"]  # its create call failed mid-pass ...
    c.status = {}  # ... so the status (incarnation 1) was never written
    p = c.step()
    assert p.reason == "Creating" and [m["metadata"]["name"] for m in p.create] == ["pong-learner"]
    c.settle()
    assert c.status["restarts"] == 0 and c.status["incarnation"] == 1


def test_observe_pod_reads_slot_and_bounds() -> None:
    raw = {"metadata": {"name": "p", "labels": {"reactorfed.io/incarnation": "2", "reactorfed.io/role": "sampler"},
                        "annotations": {"reactorfed.io/samplers": "4", "reactorfed.io/max-samplers": "8",
                                        "reactorfed.io/federate": "samplers[11]"}}}  # fmt: skip
    pod = observe_pod(raw)
    assert pod is not None and (pod.slot, pod.width, pod.max_width) == (11, 4, 8)
    raw["metadata"]["annotations"] = {"reactorfed.io/samplers": "4", "reactorfed.io/federate": "learner"}
    pod = observe_pod(raw)
    assert pod is not None and (pod.slot, pod.max_width) == (None, 0)
