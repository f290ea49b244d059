"""All or nothing: can every pod of an incarnation be placed at once? A pure function.

Every pod of an incarnation is created with the scheduling gate :data:`GATE` (Pod
Scheduling Readiness): the scheduler leaves it alone and no container starts. The planner
lifts the gates of all of them together, largest first, only when :func:`check` finds a
placement of every pod on the nodes as they are: each node's allocatable resources minus
the requests of the pods already bound to it (those the operator can see), its labels
against the pod's node selector and required node affinity, its taints against the pod's
tolerations, cordoned nodes left out. ``check`` says no only when it has proved that no
placement exists (a pod that fits no node, or an exhaustive search); when its search
budget runs out it says yes and the scheduler decides. The scheduler stays the judge of
what the operator cannot see (other namespaces' pods, pod overhead, topology spread, volume
limits): a pod it then finds unschedulable makes the planner tear the incarnation down and
gate the next one, without counting a restart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fields import cpu_cores

__all__ = ["GATE", "Node", "Verdict", "check", "gate", "node_from_api", "pod_requests", "release_order"]

#: the scheduling gate every pod of an incarnation is created with
GATE = "reactorfed.io/gang"
#: resources compared (others a pod asks for are compared too, by name)
_PODS = "pods"
#: search steps before check() gives the decision to the scheduler
BUDGET = 20_000
_EPS = 1e-6


@dataclass(frozen=True)
class Node:
    """What placement needs of a node: allocatable resources (cores, bytes, counts), labels,
    taints, whether it is cordoned, and the requests of the pods already bound to it."""

    name: str
    allocatable: Mapping[str, float]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    unschedulable: bool = False
    used: Mapping[str, float] = field(default_factory=dict)

    def free(self, resource: str) -> float:
        return self.allocatable.get(resource, 0.0) - self.used.get(resource, 0.0)


@dataclass(frozen=True)
class Verdict:
    fits: bool
    message: str  # why not (naming the pod, its federate and the figures), or how it fits
    unplaced: tuple[str, ...] = ()  # pods that fit no node by themselves
    placement: Mapping[str, str] = field(default_factory=dict)  # pod -> node, when one was found


def _quantity(value: Any) -> float:
    return round(cpu_cores(value, "quantity"), 6)  # millicores and bytes stay exact


def pod_requests(pod: Mapping[str, Any]) -> dict[str, float]:
    """What the scheduler counts for a pod: the sum of its containers' requests, a limit
    standing in for a request that is not set (as the API server defaults it), and one
    ``pods`` slot."""
    total: dict[str, float] = {_PODS: 1.0}
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        asked = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        for name, q in asked.items():
            total[name] = total.get(name, 0.0) + _quantity(q)
    return total


def node_from_api(node: Mapping[str, Any], bound: Iterable[Mapping[str, Any]] = ()) -> Node:
    """An API node (as a dict) and the pods bound to it (dicts) -> :class:`Node`."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    used: dict[str, float] = {}
    for pod in bound:
        for name, q in pod_requests(pod).items():
            used[name] = used.get(name, 0.0) + q
    return Node(
        name=str(meta.get("name")),
        allocatable={k: _quantity(v) for k, v in (status.get("allocatable") or {}).items()},
        labels=dict(meta.get("labels") or {}),
        taints=tuple(spec.get("taints") or ()),
        unschedulable=bool(spec.get("unschedulable")),
        used=used,
    )


def gate(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` with the gang's scheduling gate."""
    pod["spec"]["schedulingGates"] = [{"name": GATE}]
    return pod


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if not t.get("key"):
            if t.get("operator") == "Exists":
                return True
            continue
        if t.get("key") != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or str(t.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def _matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or ()]
    have = labels.get(str(key))
    if op == "In":
        return have is not None and have in values
    if op == "NotIn":
        return have is None or have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and values:
        try:
            return int(have) > int(values[0]) if op == "Gt" else int(have) < int(values[0])
        except ValueError:
            return False
    return False


def _affinity_allows(spec: Mapping[str, Any], node: Node) -> bool:
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})  # fmt: skip
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    fields = {"metadata.name": node.name}
    return any(
        all(_matches(e, node.labels) for e in t.get("matchExpressions") or ())
        and all(_matches(e, fields) for e in t.get("matchFields") or ())
        for t in terms
    )


def _why_not_node(spec: Mapping[str, Any], node: Node) -> str | None:
    """Why the pod may not use the node at all (whatever is free on it), or None."""
    if node.unschedulable:
        return "cordoned"
    for key, value in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != value:
            return f"nodeSelector {key}={value}"
    if not _affinity_allows(spec, node):
        return "required node affinity"
    for taint in node.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(spec.get("tolerations") or (), taint):
            return f"taint {taint.get('key')}" + (f"={taint['value']}" if taint.get("value") else "") + f":{taint.get('effect')}"
    return None


def _figure(resource: str, amount: float) -> str:
    if resource == "memory":
        return f"{amount / 2**20:.0f}Mi"
    if resource == "cpu":
        return f"{amount:g}" if amount >= 1 or amount == 0 else f"{amount * 1000:.0f}m"
    return f"{amount:g}"


def _who(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    federate = (meta.get("annotations") or {}).get("reactorfed.io/federate")
    role = (meta.get("labels") or {}).get("reactorfed.io/role")
    name = str(meta.get("name"))
    what = federate if federate and federate != "rti" else None
    return f"{name} ({what or role})" if (what or role) else name


def _alone(pod: Mapping[str, Any], asked: Mapping[str, float], nodes: Sequence[Node]) -> str | None:
    """Why the pod fits no node even by itself, or None."""
    spec = pod.get("spec") or {}
    allowed: list[Node] = []
    refused: dict[str, list[str]] = {}
    for node in nodes:
        why = _why_not_node(spec, node)
        if why is None:
            allowed.append(node)
        else:
            refused.setdefault(why, []).append(node.name)
    if not allowed:
        reasons = "; ".join(f"{why} ({', '.join(names)})" for why, names in refused.items())
        return f"{_who(pod)}: no node it may use ({reasons or 'there are no nodes'})"
    for resource, amount in sorted(asked.items()):
        if resource == _PODS or amount <= 0:
            continue
        largest = max(n.allocatable.get(resource, 0.0) for n in allowed)
        if largest < amount - _EPS:
            where = "the largest node it may use has" if largest > 0 else "no node it may use has any"
            tail = f" {_figure(resource, largest)} allocatable" if largest > 0 else ""
            return f"{_who(pod)} needs {resource} {_figure(resource, amount)}, {where}{tail}"
    if not any(all(n.free(r) >= a - _EPS for r, a in asked.items()) for n in allowed):
        worst = max((r for r in asked if r != _PODS), key=lambda r: asked[r] / max(1e-12, max(n.free(r) for n in allowed)),
                    default=_PODS)  # fmt: skip
        most = max(n.free(worst) for n in allowed)
        return (f"{_who(pod)} needs {worst} {_figure(worst, asked[worst])}, the most free on a node it may use is "
                f"{_figure(worst, max(0.0, most))} (the rest is taken by pods bound there)")  # fmt: skip
    return None


def release_order(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """The pods' names, largest first (GPUs, then CPU, then memory): the order the gates are
    lifted in, and the order :func:`check` places them in."""
    def size(p: Mapping[str, Any]) -> tuple[float, float, float]:
        r = pod_requests(p)
        gpus = sum(v for k, v in r.items() if k not in ("cpu", "memory", "ephemeral-storage", _PODS))
        return (-gpus, -r.get("cpu", 0.0), -r.get("memory", 0.0))

    return [str(p["metadata"]["name"]) for p in sorted(pods, key=size)]


def check(pods: Sequence[Mapping[str, Any]], nodes: Sequence[Node], budget: int = BUDGET) -> Verdict:
    """Can all ``pods`` (manifests) be placed together on ``nodes``? See the module's text."""
    asked = {str(p["metadata"]["name"]): pod_requests(p) for p in pods}
    lonely = [(str(p["metadata"]["name"]), why) for p in pods if (why := _alone(p, asked[str(p["metadata"]["name"])], nodes))]
    if lonely:
        return Verdict(False, "; ".join(why for _, why in lonely), unplaced=tuple(n for n, _ in lonely))
    by_name = {str(p["metadata"]["name"]): p for p in pods}
    order = release_order(pods)
    allowed = {n: [i for i, node in enumerate(nodes) if _why_not_node(by_name[n].get("spec") or {}, node) is None]
               for n in order}  # fmt: skip
    usable = sorted({i for ids in allowed.values() for i in ids})
    names = ", ".join(nodes[i].name for i in usable)
    totals: dict[str, float] = {}
    for a in asked.values():
        for r, q in a.items():
            totals[r] = totals.get(r, 0.0) + q
    free_sum = {r: sum(max(0.0, nodes[i].free(r)) for i in usable) for r in totals}
    short = [r for r in ("cpu", "memory", *sorted(set(totals) - {"cpu", "memory", _PODS}), _PODS)
             if r in totals and totals[r] > free_sum[r] + _EPS]  # fmt: skip
    if short:  # more asked than all the nodes they may use have free: proved without a search
        what = ", ".join(f"{r} {_figure(r, totals[r])} asked, {_figure(r, free_sum[r])} free" for r in short)
        return Verdict(False, f"the {len(pods)} pods do not fit together on the nodes they may use ({names}): {what}")
    outcome, chosen = _search(order, asked, allowed, nodes, budget)
    if outcome is None:
        return Verdict(True, "no placement found within the check's bounds: the scheduler decides")
    if outcome:
        return Verdict(True, f"all {len(pods)} pods fit", placement=chosen)
    return Verdict(False, f"the {len(pods)} pods do not fit together on the nodes they may use ({names}): each fits "
                          "a node, but no node has room for them together")  # fmt: skip


#: pods beyond which check() does not search exhaustively (one greedy pass, then the scheduler decides)
SEARCH_LIMIT = 64


def _search(
    order: Sequence[str], asked: Mapping[str, Mapping[str, float]], allowed: Mapping[str, Sequence[int]],
    nodes: Sequence[Node], budget: int,
) -> tuple[bool | None, dict[str, str]]:
    """A placement of the pods in ``order``: (True, it); (False, {}) when none exists; (None,
    {}) when the bounds ran out first. Depth-first, most free node first (the scheduler
    spreads pods: its choice is tried first), nodes alike in what is free and in which of the
    groups may use them tried once; beyond SEARCH_LIMIT pods, one greedy pass."""
    resources = {r for a in asked.values() for r in a}
    free = [{r: node.free(r) for r in resources} for node in nodes]
    kinds = sorted({tuple(ids) for ids in allowed.values()})
    likeness = [tuple(i in set(ids) for ids in kinds) for i in range(len(nodes))]
    chosen: dict[str, str] = {}
    steps = 0

    def place(k: int) -> bool | None:  # recursion depth: at most SEARCH_LIMIT
        nonlocal steps
        if k == len(order):
            return True
        name = order[k]
        need = asked[name]
        tried: set[tuple[Any, ...]] = set()
        for i in sorted(allowed[name], key=lambda i: -free[i].get("cpu", 0.0)):
            if any(free[i][r] < a - _EPS for r, a in need.items()):
                continue
            state = (tuple(sorted(free[i].items())), likeness[i])
            if state in tried:
                continue
            tried.add(state)
            steps += 1
            if steps > budget:
                return None
            for r, a in need.items():
                free[i][r] -= a
            chosen[name] = nodes[i].name
            outcome = place(k + 1)
            for r, a in need.items():
                free[i][r] += a
            if outcome is not False:
                return outcome
            del chosen[name]
        return False

    if len(order) > SEARCH_LIMIT:
        return _greedy(order, asked, allowed, nodes, free, chosen), dict(chosen)
    outcome = place(0)
    return outcome, dict(chosen) if outcome else {}


def _greedy(
    order: Sequence[str], asked: Mapping[str, Mapping[str, float]], allowed: Mapping[str, Sequence[int]],
    nodes: Sequence[Node], free: list[dict[str, float]], chosen: dict[str, str],
) -> bool | None:
    """One pass, most free node first, without recursion: True when every pod found room
    (``chosen`` says where), else None (not a proof)."""
    for name in order:
        fits = [i for i in allowed[name] if all(free[i][r] >= a - _EPS for r, a in asked[name].items())]
        if not fits:
            return None
        i = max(fits, key=lambda i: free[i].get("cpu", 0.0))
        for r, a in asked[name].items():
            free[i][r] -= a
        chosen[name] = nodes[i].name
    return True
