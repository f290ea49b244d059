"""The federation's NetworkPolicy enforced, and its namespaces under the ``restricted`` Pod
Security Standard, on the kind cluster (kube-network-policies enforces policies there:
scripts/kind.sh).

A federation runs; three probe pods, each made to pass ``restricted`` admission, try TCP
connections to its ports: a pod of the same namespace without the federation's label, a
pod carrying the label, and a pod in the operator's namespace (where the metrics scraper
is admitted from). A dropped SYN times out ("blocked"); a connection made is "open"."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import NAMESPACE, OPERATOR_NS, Kind, wait_for
from .federations import apply, clean_slate, load_example, pods, small_requests

pytestmark = [pytest.mark.kind, pytest.mark.timeout(900)]

NAME = "sensor-fusion"
PROBE = """
import json, socket, sys
out = {}
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=4).close()
        out[target] = "open"
    except socket.timeout:
        out[target] = "blocked"
    except OSError as e:
        out[target] = f"error: {e}"
print(json.dumps(out))
"""


def _probe_pod(name: str, namespace: str, image: str, targets: list[str], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "netpol-probe", **labels}},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "probe", "image": image, "imagePullPolicy": "Never",
                "command": ["python", "-c", PROBE, *targets],
                "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]}},
            }],
        },
    }  # fmt: skip


def _probe(k: Kind, pods_: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Run the probe pods at once; each one's verdict per target."""
    for p in pods_:
        k.kubectl("apply", "-f", "-", input=json.dumps(p))
    verdicts = {}
    try:
        for p in pods_:
            name, ns = p["metadata"]["name"], p["metadata"]["namespace"]
            wait_for(f"probe {name} to end", lambda n=name, s=ns: k.get_json("pod", n, "-n", s)["status"].get("phase")
                     in ("Succeeded", "Failed") or None, 120, interval=1)  # fmt: skip
            out = k.kubectl("logs", name, "-n", ns).stdout.strip().splitlines()
            verdicts[name] = json.loads(out[-1])
    finally:
        for p in pods_:
            k.kubectl("delete", "pod", p["metadata"]["name"], "-n", p["metadata"]["namespace"],
                      "--ignore-not-found", "--wait=false", check=False)  # fmt: skip
    return verdicts


def _running(k: Kind) -> dict[str, dict[str, Any]] | None:
    ps = pods(k, NAME)
    ready = {n: p for n, p in ps.items() if p["status"].get("phase") == "Running" and p["status"].get("podIP")}
    return ready if any(n.endswith("-rti") for n in ready) and any(n.endswith("-fusion") for n in ready) else None


def _data_port(pod: dict[str, Any]) -> int:
    args = pod["spec"]["containers"][0].get("args", []) + pod["spec"]["containers"][0].get("command", [])
    return int(args[args.index("--data-port") + 1])


def test_namespaces_enforce_restricted_pod_security(operator: Kind) -> None:
    """Both namespaces enforce ``restricted`` (the operator fixture made them so, before any
    pod), so every pod of the suite's federations and the operator's own was admitted under
    it; a pod asking for privileges is refused there."""
    k = operator
    for ns in (NAMESPACE, OPERATOR_NS):
        labels = k.get_json("namespace", ns)["metadata"].get("labels", {})
        assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", (ns, labels)
    bad = k.kubectl("run", "privileged-probe", "-n", NAMESPACE, "--image=busybox", "--restart=Never",
                    "--dry-run=server", "--privileged", check=False)  # fmt: skip
    assert bad.returncode != 0 and "violates PodSecurity" in bad.stderr, bad


def test_only_the_federation_and_the_scraper_reach_its_ports(operator: Kind, images: dict[str, str]) -> None:
    k = operator
    clean_slate(k, NAME)
    docs = load_example("sensor-fusion.yaml")
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    small_requests(fed)
    fed["spec"]["program"]["params"].update({"ticks": "200000", "period_ms": "10"})  # runs until deleted
    fed["spec"]["coordination"] = {"fast": False}  # real time: the pods stay up while the probes run
    apply(k, docs)
    try:
        running = wait_for("the RTI and fusion pods running", lambda: _running(k), 240, interval=2)
        rti = next(p for n, p in running.items() if n.endswith("-rti"))
        fusion = next(p for n, p in running.items() if n.endswith("-fusion"))
        spec = fed["spec"].get("rti", {})
        rti_port, metrics_port = spec.get("port", 15045), spec.get("metricsPort", 9100)
        links = [f"{rti['status']['podIP']}:{rti_port}", f"{fusion['status']['podIP']}:{_data_port(fusion)}"]
        metrics = f"{rti['status']['podIP']}:{metrics_port}"
        image = images["operator"]
        verdicts = _probe(k, [
            _probe_pod("outsider", NAMESPACE, image, [*links, metrics], {}),
            _probe_pod("insider", NAMESPACE, image, links, {"reactorfed.io/federation": NAME}),
            _probe_pod("scraper", OPERATOR_NS, image, [metrics, links[0]], {}),
        ])  # fmt: skip
    finally:
        k.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--ignore-not-found", "--wait=false", check=False)
    assert verdicts["outsider"] == {t: "blocked" for t in [*links, metrics]}, verdicts
    assert verdicts["insider"] == {t: "open" for t in links}, verdicts
    assert verdicts["scraper"] == {metrics: "open", links[0]: "blocked"}, verdicts
