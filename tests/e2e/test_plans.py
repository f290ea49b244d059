"""Every plan's manifest (tests/kind/plans.py: examples/k8s/, made short) applied to the test
control plane: the operator plans its groups, the scheduler places them (a GPU group on
the GPU node, the rest on CPU nodes), and every pod it made runs here as a local process
(kwok runs no containers: test_local_run.py's mapping). The federation ends, the exits are
reported as a kubelet would, and the resource is Succeeded. Every reactor's result equals
the same program's under ``reactorfed launch`` with the same parameters, run beside it:
the learners' weights bit for bit.

Every case carries the marker ``plans`` (``scripts/test.sh -m plans tests/e2e/test_plans.py``):
the kind suite runs the plans CI runs (Plan.in_ci) in real pods and makes the same
comparison there, so CI's minutes are not spent on them twice. This suite is the quick
check of a new plan's manifest before the kind suite (no images, no cluster)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from bench.ports import free_port
from bench.rf_runner import results_by_reactor

from ..kind.plans import (
    PLANS,
    Plan,
    comparable,
    federation,
    load,
    pod_params,
    start_local,
)
from .conftest import NAMESPACE
from .controlplane import GPU_NODE, ControlPlane, wait_for
from .test_local_run import _commands_missing, _local_process

pytestmark = [pytest.mark.e2e, pytest.mark.plans, pytest.mark.timeout(900)]


def _cases() -> list[Any]:
    return [pytest.param(p, id=p.name) for p in PLANS]


def _report_exit(cp: ControlPlane, pod: dict[str, Any], code: int) -> None:
    name = pod["metadata"]["name"]
    cp.kubectl("annotate", "pod", name, "-n", NAMESPACE, "kwok.x-k8s.io/status=custom", "--overwrite")
    state = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}}
    cp.kubectl("patch", "pod", name, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p",
               json.dumps({"status": {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [{
                   "name": pod["spec"]["containers"][0]["name"], "image": pod["spec"]["containers"][0]["image"],
                   "imageID": "", "ready": False, "restartCount": 0, "state": state}]}}))  # fmt: skip


@pytest.mark.parametrize("plan", _cases())
def test_plan_runs_to_its_end_as_launched_here(plan: Plan, installed: ControlPlane,
                                               operator: subprocess.Popen[bytes], tmp_path: Path) -> None:  # fmt: skip
    reason = _commands_missing()
    if reason:
        pytest.skip(reason)
    cp = installed
    docs = load(plan)
    fed = federation(docs)
    name = fed["metadata"]["name"]
    t0 = time.monotonic()
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                         "items": docs}))  # fmt: skip
    procs: dict[str, subprocess.Popen[str]] = {}
    local: subprocess.Popen[str] | None = None
    try:
        def placed() -> dict[str, dict[str, Any]] | None:
            st = (cp.get_json("rfed", name, "-n", NAMESPACE).get("status") or {})
            items = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={name}")["items"]
            ok = st.get("phase") == "Running" and items and all(p["spec"].get("nodeName") for p in items)
            return {p["metadata"]["name"]: p for p in items} if ok else None

        try:
            pods = wait_for(f"{name} placed and Running", placed, 120)
        except TimeoutError:
            print(cp.log_tail("operator", 60))
            print(cp.kubectl("get", "pods,rfed", "-n", NAMESPACE, "-o", "wide", check=False).stdout)
            raise
        # where each group landed: GPU groups on the GPU node, the others not
        for pod in pods.values():
            gpus = pod["spec"]["containers"][0]["resources"].get("limits", {}).get("nvidia.com/gpu")
            assert (pod["spec"]["nodeName"] == GPU_NODE) == bool(gpus), (pod["metadata"]["name"], pod["spec"]["nodeName"])
        federates = sorted(n for n in pods if pods[n]["metadata"]["labels"]["reactorfed.io/role"] != "rti")
        params = pod_params(pods[federates[0]])
        local_log = tmp_path / "launch.log"
        local = start_local(docs, params, local_log)  # the same program here, meanwhile

        ports = {n: free_port() for n in pods} | {"rti": free_port()}
        logs: dict[str, Path] = {}
        order = sorted(pods, key=lambda n: pods[n]["metadata"]["labels"]["reactorfed.io/role"] != "rti")
        for pod_name in order:
            argv, env = _local_process(cp, pods[pod_name], ports, tmp_path)
            logs[pod_name] = tmp_path / f"{pod_name}.log"
            with logs[pod_name].open("w") as handle:
                procs[pod_name] = subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                                   text=True, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + 600
        while any(p.poll() is None for p in procs.values()) and time.monotonic() < deadline:
            time.sleep(0.5)
        report = "\n".join(f"--- {n} (exit {p.poll()}):\n{logs[n].read_text()[-1500:]}" for n, p in procs.items())
        assert all(p.poll() == 0 for p in procs.values()), f"{name} did not finish cleanly:\n{report}"
        for pod in pods.values():
            _report_exit(cp, pod, 0)
        def ended() -> dict[str, Any] | None:
            st = cp.get_json("rfed", name, "-n", NAMESPACE).get("status") or {}
            return st if st.get("phase") in ("Succeeded", "Failed") else None

        st = wait_for(f"{name} Succeeded", ended, 60)
        assert st["phase"] == "Succeeded", st
        seconds = time.monotonic() - t0
        in_pods: dict[str, dict[str, Any]] = {}
        for log in logs.values():
            in_pods.update(results_by_reactor(log.read_text()))
        assert local.wait(timeout=600) == 0, local_log.read_text()[-3000:]
        here = results_by_reactor(local_log.read_text())
        assert in_pods and comparable(in_pods) == comparable(here), (in_pods, here)
        print(json.dumps({"plan": plan.name, "e2e_apply_to_succeeded_s": round(seconds, 1), "pods": len(pods),
                          "results": comparable(in_pods)}))  # fmt: skip
    finally:
        for p in [*procs.values(), *([local] if local is not None else [])]:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        cp.kubectl("delete", "-n", NAMESPACE, "-f", "-", "--wait=false", check=False,
                   input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))  # fmt: skip
