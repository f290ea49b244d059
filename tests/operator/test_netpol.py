"""The federation's NetworkPolicy and the pods' hardening, as pure manifests."""

from __future__ import annotations

from typing import Any

from reactorfed_operator.netpol import Reach, network_policy, policy_name
from reactorfed_operator.pods import federation_pods

from .helpers import make_fed


def _ports(rule: dict[str, Any]) -> set[int]:
    assert all(p["protocol"] == "TCP" for p in rule["ports"])
    return {p["port"] for p in rule["ports"]}


def test_only_the_federations_pods_reach_rti_and_data_ports() -> None:
    fed = make_fed()
    pol = network_policy(fed, Reach(metrics_namespaces=("monitoring", "reactorfed-system")))
    assert pol["apiVersion"] == "networking.k8s.io/v1" and pol["kind"] == "NetworkPolicy"
    meta = pol["metadata"]
    assert meta["name"] == policy_name(fed) == "pong-links" and meta["namespace"] == "rl"
    assert meta["ownerReferences"][0]["uid"] == "uid-1234" and meta["ownerReferences"][0]["controller"] is True
    spec = pol["spec"]
    assert spec["podSelector"] == {"matchLabels": {"reactorfed.io/federation": "pong"}}
    assert spec["policyTypes"] == ["Ingress"]
    members, metrics = spec["ingress"]
    assert members["from"] == [{"podSelector": {"matchLabels": {"reactorfed.io/federation": "pong"}}}]
    assert _ports(members) == {15045, 15046}  # the RTI's port, the federates' data port
    assert metrics["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "reactorfed-system"}}},
    ]
    assert _ports(metrics) == {9100, 9101}
    # the policy selects every pod the federation runs, whatever the incarnation
    for pod in federation_pods(fed, incarnation=3):
        labels = pod["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in spec["podSelector"]["matchLabels"].items())


def test_ports_follow_the_spec() -> None:
    fed = make_fed(rti={"port": 15046, "metricsPort": 15047})
    assert (fed.spec.rti_port, fed.spec.metrics_port, fed.spec.federate_metrics_port) == (15046, 15047, 15048)
    assert fed.spec.data_port == 15049  # never one of the others
    members, metrics = network_policy(fed, Reach(metrics_namespaces=("ops",)))["spec"]["ingress"]
    assert _ports(members) == {15046, 15049} and _ports(metrics) == {15047, 15048}
    pods = {p["metadata"]["name"]: p for p in federation_pods(fed, 1)}
    for name, pod in pods.items():
        container = pod["spec"]["containers"][0]
        declared = {p["containerPort"] for p in container["ports"]}
        cmd = container["command"]
        if name == "pong-rti":
            assert declared == {15046, 15047} and "--data-port" not in cmd
        else:
            assert declared == {15049, 15048}
            assert cmd[cmd.index("--data-port") + 1] == "15049"


def test_no_metrics_namespace_no_metrics_rule() -> None:
    (members,) = network_policy(make_fed(), Reach(metrics_namespaces=()))["spec"]["ingress"]
    assert _ports(members) == {15045, 15046}


def test_reach_from_the_charts_environment() -> None:
    env = {"REACTORFED_METRICS_NAMESPACES": "monitoring, obs,", "POD_NAMESPACE": "reactorfed-system"}
    assert Reach.from_env(env) == Reach(True, ("monitoring", "obs", "reactorfed-system"))
    assert Reach.from_env({}) == Reach(True, ())
    assert Reach.from_env({"REACTORFED_NETWORK_POLICY": "false"}).enabled is False
    assert Reach.from_env({"REACTORFED_NETWORK_POLICY": "true", "POD_NAMESPACE": "x"}) == Reach(True, ("x",))


def test_every_pod_is_hardened() -> None:
    fed = make_fed(checkpoint={"claimName": "ckpt"}, program={
        "image": "i", "entrypoint": "prog:Main", "configMap": {"name": "code", "key": "prog.py"}})  # fmt: skip
    for pod in federation_pods(fed, 1):
        spec = pod["spec"]
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert "hostNetwork" not in spec and "hostPID" not in spec and "hostIPC" not in spec
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
            assert sc["capabilities"] == {"drop": ["ALL"]}
            assert not sc.get("privileged")
            # the only writable places are the volumes: /tmp and the checkpoint (the RTI's
            # layout: for the init container that writes it)
            writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
            assert writable <= {"/tmp", "/checkpoints"} | ({"/var/run/reactorfed"} if container in
                                                          spec.get("initContainers", []) else set())
