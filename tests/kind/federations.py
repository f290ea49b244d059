"""Federations in the kind cluster: the examples made to fit its nodes, applied, and read
back (the resource, its status, its pods), for the test modules that run them through
the operator (conftest's ``operator`` fixture)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import yaml

from .conftest import NAMESPACE, OPERATOR_NS, REPO, Kind, wait_for

EXAMPLES = REPO / "examples" / "k8s"


def small_requests(doc: dict[str, Any], cpu: str = "100m") -> dict[str, Any]:
    """The example with CPU requests that fit nodes of a 2-core machine: the RTI's and every
    federate group's (the shorthand's samplers and learner, or each of spec.federateGroups)."""
    spec = doc.get("spec", {})
    groups = [spec.setdefault("rti", {})]
    if "federateGroups" in spec:
        groups += spec["federateGroups"]
    else:
        groups += [spec.setdefault("samplers", {}), spec.setdefault("learner", {})]
    for g in groups:
        res = g.setdefault("resources", {})
        res.setdefault("requests", {})["cpu"] = cpu
        res["requests"]["memory"] = "256Mi"
        res.pop("limits", None)
    return doc


def load_example(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def apply(k: Kind, docs: list[dict[str, Any]]) -> None:
    k.kubectl(
        "apply",
        "-n",
        NAMESPACE,
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}),
    )


def rfed(k: Kind, name: str) -> dict[str, Any]:
    return k.get_json("rfed", name, "-n", NAMESPACE)


def pods(k: Kind, name: str) -> dict[str, dict[str, Any]]:
    """The federation's RTI and federate pods (not its short-lived discovery pod, which asks
    the program for its federates before any of them is made, nor a test's impostor: keys.py)."""
    selector = f"reactorfed.io/federation={name},reactorfed.io/role notin (discovery,impostor)"
    items = k.get_json("pods", "-n", NAMESPACE, "-l", selector)["items"]
    return {p["metadata"]["name"]: p for p in items}


def status(k: Kind, name: str) -> dict[str, Any]:
    return rfed(k, name).get("status") or {}


def columns(k: Kind, name: str, wide: bool = False) -> dict[str, str]:
    """``kubectl get rfed NAME`` as a person reads it: each column's cell by its header
    (an empty cell is ""; cells are cut at the header's column starts)."""
    args = ["get", "rfed", name, "-n", NAMESPACE, *(["-o", "wide"] if wide else [])]
    lines = k.kubectl(*args).stdout.splitlines()
    if len(lines) < 2:
        return {}
    header, row = lines[0], lines[1]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    ends = [*starts[1:], None]
    return {header[a:b].strip(): row[a:b].strip() for a, b in zip(starts, ends, strict=True)}


def progress_done(k: Kind, name: str, total: int) -> int:
    """How far the run is, as its status shows it (``doneText``'s count; 0 while none is
    known), and ``total`` once it has ended, so that nothing waits for a run that is over."""
    st = status(k, name)
    if st.get("phase") in ("Succeeded", "Failed"):
        return total
    head = ((st.get("progress") or {}).get("doneText") or "").split("/")[0]
    return int(head) if head.isdigit() else 0


def describe(k: Kind, name: str) -> str:
    out = k.kubectl("get", "rfed,pods", "-n", NAMESPACE, "-o", "wide", check=False).stdout
    ev = k.kubectl("get", "events", "-n", NAMESPACE, "--sort-by=.lastTimestamp", check=False).stdout
    op = k.kubectl(
        "logs", "-n", OPERATOR_NS, "deploy/reactorfed-reactorfed-operator", "--tail=40", check=False
    ).stdout
    logs = []
    selector = f"reactorfed.io/federation={name}"
    for pod in k.get_json("pods", "-n", NAMESPACE, "-l", selector)["items"]:
        pn = pod["metadata"]["name"]
        log = k.kubectl("logs", "-n", NAMESPACE, pn, "--tail=25", check=False).stdout
        logs.append(f"--- {pn}\n{log[-2500:]}")
    return (f"{out}\n{ev[-3000:]}\n--- operator\n{op}\n--- status\n"
            f"{json.dumps(status(k, name), indent=1)[-2000:]}\n" + "\n".join(logs))  # fmt: skip


def status_once_ended(k: Kind, name: str) -> dict[str, Any] | None:
    """The federation's status once it has ended (Succeeded or Failed), else None."""
    st = status(k, name)
    return st if st.get("phase") in ("Succeeded", "Failed") else None


def run_to_success(k: Kind, name: str, timeout: float) -> dict[str, Any]:
    """Wait (up to ``timeout`` s, polling every 2 s) for the federation to end; it must
    have succeeded. Its status; on a timeout or a failure, the federation described."""
    try:
        st = wait_for(f"{name} to end", lambda: status_once_ended(k, name), timeout, interval=2)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{describe(k, name)}") from None
    assert st["phase"] == "Succeeded", describe(k, name)
    return st


def clean_slate(k: Kind, name: str) -> None:
    """No federation of that name, nor any pod or PVC of one, left from an earlier run."""
    k.kubectl(
        "delete", "rfed", name, "-n", NAMESPACE, "--ignore-not-found", "--timeout=180s", timeout=200
    )
    wait_for(f"{name}'s pods and PVC gone", lambda: not pods(k, name) and k.kubectl(
        "get", "pvc", f"{name}-checkpoint", "-n", NAMESPACE, check=False).returncode != 0, 180)  # fmt: skip


def launch_here(recipe: str, params: dict[str, str]) -> dict[str, Any]:
    """``examples/rl/<recipe>:Main`` launched on this machine (``--fast``, one torch thread
    per process as in pods) with ``params``: its one learner's result."""
    from bench.rf_runner import results_by_reactor

    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", str(REPO / "examples" / "rl" / recipe) + ":Main",
           "--fast", *[a for kv in sorted(params.items()) for a in ("--param", f"{kv[0]}={kv[1]}")]]
    here = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert here.returncode == 0, here.stderr[-3000:]
    found = results_by_reactor(here.stdout)
    assert len(found) == 1, here.stdout[-3000:]
    return next(iter(found.values()))


def tear_down(k: Kind, name: str, local: subprocess.Popen[str] | None = None) -> None:
    """A test's end, passed or not: the local run of the same program killed if it still
    runs, and the federation deleted (its pods and volume with it)."""
    if local is not None and local.poll() is None:
        local.kill()
        local.wait(timeout=10)
    k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--ignore-not-found", "--timeout=120s", check=False,
              timeout=150)  # fmt: skip
