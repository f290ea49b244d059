"""A trial's pod dying in population-based training, in the kind cluster:
examples/k8s/pbt-cartpole.yaml (a controller pod and a pod per trial slot, the record and
every slot's checkpoints on the volume) trains with one trial slowed on purpose; after the
first round a trial's pod is deleted. The operator restarts the federation from the
volume (``resume: "true"``), every slot from its last report with its samplers' states,
and the population must end Succeeded with the decisions, best trial, hyperparameters and
weights of the same program and seed launched undisturbed on this machine. The fault's
cost is recorded: from the deletion until the population is past the furthest round it
had reached before the restart.

It carries the marker ``plans`` (``scripts/kind-test.sh -m plans``): the CI suite's chaos
test already deletes a plan's pods, and this run adds minutes."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from bench.rf_runner import results_by_reactor

from reactorfed_operator.manifests import Federation
from reactorfed_operator.pods import federation_pods
from reactorfed_operator.spec import parse_spec

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import (
    apply,
    clean_slate,
    describe,
    pods,
    progress_done,
    run_to_success,
    small_requests,
    status,
    tear_down,
)
from .plans import Plan, federation, load, pod_params, start_local

pytestmark = [pytest.mark.kind, pytest.mark.plans, pytest.mark.timeout(1200)]

NAME = "pbt-cartpole"
ITERATIONS, INTERVAL = 40, 10
PLAN = Plan(
    "pbt-cartpole.yaml",
    {
        "pbt.iterations": str(ITERATIONS),
        "pbt.perturbation_interval": str(INTERVAL),
        "pbt.target": "1000",
        "slow_trial": "0",
        "slow_ms": "150",
    },
    replicas=2,
)
VICTIM = f"{NAME}-trials-1"


def _done(k: Kind) -> int:
    """The population's iterations so far (the whole budget once the run has ended)."""
    return progress_done(k, NAME, ITERATIONS)


def _population(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a disturbed and an undisturbed run must share: the best trial and its metric,
    and every slot's trials (weights, hyperparameters, iterations, env steps, episodes).
    Not the record's digest: its lines carry their tags, and a resumed run's logical time
    starts again at 0 (the decisions themselves are compared through what they did)."""
    ctl = results["Main.controller"]
    return {
        "controller": {
            f: ctl.get(f)
            for f in ("decisions", "rounds", "best_trial", "best_metric", "best_hparams")
        },
        **{k: r["trials"] for k, r in results.items() if k != "Main.controller"},
    }


def test_a_trials_pod_deleted_after_a_round_ends_with_the_undisturbed_population(
    operator: Kind,
) -> None:
    k = operator
    docs = load(PLAN)
    fed = small_requests(federation(docs))
    fed["spec"]["failurePolicy"] = {"maxRestarts": 3}
    planned = federation_pods(Federation(NAME, NAMESPACE, "uid", parse_spec(fed["spec"])), 1)
    params = {**pod_params(planned[1]), "checkpoint": "", "resume": "false"}
    clean_slate(k, NAME)
    local_log = Path(tempfile.mkdtemp(prefix="trial-fault-")) / "launch.log"
    local = start_local(docs, params, local_log)  # undisturbed, no checkpoint at all, meanwhile
    apply(k, docs)
    try:
        wait_for("the first round", lambda: _done(k) >= INTERVAL, 600, interval=0.5)
        reached = _done(k)
        assert reached < ITERATIONS - INTERVAL and status(k, NAME).get("phase") == "Running", (
            describe(k, NAME)
        )
        t0 = time.monotonic()
        k.kubectl("delete", "pod", "-n", NAMESPACE, VICTIM, "--wait=false")
        # the population may pass another round while the pod terminates: the fault's cost
        # is the time until it is past the furthest it had reached before its restart
        seen = reached

        def restarted() -> bool:
            nonlocal seen
            seen = max(seen, _done(k))
            return int(status(k, NAME).get("restarts") or 0) >= 1

        wait_for("the federation's restart", restarted, 600, interval=0.5)
        t_restart = time.monotonic() - t0
        wait_for(f"the population past iteration {seen} again", lambda: _done(k) > seen, 900, interval=0.5)
        record("pbt_trial_pod_cost_s", time.monotonic() - t0, "s",
               f"{VICTIM} deleted at iteration {reached} of {ITERATIONS} (a round every {INTERVAL}; restart seen "
               f"after {t_restart:.1f} s, at iteration {seen}) -> the population past iteration {seen} again")  # fmt: skip
        st = run_to_success(k, NAME, 900)
        assert int(st.get("restarts") or 0) >= 1, st
        in_pods: dict[str, dict[str, Any]] = {}
        for pod_name in pods(k, NAME):
            in_pods.update(results_by_reactor(k.kubectl("logs", "-n", NAMESPACE, pod_name).stdout))
        assert in_pods["Main.controller"]["resumed"], in_pods["Main.controller"]
        assert local.wait(timeout=600) == 0, local_log.read_text()[-3000:]
        here = results_by_reactor(local_log.read_text())
        assert _population(in_pods) == _population(here), (in_pods, here)
    finally:
        tear_down(k, NAME, local)
