"""Kopf handlers: thin glue between Kopf events and the pure reconcile logic.

One function, :func:`reconcile`, does a level-triggered pass (observe -> plan -> act ->
status); it runs on create/resume/spec updates and on a timer (``REACTORFED_OPERATOR_INTERVAL``
seconds, default 5) so pod phases and the RTI's progress stay current. Semantic errors
end in a status condition and an Event, never in an exception that Kopf would retry in
a loop. Before a new incarnation is made, the program is asked what its federates are and
the groups are checked against its answer (:mod:`.discovery_pod`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import threading
import time
from typing import Any, cast

import kopf
from kubernetes.client.exceptions import ApiException

from . import GROUP, KIND, PLURAL, VERSION
from .cluster import Cluster, load_config
from .discovery import CONDITION
from .discovery_pod import REFUSALS, DiscoveryStep, Known, hold, inputs_key, needs_log
from .discovery_pod import step as discovery_step
from .external_metrics import MetricStore
from .keyring import reconcile_keys
from .manifests import ANNOTATION_FEDERATE, LABEL_ROLE, Federation, checkpoint_pvc, rti_service
from .metrics_api import start_from_env
from .netpol import Reach, network_policy, policy_name
from .phase import TERMINAL, Phase, PodPhase, Role
from .planner import ELASTIC_KEYS, Plan, PriorStatus, plan
from .progress import Progress, fetch_progress
from .spec import FederationSpec, SpecError, parse_spec

__all__ = ["STATUS_URL_ANNOTATION", "configure", "reconcile", "tracked"]

INTERVAL = float(os.environ.get("REACTORFED_OPERATOR_INTERVAL", "5"))
REACH = Reach.from_env()
#: each federation's figures, for the external metrics API (served when the chart enables it)
METRICS = MetricStore()
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(uid: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(uid, threading.Lock())


def _forget(uid: str) -> None:
    """Drop what the operator keeps for a federation that is gone (a long-lived operator
    sees thousands come and go)."""
    with _locks_guard:
        _locks.pop(uid, None)


def tracked() -> int:
    """How many federations the operator keeps state for: their locks, and their figures
    for the external metrics API."""
    with _locks_guard:
        return len(_locks) + len(METRICS)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Keep Kopf's bookkeeping in annotations: our status schema has no room for it.
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="reactorfed.io")
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix="reactorfed.io", key="last-handled-configuration"
    )
    settings.posting.reporting_component = "reactorfed-operator"
    settings.posting.reporting_instance = os.environ.get("POD_NAME", "reactorfed-operator")
    settings.posting.event_name_prefix = "reactorfed-"
    settings.posting.level = logging.WARNING  # our own kopf.event() calls are always posted
    # Kopf puts a finalizer on resources with timers (to stop them cleanly on deletion).
    settings.persistence.finalizer = "reactorfed.io/kopf-finalizer"
    settings.watching.server_timeout = 300
    settings.networking.request_timeout = 30
    load_config()
    start_from_env(METRICS)


def _post(body: kopf.Body, type_: str, reason: str, message: str) -> None:
    try:
        kopf.event(body, type=type_, reason=reason, message=message[:1000])
    except Exception:  # events are best effort
        logging.getLogger(__name__).exception("could not post event %s", reason)


def _ensure_support(fed: Federation, cluster: Cluster, body: kopf.Body) -> list[str]:
    """Create the Service (and the PVC when ours) and list missing references."""
    s: FederationSpec = fed.spec
    missing: list[str] = []
    # The fence first: no pod of the federation runs before its NetworkPolicy exists.
    if REACH.enabled:
        done = cluster.ensure_policy(network_policy(fed, REACH))
        if done is not None:
            _post(body, "Normal", f"NetworkPolicy{done.capitalize()}",
                  f"NetworkPolicy {policy_name(fed)}: only the federation's pods reach its RTI and data ports")
    if cluster.create(rti_service(fed)):
        _post(body, "Normal", "ServiceCreated", f"Service {fed.name}-rti for the RTI")
    if s.secret_name is not None:  # the compatibility mode: one secret shared by the members
        keys = cluster.data_keys("Secret", s.secret_name)
        if keys is None or s.secret_key not in keys:
            missing.append(f"Secret/{s.secret_name} (key {s.secret_key!r})")
    if s.program.config_map:
        keys = cluster.data_keys("ConfigMap", s.program.config_map)
        if keys is None or s.program.config_map_key not in keys:
            missing.append(f"ConfigMap/{s.program.config_map} (key {s.program.config_map_key!r})")
    pvc = checkpoint_pvc(fed)
    if pvc is not None:
        if cluster.create(pvc):
            _post(body, "Normal", "CheckpointVolumeCreated", f"PersistentVolumeClaim {pvc['metadata']['name']}")
    elif (
        s.checkpoint is not None
        and s.checkpoint.claim_name
        and not cluster.exists("PersistentVolumeClaim", s.checkpoint.claim_name)
    ):
        missing.append(f"PersistentVolumeClaim/{s.checkpoint.claim_name}")
    return missing


STATUS_URL_ANNOTATION = "reactorfed.io/status-url"


def _progress(fed: Federation, pods: list[Any], override: str | None = None) -> Progress | None:
    """Poll the running RTI's /status. ``override`` (the ``reactorfed.io/status-url``
    annotation) replaces the pod-IP URL, e.g. for an operator outside the cluster network
    reaching the RTI through ``kubectl port-forward``."""
    rti = next((p for p in pods if p.role == Role.RTI and not p.deleting and p.phase == PodPhase.RUNNING), None)
    if rti is None:
        return None
    if override:
        return fetch_progress(override, timeout=1.0)
    if not rti.ip:
        return Progress(reachable=False, error="the RTI pod has no IP yet")
    return fetch_progress(f"http://{rti.ip}:{fed.spec.metrics_port}/status", timeout=1.0)


def reconcile(namespace: str, name: str, uid: str, logger: logging.Logger | logging.LoggerAdapter[Any]) -> None:
    """One pass. Passes for one object are serialised, and each reads the object afresh and
    writes its status before the next starts: decisions never rest on a stale status."""
    cluster = Cluster(namespace)
    with _lock(uid):
        try:
            obj = cluster.federation(name)
            deleted = obj is None or bool(obj["metadata"].get("deletionTimestamp"))
            gone = deleted or obj is None or obj["metadata"]["uid"] != uid
            if not gone:
                _reconcile(cast(dict[str, Any], obj), cluster)
        except ApiException as exc:
            logger.warning("API error while reconciling: %s %s", exc.status, exc.reason)
            raise kopf.TemporaryError(f"API error {exc.status}: {exc.reason}", delay=5) from exc
    if gone:  # deleted: owner references let the garbage collector clean up the rest
        _forget(uid)
        if deleted:  # (not a newer federation of the same name: its figures are its own)
            METRICS.drop(namespace, name)


def _reconcile(obj: dict[str, Any], cluster: Cluster) -> None:
    body = cast(kopf.Body, obj)  # kopf.event() needs only apiVersion, kind and metadata
    meta = obj["metadata"]
    generation = meta.get("generation")
    prior = PriorStatus.from_status(obj.get("status"))
    try:
        spec = parse_spec(obj.get("spec") or {})
    except SpecError as exc:
        if prior.reason != "InvalidSpec" or prior.observed_generation != generation:
            _post(body, "Warning", "InvalidSpec", str(exc))
        cluster.write_status(meta["name"], {
            "phase": Phase.FAILED, "reason": "InvalidSpec", "message": str(exc), "observedGeneration": generation,
            "conditions": [{"type": "Ready", "status": "False", "reason": "InvalidSpec", "message": str(exc),
                            "observedGeneration": generation, "lastTransitionTime": _now()}],
        })  # fmt: skip
        return
    fed = Federation(name=meta["name"], namespace=meta["namespace"], uid=meta["uid"], spec=spec)
    missing = [] if spec.suspend else _ensure_support(fed, cluster, body)
    pods = cluster.pods(fed)
    asked = _ask_program(fed, cluster, body, obj, prior, generation, missing)
    if asked is not None and asked.state == "refused":
        _refuse(fed, cluster, asked, prior, generation)
        return
    if prior.reason in REFUSALS:
        if asked is not None and asked.state == "waiting":  # asked again after a refusal: wait for the answer
            _refuse(fed, cluster, asked, prior, generation, phase=Phase.PENDING)
            return
        prior = dataclasses.replace(prior, phase=None, reason=None)  # the cause of the refusal is gone
    # the nodes, only while an incarnation's pods wait behind their gang gate (or are about to be made)
    newest = max((p.incarnation for p in pods), default=0)
    waiting = not spec.suspend and all(p.gated or p.deleting for p in pods if p.incarnation == newest)
    nodes = cluster.nodes() if waiting and (asked is None or asked.state == "ready") else None
    step: Plan = plan(fed, pods, prior, generation, missing, nodes, time.time())
    if asked is not None and asked.state == "waiting":  # no new incarnation before the program answered
        step = hold(step, max([prior.incarnation, newest]), asked.message)
    if not (spec.suspend or spec.shared_secret or missing):  # every pod's key before the pod
        making = [m["metadata"]["annotations"][ANNOTATION_FEDERATE] for m in step.create
                  if m["metadata"]["labels"].get(LABEL_ROLE) != Role.RTI]  # fmt: skip
        for event in reconcile_keys(fed, cluster, pods, making):
            _post(body, event.type, event.reason, event.message)
    for name in step.delete:
        cluster.delete_pod(name, spec.grace_seconds)
    for manifest in step.create:
        cluster.create(manifest)
    for name in step.ungate:  # after every pod of the incarnation exists; largest first
        cluster.ungate(name)
    if step.create or step.delete or step.ungate:
        pods = cluster.pods(fed)
    for event in step.events:
        _post(body, event.type, event.reason, event.message)
    progress = _progress(fed, pods, (meta.get("annotations") or {}).get(STATUS_URL_ANNOTATION))
    status = step.status(fed, pods, generation, prior, _now(), progress)
    METRICS.put(fed.namespace, fed.name, dict(progress.figures) if progress and progress.reachable else {}, _now())
    status.setdefault("progress", None)  # null removes stale progress (merge patch)
    status.setdefault("rtiAddress", None)
    status.setdefault("placement", None)
    for key in ELASTIC_KEYS:  # and an elastic bank's figures once it is not one, or the RTI is away
        status["samplers"].setdefault(key, None)
    _record_program(status, asked, prior, generation)
    cluster.write_status(fed.name, status)


def _ask_program(
    fed: Federation,
    cluster: Cluster,
    body: kopf.Body,
    obj: dict[str, Any],
    prior: PriorStatus,
    generation: int | None,
    missing: list[str],
) -> DiscoveryStep | None:
    """Ask the program what its federates are (once per inputs) and check the groups against
    the answer; None when nothing is to be made (suspended, finished, a dependency missing)."""
    s = fed.spec
    edited = generation != prior.observed_generation
    if s.suspend or missing or (prior.phase in TERMINAL and not edited and prior.reason not in REFUSALS):
        return None
    text = cluster.config_map_text(s.program.config_map, s.program.config_map_key) if s.program.config_map else None
    if s.program.config_map and text is None:
        return None  # gone since _ensure_support looked: the next pass says it is missing
    known = Known.from_status((obj.get("status") or {}).get("program"))
    pod = cluster.discovery_pod(fed)
    if needs_log(pod):
        assert pod is not None
        pod = dataclasses.replace(pod, output=cluster.pod_log(pod.name))
    asked = discovery_step(fed, inputs_key(s, text), known, pod, _now())
    for name in asked.delete:
        cluster.delete_pod(name, 0)
    if asked.create is not None:
        cluster.create(asked.create)
    for event in asked.events:
        _post(body, event.type, event.reason, event.message)
    if asked.state == "refused" and (prior.reason != asked.reason or prior.message != asked.message or edited):
        _post(body, "Warning", asked.reason, asked.message)
    return asked


def _kept(cond: dict[str, Any], prior: PriorStatus, generation: int | None) -> dict[str, Any]:
    """A condition with its last transition time kept while its status stays."""
    old = next((c for c in prior.conditions if c.get("type") == cond["type"]), None)
    since = old.get("lastTransitionTime") if old and old.get("status") == cond["status"] else None
    return {**cond, "observedGeneration": generation, "lastTransitionTime": since or _now()}


def _program_condition(asked: DiscoveryStep, prior: PriorStatus, generation: int | None) -> dict[str, Any]:
    return _kept(asked.condition(), prior, generation)


def _record_program(status: dict[str, Any], asked: DiscoveryStep | None, prior: PriorStatus, generation: int | None) -> None:
    """status.program and the GroupsMatchProgram condition (kept as they were when not asked)."""
    if asked is None:
        status["conditions"] += [dict(c) for c in prior.conditions if c.get("type") == CONDITION]
        return
    status["conditions"].append(_program_condition(asked, prior, generation))
    if asked.program is not None:
        status["program"] = asked.program


def _refuse(
    fed: Federation,
    cluster: Cluster,
    asked: DiscoveryStep,
    prior: PriorStatus,
    generation: int | None,
    phase: Phase = Phase.FAILED,
) -> None:
    """The groups do not match the program, or it could not say: no pod is made (nor are the
    pods of a running incarnation touched, as with an invalid spec) until the cause is gone."""
    ready = _kept({"type": "Ready", "status": "False", "reason": asked.reason, "message": asked.message}, prior,
                  generation)  # fmt: skip
    status: dict[str, Any] = {
        "phase": phase, "reason": asked.reason, "message": asked.message, "observedGeneration": generation,
        "conditions": [ready, _program_condition(asked, prior, generation)],
    }  # fmt: skip
    if asked.program is not None:
        status["program"] = asked.program
    cluster.write_status(fed.name, status)


_RESOURCE = (GROUP, VERSION, PLURAL)


@kopf.on.resume(*_RESOURCE)
@kopf.on.create(*_RESOURCE)
@kopf.on.update(*_RESOURCE, field="spec")
def on_change(meta: kopf.Meta, logger: kopf.Logger, **_: Any) -> None:
    reconcile(str(meta["namespace"]), str(meta["name"]), str(meta["uid"]), logger)


@kopf.timer(*_RESOURCE, interval=INTERVAL, initial_delay=INTERVAL)
def on_timer(meta: kopf.Meta, logger: kopf.Logger, **_: Any) -> None:
    reconcile(str(meta["namespace"]), str(meta["name"]), str(meta["uid"]), logger)


@kopf.on.delete(*_RESOURCE, optional=True)
def on_delete(meta: kopf.Meta, **_: Any) -> None:
    _forget(str(meta["uid"]))
    METRICS.drop(str(meta.get("namespace")), str(meta.get("name")))


def _pod_finished(event: kopf.RawEvent, status: kopf.Status, **_: Any) -> bool:
    return event.get("type") == "DELETED" or status.get("phase") in (PodPhase.FAILED, PodPhase.SUCCEEDED)


@kopf.on.event("", "v1", "pods", labels={"app.kubernetes.io/managed-by": "reactorfed-operator"}, when=_pod_finished)
def on_pod_finished(meta: kopf.Meta, logger: kopf.Logger, **_: Any) -> None:
    """React at once when a federation's pod fails, finishes or vanishes (the timer
    catches everything else: readiness, progress)."""
    for owner in meta.get("ownerReferences") or []:
        if owner.get("kind") == KIND and owner.get("apiVersion", "").startswith(f"{GROUP}/"):
            reconcile(str(meta["namespace"]), str(owner["name"]), str(owner["uid"]), logger)
