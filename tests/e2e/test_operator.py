"""End to end on a real control plane: helm install, the operator with the chart's
ServiceAccount, kubectl apply/get/scale/delete, scheduling onto fake CPU and GPU nodes.

The tests in this module run in order and share one federation (``qlearning``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import METRICS_NS, NAMESPACE, OPERATOR_NS, REPO, SA, rfed
from .controlplane import CPU_NODES, GPU_NODE, ControlPlane, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

EXAMPLE = REPO / "examples" / "k8s" / "qlearning.yaml"
INVALID = sorted((Path(__file__).parent / "invalid").glob("*.yaml"))
NAME = "qlearning"


def pods(cp: ControlPlane, name: str = NAME) -> dict[str, dict[str, Any]]:
    items = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={name}")["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["labels"].get("reactorfed.io/role") != "discovery"}  # federate pods (and the RTI's)


def running(cp: ControlPlane, samplers: int, incarnation: int | None = None) -> dict[str, Any] | None:
    """The federation's object once it is Running at ``samplers`` width with all pods Running."""
    obj = rfed(cp, NAME)
    status = obj.get("status") or {}
    if status.get("phase") != "Running" or status.get("samplers", {}).get("readyText") != f"{samplers}/{samplers}":
        return None
    if incarnation is not None and status.get("incarnation") != incarnation:
        return None
    current = pods(cp)
    expected = {f"{NAME}-rti", f"{NAME}-learner"} | {f"{NAME}-samplers-{i}" for i in range(samplers)}
    if set(current) != expected or any(p["status"].get("phase") != "Running" for p in current.values()):
        return None
    return obj


def test_operator_sa_is_least_privilege(installed: ControlPlane) -> None:
    who = f"system:serviceaccount:{OPERATOR_NS}:{SA}"

    def can(*args: str) -> bool:
        out = installed.kubectl("auth", "can-i", *args, "--as", who, check=False).stdout.strip()
        return out == "yes"

    assert can("create", "pods", "-n", NAMESPACE)
    assert can("patch", "reactorfederations.reactorfed.io/status", "-n", NAMESPACE)
    assert can("create", "secrets", "-n", NAMESPACE)
    assert can("create", "networkpolicies.networking.k8s.io", "-n", NAMESPACE)
    assert can("patch", "networkpolicies.networking.k8s.io", "-n", NAMESPACE)
    assert not can("delete", "networkpolicies.networking.k8s.io", "-n", NAMESPACE)  # owner references do
    assert not can("create", "networkpolicies.networking.k8s.io", "-n", "default")
    assert not can("list", "secrets", "-n", NAMESPACE)  # only get/create
    assert not can("create", "pods", "-n", "default")  # only the watched namespace
    assert not can("delete", "services", "-n", NAMESPACE)  # owner references delete them
    assert not can("create", "deployments", "-n", NAMESPACE)
    assert not can("get", "nodes")
    assert can("list", "customresourcedefinitions.apiextensions.k8s.io")  # Kopf's read-only observation
    assert not can("delete", "customresourcedefinitions.apiextensions.k8s.io")


def test_invalid_corpus_exists() -> None:
    assert len(INVALID) >= 10


@pytest.mark.parametrize("manifest", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_manifest_is_refused(installed: ControlPlane, manifest: Path) -> None:
    expected = [line.split(":", 1)[1].strip() for line in manifest.read_text().splitlines()
                if line.startswith("# expect:")]  # fmt: skip
    assert expected, f"{manifest.name} has no '# expect:' line"
    proc = installed.kubectl("apply", "--dry-run=server", "-n", NAMESPACE, "-f", str(manifest), check=False)
    assert proc.returncode != 0, f"{manifest.name} was accepted:\n{proc.stdout}"
    for fragment in expected:
        assert fragment in proc.stderr, f"{manifest.name}: {fragment!r} not in:\n{proc.stderr}"


def test_examples_are_accepted(installed: ControlPlane) -> None:
    for example in sorted((REPO / "examples" / "k8s").glob("*.yaml")):
        proc = installed.kubectl("apply", "--dry-run=server", "-n", NAMESPACE, "-f", str(example), check=False)
        assert proc.returncode == 0, f"{example.name}: {proc.stderr}"


def test_with_groups_the_program_sets_the_shorthands_parameters(installed: ControlPlane) -> None:
    """A tuner's trials have samplers: with federateGroups, num_samplers and max_samplers
    are the program's own (the shorthand's CEL rules give them to the operator)."""
    doc = next(d for d in yaml.safe_load_all((REPO / "examples" / "k8s" / "pbt-cartpole.yaml").read_text()) if d)
    doc["spec"]["program"]["params"].update({"num_samplers": "3", "max_samplers": "3"})
    proc = installed.kubectl("apply", "--dry-run=server", "-n", NAMESPACE, "-f", "-", input=json.dumps(doc),
                             check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_apply_example_schedules_pods(installed: ControlPlane, operator: subprocess.Popen[bytes]) -> None:
    cp = installed
    # A hostPath PV stands in for the cluster's storage provisioner (kwok runs no CSI driver).
    cp.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "e2e-checkpoints"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/e2e-checkpoints"}, "persistentVolumeReclaimPolicy": "Retain"},
    }))  # fmt: skip
    cp.kubectl("apply", "-n", NAMESPACE, "-f", str(EXAMPLE))
    try:
        obj = wait_for("the federation to run with 4 samplers", lambda: running(cp, 4), 90)
    except TimeoutError:
        print(cp.log_tail("operator", 60))
        print(cp.kubectl("get", "pods,pvc,rfed", "-n", NAMESPACE, "-o", "wide", check=False).stdout)
        raise
    status = obj["status"]
    assert status["federates"] == {"desired": 6, "ready": 6, "succeeded": 0, "failed": 0}
    assert status["observedGeneration"] == obj["metadata"]["generation"]
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"
    current = pods(cp)
    placement = {name: pod["spec"]["nodeName"] for name, pod in current.items()}
    assert placement[f"{NAME}-learner"] == GPU_NODE
    for name, node in placement.items():
        if name != f"{NAME}-learner":
            assert node in CPU_NODES, f"{name} on {node}"
    learner = current[f"{NAME}-learner"]["spec"]["containers"][0]
    assert learner["resources"]["limits"]["nvidia.com/gpu"] == "1"
    # owned support objects: Service, the members' keys and their table, checkpoint PVC (bound to the PV)
    uid = obj["metadata"]["uid"]
    keys = [("secret", f"{NAME}-rti-key"), ("secret", f"{NAME}-learner-key"), ("configmap", f"{NAME}-member-keys")]
    for kind, name in (("service", f"{NAME}-rti"), *keys, ("pvc", f"{NAME}-checkpoint")):
        owned = cp.get_json(kind, name, "-n", NAMESPACE)
        assert owned["metadata"]["ownerReferences"][0]["uid"] == uid
    assert cp.get_json("pvc", f"{NAME}-checkpoint", "-n", NAMESPACE)["status"]["phase"] == "Bound"
    events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={NAME}")["items"]
    reasons = {e["reason"] for e in events}
    assert {"Creating", "KeyIssued", "ServiceCreated", "NetworkPolicyCreated"} <= reasons, reasons


def test_network_policy_fences_the_federation(installed: ControlPlane) -> None:
    """The policy as the API server stores it: selects the federation's pods, lets only
    them reach the RTI and data ports, and the metrics ports only from the operator's
    namespace and the chart's metrics namespace; pods use the data port it names, and run
    hardened (RuntimeDefault seccomp, no capabilities, a read-only root, no token)."""
    cp = installed
    obj = rfed(cp, NAME)
    pol = cp.get_json("networkpolicy", f"{NAME}-links", "-n", NAMESPACE)
    assert pol["metadata"]["ownerReferences"][0]["uid"] == obj["metadata"]["uid"]
    spec = pol["spec"]
    assert spec["podSelector"] == {"matchLabels": {"reactorfed.io/federation": NAME}}
    assert spec["policyTypes"] == ["Ingress"]
    members, metrics = spec["ingress"]
    assert members["from"] == [{"podSelector": {"matchLabels": {"reactorfed.io/federation": NAME}}}]
    assert sorted(p["port"] for p in members["ports"]) == [15045, 15046]
    assert sorted(f["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for f in metrics["from"]) == \
        sorted([METRICS_NS, OPERATOR_NS])
    assert sorted(p["port"] for p in metrics["ports"]) == [9100, 9101]
    selected = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={NAME}")["items"]
    assert {p["metadata"]["name"] for p in selected} == set(pods(cp))  # every pod, nothing else
    for pod in selected:
        cmd = pod["spec"]["containers"][0]["command"]
        if pod["metadata"]["labels"]["reactorfed.io/role"] != "rti":
            assert cmd[cmd.index("--data-port") + 1] == "15046"
        # and each pod hardened, as the API server stores it
        pod_spec = pod["spec"]
        assert pod_spec["automountServiceAccountToken"] is False
        assert pod_spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod_spec["securityContext"]["runAsNonRoot"] is True
        for container in pod_spec["containers"]:
            sc = container["securityContext"]
            assert sc["capabilities"] == {"drop": ["ALL"]} and sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
    # a policy edited by hand is put back on the next pass
    cp.kubectl("patch", "networkpolicy", f"{NAME}-links", "-n", NAMESPACE, "--type=json", "-p",
               json.dumps([{"op": "replace", "path": "/spec/ingress", "value": [{}]}]))  # fmt: skip
    wait_for("the policy to be restored", lambda: cp.get_json(
        "networkpolicy", f"{NAME}-links", "-n", NAMESPACE)["spec"] == spec or None, 30)  # fmt: skip

    def updates() -> int:
        events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={NAME}")["items"]
        return sum(e.get("count") or 1 for e in events if e["reason"] == "NetworkPolicyUpdated")

    wait_for("the NetworkPolicyUpdated event", lambda: updates() or None, 30)
    time.sleep(3)  # three more passes (interval 1 s): the stored policy equals the operator's, no churn
    assert updates() == 1


def test_kubectl_get_shows_printer_columns(installed: ControlPlane) -> None:
    out = installed.kubectl("get", "rfed", NAME, "-n", NAMESPACE).stdout.splitlines()
    assert out[0].split() == ["NAME", "PHASE", "SAMPLERS", "PROGRESS", "RETURN", "AGE"]
    assert out[1].split()[:3] == [NAME, "Running", "4/4"]
    wide = installed.kubectl("get", "rfed", NAME, "-n", NAMESPACE, "-o", "wide").stdout.splitlines()
    assert "LOGICAL-TIME" in wide[0] and "RESTARTS" in wide[0] and "REASON" in wide[0]


def test_scale_subresource_for_hpa(installed: ControlPlane) -> None:
    scale = installed.get_json(f"rfed/{NAME}", "-n", NAMESPACE, "--subresource=scale")
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 4 and scale["status"]["replicas"] == 4
    assert scale["status"]["selector"] == f"reactorfed.io/federation={NAME},reactorfed.io/role=sampler"


@pytest.mark.parametrize("width", [2, 4, 2])
def test_kubectl_scale_reconciles(installed: ControlPlane, width: int) -> None:
    cp = installed
    before = rfed(cp, NAME)["status"]["incarnation"]
    cp.kubectl("scale", f"rfed/{NAME}", "-n", NAMESPACE, f"--replicas={width}")
    obj = wait_for(f"the federation to run with {width} samplers", lambda: running(cp, width, before + 1), 90)
    assert obj["spec"]["samplers"]["replicas"] == width
    assert obj["status"]["restarts"] == 0  # rescaling is not a failure
    assert obj["status"]["samplers"]["replicas"] == width
    # the learner keeps its checkpoint volume across incarnations
    learner = pods(cp)[f"{NAME}-learner"]
    claims = [v["persistentVolumeClaim"]["claimName"] for v in learner["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert claims == [f"{NAME}-checkpoint"]
    reasons = [e["reason"] for e in cp.get_json("events", "-n", NAMESPACE)["items"]]
    assert "Rescaling" in reasons


def test_pod_failure_restarts_from_checkpoint(installed: ControlPlane) -> None:
    cp = installed
    before = rfed(cp, NAME)["status"]
    victim = f"{NAME}-samplers-1"
    # kwok runs no containers: tell it to leave this pod's status to us, then fail it.
    cp.kubectl("annotate", "pod", victim, "-n", NAMESPACE, "kwok.x-k8s.io/status=custom")
    cp.kubectl("patch", "pod", victim, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p",
               json.dumps({"status": {"phase": "Failed", "reason": "Error", "message": "exit code 3"}}))  # fmt: skip
    obj = wait_for("a restart after the failure", lambda: running(cp, 2, before["incarnation"] + 1), 90)
    assert obj["status"]["restarts"] == before["restarts"] + 1
    reasons = [e["reason"] for e in cp.get_json("events", "-n", NAMESPACE)["items"]]
    assert "FederateFailed" in reasons


def test_other_bank_names_and_a_cpu_learner(installed: ControlPlane, operator: subprocess.Popen[bytes]) -> None:
    """examples/k8s/marl-inference.yaml: bank `agents` (param num_agents), federate `env`
    with no GPU: every pod on a CPU node, named after its federate."""
    cp = installed
    cp.kubectl("apply", "-n", NAMESPACE, "-f", str(REPO / "examples" / "k8s" / "marl-inference.yaml"))
    name = "marl-inference"
    expected = {f"{name}-rti", f"{name}-env"} | {f"{name}-agents-{i}" for i in range(10)}

    def all_running() -> dict[str, dict[str, Any]] | None:
        current = pods(cp, name)
        ok = set(current) == expected and all(p["status"].get("phase") == "Running" for p in current.values())
        return current if ok and rfed(cp, name).get("status", {}).get("phase") == "Running" else None

    try:
        current = wait_for("the MARL federation to run", all_running, 90)
        assert {p["spec"]["nodeName"] for p in current.values()} <= set(CPU_NODES)
        cmd = current[f"{name}-agents-7"]["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--federate") + 1] == "agents[7]"
        assert "num_agents=10" in cmd
        assert rfed(cp, name)["status"]["samplers"]["readyText"] == "10/10"
    finally:
        cp.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=false", check=False)


def test_semantic_error_is_a_condition_and_event(installed: ControlPlane, operator: subprocess.Popen[bytes]) -> None:
    cp = installed
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["metadata"]["name"] = "no-secret"
    manifest["spec"]["secretRef"] = {"name": "does-not-exist"}
    del manifest["spec"]["checkpoint"]
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(manifest))

    def degraded() -> dict[str, Any] | None:
        status = rfed(cp, "no-secret").get("status") or {}
        return status if status.get("reason") == "MissingDependency" else None

    status = wait_for("the MissingDependency condition", degraded, 60)
    assert status["phase"] == "Pending"
    assert "Secret/does-not-exist" in status["message"]
    cond = {c["type"]: c for c in status["conditions"]}
    assert cond["Degraded"]["status"] == "True" and cond["Ready"]["status"] == "False"
    assert pods(cp, "no-secret") == {}
    events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", "involvedObject.name=no-secret")["items"]
    assert any(e["type"] == "Warning" and e["reason"] == "MissingDependency" for e in events)
    assert operator.poll() is None  # no crash loop
    cp.kubectl("delete", "rfed", "no-secret", "-n", NAMESPACE, "--wait=false")


def test_an_hpa_can_drive_the_federation(installed: ControlPlane) -> None:
    """The HorizontalPodAutoscaler controller reads the scale subresource (no metrics
    server here, so it cannot act; it must still get the scale and its selector)."""
    cp = installed
    hpa = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": NAME},
        "spec": {"scaleTargetRef": {"apiVersion": "reactorfed.io/v1alpha1", "kind": "ReactorFederation", "name": NAME},
                 "minReplicas": 2, "maxReplicas": 8,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                               "target": {"type": "Utilization", "averageUtilization": 80}}}]},
    }  # fmt: skip
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(hpa))

    def got_scale() -> dict[str, Any] | None:
        status = cp.get_json("hpa", NAME, "-n", NAMESPACE).get("status") or {}
        able = next((c for c in status.get("conditions", []) if c["type"] == "AbleToScale"), None)
        return status if able and able["status"] == "True" else None

    try:
        status = wait_for("the HPA to read the scale subresource", got_scale, 90)
        assert status["currentReplicas"] == 2
    finally:
        cp.kubectl("delete", "hpa", NAME, "-n", NAMESPACE, check=False)


def test_suspend_and_resume(installed: ControlPlane) -> None:
    cp = installed
    before = rfed(cp, NAME)["status"]["incarnation"]
    cp.kubectl("patch", "rfed", NAME, "-n", NAMESPACE, "--type=merge", "-p", '{"spec":{"suspend":true}}')

    def suspended() -> bool:
        return rfed(cp, NAME)["status"]["phase"] == "Suspended" and pods(cp) == {}

    wait_for("every pod to stop", suspended, 60)
    assert cp.get_json("pvc", f"{NAME}-checkpoint", "-n", NAMESPACE)["status"]["phase"] == "Bound"  # kept
    cp.kubectl("patch", "rfed", NAME, "-n", NAMESPACE, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    wait_for("the federation to run again", lambda: running(cp, 2, before + 1), 60)


def test_a_second_operator_pauses(installed: ControlPlane, operator: subprocess.Popen[bytes],
                                  operator_kubeconfig: Path) -> None:  # fmt: skip
    """Kopf peering: a lower-priority operator with the same peering name stands by."""
    env = installed.env()
    env["KUBECONFIG"] = str(operator_kubeconfig)
    log = installed.dir / "operator-2.log"
    with log.open("wb") as handle:
        second = subprocess.Popen([sys.executable, "-m", "reactorfed_operator", "--namespace", NAMESPACE,
                                   "--peering", "reactorfed-operator", "--priority", "100"],
                                  env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    def joined() -> bool:
        status = installed.get_json("kopfpeering", "reactorfed-operator", "-n", NAMESPACE).get("status") or {}
        return any(v.get("priority") == 100 for v in status.values())

    try:
        wait_for("the second operator to join the peering", joined, 60)
        time.sleep(3)  # several peering rounds: it must stay paused behind the priority-200 operator
        text = log.read_text()
        assert "Resuming operations" not in text, text[-3000:]
        # while the priority-200 operator, alone at its start, resumed
        assert "Resuming operations" in (installed.dir / "operator.log").read_text()
    finally:
        second.terminate()
        try:
            second.wait(timeout=15)
        except subprocess.TimeoutExpired:
            second.kill()
    assert operator.poll() is None


def test_delete_removes_every_owned_object(installed: ControlPlane) -> None:
    cp = installed
    cp.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--wait=false")
    selector = f"reactorfed.io/federation={NAME}"

    def gone() -> bool:
        left = cp.kubectl("get", "rfed,pods,services,secrets,pvc,networkpolicies", "-n", NAMESPACE, "-l", selector,
                          "-o", "name").stdout  # fmt: skip
        return left.strip() == "" and cp.kubectl("get", "rfed", NAME, "-n", NAMESPACE, check=False).returncode != 0

    try:
        wait_for("the federation and every object it owns to be deleted", gone, 90)
    except TimeoutError:
        print(cp.kubectl("get", "rfed,pods,services,secrets,pvc", "-n", NAMESPACE, "-o", "yaml", check=False).stdout)
        print(cp.log_tail("operator", 80))
        raise
