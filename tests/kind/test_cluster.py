"""A real kind cluster from kind-config.yaml (scripts/kind.sh): its nodes, the pod network
between nodes, DNS for Services, and a provisioner for PVCs."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from .conftest import Kind, wait_for

pytestmark = [pytest.mark.kind, pytest.mark.timeout(1800)]

NS = f"kind-smoke-{os.getpid()}"


def _pod(name: str, node: str, image: str, command: list[str], **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 1,
        "nodeSelector": {"kubernetes.io/hostname": node},  # scheduled: a PVC waits for it
        "containers": [
            {"name": "main", "image": image, "imagePullPolicy": "Never", "command": command}
        ],
        "tolerations": [{"operator": "Exists"}],
    }
    spec.update(extra.pop("spec", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, **extra},
        "spec": spec,
    }


def test_nodes_from_kind_config(kind_cluster: Kind) -> None:
    nodes = kind_cluster.nodes()
    assert len(nodes) == 4, sorted(nodes)
    for name, node in nodes.items():
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
        assert ready == "True", f"{name} is not Ready"
    gpu = [
        n
        for n in nodes.values()
        if n["metadata"]["labels"].get("reactorfed.io/accelerator") == "nvidia"
    ]
    assert len(gpu) == 1
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in gpu[0][
        "spec"
    ].get("taints", [])
    cpu = [n for n in nodes.values() if n["metadata"]["labels"].get("reactorfed.io/pool") == "cpu"]
    assert len(cpu) == 2


def test_pod_network_dns_and_storage(kind_cluster: Kind, images: dict[str, str]) -> None:
    """A server on one CPU worker, a client on the other reaching it by its Service's DNS
    name, and a pod writing to a PVC (local-path-provisioner)."""
    k = kind_cluster
    workers = sorted(
        n
        for n, v in k.nodes().items()
        if v["metadata"]["labels"].get("reactorfed.io/pool") == "cpu"
    )
    image = images["operator"]  # the smallest of the three with Python; it is on every CPU worker
    server = _pod("server", workers[0], image, ["python", "-m", "http.server", "8080", "--directory", "/opt/venv"],
                  labels={"app": "server"})  # fmt: skip
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "server", "namespace": NS},
        "spec": {"selector": {"app": "server"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    # (a Service's rules reach the nodes' kube-proxy a moment after its endpoint is ready,
    # longer on a loaded machine: the client tries for up to a minute)
    client_code = (
        "import socket, time, urllib.request\n"
        f"print(socket.gethostbyname('server.{NS}.svc.cluster.local'))\n"
        "for attempt in range(12):\n"
        "    try:\n"
        f"        print(urllib.request.urlopen('http://server.{NS}.svc.cluster.local/', timeout=5).status); break\n"
        "    except OSError as e:\n"
        "        print('retrying:', e, flush=True); time.sleep(5)\n"
        "else:\n"
        "    raise SystemExit('the Service never answered')\n"
    )
    client = _pod("client", workers[1], image, ["python", "-c", client_code])
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Mi"}}},
    }
    writer = _pod("writer", workers[0], image, ["sh", "-c", "echo kept > /data/file && cat /data/file"],
                  spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                        "securityContext": {"fsGroup": 10001}})  # fmt: skip
    writer["spec"]["containers"][0]["volumeMounts"] = [{"name": "d", "mountPath": "/data"}]
    k.kubectl("create", "namespace", NS)
    try:
        k.kubectl(
            "apply",
            "-f",
            "-",
            input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [server, service]}),
        )
        k.kubectl(
            "wait", "-n", NS, "--for=condition=Ready", "pod/server", "--timeout=120s", timeout=150
        )
        k.kubectl(
            "apply",
            "-f",
            "-",
            input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [client, pvc, writer]}),
        )

        def done(name: str) -> str | None:
            phase = k.get_json("pod", name, "-n", NS)["status"].get("phase")
            return phase if phase in ("Succeeded", "Failed") else None

        for name in ("client", "writer"):
            phase = wait_for(f"pod {name} to finish", lambda n=name: done(n), 180)  # type: ignore[misc]
            logs = k.kubectl("logs", "-n", NS, name, check=False)
            assert phase == "Succeeded", f"{name}: {phase}\n{logs.stdout}{logs.stderr}"
        out = k.kubectl("logs", "-n", NS, "client").stdout.split()
        assert out[-1] == "200", out
        server_ip = k.get_json("service", "server", "-n", NS)["spec"]["clusterIP"]
        assert out[0] == server_ip
        assert k.kubectl("logs", "-n", NS, "writer").stdout.strip() == "kept"
        assert k.get_json("pvc", "data", "-n", NS)["status"]["phase"] == "Bound"
    finally:
        k.kubectl("delete", "namespace", NS, "--wait=false", check=False)
