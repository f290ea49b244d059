"""The discovery pod (its manifest, what is seen of it) and each pass's step with it."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

from reactorfed_operator.cluster import Cluster, observe_pod
from reactorfed_operator.discovery_pod import (
    ANNOTATION_INPUTS,
    DEADLINE_SECONDS,
    DiscoveryPod,
    Known,
    discovery_pod,
    hold,
    inputs_key,
    needs_log,
    observe_discovery,
    step,
)
from reactorfed_operator.phase import Phase, PodPhase
from reactorfed_operator.planner import Plan, PriorStatus, plan
from reactorfed_operator.pods import federation_pods

from .helpers import NOW, make_fed

CM = {"image": "reg/reactorfed-runtime:1", "entrypoint": "prog:Main", "configMap": {"name": "prog", "key": "prog.py"},
      "params": {"seed": "3"}, "env": [{"name": "MODE", "value": "fast"}]}  # fmt: skip


def answer(singles: tuple[str, ...] = ("learner",), bank: str = "samplers", width: int = 2,
           param: str | None = "num_samplers") -> str:  # fmt: skip
    feds: list[dict[str, Any]] = [{"name": n, "bank": None} for n in singles]
    feds += [{"name": f"{bank}[{i}]", "bank": bank, "index": i} for i in range(width)]
    return json.dumps({"program": "prog:Main", "federates": feds,
                       "banks": [{"name": bank, "width": width, "width_param": param, "elastic": None}]})  # fmt: skip


def ended(code: int, output: str, key: str) -> DiscoveryPod:
    return DiscoveryPod("pong-discovery", key, PodPhase.SUCCEEDED if code == 0 else PodPhase.FAILED,
                        exit_code=code, output=output)  # fmt: skip


def test_the_pod_runs_the_command_as_the_federates_get_the_program() -> None:
    fed = make_fed(program=CM, samplers={"replicas": 3}, rti={"nodeSelector": {"pool": "cpu"},
                   "resources": {"limits": {"memory": "2Gi"}}})  # fmt: skip
    pod = discovery_pod(fed, "k1")
    meta, spec = pod["metadata"], pod["spec"]
    assert meta["name"] == "pong-discovery" and meta["annotations"] == {ANNOTATION_INPUTS: "k1"}
    assert meta["labels"]["reactorfed.io/role"] == "discovery" and "reactorfed.io/incarnation" not in meta["labels"]
    assert meta["ownerReferences"][0]["uid"] == "uid-1234" and meta["ownerReferences"][0]["controller"] is True
    (c,) = spec["containers"]
    assert c["image"] == "reg/reactorfed-runtime:1"
    assert c["command"] == ["reactorfed", "federates", "prog:Main", "--param", "num_samplers=3", "--param", "seed=3",
                            "--json", "--output", "/dev/termination-log"]  # fmt: skip
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "FallbackToLogsOnError"
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["PYTHONPATH"] == "/opt/reactorfed/program" and env["MODE"] == "fast"
    assert "REACTORFED_SECRET" not in env  # it joins no federation: no secret
    rti = federation_pods(fed, 1)[0]  # the same program mount as the federates
    assert [v for v in spec["volumes"] if v["name"] == "program"] == [v for v in rti["spec"]["volumes"] if v["name"] == "program"]
    assert {"name": "program", "mountPath": "/opt/reactorfed/program", "readOnly": True} in c["volumeMounts"]
    assert spec["restartPolicy"] == "Never" and spec["activeDeadlineSeconds"] == DEADLINE_SECONDS
    assert spec["automountServiceAccountToken"] is False and spec["nodeSelector"] == {"pool": "cpu"}
    assert spec["securityContext"] == rti["spec"]["securityContext"]  # restricted like every pod of ours
    assert c["securityContext"] == rti["spec"]["containers"][0]["securityContext"]
    assert c["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "2Gi"}}
    assert "ports" not in c and "schedulingGates" not in spec


def test_the_planner_never_sees_the_discovery_pod() -> None:
    pod = discovery_pod(make_fed(), "k")
    assert observe_pod(pod) is None
    seen = observe_discovery(pod)
    assert seen is not None and seen.inputs == "k" and seen.phase is PodPhase.PENDING
    assert observe_discovery(federation_pods(make_fed(), 1)[1]) is None


def test_inputs_key_ignores_a_rescale_but_not_the_program() -> None:
    base = make_fed(program=CM, samplers={"replicas": 2}).spec
    key = inputs_key(base, "text")
    assert inputs_key(make_fed(program=CM, samplers={"replicas": 7}).spec, "text") == key
    assert inputs_key(base, "other text") != key
    assert inputs_key(make_fed(program={**CM, "params": {"seed": "4"}}).spec, "text") != key
    assert inputs_key(make_fed(program={**CM, "image": "reg/reactorfed-runtime:2"}).spec, "text") != key
    assert inputs_key(make_fed(program={**CM, "env": []}).spec, "text") != key
    assert inputs_key(make_fed(program=CM, samplers={"replicas": 2, "maxReplicas": 4}).spec, "text") != key


def test_no_answer_yet_makes_the_pod_and_waits() -> None:
    fed = make_fed()
    got = step(fed, "k", Known(), None, NOW)
    assert got.state == "waiting" and got.create is not None and got.create["metadata"]["annotations"] == {ANNOTATION_INPUTS: "k"}
    assert [e.reason for e in got.events] == ["Discovering"] and got.condition()["status"] == "Unknown"
    running = DiscoveryPod("pong-discovery", "k", PodPhase.PENDING, waiting="ErrImagePull: not found")
    got = step(fed, "k", Known(), running, NOW)
    assert got.state == "waiting" and got.create is None and "ErrImagePull" in got.message


def test_an_answer_that_matches_is_kept_and_the_pod_deleted() -> None:
    fed = make_fed()
    got = step(fed, "k", Known(), ended(0, answer(), "k"), NOW)
    assert got.state == "ready" and got.delete == ["pong-discovery"] and got.condition()["status"] == "True"
    assert got.program == {"inputs": "k", "image": fed.spec.program.image, "entrypoint": fed.spec.program.entrypoint,
                           "discoveredAt": NOW, "federates": ["learner"], "error": None,
                           "banks": [{"name": "samplers", "width": 2, "widthParam": "num_samplers"}]}  # fmt: skip
    known = Known.from_status(got.program)  # read back from the status on the next pass
    again = step(fed, "k", known, None, NOW)
    assert again.state == "ready" and again.create is None and again.program is None


def test_a_mismatch_names_the_field_and_the_federate() -> None:
    fed = make_fed()
    got = step(fed, "k", Known(), ended(0, answer(param="n_samplers"), "k"), NOW)
    assert got.state == "refused" and got.reason == "GroupsDoNotMatchProgram"
    assert got.message.startswith("the federate groups do not match the program's federates: spec.samplers.param: "
                                  "the program's bank 'samplers' takes its width from parameter 'n_samplers'")  # fmt: skip
    cond = got.condition()
    assert cond["status"] == "False" and cond["reason"] == "GroupsDoNotMatchProgram"
    assert got.program is not None and got.program["error"] is None  # the answer is kept: a spec edit is judged at once
    got = step(fed, "k", Known(), ended(0, answer(singles=("trainer",)), "k"), NOW)
    assert "spec.learner.name: the program has no federate 'learner'" in got.message
    assert "no group places the program's federate 'trainer'" in got.message


def test_groups_fields_are_named_as_written() -> None:
    fed = make_fed(federateGroups=[{"name": "env", "federate": "env"},
                                   {"name": "agents", "bank": "agents", "widthParam": "num_agents", "scale": True}])  # fmt: skip
    got = step(fed, "k", Known(), ended(0, answer(singles=("env", "judge"), bank="agents", param="num_agents"), "k"), NOW)
    assert got.state == "refused" and got.findings[0].field == "spec.federateGroups" and got.findings[0].federate == "judge"


def test_a_program_that_fails_to_build_is_refused_with_its_last_lines() -> None:
    fed = make_fed()
    log = "\n".join(f"  line {i}" for i in range(40)) + "\nModuleNotFoundError: No module named 'gymnasium'\n"
    got = step(fed, "k", Known(), ended(1, log, "k"), NOW)
    assert got.state == "refused" and got.reason == "DiscoveryFailed" and got.delete == ["pong-discovery"]
    assert got.message.startswith("spec.program: `reactorfed federates reactorfed_examples.pong:main` failed in a pod "
                                  "of ghcr.io/example/reactorfed:0.1.0 (exit code 1): ")  # fmt: skip
    assert got.message.endswith("No module named 'gymnasium'") and "line 20" not in got.message
    assert got.program is not None and got.program["error"] == got.message and got.program["federates"] is None
    again = step(fed, "k", Known.from_status(got.program), None, NOW)  # kept: not asked again for the same inputs
    assert again.state == "refused" and again.create is None and again.message == got.message
    fresh = step(fed, "k2", Known.from_status(got.program), None, NOW)  # the inputs changed: asked again
    assert fresh.state == "waiting" and fresh.create is not None


def test_a_pod_that_failed_without_running_the_program_is_asked_again() -> None:
    pod = DiscoveryPod("pong-discovery", "k", PodPhase.FAILED, reason="DeadlineExceeded Pod was active too long")
    got = step(make_fed(), "k", Known(), pod, NOW)
    assert got.state == "refused" and got.program is None and got.delete == ["pong-discovery"]
    assert "DeadlineExceeded" in got.message


def test_a_pod_made_for_other_inputs_is_deleted() -> None:
    got = step(make_fed(), "new", Known(), ended(0, answer(), "old"), NOW)
    assert got.state == "waiting" and got.delete == ["pong-discovery"] and got.program is None and got.create is None


def test_an_answer_cut_at_4_kib_is_read_from_the_log() -> None:
    wide = answer(width=512)
    assert len(wide) > 4096  # a wide bank does not fit in a termination message
    cut = ended(0, wide[:4096], "k")
    assert needs_log(cut) and not needs_log(ended(0, answer(), "k")) and not needs_log(ended(1, "boom", "k"))
    log = "UserWarning: gym is deprecated\nbuilding...\n" + wide + "\n"  # the program's own prints before it
    fed = make_fed(samplers={"replicas": 512})
    got = step(fed, "k", Known(), ended(0, log, "k"), NOW)
    assert got.state == "ready" and got.program is not None and got.program["banks"][0]["width"] == 512
    got = step(fed, "k", Known(), ended(0, "no json here", "k"), NOW)
    assert got.state == "refused" and "did not answer as agreed" in got.message


def test_observed_states() -> None:
    pod = discovery_pod(make_fed(), "k")
    pod["status"] = {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {
        "exitCode": 1, "message": "Traceback\nImportError: x"}}}]}  # fmt: skip
    seen = observe_discovery(pod)
    assert seen is not None and seen.exit_code == 1 and seen.output.endswith("ImportError: x") and seen.reason is None
    pod["status"] = {"phase": "Failed", "reason": "DeadlineExceeded", "message": "too long"}
    seen = observe_discovery(pod)
    assert seen is not None and seen.exit_code is None and seen.reason == "DeadlineExceeded too long"
    pod["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                         "reason": "Unschedulable", "message": "0/3 nodes"}]}  # fmt: skip
    seen = observe_discovery(pod)
    assert seen is not None and seen.waiting == "Unschedulable: 0/3 nodes"


def test_hold_keeps_a_new_incarnation_from_being_made() -> None:
    fed = make_fed()
    first = plan(fed, [], PriorStatus(), 1)
    assert first.create and first.incarnation == 1
    held = hold(first, 0, "asking the program")
    assert held.phase == Phase.PENDING and held.reason == "Discovering" and held.incarnation == 0
    assert held.create == [] and held.ungate == [] and held.events == []
    gated = Plan(Phase.STARTING, "Placing", "", 1, 0, ungate=["pong-rti"])  # the gates stay until it answers
    assert hold(gated, 1, "asking").ungate == [] and hold(gated, 1, "asking").reason == "Discovering"
    running = Plan(Phase.RUNNING, "AllPodsReady", "running", 1, 0)
    assert hold(running, 1, "asking the program") is running  # a running incarnation is not touched
    replacing = Plan(Phase.RUNNING, "Replacing", "", 1, 0, create=federation_pods(fed, 1)[2:])  # an elastic slot refilled
    assert hold(replacing, 1, "asking the program") is replacing


def test_the_log_is_read_raw_and_the_pod_only_when_ours() -> None:
    """A log that is one JSON object comes back as it is (the client would hand back the
    repr of the dict it decoded), and a discovery pod another owner made is not ours."""
    core = MagicMock()
    core.read_namespaced_pod_log.return_value = SimpleNamespace(data=answer().encode())
    cluster = Cluster("rl", api=core)
    assert json.loads(cluster.pod_log("pong-discovery")) == json.loads(answer())
    assert core.read_namespaced_pod_log.call_args.kwargs["_preload_content"] is False
    fed = make_fed()
    pod = discovery_pod(fed, "k")
    core.read_namespaced_pod.return_value = pod
    seen = cluster.discovery_pod(fed)
    assert seen is not None and seen.inputs == "k"
    pod["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    assert cluster.discovery_pod(fed) is None
