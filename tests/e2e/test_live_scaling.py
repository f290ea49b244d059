"""Live rescaling end to end (issue 19): an elastic Q-learning federation on the test
control plane, scaled up and down through the scale subresource (what `kubectl scale`
and an HPA write) 2 -> 4 -> 1 -> 3 while it trains, and a sampler that dies replaced.

kwok runs no containers, so this module plays the kubelet: every pod the operator makes
runs as a local process (the pod's command and environment made runnable here, as in
test_local_run), a pod deleted gets SIGTERM, and a process that ends is reported in its
pod's status. The RTI and the learner must keep their pods (same UID) and their processes
(started once, never ended) throughout; the resource's status must show the running
width and the joins and leaves the RTI agreed on. At the end the learner, stopped by a
suspend, must report that each round took exactly its members' fragments and that every
slot contributed samples.

It carries the marker ``plans`` (``scripts/test.sh -m plans tests/e2e/test_live_scaling.py``):
CI runs the same scaling of the same example in real pods (tests/kind/test_live_scaling.py,
which checks all of this and more), and this one is its quick check without a cluster.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from bench.ports import free_port

from ..kind.prereq import missing
from .conftest import NAMESPACE, REPO, rfed
from .controlplane import ControlPlane, wait_for
from .test_local_run import _commands_missing, _local_process, refresh_config_maps

pytestmark = [pytest.mark.e2e, pytest.mark.plans, pytest.mark.timeout(900)]

NAME = "live-scaling"
PROGRAM = REPO / "examples" / "rl" / "qlearning.py"
AT_WORK_NS = 1_000_000_000  # 10 rounds of 100 ms of logical time: a member that ran them sent fragments
T = TypeVar("T")


def _manifest() -> str:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME},
          "data": {"qlearning.py": PROGRAM.read_text()}}  # fmt: skip
    fed = {
        "apiVersion": "reactorfed.io/v1alpha1",
        "kind": "ReactorFederation",
        "metadata": {"name": NAME},
        "spec": {
            "program": {
                "image": "reactorfed-runtime:e2e", "entrypoint": "qlearning:Main",
                "configMap": {"name": NAME, "key": "qlearning.py"},
                # small, many iterations: it trains for longer than the test scales it
                "params": {"env": "CartPole-v1", "fragment_len": "10", "updates_per_iteration": "1",
                           "iterations": "1000000", "seed": "1", "round_ms": "100"},
            },
            "samplers": {"replicas": 2, "maxReplicas": 4},
            "learner": {"gpus": 1},
            # Real time, rounds 100 ms of logical time apart: longer than a round takes here, so
            # logical time keeps up with physical time, and a join (at its request's physical
            # time at the earliest) lands at the next round, not once the federation catches up
            "coordination": {"fast": False, "joinTimeout": "120 s"},
            "terminationGracePeriodSeconds": 20,
        },
    }  # fmt: skip
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [cm, fed]})


class Kubelet:
    """Runs the federation's pods as local processes, as a kubelet would run them."""

    def __init__(self, cp: ControlPlane, workdir: Path) -> None:
        self.cp = cp
        self.dir = workdir
        self.ports: dict[str, int] = {"rti": free_port()}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}  # by pod UID
        self.names: dict[str, str] = {}  # pod UID -> name
        self.starts: dict[str, int] = {}  # pod name -> processes started for it
        self.reported: set[str] = set()

    def pods(self) -> dict[str, dict[str, Any]]:
        # the federation's pods; its discovery pod is the session's discovery kubelet's (tests/e2e/discovery.py)
        selector = f"reactorfed.io/federation={NAME},reactorfed.io/role!=discovery"
        items = self.cp.get_json("pods", "-n", NAMESPACE, "-l", selector)["items"]
        return {p["metadata"]["uid"]: p for p in items}

    def log(self, name: str) -> str:
        logs = sorted(self.dir.glob(f"{name}.*.log"))
        return logs[-1].read_text(errors="replace")[-3000:] if logs else ""

    def sync(self) -> None:
        """One look: start the new pods, SIGTERM the deleted ones, report the ended ones."""
        pods = self.pods()
        live = {uid: p for uid, p in pods.items() if not p["metadata"].get("deletionTimestamp")}
        # the RTI first: the federates it starts with look for it as they start
        for uid, pod in sorted(live.items(), key=lambda kv: kv[1]["metadata"]["labels"]["reactorfed.io/role"] != "rti"):
            if uid not in self.procs:
                self._start(uid, pod)
            elif pod["metadata"]["labels"]["reactorfed.io/role"] == "rti":
                refresh_config_maps(self.cp, pod, self.dir)  # (the member table: keys issued and withdrawn)
        for uid, proc in self.procs.items():
            name = self.names[uid]
            if uid not in live and proc.poll() is None and uid not in self.reported:
                proc.send_signal(signal.SIGTERM)  # deleted: the grace period begins
                self.reported.add(uid)
            elif uid in live and proc.poll() is not None and uid not in self.reported:
                self._report(name, live[uid], proc.returncode)
                self.reported.add(uid)

    def exits(self, name: str) -> list[int]:
        """The exit codes of the processes pod ``name`` ran that ended, in start order."""
        return [p.returncode for uid, p in self.procs.items() if self.names[uid] == name and p.poll() is not None]

    def _start(self, uid: str, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        self.ports.setdefault(name, free_port())
        argv, env = _local_process(self.cp, pod, self.ports, self.dir)
        n = self.starts.get(name, 0) + 1
        with (self.dir / f"{name}.{n}.log").open("wb") as handle:
            self.procs[uid] = subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                               start_new_session=True)  # fmt: skip
        self.names[uid] = name
        self.starts[name] = n

    def _report(self, name: str, pod: dict[str, Any], code: int) -> None:
        """The process ended while its pod stays: its pod's status says so, as a kubelet's would."""
        self.cp.kubectl("annotate", "pod", name, "-n", NAMESPACE, "kwok.x-k8s.io/status=custom", "--overwrite")
        terminated = {"exitCode": code if code >= 0 else 128 - code, "reason": "Completed" if code == 0 else "Error"}
        status = {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [{
            "name": pod["spec"]["containers"][0]["name"], "image": "reactorfed-runtime:e2e", "imageID": "",
            "ready": False, "restartCount": 0, "state": {"terminated": terminated}}]}  # fmt: skip
        self.cp.kubectl("patch", "pod", name, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p",
                        json.dumps({"status": status}), check=False)  # fmt: skip

    def uid_of(self, name: str) -> str:
        return next(uid for uid, n in self.names.items() if n == name and self.procs[uid].poll() is None)

    def kill(self, name: str) -> None:
        self.procs[self.uid_of(name)].kill()

    def terminate(self, name: str) -> None:
        self.procs[self.uid_of(name)].terminate()

    def pod_names(self) -> set[str]:
        """The names of the federation's pods that are not being deleted."""
        return {p["metadata"]["name"] for p in self.pods().values() if not p["metadata"].get("deletionTimestamp")}

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def _wait(kubelet: Kubelet, what: str, probe: Callable[[], T | None], timeout: float) -> T:
    def look() -> T | None:
        kubelet.sync()
        return probe()

    try:
        return wait_for(what, look, timeout, interval=0.5)
    except TimeoutError as exc:
        status = json.dumps((rfed(kubelet.cp, NAME).get("status") or {}), indent=1)
        logs = "\n".join(f"--- {n}:\n{kubelet.log(n)}" for n in sorted(set(kubelet.names.values())))
        pytest.fail(f"{exc}\nstatus: {status}\n{logs}\n--- operator:\n{kubelet.cp.log_tail('operator', 40)}")


def _status(cp: ControlPlane) -> dict[str, Any]:
    return rfed(cp, NAME).get("status") or {}


def _at(cp: ControlPlane, width: int) -> dict[str, Any] | None:
    """The status once the federation runs ``width`` samplers in its first incarnation."""
    status = _status(cp)
    samplers = status.get("samplers") or {}
    ok = (status.get("phase") == "Running" and samplers.get("readyText") == f"{width}/{width}"
          and samplers.get("replicas") == width and status.get("incarnation") == 1)  # fmt: skip
    return status if ok else None


def _changes(cp: ControlPlane, member: str, joined: bool) -> list[dict[str, Any]]:
    return [c for c in _status(cp).get("membership") or [] if c["member"] == member and c["joined"] is joined]


def _at_work(cp: ControlPlane, url: str, slots: tuple[int, ...]) -> bool:
    """Whether each of samplers ``slots`` has completed AT_WORK_NS of logical time since its
    latest join: the RTI's /status (its latest tag complete) against the join's tag in the
    resource's status. (Scaled down at once, a member that just joined takes no round.)"""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=2) as response:
        federates = json.loads(response.read())["federates"]
    for i in slots:
        joins = _changes(cp, f"samplers[{i}]", True)
        ltc = federates[f"samplers[{i}]"].get("ltc_elapsed_ns")
        if ltc is None or ltc < (joins[-1]["tagNs"] if joins else 0) + AT_WORK_NS:
            return False
    return True


def _scale(cp: ControlPlane, width: int) -> subprocess.CompletedProcess[str]:
    return cp.kubectl("scale", f"rfed/{NAME}", "-n", NAMESPACE, f"--replicas={width}", check=False)


def test_elastic_federation_rescales_live(installed: ControlPlane, operator: subprocess.Popen[bytes],
                                         tmp_path: Path) -> None:  # fmt: skip
    reason = _commands_missing()
    if reason:
        missing(f"live rescaling: {reason}")
    cp = installed
    kubelet = Kubelet(cp, tmp_path)
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=_manifest())
    try:
        # started, not merely listed: a pod made between sync's look and the probe's has no port yet
        _wait(kubelet, "the operator to make the RTI's pod", lambda: f"{NAME}-rti" in kubelet.names.values(), 60)
        url = f"http://127.0.0.1:{kubelet.ports[f'{NAME}-rti']}/status"
        cp.kubectl("annotate", "rfed", NAME, "-n", NAMESPACE, f"reactorfed.io/status-url={url}")

        def training(connected: int) -> bool:
            progress = _status(cp).get("progress") or {}
            return progress.get("rtiPhase") == "running" and progress.get("federatesConnected") == connected

        _wait(kubelet, "2 samplers and the learner training", lambda: _at(cp, 2) and training(3), 240)
        core = {n: kubelet.uid_of(f"{NAME}-{n}") for n in ("rti", "learner")}

        # kubectl scale up: two pods join the running federation
        assert _scale(cp, 4).returncode == 0
        status = _wait(kubelet, "samplers[2] and [3] to join", lambda: _at(cp, 4) if all(
            _changes(cp, f"samplers[{i}]", True) for i in (2, 3)) else None, 240)  # fmt: skip
        assert status["samplers"]["initial"] == 2 and status["samplers"]["maxReplicas"] == 4
        _wait(kubelet, "the RTI to count 4 samplers present", lambda: _status(cp)["samplers"].get("members") == 4, 60)
        _wait(kubelet, "samplers[2] and [3] at work", lambda: _at_work(cp, url, (2, 3)), 120)

        # beyond maxReplicas: the API server refuses it, naming the bound
        refused = _scale(cp, 5)
        assert refused.returncode != 0 and "spec.samplers.maxReplicas" in refused.stderr, refused.stderr

        # kubectl scale down: the highest slots leave at agreed tags and their processes end with 0
        assert _scale(cp, 1).returncode == 0
        _wait(kubelet, "samplers[1..3] to leave", lambda: _at(cp, 1) if all(
            _changes(cp, f"samplers[{i}]", False) for i in (1, 2, 3)) else None, 240)  # fmt: skip
        _wait(kubelet, "the scaled-down processes to exit", lambda: all(
            kubelet.exits(f"{NAME}-samplers-{i}") for i in (1, 2, 3)), 60)  # fmt: skip
        for i in (1, 2, 3):
            assert kubelet.exits(f"{NAME}-samplers-{i}") == [0], kubelet.log(f"{NAME}-samplers-{i}")
        scale = cp.get_json(f"rfed/{NAME}", "-n", NAMESPACE, "--subresource=scale")
        assert scale["spec"]["replicas"] == 1 and scale["status"]["replicas"] == 1

        # a sampler that dies is replaced by a new pod for its slot, in the same incarnation
        assert _scale(cp, 3).returncode == 0
        _wait(kubelet, "samplers[1] and [2] back", lambda: _at(cp, 3) if (
            len(_changes(cp, "samplers[1]", True)) >= 1 and len(_changes(cp, "samplers[2]", True)) >= 2) else None,
              240)  # fmt: skip
        _wait(kubelet, "samplers[1] and [2] at work", lambda: _at_work(cp, url, (1, 2)), 120)
        kubelet.kill(f"{NAME}-samplers-1")
        _wait(kubelet, "the dead sampler's slot refilled", lambda: _at(cp, 3) if (
            _status(cp)["samplers"].get("replaced", 0) >= 1 and len(_changes(cp, "samplers[1]", True)) >= 2) else None,
              240)  # fmt: skip
        events = cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={NAME}")["items"]
        reasons = {e["reason"] for e in events}
        assert {"ScalingLive", "SamplerFailed", "SamplerReplaced"} <= reasons, reasons
        assert "FederateFailed" not in reasons and "Rescaling" not in reasons
        _wait(kubelet, "the new samplers[1] at work", lambda: _at_work(cp, url, (1,)), 120)

        # throughout: the RTI and the learner kept their pods and their one process each
        status = _status(cp)
        assert status["incarnation"] == 1 and status["restarts"] == 0
        for n, uid in core.items():
            assert kubelet.uid_of(f"{NAME}-{n}") == uid, f"the {n}'s pod was replaced"
            assert kubelet.starts[f"{NAME}-{n}"] == 1 and not kubelet.exits(f"{NAME}-{n}"), kubelet.log(f"{NAME}-{n}")
        tags = [(c["tagNs"], c["microstep"]) for c in status["membership"]]
        assert tags == sorted(tags)  # the record's tags never decrease

        # the end: SIGTERM to the learner (as when its pod is deleted) stops the federation at an
        # agreed tag; every process ends with 0, the resource is Succeeded, and the learner's
        # result tells what it took from whom
        kubelet.terminate(f"{NAME}-learner")
        _wait(kubelet, "the federation to finish", lambda: _status(cp).get("phase") == "Succeeded", 120)
        for name in sorted(kubelet.pod_names()):
            assert kubelet.exits(name)[-1:] == [0], f"{name}:\n{kubelet.log(name)}"
        result = _learner_result(kubelet.log(f"{NAME}-learner"))
        # Every round took exactly its members' fragments but for those around the kill: the killed
        # sampler counts as present until its agreed leave tag, so each round ending from the tag
        # after its last completed one to that leave misses its fragment (the round under way, and
        # one more when the learner ends it before it answers the leave's round: rounds here are
        # 100 ms apart). The status carries no quiet tag to count them exactly (the processes'
        # test, tests/rl/test_live_scale_ppo.py, does).
        assert result["incomplete_iterations"] <= 2, result
        by_member = result["samples_by_member"]
        assert all(int(i) >= 0 for i in by_member), by_member  # nothing from a member not present
        assert all(sum(by_member.get(str(i), [])) > 0 for i in range(4)), by_member  # every slot contributed
        assert {2, 4, 1, 3} <= {w for _, _, w in result["membership"]}, result["membership"]  # widths it saw
    finally:
        kubelet.stop()
        cp.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--wait=false", check=False)


def _learner_result(log: str) -> dict[str, Any]:
    """The learner's result line (``reactorfed: result of FQN: {json}``)."""
    found = [json.loads(m.group(1)) for m in re.finditer(r"^reactorfed: result of \S+: (\{.*\})$", log, re.MULTILINE)]
    results = [r for r in found if "samples_by_member" in r]
    assert results, f"no result line with samples_by_member in the learner's log:\n{log}"
    print("the learner's result:", json.dumps(results[-1]))
    return results[-1]
