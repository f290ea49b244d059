"""Watching an elastic federation in the kind cluster while it is scaled live: the
federation's resource and pods as a test sees them over time, `kubectl scale`, and a
signal to a container from its node (test_live_scaling.py, test_live_scaling_plans.py,
bench/kind_rescale.py)."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from .conftest import NAMESPACE, Kind, wait_for
from .federations import clean_slate, describe, load_example, small_requests

T = TypeVar("T")


class Watch:
    """Looks at federation ``name`` (one kubectl call for its resource and pods) and keeps
    what it saw: when each pod first ran and each membership change first showed, the pods
    of every group but the scaled one (``role``, its members ``bank[i]``), which must never
    change once :meth:`pinned`, and each scaled pod's log, followed from its start so that
    it outlives the pod. ``at_work_ns``: the logical time past a member's join after which
    it has taken part (:meth:`at_work`)."""

    def __init__(self, k: Kind, name: str, logs: Path, *, role: str = "sampler", bank: str = "samplers",
                 at_work_ns: int) -> None:  # fmt: skip
        self.k = k
        self.name = name
        self.logs = logs
        self.role = role
        self.bank = bank
        self.at_work_ns = at_work_ns
        self.status: dict[str, Any] = {}
        self.pods: dict[str, dict[str, Any]] = {}  # current pods by UID
        self.running_at: dict[str, float] = {}  # pod UID -> when first seen Running
        self.samplers: list[tuple[int, str]] = []  # (slot, pod UID) in the order they ran
        #: sampler pod UID -> its container's exit code, where seen
        self.exit_codes: dict[str, int] = {}
        #: membership change (member, joined, tagNs, microstep) -> when first seen
        self.shown_at: dict[tuple[str, bool, int, int], float] = {}
        self.core: dict[str, str] = {}  # pod name -> UID: the RTI and every group not scaled
        self.followers: dict[str, subprocess.Popen[bytes]] = {}

    def look(self) -> dict[str, Any]:
        items = self.k.get_json("rfed,pods", "-n", NAMESPACE)["items"]
        now = time.monotonic()
        feds = [i for i in items if i["kind"] == "ReactorFederation" and i["metadata"]["name"] == self.name]
        self.status = (feds[0].get("status") or {}) if feds else {}
        self.pods = {p["metadata"]["uid"]: p for p in items if p["kind"] == "Pod"
                     and p["metadata"].get("labels", {}).get("reactorfed.io/federation") == self.name
                     and p["metadata"]["labels"].get("reactorfed.io/role") != "discovery"
                     and p["metadata"].get("ownerReferences")}  # (the federation's own: not a test's)  # fmt: skip
        for uid, pod in self.pods.items():
            role = pod["metadata"]["labels"]["reactorfed.io/role"]
            pod_name = pod["metadata"]["name"]
            cs = (pod["status"].get("containerStatuses") or [{}])[0]
            if role != self.role and self.core:
                assert self.core.get(pod_name) == uid, f"{pod_name} ({role}) was replaced: {self.core}"
                assert cs.get("restartCount", 0) == 0, f"{pod_name}'s container restarted: {cs}"
            if "running" in cs.get("state", {}) and uid not in self.running_at:
                self.running_at[uid] = now
                if role == self.role:
                    slot = int(pod_name.rsplit("-", 1)[1])
                    self.samplers.append((slot, uid))
                    self._follow(uid, pod_name)
            if role == self.role and "terminated" in cs.get("state", {}):
                self.exit_codes[uid] = cs["state"]["terminated"]["exitCode"]
        for c in self.status.get("membership") or []:
            self.shown_at.setdefault((c["member"], c["joined"], c["tagNs"], c["microstep"]), now)
        return self.status

    def _follow(self, uid: str, name: str) -> None:
        with (self.logs / f"{uid}.log").open("wb") as out:
            self.followers[uid] = follow_log(self.k, name, out)

    def pinned(self) -> dict[str, str]:
        """From now on the pods of the RTI and of every group not scaled must stay the ones
        running now (same UID, no container restart). Their roles by pod name."""
        roles = {}
        for uid, pod in self.pods.items():
            role = pod["metadata"]["labels"]["reactorfed.io/role"]
            if role != self.role:
                self.core[pod["metadata"]["name"]] = uid
                roles[pod["metadata"]["name"]] = role
        assert "rti" in roles.values(), self.pods
        return roles

    def until(self, what: str, probe: Callable[[dict[str, Any]], T | None], timeout: float,
              interval: float = 1.0) -> T:  # fmt: skip
        try:
            return wait_for(what, lambda: probe(self.look()), timeout, interval=interval)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{describe(self.k, self.name)}") from None

    def changes(self, member: str, joined: bool) -> list[dict[str, Any]]:
        return [c for c in self.status.get("membership") or [] if c["member"] == member and c["joined"] is joined]

    def at(self, width: int) -> dict[str, Any] | None:
        """The status once the first incarnation runs ``width`` samplers, all ready."""
        st, samplers = self.status, self.status.get("samplers") or {}
        ok = (st.get("phase") == "Running" and samplers.get("readyText") == f"{width}/{width}"
              and samplers.get("replicas") == width and st.get("incarnation") == 1 and st.get("restarts") == 0)  # fmt: skip
        return st if ok else None

    def at_work(self, slots: tuple[int, ...], joined: bool = True) -> bool:
        """Whether the federation (every member present) is ``at_work_ns`` of logical time
        past the latest joins of ``slots`` (each has taken part since), or past their
        latest leaves (``joined`` False: the narrower width has)."""
        progress = self.status.get("progress") or {}
        if progress.get("rtiPhase") != "running" or progress.get("tagNs") is None:
            return False
        joins = [self.changes(f"{self.bank}[{i}]", joined) for i in slots]
        return all(j for j in joins) and progress["tagNs"] >= max(j[-1]["tagNs"] for j in joins) + self.at_work_ns

    def done(self) -> int:
        """The learner's progress as the status shows it (its iterations; -1 before any)."""
        done = (self.status.get("progress") or {}).get("done")
        return -1 if done is None else int(done)

    def shown(self, member: str, joined: bool) -> float:
        """When the latest change of ``member`` to ``joined`` was first seen in the status."""
        c = self.changes(member, joined)[-1]
        return self.shown_at[(member, joined, c["tagNs"], c["microstep"])]

    def slot_pod(self, slot: int) -> dict[str, Any]:
        return next(p for p in self.pods.values() if p["metadata"]["name"] == f"{self.name}-{self.bank}-{slot}"
                    and not p["metadata"].get("deletionTimestamp"))  # fmt: skip

    def slots(self) -> list[int]:
        """The slots whose pods are not being deleted, in order."""
        return sorted(int(p["metadata"]["name"].rsplit("-", 1)[1]) for p in self.pods.values()
                      if p["metadata"]["labels"]["reactorfed.io/role"] == self.role
                      and not p["metadata"].get("deletionTimestamp"))  # fmt: skip

    def pod_of(self, role: str) -> dict[str, Any]:
        return next(p for p in self.pods.values() if p["metadata"]["labels"]["reactorfed.io/role"] == role)

    def scale(self, width: int) -> subprocess.CompletedProcess[str]:
        return self.k.kubectl("scale", f"rfed/{self.name}", "-n", NAMESPACE, f"--replicas={width}", check=False)

    def stop(self) -> None:
        for proc in self.followers.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


@contextmanager
def watching(k: Kind, name: str, logs: Path, **kw: Any) -> Iterator[Watch]:
    """A :class:`Watch` of ``name`` with no federation of that name before or after."""
    clean_slate(k, name)
    w = Watch(k, name, logs, **kw)
    try:
        yield w
    finally:
        w.stop()
        clean_slate(k, name)


def follow_log(k: Kind, pod: str, out: IO[bytes]) -> subprocess.Popen[bytes]:
    """``kubectl logs -f`` of ``pod`` into ``out``, until its container ends."""
    return subprocess.Popen([str(k.bin / "kubectl"), "logs", "-f", "-n", NAMESPACE, pod], stdout=out,
                            stderr=subprocess.STDOUT, env={**k.env, "KUBECONFIG": str(k.kubeconfig)})  # fmt: skip


def signal_container(k: Kind, pod: dict[str, Any], sig: str) -> None:
    """``sig`` to a pod's container from its node's containerd (kubectl exec cannot: a
    container's PID 1 ignores SIGKILL sent from inside it)."""
    cid = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    node = pod["spec"]["nodeName"]
    proc = subprocess.run(["docker", "exec", node, "ctr", "-n", "k8s.io", "task", "kill", "-s", sig, cid],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, f"ctr task kill -s {sig} {cid} on {node}: {proc.stderr}"


RESULT = re.compile(r"^reactorfed: result of ([^:\s]+): (\{.*\})$", re.MULTILINE)


def results(log: str) -> dict[str, dict[str, Any]]:
    """The result lines of a federate's log, by reactor without the main reactor's name
    (``reactorfed: result of Main.learner: {...}`` -> ``learner``)."""
    return {m.group(1).split(".", 1)[-1]: json.loads(m.group(2)) for m in RESULT.finditer(log)}


@dataclass(frozen=True)
class ElasticPlan:
    """An elastic example of examples/k8s/ as the kind suite runs it."""

    plan: str
    manifest: str
    #: its parameters for a run that trains until it is stopped (on top of the manifest's)
    params: dict[str, str]
    #: the logical time from a member's join after which it has taken part: a few of its
    #: fragments (the manifests' periods are about a second)
    at_work_ns: int = 3_000_000_000


#: no target to stop at, no checkpoint volume to provision, no progress lines
_ENDLESS = {"target_return": "1000", "checkpoint": "", "resume": "false", "progress": "false"}
ELASTIC_PLANS = {
    "ppo": ElasticPlan("ppo", "ppo-cartpole-elastic.yaml", {"ppo.total_timesteps": "1000000000", **_ENDLESS}),
    "appo": ElasticPlan("appo", "appo-cartpole-elastic.yaml", {"total_timesteps": "1000000000", **_ENDLESS}),
    "apex": ElasticPlan("apex", "apex-dqn-cartpole-elastic.yaml",
                        {"total_timesteps": "1000000000", "replay.learning_starts": "500", **_ENDLESS}),
}  # fmt: skip


def elastic_doc(p: ElasticPlan, width: int = 2, most: int = 4, **params: str) -> dict[str, Any]:
    """``p``'s manifest at ``width`` of at most ``most`` samplers, with requests that fit the
    kind nodes and ``p.params`` (and ``params``): it trains until stopped."""
    doc = small_requests(load_example(p.manifest)[0])
    spec = doc["spec"]
    spec["samplers"]["replicas"] = width
    next(g for g in spec["federateGroups"] if g.get("scale"))["maxReplicas"] = most
    spec["program"]["params"].update({**p.params, **params})
    spec.pop("checkpoint", None)
    spec.setdefault("coordination", {})["joinTimeout"] = "120 s"
    spec["terminationGracePeriodSeconds"] = 20
    return doc
