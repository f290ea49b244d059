"""kind-config.yaml gives the operator what its defaults expect: CPU workers and a GPU
worker carrying the learner's default node label and the nvidia.com/gpu taint."""

from __future__ import annotations

from pathlib import Path

import yaml

from reactorfed_operator.spec import GPU_NODE_LABEL, GPU_NODE_VALUE, GPU_RESOURCE

REPO = Path(__file__).resolve().parents[2]


def test_kind_config_has_cpu_workers_and_a_gpu_worker() -> None:
    config = yaml.safe_load((REPO / "kind-config.yaml").read_text())
    assert config["kind"] == "Cluster" and config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    roles = [n["role"] for n in config["nodes"]]
    assert roles.count("control-plane") == 1 and roles.count("worker") >= 3
    gpu = [n for n in config["nodes"] if (n.get("labels") or {}).get(GPU_NODE_LABEL) == GPU_NODE_VALUE]
    assert len(gpu) == 1
    patch = yaml.safe_load(gpu[0]["kubeadmConfigPatches"][0])
    assert patch["kind"] == "JoinConfiguration"
    assert {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"} in patch["nodeRegistration"]["taints"]
    cpu = [n for n in config["nodes"] if n["role"] == "worker" and n not in gpu]
    assert len(cpu) >= 2
