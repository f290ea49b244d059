"""The Helm chart: lint clean and render least-privilege, non-root objects in both scopes
(needs the helm binary from scripts/k8s-tools.sh, no cluster)."""

from __future__ import annotations

import base64
import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import CHART

pytestmark = pytest.mark.e2e


def _helm(bin_dir: Path, *args: str) -> str:
    proc = subprocess.run([str(bin_dir / "helm"), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _render(bin_dir: Path, *values: str) -> list[dict[str, Any]]:
    out = _helm(bin_dir, "template", "rf", str(CHART), "--namespace", "ops", "--kube-version", "1.37.1",
                "--include-crds", *values)  # fmt: skip
    return [d for d in yaml.safe_load_all(out) if d]


@pytest.mark.parametrize("scope", ["namespace", "cluster"])
def test_helm_lint_is_clean(k8s_tools: tuple[Path, Path], scope: str) -> None:
    out = _helm(k8s_tools[0], "lint", "--strict", str(CHART), "--set", f"scope={scope}")
    assert "0 chart(s) failed" in out


def test_values_schema_rejects_a_bad_scope(k8s_tools: tuple[Path, Path]) -> None:
    proc = subprocess.run([str(k8s_tools[0] / "helm"), "template", "rf", str(CHART), "--set", "scope=galaxy",
                           "--kube-version", "1.37.1"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode != 0 and "scope" in proc.stderr


def test_namespace_scope_renders_roles_per_namespace(k8s_tools: tuple[Path, Path]) -> None:
    docs = _render(k8s_tools[0], "--set", "watchNamespaces={team-a,team-b}")
    kinds = [(d["kind"], d["metadata"].get("namespace")) for d in docs]
    assert ("Role", "team-a") in kinds and ("RoleBinding", "team-b") in kinds
    assert ("KopfPeering", "team-a") in kinds and ("KopfPeering", "team-b") in kinds
    assert {d["metadata"]["name"] for d in docs if d["kind"] == "CustomResourceDefinition"} == {
        "reactorfederations.reactorfed.io", "kopfpeerings.kopf.dev", "clusterkopfpeerings.kopf.dev"}  # fmt: skip
    cluster_roles = [d for d in docs if d["kind"] == "ClusterRole"]
    assert len(cluster_roles) == 1  # read-only: Kopf's discovery, and the nodes (all or nothing)
    assert all(set(r["verbs"]) <= {"list", "watch"} for r in cluster_roles[0]["rules"])
    assert any(r["resources"] == ["nodes"] for r in cluster_roles[0]["rules"])
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--namespace=team-a" in args and "--namespace=team-b" in args and "--peering=reactorfed-operator" in args


def test_cluster_scope_and_least_privilege(k8s_tools: tuple[Path, Path]) -> None:
    docs = _render(k8s_tools[0], "--set", "scope=cluster")
    assert not [d for d in docs if d["kind"] in ("Role", "RoleBinding")]
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    for rule in role["rules"]:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"], rule
        if "secrets" in rule["resources"]:  # the members' keys, each by name: never list/watch every Secret
            assert set(rule["verbs"]) == {"get", "create", "patch", "delete"}
    assert any(d["kind"] == "ClusterKopfPeering" for d in docs)
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 1
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert "--all-namespaces" in container["args"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["image"] == "ghcr.io/reactorfed/reactorfed-operator:0.1.0"
    policies = [r for r in role["rules"] if "networkpolicies" in r["resources"]]
    assert policies == [{"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"],
                         "verbs": ["get", "create", "patch"]}]  # fmt: skip


def test_network_policy_values_reach_the_operator(k8s_tools: tuple[Path, Path]) -> None:
    docs = _render(k8s_tools[0], "--set", "networkPolicy.metricsNamespaces={monitoring,obs}")
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    env = {e["name"]: e for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["REACTORFED_METRICS_NAMESPACES"]["value"] == "monitoring,obs"
    assert env["REACTORFED_NETWORK_POLICY"]["value"] == "true"
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    off = _render(k8s_tools[0], "--set", "networkPolicy.enabled=false")
    env = {e["name"]: e for e in next(d for d in off if d["kind"] == "Deployment")
           ["spec"]["template"]["spec"]["containers"][0]["env"]}  # fmt: skip
    assert env["REACTORFED_NETWORK_POLICY"]["value"] == "false"


def test_the_dashboard_and_the_podmonitor_are_off_by_default_and_render_when_asked(k8s_tools: tuple[Path, Path]) -> None:
    import json

    assert not [d for d in _render(k8s_tools[0]) if d["kind"] == "PodMonitor" or
                d["metadata"].get("labels", {}).get("grafana_dashboard")]  # fmt: skip
    docs = _render(k8s_tools[0], "--set", "grafana.dashboard.enabled=true", "--set", "monitoring.podMonitor.enabled=true",
                   "--set", "watchNamespaces={team-a,team-b}", "--set", "monitoring.podMonitor.labels.release=kps")
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["labels"].get("grafana_dashboard") == "1")
    # the chart's file, whole: the one copy the Prometheus test (tests/observe/test_dashboard.py) checks
    assert json.loads(cm["data"]["reactorfed.json"]) == json.loads((CHART / "dashboards" / "reactorfed.json").read_text())
    pm = next(d for d in docs if d["kind"] == "PodMonitor")
    assert pm["metadata"]["labels"]["release"] == "kps"
    assert pm["spec"]["namespaceSelector"] == {"matchNames": ["team-a", "team-b"]}
    assert pm["spec"]["selector"]["matchLabels"]["app.kubernetes.io/managed-by"] == "reactorfed-operator"
    (ep,) = pm["spec"]["podMetricsEndpoints"]
    assert ep["port"] == "metrics" and ep["interval"] == "15s"  # the container port the operator names
    assert {r["targetLabel"] for r in ep["relabelings"]} == {"federation", "role"}
    cluster = next(d for d in _render(k8s_tools[0], "--set", "scope=cluster", "--set", "monitoring.podMonitor.enabled=true")
                   if d["kind"] == "PodMonitor")  # fmt: skip
    assert cluster["spec"]["namespaceSelector"] == {"any": True}


def test_the_external_metrics_api_is_off_by_default_and_complete_when_asked(k8s_tools: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    """``externalMetrics.enabled``: the APIService, its Service, the serving certificate (the
    APIService's caBundle verifies it for the Service's DNS name), the RBAC of an aggregated
    API server, and the operator's port, environment and mounted certificate."""
    assert not [d for d in _render(k8s_tools[0]) if d["kind"] == "APIService"]
    docs = _render(k8s_tools[0], "--set", "externalMetrics.enabled=true", "--set", "externalMetrics.port=7443")
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    api = by_kind[("APIService", "v1beta1.external.metrics.k8s.io")]["spec"]
    assert (api["group"], api["version"], api["service"]) == (
        "external.metrics.k8s.io", "v1beta1", {"name": "rf-reactorfed-operator-metrics-api", "namespace": "ops",
                                               "port": 443})  # fmt: skip
    assert "insecureSkipTLSVerify" not in api
    svc = by_kind[("Service", "rf-reactorfed-operator-metrics-api")]["spec"]
    assert svc["ports"] == [{"name": "https", "port": 443, "targetPort": "metrics-api"}]
    delegator = by_kind[("ClusterRoleBinding", "rf-reactorfed-operator-auth-delegator")]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    reader = by_kind[("RoleBinding", "rf-reactorfed-operator-auth-reader")]
    assert (reader["metadata"]["namespace"], reader["roleRef"]["name"]) == (
        "kube-system", "extension-apiserver-authentication-reader")
    container = by_kind[("Deployment", "rf-reactorfed-operator")]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "metrics-api", "containerPort": 7443} in container["ports"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["REACTORFED_METRICS_API_PORT"] == "7443"
    assert {"name": "metrics-api-tls", "mountPath": "/etc/reactorfed/metrics-api", "readOnly": True} in container[
        "volumeMounts"]
    # the caBundle verifies the serving certificate for the Service's name: a TLS handshake
    data = by_kind[("Secret", "rf-reactorfed-operator-metrics-api-tls")]["data"]
    for key in ("tls.crt", "tls.key"):
        (tmp_path / key).write_bytes(base64.b64decode(data[key]))
    assert base64.b64decode(data["ca.crt"]) == base64.b64decode(api["caBundle"])
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    client_ctx = ssl.create_default_context(cadata=base64.b64decode(api["caBundle"]).decode())
    a, b = socket.socketpair()
    with a, b:
        server = server_ctx.wrap_socket(a, server_side=True, do_handshake_on_connect=False)
        client = client_ctx.wrap_socket(b, server_hostname="rf-reactorfed-operator-metrics-api.ops.svc",
                                        do_handshake_on_connect=False)  # fmt: skip
        done = threading.Thread(target=server.do_handshake)
        done.start()
        client.do_handshake()
        done.join(10)
        assert client.getpeercert()["subject"] == ((("commonName", "rf-reactorfed-operator-metrics-api.ops.svc"),),)
