"""Pure functions turning a federation's spec into its pods: the RTI's, each federate
group's (a pod per federate, a pod per bank member), with the program's volumes, the
restricted security context and the placement on CPU or GPU nodes. The identity they carry
(labels, names, annotations): :mod:`.manifests`. Each pod mounts its own member's key
(:mod:`.member_keys`), or, in the compatibility mode (``spec.secretRef`` given), reads the
federation's shared secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .groups import FederateGroup
from .manifests import (
    ANNOTATION_FEDERATE,
    ANNOTATION_MAX,
    ANNOTATION_SHAPE,
    ANNOTATION_WIDTH,
    LABEL_INCARNATION,
    PROGRAM_DIR,
    RTI_LAYOUT,
    Federation,
    federation_id,
    metadata,
    pod_name,
    rti_host,
    secret_name,
)
from .member_keys import with_member_key, with_rti_keys
from .schema import DEFAULTS
from .schema_parts import POD_IP_ENV, SECRET_ENV, THREAD_ENV_VARS
from .spec import (
    GPU_NODE_LABEL,
    GPU_NODE_VALUE,
    GPU_RESOURCE,
    FederationSpec,
    program_params,
)

__all__ = [
    "RUN_AS",
    "container_security",
    "federation_pods",
    "group_pod",
    "pod_security",
    "program_volumes",
    "rti_pod",
    "sampler_pod",
    "thread_env",
]

RUN_AS = 10001  # the images' numeric non-root user and group


def _params(s: FederationSpec, width: int, max_width: int) -> list[str]:
    return [a for key, value in sorted(program_params(s, width, max_width)) for a in ("--param", f"{key}={value}")]


def _common_args(fed: Federation, width: int, max_width: int, *, params: bool = True) -> list[str]:
    """The flags every process of the federation gets (``params``: and the program's
    parameters; not the RTI's, which has the program's layout instead)."""
    s = fed.spec
    args: list[str] = ["--federation-id", federation_id(fed)]
    if params:
        args += _params(s, width, max_width)
    if s.fast:
        args.append("--fast")
    if s.timeout is not None:
        args += ["--timeout", s.timeout]
    if s.join_timeout is not None:
        args += ["--join-timeout", s.join_timeout]
    if s.advance_message_interval is not None:
        args += ["--advance-message-interval", s.advance_message_interval]
    if s.coordination != "centralized":  # (the RTI's choice; a federate's flag agrees)
        args += ["--coordination", s.coordination]
    if s.lead_window != DEFAULTS["coordination.leadWindow"]:  # (the RTI's choice, as the mode is)
        args += ["--lead-window", s.lead_window]
    if s.observability.otlp_endpoint is not None:
        args += ["--otlp-endpoint", s.observability.otlp_endpoint]
    args += ["--threads", str(s.program.threads)]
    return [*args, "--allow-thread-change"] if s.program.allow_thread_change else args


def thread_env(s: FederationSpec) -> list[dict[str, Any]]:
    """The thread variables of every container that runs the program: spec.program.threads."""
    return [{"name": k, "value": str(s.program.threads)} for k in THREAD_ENV_VARS]


def _env(fed: Federation, extra: tuple[tuple[str, str], ...] = ()) -> list[dict[str, Any]]:
    s = fed.spec
    pairs = [*s.program.env, *extra]
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in pairs]
    # The run's thread count (also --threads), never the pod's CPU or its node's size: it
    # changes torch's float sums, so the weights a seed gives.
    env += thread_env(s)
    if s.program.config_map:
        env.append({"name": "PYTHONPATH", "value": PROGRAM_DIR})
    env += [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": POD_IP_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    if s.shared_secret:
        env.append({"name": SECRET_ENV,
                    "valueFrom": {"secretKeyRef": {"name": secret_name(fed), "key": s.secret_key}}})
    return env


def program_volumes(s: FederationSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The volumes, and their mounts, of every pod that runs the program: ``/tmp`` (an
    emptyDir: the root filesystem is read-only) and the program's ConfigMap, if any, at
    :data:`PROGRAM_DIR`."""
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    mounts: list[dict[str, Any]] = [{"name": "tmp", "mountPath": "/tmp"}]
    if s.program.config_map:
        volumes.append({"name": "program", "configMap": {"name": s.program.config_map}})
        mounts.append({"name": "program", "mountPath": PROGRAM_DIR, "readOnly": True})
    return volumes, mounts


def container_security() -> dict[str, Any]:
    """The ``securityContext`` of every container of ours: no privilege escalation, a
    read-only root filesystem, no capabilities."""
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def pod_security() -> dict[str, Any]:
    """The hardening of every pod of ours (fields of its spec): no service-account token,
    no service links, a non-root user (files in the group :data:`RUN_AS`), the runtime's
    default seccomp profile."""
    return {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "fsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _avoid_gpu_nodes() -> dict[str, Any]:
    """Prefer nodes without the GPU label: CPU work should not occupy GPU machines."""
    term = {"matchExpressions": [{"key": GPU_NODE_LABEL, "operator": "DoesNotExist"}]}
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": term}]}}


def _pod(
    fed: Federation,
    name: str,
    role: str,
    federate: str,
    command: list[str],
    ports: list[dict[str, Any]],
    resources: Mapping[str, Any],
    placement: dict[str, Any],
    incarnation: int,
    width: int,
    max_width: int,
    extra_volumes: list[tuple[dict[str, Any], dict[str, Any]]] | None = None,
    image: str | None = None,
    env: tuple[tuple[str, str], ...] = (),
    init: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    s = fed.spec
    volumes, mounts = program_volumes(s)
    for vol, mount in extra_volumes or []:
        volumes.append(vol)
        mounts.append(mount)
    obs = s.observability
    if obs.trace_claim is not None:
        # every incarnation in its own folder: a restart never mixes two runs' records
        command = [*command, "--trace", f"{obs.trace_mount}/{incarnation}"]
        volumes.append({"name": "traces", "persistentVolumeClaim": {"claimName": obs.trace_claim}})
        mounts.append({"name": "traces", "mountPath": obs.trace_mount})
    meta = metadata(fed, name, role)
    meta["labels"][LABEL_INCARNATION] = str(incarnation)
    meta["annotations"] = {ANNOTATION_FEDERATE: federate, ANNOTATION_WIDTH: str(width)}
    if max_width > 0:
        meta["annotations"][ANNOTATION_MAX] = str(max_width)
    if s.shape:
        meta["annotations"][ANNOTATION_SHAPE] = s.shape
    container: dict[str, Any] = {
        "name": role,
        "image": image or s.program.image,
        "imagePullPolicy": s.program.image_pull_policy,
        "command": command,
        "env": _env(fed, env),
        "ports": ports,
        "resources": {k: {name: str(q) for name, q in v.items()} for k, v in resources.items()},
        "volumeMounts": mounts,
        "securityContext": container_security(),
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": s.grace_seconds,
        **pod_security(),
        **({"initContainers": init} if init else {}),
        "containers": [container],
        "volumes": volumes,
        **placement,
    }
    if s.program.image_pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": n} for n in s.program.image_pull_secrets]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}


def _placement(node_selector: Mapping[str, str], tolerations: Any, affinity: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node_selector:
        out["nodeSelector"] = dict(node_selector)
    if tolerations:
        out["tolerations"] = [dict(t) for t in tolerations]
    if affinity:
        out["affinity"] = affinity
    return out


def rti_pod(fed: Federation, incarnation: int, width: int, max_width: int | None = None) -> dict[str, Any]:
    """The RTI's pod: an init container (the program's image) writes the federation's
    layout, which the RTI is given instead of the program (``reactorfed rti --layout``):
    the RTI imports neither the program nor torch, and runs ``spec.rti.image`` when set
    (an image without torch), else the program's."""
    s = fed.spec
    most = s.max_replicas if max_width is None else max_width
    command = [
        "reactorfed", "rti", "--layout", RTI_LAYOUT,
        "--host", "0.0.0.0", "--port", str(s.rti_port), "--metrics-port", str(s.metrics_port), "--metrics-addr", "0.0.0.0",
        *_common_args(fed, width, most, params=False),
    ]  # fmt: skip
    where = {"name": "layout", "mountPath": RTI_LAYOUT.rsplit("/", 1)[0]}
    _, mounts = program_volumes(s)
    writer = {
        "name": "layout",
        "image": s.program.image,
        "imagePullPolicy": s.program.image_pull_policy,
        "command": ["reactorfed", "layout", s.program.entrypoint, *_params(s, width, most), "--output", RTI_LAYOUT],
        # the program's environment (its constructor may read it), not the federation's secret
        "env": [e for e in _env(fed) if e["name"] != SECRET_ENV],
        "resources": {k: {name: str(q) for name, q in v.items()} for k, v in s.rti.resources.items()},
        "volumeMounts": [*mounts, where],
        "securityContext": container_security(),
    }
    ports = [
        {"name": "rti", "containerPort": s.rti_port, "protocol": "TCP"},
        {"name": "metrics", "containerPort": s.metrics_port, "protocol": "TCP"},
    ]
    placement = _placement(s.rti.node_selector, s.rti.tolerations, _avoid_gpu_nodes())
    pod = _pod(fed, f"{fed.name}-rti", "rti", "rti", command, ports, s.rti.resources, placement, incarnation, width,
               most, extra_volumes=[({"name": "layout", "emptyDir": {}}, {**where, "readOnly": True})], image=s.rti.image,
               init=[writer])
    return pod if s.shared_secret else with_rti_keys(pod, fed)


def group_pod(
    fed: Federation, group: FederateGroup, federate: str, incarnation: int, width: int, max_width: int | None = None
) -> dict[str, Any]:
    """The pod of one federate of ``group``. ``width`` and ``max_width`` are the
    incarnation's (the scale group's start width and elastic maximum; the spec's maximum
    when None), the same for every pod of it, whenever it is made."""
    s = fed.spec
    most = s.max_replicas if max_width is None else max_width
    command = [
        "reactorfed", "federate", s.program.entrypoint,
        "--federate", federate,
        "--rti", f"{rti_host(fed)}:{s.rti_port}",
        "--advertise-host", f"$({POD_IP_ENV})",
        "--data-port", str(s.data_port),
        "--metrics-port", str(s.federate_metrics_port), "--metrics-addr", "0.0.0.0",  # the NetworkPolicy guards it
        *_common_args(fed, width, most),
    ]  # fmt: skip
    ports = [
        {"name": "data", "containerPort": s.data_port, "protocol": "TCP"},
        {"name": "metrics", "containerPort": s.federate_metrics_port, "protocol": "TCP"},
    ]
    resources = {k: dict(v) for k, v in group.resources.items()}
    selector = dict(group.node_selector)
    tolerations = list(group.tolerations)
    affinity = dict(group.affinity) if group.affinity else None
    if group.gpus > 0:
        resources.setdefault("limits", {})[GPU_RESOURCE] = group.gpus
        selector = selector or {GPU_NODE_LABEL: GPU_NODE_VALUE}
        if not any(t.get("key") == GPU_RESOURCE for t in tolerations):
            tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    elif affinity is None:
        affinity = _avoid_gpu_nodes()
    extra: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if group.holds_state and s.checkpoint is not None:
        claim = s.checkpoint.claim_name or f"{fed.name}-checkpoint"
        command += ["--checkpoint-dir", s.checkpoint.mount_path]
        extra.append((
            {"name": "checkpoint", "persistentVolumeClaim": {"claimName": claim}},
            {"name": "checkpoint", "mountPath": s.checkpoint.mount_path},
        ))  # fmt: skip
    by_name = {str(v["name"]): dict(v) for v in group.volumes}
    extra += [(by_name.pop(str(m["name"])), dict(m)) for m in group.volume_mounts if str(m["name"]) in by_name]
    pod = _pod(
        fed, pod_name(fed, federate), group.role, federate, command, ports, resources,
        _placement(selector, tolerations, affinity), incarnation, width, most, extra, image=group.image, env=group.env,
    )  # fmt: skip
    pod["spec"]["volumes"] += list(by_name.values())  # volumes mounted twice or not at all
    return pod if s.shared_secret else with_member_key(pod, fed, federate)


def sampler_pod(fed: Federation, slot: int, incarnation: int, width: int, max_width: int | None = None) -> dict[str, Any]:
    """The pod of sampler slot ``slot`` (federate ``samplers[slot]``) of an incarnation that
    started ``width`` wide: a new pod made while it runs gets the same parameters as the
    pods it started with."""
    group = fed.spec.scale_group
    assert group is not None and group.bank is not None, "no group is scaled"
    return group_pod(fed, group, f"{group.bank}[{slot}]", incarnation, width, max_width)


def federation_pods(
    fed: Federation, incarnation: int, width: int | None = None, max_width: int | None = None
) -> list[dict[str, Any]]:
    """Every pod of one incarnation of the federation: the RTI first, then the federates,
    group by group (the scale group ``width`` wide)."""
    n = fed.spec.replicas if width is None else width
    pods = [rti_pod(fed, incarnation, n, max_width)]
    for g in fed.spec.groups:
        pods += [group_pod(fed, g, name, incarnation, n, max_width) for name in g.federates(fed.spec.width_of(g, n))]
    return pods
