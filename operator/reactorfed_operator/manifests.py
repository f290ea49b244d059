"""Pure functions turning a :class:`~reactorfed_operator.spec.FederationSpec` into manifests:
the federation's identity (its labels, names, owner reference) and the objects beside its
pods (the Service, the checkpoint volume; the members' keys: :mod:`.member_keys`). The pods: :mod:`.pods`.

Nothing here talks to a cluster: every function takes the federation's identity (name,
namespace, uid) and its parsed spec and returns plain dicts ready for the API server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import API_VERSION, KIND
from .spec import FederationSpec

__all__ = [
    "ANNOTATION_FEDERATE",
    "ANNOTATION_MAX",
    "ANNOTATION_SHAPE",
    "ANNOTATION_WIDTH",
    "LABEL_FEDERATION",
    "LABEL_INCARNATION",
    "LABEL_ROLE",
    "PROGRAM_DIR",
    "RTI_LAYOUT",
    "Federation",
    "checkpoint_pvc",
    "federation_id",
    "labels",
    "metadata",
    "owner_reference",
    "pod_name",
    "rti_host",
    "rti_service",
    "sampler_selector",
    "secret_name",
]

LABEL_FEDERATION = "reactorfed.io/federation"
LABEL_ROLE = "reactorfed.io/role"
LABEL_INCARNATION = "reactorfed.io/incarnation"
ANNOTATION_WIDTH = "reactorfed.io/samplers"  # the width the incarnation started with (its param)
#: an elastic incarnation's maximum width (its maxParam); absent on a fixed bank's pods
ANNOTATION_MAX = "reactorfed.io/max-samplers"
ANNOTATION_FEDERATE = "reactorfed.io/federate"
#: the groups' shape the incarnation started with (spec.federateGroups only; see FederationSpec.shape)
ANNOTATION_SHAPE = "reactorfed.io/groups"
PROGRAM_DIR = "/opt/reactorfed/program"
#: where the RTI pod's init container writes the federation's layout, and its RTI reads it
RTI_LAYOUT = "/var/run/reactorfed/layout.json"


@dataclass(frozen=True)
class Federation:
    """Identity of one ReactorFederation object."""

    name: str
    namespace: str
    uid: str
    spec: FederationSpec


def owner_reference(fed: Federation) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": fed.name,
        "uid": fed.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def labels(fed: Federation, role: str | None = None) -> dict[str, str]:
    out = {
        "app.kubernetes.io/name": "reactorfed",
        "app.kubernetes.io/instance": fed.name,
        "app.kubernetes.io/managed-by": "reactorfed-operator",
        LABEL_FEDERATION: fed.name,
    }
    if role is not None:
        out["app.kubernetes.io/component"] = role
        out[LABEL_ROLE] = role
    return out


def sampler_selector(fed: Federation) -> str:
    """The label selector of the scale group's pods (the scale subresource's selector)."""
    group = fed.spec.scale_group
    return f"{LABEL_FEDERATION}={fed.name},{LABEL_ROLE}={group.role if group else 'none'}"


def metadata(fed: Federation, name: str, role: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": fed.namespace,
        "labels": labels(fed, role),
        "ownerReferences": [owner_reference(fed)],
    }


def pod_name(fed: Federation, federate: str) -> str:
    """``samplers[3]`` of federation ``pong`` -> ``pong-samplers-3`` (a DNS label)."""
    slug = re.sub(r"[^a-z0-9]+", "-", federate.lower()).strip("-")
    return f"{fed.name}-{slug}"


def federation_id(fed: Federation) -> str:
    return f"{fed.namespace}.{fed.name}"


def secret_name(fed: Federation) -> str:
    """The shared secret's Secret (the compatibility mode: spec.secretRef names it)."""
    assert fed.spec.secret_name is not None, "a key per member: no shared secret"
    return fed.spec.secret_name


def rti_host(fed: Federation) -> str:
    return f"{fed.name}-rti.{fed.namespace}.svc"


def checkpoint_pvc(fed: Federation) -> dict[str, Any] | None:
    """The learner's checkpoint PVC when spec.checkpoint.size asks the operator for one."""
    ck = fed.spec.checkpoint
    if ck is None or ck.size is None:
        return None
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": ck.size}},
    }
    if ck.storage_class:
        spec["storageClassName"] = ck.storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(fed, f"{fed.name}-checkpoint", "checkpoint"),
        "spec": spec,
    }


def rti_service(fed: Federation) -> dict[str, Any]:
    s = fed.spec
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(fed, f"{fed.name}-rti", "rti"),
        "spec": {
            "selector": {LABEL_FEDERATION: fed.name, LABEL_ROLE: "rti"},
            "ports": [
                {"name": "rti", "port": s.rti_port, "targetPort": "rti", "protocol": "TCP"},
                {"name": "metrics", "port": s.metrics_port, "targetPort": "metrics", "protocol": "TCP"},
            ],
        },
    }
