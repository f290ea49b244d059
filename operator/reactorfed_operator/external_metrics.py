"""The external metrics API (``external.metrics.k8s.io/v1beta1``) the operator serves, as
documents: what a HorizontalPodAutoscaler's ``type: External`` metric reads.

The operator polls each federation's RTI for its progress (:mod:`.progress`); the learner of
an elastic bank reports ``learner_wait`` there, the share of its recent wall time it spent
waiting for samples (``reactorfed.rl.plans.learner_wait``). :class:`MetricStore` keeps the
latest figure of each federation; :func:`respond` answers the API's requests from it:
discovery (the group, the version's resources) and the metric's value list, one item per
federation the request's ``labelSelector`` selects (``federation=NAME``; every federation of
the namespace without one). Values are Kubernetes quantities in thousandths (``"350m"``).
Pure functions of their inputs: the HTTPS server (:mod:`.metrics_api`) does the rest.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["GROUP", "METRICS", "VERSION", "MetricStore", "Sample", "parse_selector", "quantity", "respond"]

GROUP = "external.metrics.k8s.io"
VERSION = "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
#: metric name -> the progress figure it serves
METRICS = {"learner_wait": "learner_wait"}
#: the label a metric's items carry (and a selector selects on): the federation's name
LABEL = "federation"

_SEGMENT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


@dataclass(frozen=True)
class Sample:
    """A figure of one federation, when the operator read it (RFC 3339)."""

    value: float
    timestamp: str


class MetricStore:
    """The latest figures of each federation, by (namespace, name): written by the
    reconciler, read by the server's threads. A figure not renewed for ``max_age`` seconds
    (``clock``) is not served: an operator that paused (peering) or stopped polling gives
    an HPA no stale value."""

    def __init__(self, max_age: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._data: dict[tuple[str, str], dict[str, Sample]] = {}
        self._written: dict[tuple[str, str], float] = {}
        self.max_age = max_age
        self.clock = clock

    def put(self, namespace: str, name: str, figures: Mapping[str, int | float], timestamp: str) -> None:
        """The figures the federation reports now; a metric whose figure is missing is dropped
        (a federation restarting or finished serves no stale value)."""
        served = {m: Sample(float(figures[f]), timestamp) for m, f in METRICS.items() if f in figures}
        with self._lock:
            if served:
                self._data[(namespace, name)] = served
                self._written[(namespace, name)] = self.clock()
            else:
                self._data.pop((namespace, name), None)
                self._written.pop((namespace, name), None)

    def drop(self, namespace: str, name: str) -> None:
        """Forget the federation (deleted): nothing of it stays, however many come and go."""
        with self._lock:
            self._data.pop((namespace, name), None)
            self._written.pop((namespace, name), None)

    def __len__(self) -> int:
        """How many federations the store keeps anything for."""
        with self._lock:
            return len(self._data.keys() | self._written.keys())

    def samples(self, namespace: str, metric: str) -> dict[str, Sample]:
        """Federation name -> its sample of ``metric`` in ``namespace``."""
        oldest = self.clock() - self.max_age
        with self._lock:
            return {n: s[metric] for (ns, n), s in self._data.items()
                    if ns == namespace and metric in s and self._written[(ns, n)] >= oldest}  # fmt: skip


def quantity(value: float) -> str:
    """A Kubernetes quantity in thousandths: 0.35 -> ``"350m"``, 2.0 -> ``"2"``."""
    milli = round(value * 1000)
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def parse_selector(text: str) -> list[tuple[str, str, set[str]]] | None:
    """A label selector's requirements as (key, operator, values), operators ``=``
    (``==``), ``!=``, ``in``, ``notin``, ``exists`` (``key``) and ``!exists`` (``!key``);
    None when it cannot be parsed."""
    out: list[tuple[str, str, set[str]]] = []
    for part in _split(text):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)", part)
        if m:
            out.append((m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",") if v.strip()}))
            continue
        m = re.fullmatch(r"([\w./-]+)\s*(==|!=|=)\s*([\w.-]*)", part)
        if m:
            out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", {m.group(3)}))
            continue
        m = re.fullmatch(r"(!?)([\w./-]+)", part)
        if not m:
            return None
        out.append((m.group(2), "!exists" if m.group(1) else "exists", set()))
    return out


def _split(text: str) -> list[str]:
    """Split at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def _matches(labels: Mapping[str, str], requirements: list[tuple[str, str, set[str]]]) -> bool:
    for key, op, values in requirements:
        have = labels.get(key)
        ok = {
            "=": have in values,
            "in": have in values,
            "!=": have not in values,
            "notin": have not in values,
            "exists": have is not None,
            "!exists": have is None,
        }[op]
        if not ok:
            return False
    return True


def _status(code: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": message, "reason": reason, "code": code}  # fmt: skip


def api_group() -> dict[str, Any]:
    version = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": [version],
            "preferredVersion": version}  # fmt: skip


def api_group_list() -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]}


def api_resource_list() -> dict[str, Any]:
    """The version's resources: one per metric (as the adapters do), namespaced, ``get``."""
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
            "resources": [{"name": m, "singularName": "", "namespaced": True, "kind": "ExternalMetricValueList",
                           "verbs": ["get"]} for m in sorted(METRICS)]}  # fmt: skip


def metric_values(store: MetricStore, namespace: str, metric: str, selector: str) -> tuple[int, dict[str, Any]]:
    """The ``ExternalMetricValueList`` of ``metric`` for the federations ``selector`` selects."""
    if metric not in METRICS:
        return _status(404, "NotFound", f"no external metric {metric!r} (served: {', '.join(sorted(METRICS))})")
    requirements = parse_selector(selector)
    if requirements is None:
        return _status(400, "BadRequest", f"cannot parse labelSelector {selector!r}")
    items = []
    for name, sample in sorted(store.samples(namespace, metric).items()):
        labels = {LABEL: name}
        if _matches(labels, requirements):
            items.append({"metricName": metric, "metricLabels": labels, "timestamp": sample.timestamp,
                          "value": quantity(sample.value)})  # fmt: skip
    return 200, {"kind": "ExternalMetricValueList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}


def respond(store: MetricStore, path: str) -> tuple[int, dict[str, Any]]:
    """The answer (HTTP status, JSON document) to a GET of ``path`` (with its query)."""
    url = urllib.parse.urlsplit(path)
    query = urllib.parse.parse_qs(url.query)
    parts = [p for p in url.path.split("/") if p]
    if parts == ["apis"]:
        return 200, api_group_list()
    if parts == ["apis", GROUP]:
        return 200, api_group()
    if parts == ["apis", GROUP, VERSION]:
        return 200, api_resource_list()
    if len(parts) == 6 and parts[:4] == ["apis", GROUP, VERSION, "namespaces"] and _SEGMENT.match(parts[4]):
        return metric_values(store, parts[4], parts[5], (query.get("labelSelector") or [""])[0])
    return _status(404, "NotFound", f"the server could not find the requested resource ({url.path})")
