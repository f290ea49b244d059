"""Shared builders for the operator's unit tests, and an in-memory cluster for the planner."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from reactorfed_operator.cluster import observe_pod
from reactorfed_operator.manifests import Federation
from reactorfed_operator.placement import Node
from reactorfed_operator.planner import ObservedPod, Plan, PriorStatus, plan
from reactorfed_operator.progress import Progress
from reactorfed_operator.spec import parse_spec

__all__ = ["NOW", "FakeCluster", "make_fed", "minimal_spec", "program_command"]

NOW = "2026-01-01T00:00:00Z"


def minimal_spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "program": {"image": "ghcr.io/example/reactorfed:0.1.0", "entrypoint": "reactorfed_examples.pong:main"}
    }
    spec.update(overrides)
    return spec


def program_command(pod: dict[str, Any]) -> list[str]:
    """The command of the container of ``pod`` that loads the program: the RTI pod's init
    container (which writes the layout its RTI is given), any other pod's container."""
    return (pod["spec"].get("initContainers") or pod["spec"]["containers"])[0]["command"]


def make_fed(name: str = "pong", namespace: str = "rl", **overrides: Any) -> Federation:
    return Federation(name=name, namespace=namespace, uid="uid-1234", spec=parse_spec(minimal_spec(**overrides)))


class FakeCluster:
    """Pods as the planner sees them; deletions take one pass to complete (grace period),
    or longer with ``step(linger=True)``. Every pod made is kept in ``made`` (its manifest)."""

    def __init__(self, fed: Federation) -> None:
        self.fed = fed
        self.pods: dict[str, ObservedPod] = {}
        self.status: dict[str, Any] = {}
        self.generation = 1
        self.events: list[str] = []
        self.deleted: list[str] = []
        self.made: list[dict[str, Any]] = []
        self.ungated: list[str] = []

    def set_spec(self, **overrides: Any) -> None:
        self.fed = dataclasses.replace(self.fed, spec=parse_spec(minimal_spec(**overrides)))
        self.generation += 1

    def step(
        self,
        missing: tuple[str, ...] = (),
        progress: Progress | None = None,
        linger: bool = False,
        nodes: list[Node] | None = None,
        now: float | None = None,
    ) -> Plan:
        if not linger:  # pods marked for deletion last pass are gone now
            self.pods = {n: p for n, p in self.pods.items() if not p.deleting}
        prior = PriorStatus.from_status(self.status)
        p = plan(self.fed, list(self.pods.values()), prior, self.generation, missing, nodes, now)
        for name in p.delete:
            self.pods[name] = dataclasses.replace(self.pods[name], deleting=True)
            self.deleted.append(name)
        for m in p.create:
            pod = observe_pod(m)
            assert pod is not None
            assert pod.name not in self.pods, f"{pod.name} made while its old pod still exists"
            self.pods[pod.name] = pod
            self.made.append(m)
        for name in p.ungate:
            self.pods[name] = dataclasses.replace(self.pods[name], gated=False)
            self.ungated.append(name)
        self.events += [e.reason for e in p.events]
        stamp = NOW if now is None else dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.status = p.status(self.fed, list(self.pods.values()), self.generation, prior, stamp, progress)
        return p

    def run_all(self) -> None:
        for n, p in self.pods.items():
            if not p.deleting and not p.gated and p.phase in ("Pending", "Running"):
                self.pods[n] = dataclasses.replace(p, phase="Running", ready=True, ip="10.0.0.1",
                                                   node=p.node or "node-0", message=None)

    def set_phase(self, name: str, phase: str, message: str | None = None) -> None:
        self.pods[name] = dataclasses.replace(self.pods[name], phase=phase, ready=False, message=message)

    def settle(self, limit: int = 10) -> None:
        for _ in range(limit):
            self.run_all()
            phase = self.step().phase
            pods = self.pods.values()
            done = phase in ("Running", "Failed", "Succeeded", "Suspended") and not any(p.deleting for p in pods)
            # Running: also every pod up (a live pass may leave a pod it just made pending)
            if done and (phase != "Running" or all(p.ready or p.phase == "Succeeded" for p in pods)):
                return
        raise AssertionError(f"did not settle: {self.status}")
