"""The whole path of docs/kubernetes.md in a real kind cluster: the operator installed with
helm as a pod, examples/k8s/qlearning.yaml training in real pods on CPU workers and the
GPU-labelled worker, rescaled, its pods deleted, suspended and resumed, run to its end,
deleted; then the other examples, each to its end.

The machine these tests were written on has 2 cores, so every kind node advertises 2 CPUs:
the examples' CPU *requests* (made for real nodes) are lowered before applying them, and
nothing else. Every figure measured is recorded (conftest.record)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from bench.rf_runner import results_by_reactor

from .conftest import NAMESPACE, OPERATOR_NS, Kind, record, wait_for
from .federations import (
    apply,
    clean_slate,
    columns,
    describe,
    launch_here,
    load_example,
    pods,
    rfed,
    run_to_success,
    small_requests,
    status,
    status_once_ended,
)

pytestmark = [pytest.mark.kind, pytest.mark.timeout(3600)]

MAX_SAMPLERS = int(os.environ.get("REACTORFED_KIND_MAX_SAMPLERS", "4"))


def tag(st: dict[str, Any]) -> tuple[int, int] | None:
    """The RTI's current tag (time ns, microstep) in the status, once the federation runs.
    Q-learning's iterations are microsteps of logical time 0 (zero-delay loops)."""
    p = st.get("progress") or {}
    if p.get("rtiPhase") != "running" or p.get("tagNs") is None:
        return None
    return int(p["tagNs"]), int(p.get("microstep") or 0)


def test_operator_runs_as_a_pod(operator: Kind, images: dict[str, str]) -> None:
    k = operator
    items = k.get_json("pods", "-n", OPERATOR_NS)["items"]
    assert len(items) == 1, [p["metadata"]["name"] for p in items]
    pod = items[0]
    assert pod["status"]["phase"] == "Running"
    assert pod["spec"]["containers"][0]["image"] == images["operator"]
    sa = pod["spec"]["serviceAccountName"]
    assert sa == "reactorfed-reactorfed-operator"
    # its RBAC: it may manage pods in "rl", and may not list Secrets anywhere
    who = f"system:serviceaccount:{OPERATOR_NS}:{sa}"
    assert (
        k.kubectl("auth", "can-i", "create", "pods", "-n", NAMESPACE, "--as", who).stdout.strip()
        == "yes"
    )
    assert (
        k.kubectl(
            "auth", "can-i", "list", "secrets", "-n", NAMESPACE, "--as", who, check=False
        ).stdout.strip()
        == "no"
    )


QL = "qlearning"


# The run is applied with no end in reach, so that no machine is fast enough to finish it
# before the scale, the two pod deletions and the suspension have disturbed it (between
# about 7 and 20 iterations/s on 2 cores: a fixed 600 ended before the deletions on one).
# The last test sets its end, QL_TAIL iterations past where the learner is, as it widens
# the bank; the restart that the widening makes brings the new end to the pods.
QL_ITERATIONS = 1_000_000
QL_TAIL = 400  # (the learner runs on for a second or two after the patch, before it stops)


def qlearning_doc(iterations: int) -> dict[str, Any]:
    doc = small_requests(load_example("qlearning.yaml")[0])
    doc["spec"]["program"]["params"]["iterations"] = str(iterations)
    doc["spec"]["program"]["params"]["progress"] = "true"
    return doc


def learner_iterations(k: Kind) -> list[int]:
    """The learner's progress lines ("iter N/M ...") in its current pod's log."""
    out = k.kubectl("logs", "-n", NAMESPACE, f"{QL}-learner", check=False).stdout
    its = []
    for line in out.splitlines():
        if line.startswith("iter "):
            its.append(int(line.split()[1].split("/")[0]))
    return its


def resumed_at(k: Kind) -> int | None:
    """The iteration the current learner resumed at ("resumed from ... at iteration N")."""
    out = k.kubectl("logs", "-n", NAMESPACE, f"{QL}-learner", check=False).stdout
    for line in out.splitlines():
        if line.startswith("resumed from "):
            return int(line.split(" at iteration ")[1].split()[0])
    return None


def running_at(k: Kind, width: int, incarnation: int) -> dict[str, Any] | None:
    st = status(k, QL)
    ok = st.get("phase") == "Running" and int(st.get("incarnation") or 0) >= incarnation
    ok = ok and (st.get("samplers") or {}).get("readyText") == f"{width}/{width}"
    return st if ok else None


def first_tag(k: Kind, incarnation: int) -> dict[str, Any] | None:
    st = status(k, QL)
    return st if int(st.get("incarnation") or 0) >= incarnation and tag(st) is not None else None


def test_qlearning_trains_in_pods_across_nodes(operator: Kind) -> None:
    k = operator
    clean_slate(k, QL)
    t0 = time.monotonic()
    apply(k, [qlearning_doc(iterations=QL_ITERATIONS)])
    wait_for("qlearning Running 4/4", lambda: running_at(k, 4, 1), 600)
    record(
        "qlearning_apply_to_running_s",
        time.monotonic() - t0,
        "s",
        "kubectl apply qlearning.yaml -> phase Running 4/4",
    )
    wait_for("the first tag in the status", lambda: first_tag(k, 1), 300)
    record(
        "qlearning_apply_to_first_tag_s",
        time.monotonic() - t0,
        "s",
        "kubectl apply -> the RTI's first tag in status.progress",
    )
    nodes = k.nodes()
    placed = {name: p["spec"]["nodeName"] for name, p in pods(k, QL).items()}
    gpu = {
        n
        for n, v in nodes.items()
        if v["metadata"]["labels"].get("reactorfed.io/accelerator") == "nvidia"
    }
    cpu = {
        n for n, v in nodes.items() if v["metadata"]["labels"].get("reactorfed.io/pool") == "cpu"
    }
    assert placed[f"{QL}-learner"] in gpu, placed
    assert placed[f"{QL}-rti"] in cpu, placed
    samplers = [n for name, n in placed.items() if "-samplers-" in name]
    assert len(samplers) == 4 and set(samplers) <= cpu, placed
    assert len(set(samplers) | {placed[f"{QL}-learner"]}) >= 2, "federates on different nodes"
    # progress while it runs: the logical time moves, and `kubectl get rfed` shows it
    first = tag(status(k, QL))
    assert first is not None
    wait_for("the logical time to advance", lambda: (tag(status(k, QL)) or (0, 0)) > first, 120)
    table = k.kubectl("get", "rfed", QL, "-n", NAMESPACE).stdout
    assert "Running" in table and "4/4" in table, table
    wait_for("the learner's first progress lines", lambda: len(learner_iterations(k)) >= 2, 300)
    # what a person reads while it trains (its logical time stays 0: its rounds are
    # microsteps): the learner's iteration of the total and its mean return, from the
    # learner's federate through the RTI and the operator
    def readable() -> dict[str, str] | None:
        cells = columns(k, QL)
        ok = re.fullmatch(rf"\d+/{QL_ITERATIONS}", cells.get("PROGRESS", "")) and cells.get("RETURN")
        return cells if ok else None

    cells = wait_for("the Progress and Return columns", readable, 120)
    done, mean_return = int(cells["PROGRESS"].split("/")[0]), float(cells["RETURN"])
    assert "LOGICAL-TIME" not in cells, cells  # a wide column now
    wait_for("the Progress column to move on",
             lambda: int((columns(k, QL).get("PROGRESS") or "0/").split("/")[0]) > done, 120)  # fmt: skip
    wait_for("the wide Logical-Time column (time 0, microsteps)",
             lambda: columns(k, QL, wide=True).get("LOGICAL-TIME", "").startswith("0.000s"), 60)  # fmt: skip
    record("qlearning_progress_column_iteration", float(done), "iterations",
           f"kubectl get rfed while it trains: PROGRESS {cells['PROGRESS']}, RETURN {mean_return}")  # fmt: skip


def test_scale_during_the_run(operator: Kind) -> None:
    k = operator
    st = status(k, QL)
    inc = int(st["incarnation"])
    before = learner_iterations(k)
    t0 = time.monotonic()
    k.kubectl("scale", f"rfed/{QL}", "-n", NAMESPACE, "--replicas=2")
    wait_for("Running at width 2", lambda: running_at(k, 2, inc + 1), 600)
    record(
        "scale_4_to_2_to_running_s",
        time.monotonic() - t0,
        "s",
        "kubectl scale --replicas=2 -> Running 2/2",
    )
    wait_for("the first tag of the new incarnation", lambda: first_tag(k, inc + 1), 300)
    record("scale_learner_pause_s", time.monotonic() - t0, "s",
           "kubectl scale -> the new incarnation's first tag (the learner is stopped in between)")  # fmt: skip
    its = wait_for("the new learner's progress", lambda: learner_iterations(k) or None, 300)
    assert before and its
    assert st.get("restarts", 0) == status(k, QL).get("restarts", 0), "rescaling is not a failure"
    resumed = resumed_at(k)
    assert resumed is not None and resumed >= before[-1], (resumed, before[-1])
    assert its[0] > resumed
    record("scale_learner_resumed_at_iteration", float(resumed), "iterations",
           f"the learner's last progress line before the rescale: {before[-1]}; first after: {its[0]}")  # fmt: skip


def _delete_and_recover(k: Kind, pod: str) -> None:
    st = status(k, QL)
    inc, restarts = int(st["incarnation"]), int(st.get("restarts") or 0)
    width = int(rfed(k, QL)["spec"]["samplers"]["replicas"])
    before = max(learner_iterations(k) or [0])
    t0 = time.monotonic()
    k.kubectl("delete", "pod", "-n", NAMESPACE, pod, "--wait=false")
    wait_for(f"Running again after deleting {pod}", lambda: running_at(k, width, inc + 1), 600)
    record(f"delete_{pod.rsplit('-', 1)[-1] if 'samplers' in pod else 'learner'}_pod_to_running_s",
           time.monotonic() - t0, "s", f"kubectl delete pod {pod} -> Running again")  # fmt: skip
    wait_for("progress after the restart", lambda: first_tag(k, inc + 1), 300)
    # A pod deleted by hand is first *terminating*: the operator takes that as a stop under
    # way (learner first) and starts the next incarnation; it counts no failure for it.
    assert int(status(k, QL).get("restarts") or 0) in (restarts, restarts + 1)
    resumed = wait_for("the learner to resume", lambda: resumed_at(k), 300)
    assert resumed >= before, (
        f"the learner started over: resumed at {resumed}, had reached {before}"
    )
    its = wait_for("the learner's progress", lambda: learner_iterations(k) or None, 300)
    assert its[0] > resumed


def test_delete_a_sampler_pod(operator: Kind) -> None:
    _delete_and_recover(operator, f"{QL}-samplers-0")


def test_delete_the_learner_pod(operator: Kind) -> None:
    _delete_and_recover(operator, f"{QL}-learner")


def test_suspend_and_resume(operator: Kind) -> None:
    k = operator
    inc = int(status(k, QL)["incarnation"])
    k.kubectl(
        "patch", "rfed", QL, "-n", NAMESPACE, "--type=merge", "-p", '{"spec":{"suspend":true}}'
    )
    wait_for(
        "Suspended with no pods",
        lambda: status(k, QL).get("phase") == "Suspended" and not pods(k, QL),
        300,
    )
    assert k.get_json("pvc", f"{QL}-checkpoint", "-n", NAMESPACE)["status"]["phase"] == "Bound"
    t0 = time.monotonic()
    k.kubectl(
        "patch", "rfed", QL, "-n", NAMESPACE, "--type=merge", "-p", '{"spec":{"suspend":false}}'
    )
    wait_for("Running after resume", lambda: running_at(k, 2, inc + 1), 600)
    record("resume_to_running_s", time.monotonic() - t0, "s", "suspend: false -> Running")


def test_run_ends_succeeded_and_delete_leaves_nothing(operator: Kind) -> None:
    k = operator
    reached = wait_for("the learner's progress", lambda: learner_iterations(k) or None, 300)[-1]
    end = reached + QL_TAIL
    widen = {"spec": {"samplers": {"replicas": 4}, "program": {"params": {"iterations": str(end)}}}}
    k.kubectl("patch", "rfed", QL, "-n", NAMESPACE, "--type=merge", "-p", json.dumps(widen))
    st = wait_for("Succeeded", lambda: status_once_ended(k, QL), 3000, interval=2)
    assert st["phase"] == "Succeeded", describe(k, QL)
    # the last learner carried on from the checkpoint and finished the whole run
    done = [
        ln
        for ln in k.kubectl("logs", "-n", NAMESPACE, f"{QL}-learner").stdout.splitlines()
        if ln.startswith("done: ")
    ]
    result = json.loads(done[-1][len("done: ") :])
    assert result["iterations"] == end and result["resumed_from_iteration"] >= reached, (result, reached)
    record("qlearning_final_env_steps", float(result["env_steps"]), "steps",
           f"{end} iterations; the last incarnation resumed at iteration {result['resumed_from_iteration']}")  # fmt: skip
    t0 = time.monotonic()
    k.kubectl("delete", "rfed", QL, "-n", NAMESPACE, "--timeout=120s", timeout=150)
    for kind in ("pods", "services", "secrets", "configmaps", "pvc"):  # (the members' keys and their table too)

        def gone(kind: str = kind) -> bool:
            selector = f"reactorfed.io/federation={QL}"
            return not k.get_json(kind, "-n", NAMESPACE, "-l", selector)["items"]

        wait_for(f"no {kind} of {QL} left", gone, 120)
    record(
        "delete_to_nothing_left_s",
        time.monotonic() - t0,
        "s",
        "kubectl delete rfed -> no pods/services/secrets/configmaps/PVCs left",
    )


@pytest.mark.parametrize(
    "example",
    # marl-inference.yaml runs in test_plans.py, its result compared with a local run
    ["configmap-program.yaml", "gym-sampling.yaml", "atari-sampling.yaml"],
)
def test_other_examples_run_to_their_end(operator: Kind, example: str) -> None:
    k = operator
    docs = load_example(example)
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    small_requests(fed)
    # At most 4 samplers on a 2-core machine, to keep the suite's time: with 16, the last of 17
    # federates (each a Python process importing torch) joined more than the default join
    # timeout (60 s) after the first (spec.coordination.joinTimeout raises it).
    fed["spec"]["samplers"]["replicas"] = min(
        int(fed["spec"]["samplers"].get("replicas", 1)), MAX_SAMPLERS
    )
    name = fed["metadata"]["name"]
    t0 = time.monotonic()
    apply(k, docs)
    try:
        # each example ends in well under a minute here; 600 s is a hang, shown with its logs
        run_to_success(k, name, 600)
        record(f"example_{Path(example).stem}_apply_to_succeeded_s", time.monotonic() - t0, "s",
               f"kubectl apply examples/k8s/{example} -> Succeeded ({fed['spec']['samplers'].get('replicas')} samplers)")  # fmt: skip
    finally:
        k.kubectl("delete", "-n", NAMESPACE, "-f", "-", "--wait=true", "--timeout=120s",
                  input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), check=False, timeout=150)  # fmt: skip


def _learner_result(text: str) -> dict[str, Any]:
    found = results_by_reactor(text)
    assert len(found) == 1, text[-3000:]
    return next(iter(found.values()))


def test_a_seed_gives_the_same_weights_in_pods_as_on_this_machine(operator: Kind) -> None:
    """examples/k8s/ppo-cartpole.yaml, 10 PPO rounds, in pods on nodes of 2 CPUs: the
    learner's weights are bit-identical to those of the same program, parameters and seed
    launched here. torch's thread count is part of what fixes them: a setting of the run
    (``spec.program.threads``, ``--threads``; 1 by default in pods and here alike), not the
    node's size or the pod's CPU request."""
    k = operator
    docs = load_example("ppo-cartpole.yaml")
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    small_requests(fed)
    name = fed["metadata"]["name"]
    params = fed["spec"]["program"]["params"]
    params.update({"ppo.total_timesteps": "2560", "target_return": "1000", "checkpoint": "", "resume": "false",
                   "progress": "false"})
    fed["spec"].pop("checkpoint", None)
    clean_slate(k, name)
    apply(k, docs)
    shown: list[str] = []  # the Progress column's cells seen while it ran (a short run: maybe none)

    def ended() -> dict[str, Any] | None:
        st = status(k, name)
        text = (st.get("progress") or {}).get("doneText")
        if text:
            shown.append(text)
        return st if st.get("phase") in ("Succeeded", "Failed") else None

    try:
        st = wait_for(f"{name} to end", ended, 600, interval=2)
        assert st["phase"] == "Succeeded", describe(k, name)
        assert all(re.fullmatch(r"\d+/\d+", s) for s in shown), shown
        record("ppo_progress_cells_seen", float(len(shown)), "polls",
               f"the PPO learner's Progress while it ran: {shown[-3:]}")  # fmt: skip
        in_pods = _learner_result(k.kubectl("logs", "-n", NAMESPACE, f"{name}-learner").stdout)
    finally:
        k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--ignore-not-found", "--timeout=120s", check=False,
                  timeout=150)
    local_params = {**params, "num_samplers": str(fed["spec"]["samplers"]["replicas"])}
    local = launch_here("ppo_cartpole.py", local_params)
    assert in_pods["iterations"] == local["iterations"] == 10, (in_pods, local)
    assert in_pods["env_steps"] == local["env_steps"]
    assert in_pods["weights_sha256"] == local["weights_sha256"], (in_pods, local)
