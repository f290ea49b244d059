"""Live scaling (issue 19) in the kind cluster: examples/k8s/qlearning-elastic.yaml in real
containers, scaled with `kubectl scale` 2 -> 4 -> 1 -> 3 while it trains, and a sampler
container killed (SIGKILL from its node's containerd, as the OOM killer would) and replaced.

The RTI and the learner must keep their pods (same UID) and containers (restartCount 0)
throughout, in incarnation 1 with no restart; the status must follow the running width and
record each join and leave with its tag. At the end a SIGTERM to the learner's container
stops the federation at an agreed tag, and the learner's result must show that it took each
sampler process's samples once: its count for every process that exited cleanly equals
the count the process itself printed (its log is followed while it runs, since a
scaled-down pod is deleted with its log). The figures: time from `kubectl scale` to the new
pods Running and to their joins in status.membership (conftest.record).

Same as tests/e2e/test_live_scaling.py (the test control plane, pods run as local
processes), with the small parameters chosen there: rounds 100 ms of logical time apart in
real time, longer than a round takes, so a join lands at the next round."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import pytest

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import apply, clean_slate, describe, load_example, small_requests

pytestmark = [pytest.mark.kind, pytest.mark.timeout(1200)]

NAME = "qlearning-elastic"
ROUND_MS = 100
# ten rounds since its join: a member that ran them sent fragments
AT_WORK_NS = 10 * ROUND_MS * 1_000_000
T = TypeVar("T")


def elastic_doc() -> dict[str, Any]:
    """The example at 2 of at most 4 samplers, with the e2e test's small rounds."""
    doc = small_requests(load_example("qlearning-elastic.yaml")[0])
    spec = doc["spec"]
    spec["samplers"].update(replicas=2, maxReplicas=4)
    spec["program"]["params"].update(
        fragment_len="10", updates_per_iteration="1", round_ms=str(ROUND_MS), iterations="1000000"
    )  # it trains until the learner is stopped
    spec["coordination"]["joinTimeout"] = "120 s"
    spec["terminationGracePeriodSeconds"] = 20
    return doc


class Watch:
    """Looks at the federation (one kubectl call for its resource and pods) and keeps what
    it saw: when each pod first ran and each membership change first showed, the RTI's and
    the learner's pods (which must never change), and each sampler container's log,
    followed from its start so that it outlives the pod."""

    def __init__(self, k: Kind, logs: Path) -> None:
        self.k = k
        self.logs = logs
        self.status: dict[str, Any] = {}
        self.pods: dict[str, dict[str, Any]] = {}  # current pods by UID
        self.running_at: dict[str, float] = {}  # pod UID -> when first seen Running
        self.samplers: list[tuple[int, str]] = []  # (slot, pod UID) in the order they ran
        #: sampler pod UID -> its container's exit code, where seen
        self.exit_codes: dict[str, int] = {}
        #: membership change (member, joined, tagNs, microstep) -> when first seen
        self.shown_at: dict[tuple[str, bool, int, int], float] = {}
        self.core: dict[str, str] = {}  # "rti"/"learner" -> pod UID
        self.followers: dict[str, subprocess.Popen[bytes]] = {}

    def look(self) -> dict[str, Any]:
        items = self.k.get_json("rfed,pods", "-n", NAMESPACE)["items"]
        now = time.monotonic()
        feds = [
            i for i in items if i["kind"] == "ReactorFederation" and i["metadata"]["name"] == NAME
        ]
        self.status = (feds[0].get("status") or {}) if feds else {}
        self.pods = {p["metadata"]["uid"]: p for p in items if p["kind"] == "Pod"
                     and p["metadata"].get("labels", {}).get("reactorfed.io/federation") == NAME}  # fmt: skip
        for uid, pod in self.pods.items():
            role = pod["metadata"]["labels"]["reactorfed.io/role"]
            cs = (pod["status"].get("containerStatuses") or [{}])[0]
            if role in ("rti", "learner") and self.core:
                assert self.core[role] == uid, f"the {role}'s pod was replaced"
                assert cs.get("restartCount", 0) == 0, f"the {role}'s container restarted: {cs}"
            if "running" in cs.get("state", {}) and uid not in self.running_at:
                self.running_at[uid] = now
                if role == "sampler":
                    slot = int(pod["metadata"]["name"].rsplit("-", 1)[1])
                    self.samplers.append((slot, uid))
                    self._follow(uid, pod["metadata"]["name"])
            if role == "sampler" and "terminated" in cs.get("state", {}):
                self.exit_codes[uid] = cs["state"]["terminated"]["exitCode"]
        for c in self.status.get("membership") or []:
            self.shown_at.setdefault((c["member"], c["joined"], c["tagNs"], c["microstep"]), now)
        return self.status

    def _follow(self, uid: str, name: str) -> None:
        with (self.logs / f"{uid}.log").open("wb") as out:
            self.followers[uid] = follow_log(self.k, name, out)

    def pinned(self) -> None:
        """From now on the RTI's and the learner's pods must stay the ones running now."""
        for uid, pod in self.pods.items():
            role = pod["metadata"]["labels"]["reactorfed.io/role"]
            if role in ("rti", "learner"):
                self.core[role] = uid
        assert set(self.core) == {"rti", "learner"}, self.pods

    def until(self, what: str, probe: Callable[[dict[str, Any]], T | None], timeout: float) -> T:
        try:
            return wait_for(what, lambda: probe(self.look()), timeout, interval=1.0)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{describe(self.k, NAME)}") from None

    def changes(self, member: str, joined: bool) -> list[dict[str, Any]]:
        return [
            c
            for c in self.status.get("membership") or []
            if c["member"] == member and c["joined"] is joined
        ]

    def at(self, width: int) -> dict[str, Any] | None:
        """The status once the first incarnation runs ``width`` samplers, all ready."""
        st, samplers = self.status, self.status.get("samplers") or {}
        ok = (st.get("phase") == "Running" and samplers.get("readyText") == f"{width}/{width}"
              and samplers.get("replicas") == width and st.get("incarnation") == 1 and st.get("restarts") == 0)  # fmt: skip
        return st if ok else None

    def at_work(self, slots: tuple[int, ...]) -> bool:
        """Whether the federation (every member present) is AT_WORK_NS of logical time past
        the latest joins of samplers ``slots``: each has taken part in rounds since."""
        progress = self.status.get("progress") or {}
        if progress.get("rtiPhase") != "running" or progress.get("tagNs") is None:
            return False
        joins = [self.changes(f"samplers[{i}]", True) for i in slots]
        return (
            all(j for j in joins)
            and progress["tagNs"] >= max(j[-1]["tagNs"] for j in joins) + AT_WORK_NS
        )

    def shown(self, member: str, joined: bool) -> float:
        """When the latest change of ``member`` to ``joined`` was first seen in the status."""
        c = self.changes(member, joined)[-1]
        return self.shown_at[(member, joined, c["tagNs"], c["microstep"])]

    def slot_pod(self, slot: int) -> dict[str, Any]:
        return next(p for p in self.pods.values() if p["metadata"]["name"] == f"{NAME}-samplers-{slot}"
                    and not p["metadata"].get("deletionTimestamp"))  # fmt: skip

    def stop(self) -> None:
        for proc in self.followers.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


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


RESULT = re.compile(r"^reactorfed: result of Main\.(\S+): (\{.*\})$", re.MULTILINE)


def results(log: str) -> dict[str, dict[str, Any]]:
    """The result lines of a federate's log, by reactor (``reactorfed: result of FQN: {...}``)."""
    return {m.group(1): json.loads(m.group(2)) for m in RESULT.finditer(log)}


@pytest.fixture
def watch(operator: Kind, tmp_path: Path) -> Iterator[Watch]:
    clean_slate(operator, NAME)
    w = Watch(operator, tmp_path)
    try:
        yield w
    finally:
        w.stop()
        clean_slate(operator, NAME)


def _scale(k: Kind, width: int) -> subprocess.CompletedProcess[str]:
    return k.kubectl("scale", f"rfed/{NAME}", "-n", NAMESPACE, f"--replicas={width}", check=False)


def test_elastic_federation_rescales_live(operator: Kind, watch: Watch) -> None:
    k, w = operator, watch
    t0 = time.monotonic()
    apply(k, [elastic_doc()])

    def training(connected: int) -> bool:
        p = w.status.get("progress") or {}
        return p.get("rtiPhase") == "running" and p.get("federatesConnected") == connected

    w.until("2 samplers and the learner training", lambda st: w.at(2) and training(3), 600)
    record("elastic_apply_to_training_s", time.monotonic() - t0, "s",
           "kubectl apply qlearning-elastic (2 samplers) -> Running 2/2, the RTI running with 3 federates")  # fmt: skip
    w.pinned()

    def scaled_up(width: int, slots: tuple[int, ...], joins: int) -> None:
        before = set(w.running_at)
        t = time.monotonic()
        assert _scale(k, width).returncode == 0
        w.until(f"samplers {slots} to join", lambda st: w.at(width) if all(
            len(w.changes(f"samplers[{i}]", True)) >= joins for i in slots) else None, 300)  # fmt: skip
        new = [uid for slot, uid in w.samplers if slot in slots and uid not in before]
        assert len(new) == len(slots), (slots, w.samplers)
        what = f"samplers[{slots[0]}..{slots[-1]}]"
        record(f"scale_to_{width}_pods_running_s", max(w.running_at[u] for u in new) - t, "s",
               f"kubectl scale --replicas={width} -> the pods of {what} Running (polled every ~1 s)")  # fmt: skip
        record(f"scale_to_{width}_admitted_s", max(w.shown(f"samplers[{i}]", True) for i in slots) - t, "s",
               f"kubectl scale --replicas={width} -> the joins of {what} in status.membership "
               "(the operator reads the RTI's /status every 2 s)")  # fmt: skip
        w.until(f"the RTI to count {width} samplers present",
                lambda st: (st.get("samplers") or {}).get("members") == width, 60)  # fmt: skip
        w.until(f"{what} at work", lambda st: w.at_work(slots), 120)

    # kubectl scale up: two pods join the running federation
    scaled_up(4, (2, 3), joins=1)
    assert w.status["samplers"]["initial"] == 2 and w.status["samplers"]["maxReplicas"] == 4, (
        w.status
    )

    # beyond maxReplicas: the API server refuses it, naming the bound
    refused = _scale(k, 5)
    assert refused.returncode != 0 and "spec.samplers.maxReplicas" in refused.stderr, refused.stderr

    # kubectl scale down: the highest slots leave at agreed tags, their pods go
    t = time.monotonic()
    assert _scale(k, 1).returncode == 0
    w.until("samplers[1..3] to leave", lambda st: w.at(1) if all(
        w.changes(f"samplers[{i}]", False) for i in (1, 2, 3)) else None, 300)  # fmt: skip
    record("scale_to_1_left_s", max(w.shown(f"samplers[{i}]", False) for i in (1, 2, 3)) - t, "s",
           "kubectl scale --replicas=1 -> the leaves of samplers[1..3] in status.membership")  # fmt: skip
    w.until("the scaled-down pods gone", lambda st: len(w.pods) == 3, 120)
    scale = k.get_json(f"rfed/{NAME}", "-n", NAMESPACE, "--subresource=scale")
    assert scale["spec"]["replicas"] == 1 and scale["status"]["replicas"] == 1, scale

    # and up again: new pods for slots that were filled before
    scaled_up(3, (1, 2), joins=1)
    assert len(w.changes("samplers[2]", True)) == 2

    # a sampler container killed: its pod fails, a new pod for its slot joins, in the same incarnation
    t = time.monotonic()
    killed = w.slot_pod(1)
    signal_container(k, killed, "SIGKILL")
    w.until("the killed sampler's slot refilled", lambda st: w.at(3) if (
        (st["samplers"].get("replaced") or 0) >= 1 and len(w.changes("samplers[1]", True)) >= 2) else None, 300)  # fmt: skip
    replacement = w.slot_pod(1)["metadata"]["uid"]
    assert replacement != killed["metadata"]["uid"]
    record("sampler_killed_to_replacement_running_s", w.running_at[replacement] - t, "s",
           "SIGKILL to samplers[1]'s container -> its new pod Running")  # fmt: skip
    record("sampler_killed_to_readmitted_s", w.shown("samplers[1]", True) - t, "s",
           "SIGKILL to samplers[1]'s container -> its join in status.membership")  # fmt: skip
    assert w.status["samplers"]["replaced"] == 1, w.status["samplers"]
    events = k.get_json(
        "events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={NAME}"
    )["items"]
    reasons = {e["reason"] for e in events}
    failed = [e["message"] for e in events if e["reason"] == "SamplerFailed"]
    assert any(f"{NAME}-samplers-1 failed (exit code 137" in m for m in failed), failed
    assert {"ScalingLive", "SamplerFailed", "SamplerReplaced"} <= reasons, reasons
    assert "FederateFailed" not in reasons and "Rescaling" not in reasons, reasons
    w.until("the new samplers[1] at work", lambda st: w.at_work((1,)), 120)

    # the record: every change with its tag, in order
    st = w.look()
    assert st["incarnation"] == 1 and st["restarts"] == 0, st
    record_ = [(c["member"], c["joined"]) for c in st["membership"]]
    assert record_[:2] in (
        [("samplers[2]", True), ("samplers[3]", True)],
        [("samplers[3]", True), ("samplers[2]", True)],
    )
    assert sorted(record_[2:5]) == [
        ("samplers[1]", False),
        ("samplers[2]", False),
        ("samplers[3]", False),
    ], record_
    assert sorted(record_[5:7]) == [("samplers[1]", True), ("samplers[2]", True)], record_
    assert record_[7:] == [("samplers[1]", False), ("samplers[1]", True)], record_
    tags = [(c["tagNs"], c["microstep"]) for c in st["membership"]]
    assert tags == sorted(tags) and all(
        c["incarnation"] == 1 and c["logicalTime"] for c in st["membership"]
    )

    # the end: SIGTERM to the learner (as when its pod is deleted) stops the federation at an
    # agreed tag; every pod ends Succeeded, and so does the resource
    learner = next(
        p for p in w.pods.values() if p["metadata"]["labels"]["reactorfed.io/role"] == "learner"
    )
    signal_container(k, learner, "SIGTERM")
    w.until(
        "the federation to finish",
        lambda st: st if st.get("phase") in ("Succeeded", "Failed") else None,
        180,
    )
    assert w.status["phase"] == "Succeeded", describe(k, NAME)
    failed = {u: c for u, c in w.exit_codes.items() if c != 0 and u != killed["metadata"]["uid"]}
    assert not failed, f"sampler containers that did not exit 0 (leaving or at the end): {failed}"
    learner_log = k.kubectl("logs", "-n", NAMESPACE, f"{NAME}-learner").stdout
    r = results(learner_log).get("learner")
    assert r is not None, learner_log[-3000:]
    print("the learner's result:", json.dumps(r))
    # Every round took exactly its members' fragments but for those around the kill (the killed
    # sampler is present until its agreed leave tag; its last fragment may die with it): as
    # in the e2e test, at most two.
    assert r["incomplete_iterations"] <= 2, r
    by_member: dict[str, list[int]] = r["samples_by_member"]
    assert sorted(by_member) == ["0", "1", "2", "3"], by_member  # nothing from a member not present
    assert sum(map(sum, by_member.values())) == r["env_steps"], r
    # each sampler process's own count, in the order they ran, against the learner's for it
    for slot in range(4):
        uids = [uid for s, uid in w.samplers if s == slot]
        counts = by_member[str(slot)]
        assert len(counts) == len(uids), (slot, counts, uids)
        for uid, taken in zip(uids, counts, strict=True):
            assert taken > 0, f"samplers[{slot}] (pod {uid}) took part in no round: {by_member}"
            if uid == killed["metadata"]["uid"]:
                continue  # SIGKILLed: it printed nothing
            w.followers[uid].wait(timeout=60)
            log = (w.logs / f"{uid}.log").read_text(errors="replace")
            own = results(log).get(f"samplers[{slot}]")
            assert own is not None, (
                f"samplers[{slot}] (pod {uid}) printed no result:\n{log[-2000:]}"
            )
            assert own["samples"] == taken, (
                f"samplers[{slot}] (pod {uid}) sent {own['samples']}, the learner took {taken}"
            )
    widths = [wd for _, _, wd in r["membership"]]
    assert (
        widths[0] == 2 and widths.index(4) < widths.index(1) < len(widths) - 1 and widths[-1] == 3
    ), widths
    if r.get("change_gaps_ms"):
        record("live_scale_learner_longest_pause_ms", max(r["change_gaps_ms"]), "ms",
               "the learner's longest wall time between its reactions around a membership change (change_gaps_ms)")  # fmt: skip
