"""The operator's I/O with the API server (kubernetes client), kept apart from the logic.

Every function is idempotent: creating what exists and deleting what is gone are no-ops,
so a reconcile pass can be repeated or interrupted at any point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from . import GROUP, PLURAL, VERSION
from .discovery_pod import DiscoveryPod, observe_discovery
from .discovery_pod import pod_name as discovery_pod_name
from .manifests import (
    ANNOTATION_FEDERATE,
    ANNOTATION_MAX,
    ANNOTATION_SHAPE,
    ANNOTATION_WIDTH,
    LABEL_FEDERATION,
    LABEL_INCARNATION,
    LABEL_ROLE,
    Federation,
)
from .observed import ObservedPod
from .phase import PodPhase, Role
from .placement import GATE, Node, node_from_api

__all__ = ["Cluster", "load_config", "observe_pod"]


def load_config() -> None:
    """In-cluster credentials when running in a pod, else $KUBECONFIG / ~/.kube/config."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()


def observe_pod(pod: Mapping[str, Any]) -> ObservedPod | None:
    """An API pod (as a dict) -> :class:`ObservedPod`; None for pods not made by us."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    try:
        incarnation = int(labels[LABEL_INCARNATION])
        width = int(annotations[ANNOTATION_WIDTH])
        most = int(annotations.get(ANNOTATION_MAX) or 0)
        role = labels[LABEL_ROLE]
    except (KeyError, ValueError):
        return None
    slot = re.fullmatch(r"[a-z_][a-z0-9_]*\[([0-9]+)\]", str(annotations.get(ANNOTATION_FEDERATE) or ""))
    status = pod.get("status") or {}
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    ready = (conditions.get("Ready") or {}).get("status") == "True"
    message = None
    sched = conditions.get("PodScheduled") or {}
    if sched.get("status") == "False" and sched.get("reason") == "Unschedulable":
        message = str(sched.get("message") or "unschedulable")
    phase = PodPhase.parse(status.get("phase"))
    if phase is PodPhase.FAILED:
        message = status.get("message") or status.get("reason")
        for cs in status.get("containerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated") or {}
            if term:
                message = _exit(term)
        for cs in status.get("initContainerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated") or {}
            if term and term.get("exitCode") != 0:  # (the RTI's layout writer: the RTI never ran)
                message = f"init container {cs.get('name')}: {_exit(term)}"
    return ObservedPod(
        name=str(meta.get("name")),
        role=Role(role) if role in Role.__members__.values() else str(role),
        incarnation=incarnation,
        width=width,
        phase=phase,
        ready=ready,
        deleting=meta.get("deletionTimestamp") is not None,
        node=(pod.get("spec") or {}).get("nodeName"),
        ip=status.get("podIP"),
        message=message,
        slot=int(slot.group(1)) if slot else None,
        max_width=most,
        shape=str(annotations.get(ANNOTATION_SHAPE) or ""),
        gated=any(g.get("name") == GATE for g in (pod.get("spec") or {}).get("schedulingGates") or ()),
    )


def _exit(term: Mapping[str, Any]) -> str:
    return f"exit code {term.get('exitCode')}" + (f", {term.get('reason')}" if term.get("reason") else "")


class Cluster:
    """Thin wrapper over CoreV1Api for one namespace."""

    def __init__(self, namespace: str, api: client.CoreV1Api | None = None) -> None:
        self.namespace = namespace
        self.core = api or client.CoreV1Api()
        self.custom = client.CustomObjectsApi(self.core.api_client)
        self.networking = client.NetworkingV1Api(self.core.api_client)
        self._sanitize = client.ApiClient().sanitize_for_serialization

    def federation(self, name: str) -> dict[str, Any] | None:
        """The ReactorFederation as stored now (not as of the event that woke us)."""
        try:
            obj = self.custom.get_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return obj if isinstance(obj, dict) else None

    def write_status(self, name: str, status: Mapping[str, Any]) -> None:
        """Merge-patch the status subresource (None values remove keys)."""
        try:
            self.custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, self.namespace, PLURAL, name, {"status": dict(status)}
            )
        except ApiException as exc:
            if exc.status != 404:
                raise

    def pods(self, fed: Federation) -> list[ObservedPod]:
        selector = f"{LABEL_FEDERATION}={fed.name}"
        items = self.core.list_namespaced_pod(self.namespace, label_selector=selector).items
        observed = []
        for item in items:
            raw = self._sanitize(item)
            owners = (raw.get("metadata") or {}).get("ownerReferences") or []
            if not any(o.get("uid") == fed.uid for o in owners):
                continue  # same label, other owner: not ours to touch
            pod = observe_pod(raw)
            if pod is not None:
                observed.append(pod)
        return observed

    def discovery_pod(self, fed: Federation) -> DiscoveryPod | None:
        """The federation's discovery pod, if one of ours exists."""
        try:
            raw = self._sanitize(self.core.read_namespaced_pod(discovery_pod_name(fed), self.namespace))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        if not any(o.get("uid") == fed.uid for o in (raw.get("metadata") or {}).get("ownerReferences") or []):
            return None
        return observe_discovery(raw)

    def pod_log(self, name: str, limit_bytes: int = 4 << 20) -> str:
        """A pod's log (its only container's), "" when it cannot be read: the discovery
        pod's answer when its termination message cannot hold it (needs ``pods/log``)."""
        try:
            # raw bytes: the client would json-decode a log that is one JSON object and hand
            # back its Python repr (kubernetes-client/python#811)
            response = self.core.read_namespaced_pod_log(name, self.namespace, limit_bytes=limit_bytes,
                                                         _preload_content=False)  # fmt: skip
        except ApiException as exc:
            if exc.status in (400, 403, 404):
                return ""
            raise
        data = getattr(response, "data", b"")
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")

    def config_map_text(self, name: str, key: str) -> str | None:
        """One key of a ConfigMap (the program's file), None when either is missing."""
        try:
            obj: Any = self.core.read_namespaced_config_map(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        data = {**(obj.binary_data or {}), **(obj.data or {})}
        value = data.get(key)
        return None if value is None else str(value)

    def create(self, manifest: Mapping[str, Any]) -> bool:
        """Create the object; False if it already existed."""
        kind = manifest["kind"]
        creators: dict[str, Callable[..., Any]] = {
            "Pod": self.core.create_namespaced_pod,
            "Service": self.core.create_namespaced_service,
            "Secret": self.core.create_namespaced_secret,
            "ConfigMap": self.core.create_namespaced_config_map,
            "PersistentVolumeClaim": self.core.create_namespaced_persistent_volume_claim,
            "NetworkPolicy": self.networking.create_namespaced_network_policy,
        }
        create = creators[kind]
        try:
            create(self.namespace, dict(manifest))
        except ApiException as exc:
            if exc.status == 409:
                return False
            raise
        return True

    def put(self, manifest: Mapping[str, Any]) -> None:
        """Create the Secret or ConfigMap, or patch the one of that name to it (its data keys
        and annotations: the operator's objects have no others)."""
        if self.create(manifest):
            return
        patchers: dict[str, Callable[..., Any]] = {"Secret": self.core.patch_namespaced_secret,
                                                   "ConfigMap": self.core.patch_namespaced_config_map}
        body = {k: v for k, v in manifest.items() if k in ("metadata", "data", "stringData")}
        patchers[manifest["kind"]](manifest["metadata"]["name"], self.namespace, body)

    def read(self, kind: str, name: str) -> dict[str, Any] | None:
        """A Secret or ConfigMap as a dict (None: there is none)."""
        readers: dict[str, Callable[..., Any]] = {"Secret": self.core.read_namespaced_secret,
                                                  "ConfigMap": self.core.read_namespaced_config_map}
        try:
            return cast(dict[str, Any], self._sanitize(readers[kind](name, self.namespace)))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def annotate_pod(self, name: str, annotations: Mapping[str, str]) -> None:
        """Merge ``annotations`` into a Pod's (gone: nothing to do)."""
        try:
            self.core.patch_namespaced_pod(name, self.namespace, {"metadata": {"annotations": dict(annotations)}})
        except ApiException as exc:
            if exc.status != 404:
                raise

    def delete_secret(self, name: str) -> None:
        try:
            self.core.delete_namespaced_secret(name, self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def ensure_policy(self, manifest: Mapping[str, Any]) -> str | None:
        """Create the NetworkPolicy, or bring its spec back to ``manifest``'s (the ports or
        the metrics namespaces changed, or someone edited it): "created", "updated" or None."""
        name = manifest["metadata"]["name"]
        if self.create(manifest):
            return "created"
        current = self._sanitize(self.networking.read_namespaced_network_policy(name, self.namespace))
        if current.get("spec") == manifest["spec"]:
            return None
        # A merge patch would keep rules the manifest no longer has: replace the spec.
        patch = [{"op": "replace", "path": "/spec", "value": manifest["spec"]}]
        self.networking.patch_namespaced_network_policy(name, self.namespace, patch)
        return "updated"

    def exists(self, kind: str, name: str) -> bool:
        readers: dict[str, Callable[..., Any]] = {
            "Service": self.core.read_namespaced_service,
            "Secret": self.core.read_namespaced_secret,
            "ConfigMap": self.core.read_namespaced_config_map,
            "PersistentVolumeClaim": self.core.read_namespaced_persistent_volume_claim,
        }
        read = readers[kind]
        try:
            read(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def data_keys(self, kind: str, name: str) -> set[str] | None:
        """Keys of a Secret's or ConfigMap's data; None when the object does not exist."""
        try:
            if kind == "Secret":
                obj: Any = self.core.read_namespaced_secret(name, self.namespace)
                data = {**(obj.data or {}), **(obj.string_data or {})}
            else:
                obj = self.core.read_namespaced_config_map(name, self.namespace)
                data = {**(obj.data or {}), **(obj.binary_data or {})}
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return set(data)

    def nodes(self) -> list[Node] | None:
        """The nodes with what is bound to them, for placement.check; None when the operator
        may not list nodes (then the scheduler alone judges). Bound pods: of every namespace
        where the operator may list them (cluster scope), else of its own namespace."""
        try:
            items = [self._sanitize(n) for n in self.core.list_node().items]
        except ApiException as exc:
            if exc.status in (401, 403):
                return None
            raise
        alive = "status.phase!=Succeeded,status.phase!=Failed"
        try:
            pods = self.core.list_pod_for_all_namespaces(field_selector=alive).items
        except ApiException as exc:
            if exc.status not in (401, 403):
                raise
            pods = self.core.list_namespaced_pod(self.namespace, field_selector=alive).items
        bound: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            raw = self._sanitize(pod)
            node = (raw.get("spec") or {}).get("nodeName")
            if node:
                bound.setdefault(str(node), []).append(raw)
        return [node_from_api(n, bound.get(str(n["metadata"]["name"]), ())) for n in items]

    def ungate(self, name: str) -> None:
        """Lift the gang's scheduling gate of a pod (gates may only be removed)."""
        try:
            pod = self._sanitize(self.core.read_namespaced_pod(name, self.namespace))
            gates = [g for g in (pod.get("spec") or {}).get("schedulingGates") or () if g.get("name") != GATE]
            if len(gates) == len((pod.get("spec") or {}).get("schedulingGates") or ()):
                return
            # a JSON patch keeps any other gate (Kueue's, say) and fails if the pod changed meanwhile
            rv = pod["metadata"]["resourceVersion"]
            patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": rv},
                     {"op": "replace", "path": "/spec/schedulingGates", "value": gates}]  # fmt: skip
            self.core.patch_namespaced_pod(name, self.namespace, patch)
        except ApiException as exc:
            if exc.status not in (404, 409, 422):
                raise

    def delete_pod(self, name: str, grace_seconds: int) -> None:
        try:
            self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=grace_seconds)
        except ApiException as exc:
            if exc.status != 404:
                raise

