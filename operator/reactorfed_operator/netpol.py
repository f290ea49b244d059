"""Least reach: the NetworkPolicy that fences each federation's pods in.

Only the federation's own pods may reach its RTI port and its federates' data ports; the
metrics ports (the RTI's and the federates') are open to the namespaces the chart names
(a monitoring namespace) and to the operator's own namespace, whose pod polls the RTI's
``/status``. Everything else that would arrive at a federation's pod is dropped by a
network plugin that enforces policies (one that does not ignores the object).

Pure, as :mod:`.manifests` is: the settings come in as a :class:`Reach`, read once from the
environment the chart gives the operator.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .manifests import LABEL_FEDERATION, Federation, labels, owner_reference

__all__ = ["NAMESPACE_LABEL", "Reach", "network_policy", "policy_name"]

#: set by the API server on every namespace (Kubernetes >= 1.22): selects one by name
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Reach:
    """What the chart decides about the federations' network: whether the operator makes
    policies at all, and which namespaces may scrape the metrics ports."""

    enabled: bool = True
    #: namespaces whose pods may reach the metrics ports (the operator's own included)
    metrics_namespaces: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Reach:
        """``REACTORFED_NETWORK_POLICY`` (``false`` turns policies off),
        ``REACTORFED_METRICS_NAMESPACES`` (comma-separated) and ``POD_NAMESPACE`` (the
        operator's, set by the chart from the downward API)."""
        env = os.environ if env is None else env
        enabled = env.get("REACTORFED_NETWORK_POLICY", "true").strip().lower() not in ("0", "false", "no", "off")
        names = [n.strip() for n in env.get("REACTORFED_METRICS_NAMESPACES", "").split(",")]
        names.append(env.get("POD_NAMESPACE", "").strip())
        return cls(enabled, tuple(sorted({n for n in names if n})))


def policy_name(fed: Federation) -> str:
    return f"{fed.name}-links"


def network_policy(fed: Federation, reach: Reach) -> dict[str, Any]:
    """The federation's NetworkPolicy, owned by the ReactorFederation (deleted with it).

    It selects every pod of the federation by its federation label, whatever the
    incarnation, so pods of the next incarnation are covered before they start. Data ports
    are fixed per pod (``spec.data_port``), so the rule names ports, not "any port"."""
    s = fed.spec
    members = {"podSelector": {"matchLabels": {LABEL_FEDERATION: fed.name}}}
    ingress: list[dict[str, Any]] = [{
        "from": [members],
        "ports": [{"protocol": "TCP", "port": p} for p in (s.rti_port, s.data_port)],
    }]  # fmt: skip
    if reach.metrics_namespaces:
        ingress.append({
            "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: ns}}} for ns in reach.metrics_namespaces],
            "ports": [{"protocol": "TCP", "port": p} for p in (s.metrics_port, s.federate_metrics_port)],
        })  # fmt: skip
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": policy_name(fed),
            "namespace": fed.namespace,
            "labels": labels(fed),
            "ownerReferences": [owner_reference(fed)],
        },
        "spec": {
            "podSelector": {"matchLabels": {LABEL_FEDERATION: fed.name}},
            # Ingress only: what leaves the pods (DNS, the image registry, the user's
            # storage) is the program's business and differs per cluster.
            "policyTypes": ["Ingress"],
            "ingress": ingress,
        },
    }
