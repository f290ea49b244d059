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

Each member holds a key of its own, issued by the operator: beside the run, a pod with a
sampler's key that claims to be the learner is refused, the RTI naming whose key it is; and
once the federation is scaled down, the key of a released slot is withdrawn from the RTI's
table, and a pod that holds it is refused (keys.py).

Same as tests/e2e/test_live_scaling.py (the test control plane, pods run as local
processes), with the small parameters chosen there: rounds 100 ms of logical time apart in
real time, longer than a round takes, so a join lands at the next round."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import apply, describe, load_example, small_requests
from .keys import ended, impostor, key_secret_copy, public_key, remove, rti_table, start
from .live import Watch, results, signal_container, watching

pytestmark = [pytest.mark.kind, pytest.mark.timeout(1200)]

NAME = "qlearning-elastic"
ROUND_MS = 100
# ten rounds since its join: a member that ran them sent fragments
AT_WORK_NS = 10 * ROUND_MS * 1_000_000


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


@pytest.fixture
def watch(operator: Kind, tmp_path: Path) -> Iterator[Watch]:
    with watching(operator, NAME, tmp_path, at_work_ns=AT_WORK_NS) as w:
        yield w


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
    assert sorted(w.pinned().values()) == ["learner", "rti"]

    def scaled_up(width: int, slots: tuple[int, ...], joins: int) -> None:
        before = set(w.running_at)
        t = time.monotonic()
        assert w.scale(width).returncode == 0
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
    refused = w.scale(5)
    assert refused.returncode != 0 and "spec.samplers.maxReplicas" in refused.stderr, refused.stderr

    # a sampler's key, in a key file that names the learner, cannot join as the learner (its pod
    # runs beside the federation; the refusal is checked below)
    table, rti = f"{NAME}-member-keys", f"{NAME}-rti"
    remove(k, "impostor-learner", "impostor-withdrawn", "forged-key", "withdrawn-key", wait=True)  # (an earlier run's)
    forged = key_secret_copy(k, f"{NAME}-samplers-0-key", "forged-key", member="learner")
    start(k, forged, impostor(w.slot_pod(0), "impostor-learner", "learner", key_secret="forged-key"))
    old = key_secret_copy(k, f"{NAME}-samplers-3-key", "withdrawn-key")
    old_public = public_key(k, "samplers[3]", table)
    assert old_public is not None and rti_table(k, rti)["samplers[3]"] == old_public

    # kubectl scale down: the highest slots leave at agreed tags, their pods go
    t = time.monotonic()
    assert w.scale(1).returncode == 0
    w.until("samplers[1..3] to leave", lambda st: w.at(1) if all(
        w.changes(f"samplers[{i}]", False) for i in (1, 2, 3)) else None, 300)  # fmt: skip
    record("scale_to_1_left_s", max(w.shown(f"samplers[{i}]", False) for i in (1, 2, 3)) - t, "s",
           "kubectl scale --replicas=1 -> the leaves of samplers[1..3] in status.membership")  # fmt: skip
    # the released slot's key is withdrawn from the RTI's table (a fresh one waits for the slot)
    w.until("samplers[3]'s key withdrawn in the RTI's pod",
            lambda st: rti_table(k, rti).get("samplers[3]") != old_public or None, 120)  # fmt: skip
    record("scale_to_1_key_withdrawn_in_rti_s", time.monotonic() - t, "s",
           "kubectl scale --replicas=1 -> samplers[3]'s old key gone from the RTI pod's member table file")  # fmt: skip
    assert public_key(k, "samplers[3]", table) not in (None, old_public)
    start(k, old, impostor(w.slot_pod(0), "impostor-withdrawn", "samplers[3]", key_secret="withdrawn-key"))
    w.until("the scaled-down pods gone", lambda st: len(w.pods) == 3, 120)
    scale = k.get_json(f"rfed/{NAME}", "-n", NAMESPACE, "--subresource=scale")
    assert scale["spec"]["replicas"] == 1 and scale["status"]["replicas"] == 1, scale

    # and up again: new pods for slots that were filled before
    scaled_up(3, (1, 2), joins=1)
    assert len(w.changes("samplers[2]", True)) == 2

    # the keys' refusals: as another member, at once (the RTI names whose key it is); withdrawn,
    # tried until the join timeout (a key may reach the RTI's table late), then given up
    phase, log = wait_for("the impostor learner to end", lambda: ended(k, "impostor-learner"), 120)
    assert phase == "Failed" and "the connection's key was issued to 'samplers[0]', not to 'learner'" in log, log
    phase, log = wait_for("the withdrawn key's pod to end", lambda: ended(k, "impostor-withdrawn"), 120)
    assert phase == "Failed" and "does not admit its key yet" in log and "the RTI refused its key" in log, log
    rti_log = k.kubectl("logs", "-n", NAMESPACE, rti).stdout
    assert "rejected a federate: federate 'learner' refused: the connection's key was issued to 'samplers[0]'" in rti_log
    assert "the key of member samplers[3] was withdrawn" in rti_log, rti_log[-3000:]
    assert "refused a connection from" in rti_log, rti_log[-3000:]
    remove(k, "impostor-learner", "impostor-withdrawn", "forged-key", "withdrawn-key")

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
    uid = k.get_json(f"rfed/{NAME}", "-n", NAMESPACE)["metadata"]["uid"]  # (not an earlier run's, in a kept cluster)
    events = k.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.uid={uid}")["items"]
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
    learner = w.pod_of("learner")
    signal_container(k, learner, "SIGTERM")
    w.until(
        "the federation to finish",
        lambda st: st if st.get("phase") in ("Succeeded", "Failed") else None,
        180,
    )
    assert w.status["phase"] == "Succeeded", describe(k, NAME)
    unclean = {u: c for u, c in w.exit_codes.items() if c != 0 and u != killed["metadata"]["uid"]}
    assert not unclean, f"sampler containers that did not exit 0 (leaving or at the end): {unclean}"
    learner_log = k.kubectl("logs", "-n", NAMESPACE, f"{NAME}-learner").stdout
    r = results(learner_log).get("learner")
    assert r is not None, learner_log[-3000:]
    print("the learner's result:", json.dumps(r))
    # Every round took exactly its members' fragments but for those around the kill (the killed
    # sampler is present until its agreed leave tag: the rounds ending before it miss its
    # fragment): as in the e2e test, at most two.
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
