from __future__ import annotations

import pytest

from reactorfed_operator.errors import SpecError
from reactorfed_operator.manifests import (
    checkpoint_pvc,
    pod_name,
    rti_service,
    sampler_selector,
)
from reactorfed_operator.pods import federation_pods, sampler_pod

from .helpers import make_fed, program_command


def _by_name(pods: list[dict]) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in pods}


def test_pods_of_one_incarnation() -> None:
    fed = make_fed(samplers={"replicas": 3})
    pods = _by_name(federation_pods(fed, incarnation=1))
    assert list(pods) == ["pong-rti", "pong-samplers-0", "pong-samplers-1", "pong-samplers-2", "pong-learner"]
    for pod in pods.values():
        meta = pod["metadata"]
        assert meta["namespace"] == "rl"
        assert meta["ownerReferences"][0]["uid"] == "uid-1234"
        assert meta["ownerReferences"][0]["controller"] is True
        assert meta["labels"]["reactorfed.io/incarnation"] == "1"
        assert meta["annotations"]["reactorfed.io/samplers"] == "3"
        spec = pod["spec"]
        assert spec["restartPolicy"] == "Never"
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["automountServiceAccountToken"] is False
        container = spec["containers"][0]
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        env = {e["name"]: e for e in container["env"]}
        assert "REACTORFED_SECRET" not in env, "a key per member: no shared secret"
        assert env["REACTORFED_KEY_FILE"]["value"] == "/etc/reactorfed/key/key.json"
        cmd = program_command(pod)
        assert cmd[cmd.index("--param") + 1] == "num_samplers=3"
    assert pods["pong-samplers-2"]["metadata"]["annotations"]["reactorfed.io/federate"] == "samplers[2]"


def test_elastic_pods_share_the_incarnation_s_width_and_bounds() -> None:
    fed = make_fed(samplers={"replicas": 3, "maxReplicas": 8, "maxParam": "most"})
    for pod in federation_pods(fed, incarnation=2):
        cmd = program_command(pod)
        assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--param"] == ["most=8", "num_samplers=3"]
        assert pod["metadata"]["annotations"]["reactorfed.io/max-samplers"] == "8"
    # a pod made later for a new slot gets the incarnation's parameters (it started 3 wide)
    late = sampler_pod(fed, 6, incarnation=2, width=3, max_width=8)
    assert late["metadata"]["name"] == "pong-samplers-6"
    assert late["metadata"]["annotations"]["reactorfed.io/federate"] == "samplers[6]"
    assert late["metadata"]["annotations"]["reactorfed.io/samplers"] == "3"
    cmd = late["spec"]["containers"][0]["command"]
    assert cmd[cmd.index("--federate") + 1] == "samplers[6]" and "num_samplers=3" in cmd and "most=8" in cmd
    wider = make_fed(samplers={"replicas": 7, "maxReplicas": 8, "maxParam": "most"})
    assert late == sampler_pod(wider, 6, 2, 3, 8)  # the same pod whatever the spec's width is now
    # a fixed bank's pods carry neither
    pod = federation_pods(make_fed(), 1)[1]
    assert "reactorfed.io/max-samplers" not in pod["metadata"]["annotations"]
    assert not any(a.startswith("max_samplers=") for a in pod["spec"]["containers"][0]["command"])


def test_rti_command() -> None:
    fed = make_fed(coordination={"fast": True, "timeout": "5 s"}, program={
        "image": "i", "entrypoint": "m:Main", "params": {"seed": "7"}})  # fmt: skip
    rti = federation_pods(fed, 1)[0]
    # the RTI is given the layout, not the program: an init container writes it
    assert rti["spec"]["containers"][0]["command"] == [
        "reactorfed", "rti", "--layout", "/var/run/reactorfed/layout.json", "--host", "0.0.0.0", "--port", "15045",
        "--metrics-port", "9100", "--metrics-addr", "0.0.0.0", "--federation-id", "rl.pong", "--fast", "--timeout", "5 s", "--threads", "1",
    ]  # fmt: skip
    assert program_command(rti) == [
        "reactorfed", "layout", "m:Main", "--param", "num_samplers=2", "--param", "seed=7",
        "--output", "/var/run/reactorfed/layout.json",
    ]  # fmt: skip
    fed = make_fed(coordination={"joinTimeout": "5 min"})
    for pod in federation_pods(fed, 2):  # the RTI and every federate wait as long
        cmd = pod["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--join-timeout") + 1] == "5 min"
        assert "--coordination" not in cmd  # centralized, the default
    for pod in federation_pods(make_fed(coordination={"mode": "decentralized"}), 2):
        cmd = pod["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--coordination") + 1] == "decentralized"
        assert "--lead-window" not in cmd  # the default
    for pod in federation_pods(make_fed(coordination={"leadWindow": "none"}), 2):
        cmd = pod["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--lead-window") + 1] == "none"
        assert "--advance-message-interval" not in cmd  # unset: the runtime's default
    for pod in federation_pods(make_fed(coordination={"advanceMessageInterval": "25ms"}), 2):
        cmd = pod["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--advance-message-interval") + 1] == "25ms"


def test_the_rti_runs_its_own_image_on_the_layout_an_init_container_wrote() -> None:
    fed = make_fed(rti={"image": "reactorfed-rti:0.1.0", "resources": {"requests": {"memory": "256Mi"}}},
                   program={"image": "prog:1", "entrypoint": "m:Main", "configMap": {"name": "code", "key": "m.py"}})
    pods = _by_name(federation_pods(fed, 1))
    spec = pods["pong-rti"]["spec"]
    (writer,), (rti,) = spec["initContainers"], spec["containers"]
    assert (writer["image"], rti["image"]) == ("prog:1", "reactorfed-rti:0.1.0")
    assert all(c["spec"]["containers"][0]["image"] == "prog:1" for n, c in pods.items() if n != "pong-rti")
    # one emptyDir between them: written by the program's image, read by the RTI
    assert {"name": "layout", "emptyDir": {}} in spec["volumes"]
    assert {"name": "layout", "mountPath": "/var/run/reactorfed"} in writer["volumeMounts"]
    assert {"name": "layout", "mountPath": "/var/run/reactorfed", "readOnly": True} in rti["volumeMounts"]
    # the writer loads the program as every federate does (its ConfigMap, its environment)
    assert {"name": "program", "mountPath": "/opt/reactorfed/program", "readOnly": True} in writer["volumeMounts"]
    env = {e["name"]: e.get("value") for e in writer["env"]}
    assert env["PYTHONPATH"] == "/opt/reactorfed/program" and env["OMP_NUM_THREADS"] == "1"
    assert "REACTORFED_SECRET" not in env  # (what it does not need)
    assert {"REACTORFED_KEY_FILE", "REACTORFED_MEMBER_KEYS"} <= {e["name"] for e in rti["env"]}
    assert writer["resources"] == rti["resources"] == {"requests": {"memory": "256Mi"}}
    # without spec.rti.image the RTI runs the program's image, still on the layout
    plain = federation_pods(make_fed(), 1)[0]["spec"]
    assert plain["containers"][0]["image"] == plain["initContainers"][0]["image"] == "ghcr.io/example/reactorfed:0.1.0"


def test_federate_command_and_placement() -> None:
    fed = make_fed(samplers={"nodeSelector": {"pool": "cpu"}}, checkpoint={"claimName": "ckpt"},
                   learner={"image": "img:gpu"})
    pods = _by_name(federation_pods(fed, 2))
    sampler = pods["pong-samplers-1"]
    cmd = sampler["spec"]["containers"][0]["command"]
    assert cmd[:4] == ["reactorfed", "federate", "reactorfed_examples.pong:main", "--federate"]
    assert cmd[4] == "samplers[1]"
    assert cmd[cmd.index("--rti") + 1] == "pong-rti.rl.svc:15045"
    assert cmd[cmd.index("--advertise-host") + 1] == "$(POD_IP)"
    assert "--checkpoint-dir" not in cmd
    assert sampler["spec"]["nodeSelector"] == {"pool": "cpu"}
    assert "nvidia.com/gpu" not in str(sampler["spec"]["containers"][0]["resources"])

    learner = pods["pong-learner"]
    lcmd = learner["spec"]["containers"][0]["command"]
    assert learner["spec"]["containers"][0]["image"] == "img:gpu"
    assert sampler["spec"]["containers"][0]["image"] == "ghcr.io/example/reactorfed:0.1.0"
    assert lcmd[lcmd.index("--federate") + 1] == "learner"
    assert lcmd[lcmd.index("--checkpoint-dir") + 1] == "/checkpoints"
    assert learner["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert learner["spec"]["nodeSelector"] == {"reactorfed.io/accelerator": "nvidia"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in learner["spec"]["tolerations"]
    vols = {v["name"]: v for v in learner["spec"]["volumes"]}
    assert vols["checkpoint"]["persistentVolumeClaim"]["claimName"] == "ckpt"


def test_cpu_learner_and_configmap_program() -> None:
    fed = make_fed(learner={"gpus": 0}, program={
        "image": "i", "entrypoint": "prog:Main", "configMap": {"name": "code", "key": "prog.py"}})  # fmt: skip
    learner = _by_name(federation_pods(fed, 1))["pong-learner"]
    assert "nodeSelector" not in learner["spec"]
    assert "limits" not in learner["spec"]["containers"][0]["resources"]
    env = {e["name"]: e.get("value") for e in learner["spec"]["containers"][0]["env"]}
    assert env["PYTHONPATH"] == "/opt/reactorfed/program"
    assert {"name": "program", "configMap": {"name": "code"}} in learner["spec"]["volumes"]


def test_service_pvc_and_names() -> None:
    fed = make_fed(checkpoint={"size": "2Gi", "storageClassName": "fast"})
    svc = rti_service(fed)
    assert svc["metadata"]["name"] == "pong-rti"
    assert svc["spec"]["selector"] == {"reactorfed.io/federation": "pong", "reactorfed.io/role": "rti"}
    assert [p["port"] for p in svc["spec"]["ports"]] == [15045, 9100]
    pvc = checkpoint_pvc(fed)
    assert pvc is not None and pvc["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert pvc["spec"]["storageClassName"] == "fast"
    assert checkpoint_pvc(make_fed()) is None
    assert pod_name(fed, "samplers[12]") == "pong-samplers-12"
    assert pod_name(fed, "Learner_1") == "pong-learner-1"
    assert sampler_selector(fed) == "reactorfed.io/federation=pong,reactorfed.io/role=sampler"


def test_a_user_secret_is_the_compatibility_mode() -> None:
    """spec.secretRef: every process reads the shared secret, and no pod mounts a key."""
    fed = make_fed(secretRef={"name": "mine", "key": "k"})
    for pod in federation_pods(fed, 1):
        container = pod["spec"]["containers"][0]
        env = {e["name"]: e for e in container["env"]}
        assert env["REACTORFED_SECRET"]["valueFrom"]["secretKeyRef"] == {"name": "mine", "key": "k"}
        assert not {"REACTORFED_KEY_FILE", "REACTORFED_MEMBER_KEYS"} & set(env)
        assert not any("secret" in v for v in pod["spec"]["volumes"])


def _threads(pod: dict) -> tuple[str | None, ...]:
    """A pod's thread count: its --threads, and the thread variables of its environment."""
    container = pod["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    cmd = container["command"]
    return (cmd[cmd.index("--threads") + 1], *(env.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")))


def test_every_pod_gets_the_runs_thread_count_never_its_cpu() -> None:
    """A seed's weights depend on torch's thread count (how its sums are split): every pod
    gets spec.program.threads (default 1), whatever CPU it asks for, so any node and any
    resources give the same weights; the CPU resources only place the pods."""
    resources = {"samplers": {"replicas": 2, "resources": {"requests": {"cpu": "500m"}}},
                 "learner": {"resources": {"requests": {"cpu": "2500m"}, "limits": {"cpu": "3"}}}}
    for threads, expect in ((None, "1"), (4, "4")):
        program = {"image": "i", "entrypoint": "prog:Main", **({} if threads is None else {"threads": threads})}
        pods = federation_pods(make_fed(program=program, **resources), 1)
        assert len(pods) == 4
        for pod in pods:  # the RTI, the samplers and the learner alike
            assert _threads(pod) == (expect, expect, expect), pod["metadata"]["name"]
            names = [e["name"] for e in pod["spec"]["containers"][0]["env"]]
            assert names.count("OMP_NUM_THREADS") == 1
        assert pods[-1]["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "3"  # (kept for scheduling)
        assert not any("--allow-thread-change" in p["spec"]["containers"][0]["command"] for p in pods)
    allowed = make_fed(program={"image": "i", "entrypoint": "prog:Main", "allowThreadChange": True})
    assert all("--allow-thread-change" in p["spec"]["containers"][0]["command"] for p in federation_pods(allowed, 1))


def test_the_thread_variables_are_the_operators_and_threads_is_validated() -> None:
    for env in ([{"name": "OMP_NUM_THREADS", "value": "4"}], [{"name": "MKL_NUM_THREADS", "value": "2"}]):
        with pytest.raises(SpecError, match=r"spec\.program\.env\[0\]\.name: .* spec\.program\.threads"):
            make_fed(program={"image": "i", "entrypoint": "prog:Main", "env": env})
    with pytest.raises(SpecError, match=r"spec\.federateGroups\[0\]\.env\[0\]\.name: .* spec\.program\.threads"):
        make_fed(federateGroups=[{"name": "learner", "federate": "learner",
                                  "env": [{"name": "OPENBLAS_NUM_THREADS", "value": "2"}]}])
    for bad in (0, "2", 1000):
        with pytest.raises(SpecError, match=r"spec\.program\.threads"):
            make_fed(program={"image": "i", "entrypoint": "prog:Main", "threads": bad})
    with pytest.raises(SpecError, match=r"spec\.program\.allowThreadChange: must be a boolean"):
        make_fed(program={"image": "i", "entrypoint": "prog:Main", "allowThreadChange": "yes"})


def test_the_credential_variables_and_the_pod_s_address_are_the_operators() -> None:
    """A program's env cannot set what the operator sets in every pod from the resource (a
    member's key file pointed elsewhere would be another member's credential): refused,
    naming the element."""
    for name in ("REACTORFED_SECRET", "REACTORFED_KEY_FILE", "REACTORFED_MEMBER_KEYS", "POD_IP"):
        with pytest.raises(SpecError, match=rf"spec\.program\.env\[1\]\.name: {name} is set by the operator"):
            make_fed(program={"image": "i", "entrypoint": "prog:Main",
                              "env": [{"name": "RENDER", "value": "0"}, {"name": name, "value": "/x"}]})
        with pytest.raises(SpecError, match=rf"spec\.federateGroups\[0\]\.env\[0\]\.name: {name} is set by the operator"):
            make_fed(federateGroups=[{"name": "learner", "federate": "learner", "env": [{"name": name, "value": "x"}]}])
    # what the operator sets is there once, in every pod
    for pod in federation_pods(make_fed(), 1):
        names = [e["name"] for e in pod["spec"]["containers"][0]["env"]]
        assert names.count("POD_IP") == 1 and names.count("REACTORFED_KEY_FILE") <= 1, pod["metadata"]["name"]


def test_observability_sends_every_pod_s_records_to_a_collector_and_a_volume() -> None:
    fed = make_fed(observability={"otlpEndpoint": "http://jaeger:4318/v1/traces", "trace": {"claimName": "traces"}})
    for pod in federation_pods(fed, incarnation=3):
        c = pod["spec"]["containers"][0]
        cmd = c["command"]
        assert cmd[cmd.index("--otlp-endpoint") + 1] == "http://jaeger:4318/v1/traces"
        assert cmd[cmd.index("--trace") + 1] == "/traces/3"  # a folder per incarnation
        assert {"name": "traces", "persistentVolumeClaim": {"claimName": "traces"}} in pod["spec"]["volumes"]
        assert {"name": "traces", "mountPath": "/traces"} in c["volumeMounts"]
    plain = make_fed()
    for pod in federation_pods(plain, incarnation=1):
        cmd = pod["spec"]["containers"][0]["command"]
        assert "--trace" not in cmd and "--otlp-endpoint" not in cmd


def test_bad_observability_is_refused_naming_the_field() -> None:
    import pytest

    from reactorfed_operator.errors import SpecError

    with pytest.raises(SpecError, match=r"spec\.observability\.otlpEndpoint"):
        make_fed(observability={"otlpEndpoint": "collector:4318"})
    with pytest.raises(SpecError, match=r"spec\.observability\.trace\.claimName"):
        make_fed(observability={"trace": {"mountPath": "/traces"}})
    with pytest.raises(SpecError, match=r"spec\.observability\.trace\.mountPath"):
        make_fed(observability={"trace": {"claimName": "t", "mountPath": "traces"}})


def test_an_rti_pod_whose_layout_writer_failed_says_so() -> None:
    """The init container that loads the program failed (its import, its parameters): the
    RTI never ran, and the pod's message names the init container."""
    from reactorfed_operator.cluster import observe_pod

    pod = federation_pods(make_fed(), 1)[0]
    pod["status"] = {"phase": "Failed", "initContainerStatuses": [
        {"name": "layout", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}],
        "containerStatuses": [{"name": "rti", "state": {"waiting": {"reason": "PodInitializing"}}}]}
    seen = observe_pod(pod)
    assert seen is not None and seen.message == "init container layout: exit code 2, Error"
    pod["status"] = {"phase": "Failed", "initContainerStatuses": [
        {"name": "layout", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
        "containerStatuses": [{"name": "rti", "state": {"terminated": {"exitCode": 1}}}]}
    seen = observe_pod(pod)
    assert seen is not None and seen.message == "exit code 1"
