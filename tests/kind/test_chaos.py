"""Faults during one training run, in the kind cluster: examples/k8s/ppo-cartpole.yaml (the
synchronous PPO plan, checkpointed every 2 updates with its samplers' states) trains while,
at updates drawn from a seed the test prints, a sampler's pod, the learner's pod and the
RTI's pod are deleted, the operator's pod is deleted (the Deployment makes a new one), and
the worker node that holds a sampler but not the checkpoint volume is drained. The run
must end Succeeded with the weights of the same program and seed launched undisturbed on
this machine, bit for bit. Each fault's cost is recorded: the time from the fault until
the learner is past the update it had reached (its redone updates and the restart)."""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from bench.rf_runner import results_by_reactor

from .conftest import NAMESPACE, OPERATOR_NS, Kind, record, wait_for
from .federations import (
    apply,
    clean_slate,
    describe,
    launch_here,
    load_example,
    pods,
    progress_done,
    small_requests,
    status,
)

pytestmark = [pytest.mark.kind, pytest.mark.timeout(1800)]

NAME = "ppo-cartpole"
UPDATES = 600  # 256 env steps each (2 samplers x 4 copies x 32 rows): about 30 s of training in pods
CHECKPOINT_EVERY = 2
SEED = int(os.environ.get("REACTORFED_CHAOS_SEED", "0")) or random.SystemRandom().randrange(1, 10_000)
OPERATOR_DEPLOY = "reactorfed-reactorfed-operator"

PARAMS = {"ppo.total_timesteps": str(UPDATES * 256), "target_return": "1000", "seed": "3",
          "checkpoint_every": str(CHECKPOINT_EVERY), "progress": "true"}


def _done(k: Kind) -> int:
    """The learner's updates so far (all of them once the run has ended)."""
    return progress_done(k, NAME, UPDATES)


def _learner_result(k: Kind) -> dict[str, Any]:
    found = results_by_reactor(k.kubectl("logs", "-n", NAMESPACE, f"{NAME}-learner").stdout)
    assert len(found) == 1, found
    return next(iter(found.values()))


def _undisturbed() -> dict[str, Any]:
    """The same program, parameters and seed launched here, with no checkpoint at all."""
    return launch_here("ppo_cartpole.py", {**PARAMS, "num_samplers": "2", "checkpoint": "", "resume": "false",
                                           "progress": "false"})


def _node_of(k: Kind, pod: str) -> str:
    return str(pods(k, NAME)[pod]["spec"]["nodeName"])


def _drain_a_sampler_node(k: Kind) -> Callable[[], None]:
    """Drain the CPU worker that runs a sampler and not the learner (whose node holds the
    checkpoint volume: local-path binds it there); returns how to undo it."""
    learner = _node_of(k, f"{NAME}-learner")
    nodes = {p["spec"].get("nodeName") for n, p in pods(k, NAME).items() if "-samplers-" in n}
    other = sorted(n for n in nodes - {learner, None}
                   if k.nodes()[n]["metadata"]["labels"].get("reactorfed.io/pool") == "cpu")
    if not other:  # both samplers beside the learner: drain the other CPU worker all the same
        other = sorted(n for n, v in k.nodes().items()
                       if v["metadata"]["labels"].get("reactorfed.io/pool") == "cpu" and n != learner)
    node = other[0]
    k.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--grace-period=20",
              "--timeout=180s", timeout=240)

    def undo() -> None:
        k.kubectl("uncordon", node, check=False)
    return undo


def _delete_the_operator(k: Kind) -> Callable[[], None]:
    selector = ",".join(f"{a}={b}" for a, b in k.get_json("deployment", OPERATOR_DEPLOY, "-n", OPERATOR_NS)
                        ["spec"]["selector"]["matchLabels"].items())
    k.kubectl("delete", "pod", "-n", OPERATOR_NS, "-l", selector, "--wait=false")
    return lambda: None


def _delete(pod: str) -> Callable[[Kind], Callable[[], None]]:
    def fault(k: Kind) -> Callable[[], None]:
        k.kubectl("delete", "pod", "-n", NAMESPACE, f"{NAME}-{pod}", "--wait=false")
        return lambda: None
    return fault


FAULTS: dict[str, Callable[[Kind], Callable[[], None]]] = {
    "sampler_pod": _delete("samplers-1"),
    "learner_pod": _delete("learner"),
    "rti_pod": _delete("rti"),
    "operator_pod": _delete_the_operator,
    "node_drain": _drain_a_sampler_node,
}


def test_a_run_through_faults_ends_with_the_undisturbed_weights(operator: Kind) -> None:
    k = operator
    rng = random.Random(SEED)
    order = list(FAULTS)
    rng.shuffle(order)
    # a fault every 80 to 110 updates, the first after 60 to 90, all before the last hundred
    at, plan = 60, []
    for fault in order:
        at += rng.randrange(0, 30)
        plan.append((at, fault))
        at += 80
    assert plan[-1][0] < UPDATES - 100, plan
    print(f"chaos seed {SEED} (REACTORFED_CHAOS_SEED={SEED} repeats it): {plan}", file=sys.stderr)
    docs = load_example("ppo-cartpole.yaml")
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    small_requests(fed)
    fed["spec"]["program"]["params"].update(PARAMS)
    fed["spec"]["failurePolicy"] = {"maxRestarts": 10}
    clean_slate(k, NAME)
    undo: list[Callable[[], None]] = []
    # the undisturbed run, meanwhile: the cluster's run leaves cores idle while pods start and
    # restart (the first faults' costs then include sharing the cores with it)
    here = ThreadPoolExecutor(1).submit(_undisturbed)
    apply(k, docs)
    try:
        for update, fault in plan:
            wait_for(f"update {update} before the {fault} fault", lambda: _done(k) >= update, 900,  # noqa: B023
                     interval=1)
            reached = _done(k)
            assert status(k, NAME).get("phase") == "Running", f"over before the {fault} fault: {describe(k, NAME)}"
            t0 = time.monotonic()
            undo.append(FAULTS[fault](k))
            wait_for(f"the learner past update {reached} after the {fault} fault",
                     lambda: _done(k) > reached, 900, interval=1)  # noqa: B023
            record(f"chaos_{fault}_cost_s", time.monotonic() - t0, "s",
                   f"{fault} at update {reached} (seed {SEED}) -> the learner past that update again")
            for u in undo:  # (an uncordon: the next faults need both CPU workers)
                u()
            undo.clear()
        st = wait_for(f"{NAME} to end", lambda: status(k, NAME) if status(k, NAME).get("phase") in
                      ("Succeeded", "Failed") else None, 900, interval=2)
        assert st["phase"] == "Succeeded", describe(k, NAME)
        disturbed = _learner_result(k)
    finally:
        for u in undo:
            u()
        k.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--ignore-not-found", "--timeout=120s", check=False,
                  timeout=150)
    undisturbed = here.result(timeout=900)
    assert disturbed["iterations"] == undisturbed["iterations"] == UPDATES, (disturbed, undisturbed)
    assert disturbed["resumed_from_iteration"] > 0, disturbed
    for field in ("env_steps", "episodes", "weights_sha256"):
        assert disturbed[field] == undisturbed[field], (field, disturbed, undisturbed, f"chaos seed {SEED}")
    record("chaos_restarts", float(int(st.get("restarts") or 0)), "restarts",
           f"the run through {len(plan)} faults (seed {SEED}): the operator's count of failures")
