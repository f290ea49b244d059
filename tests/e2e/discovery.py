"""The kubelet of the operator's discovery pods on the test control plane.

kwok runs no containers, and the operator makes no pod of a federation before the program
said what its federates are (``reactorfed federates PROGRAM --json`` in a discovery pod).
So for every e2e test a thread plays the kubelet for those pods alone: once a discovery pod
is bound to a node it runs the pod's command here (the real command, this checkout's
runtime; the pod's ConfigMap program written to a directory, as test_local_run does), and
reports its end in the pod's status as a kubelet would: the phase, the exit code and the
termination message (what the command wrote to ``--output /dev/termination-log``, cut at
4096 bytes; on a failure with nothing written, the log's last 80 lines or 2048 bytes:
``FallbackToLogsOnError``).

The image ``reactorfed-runtime:e2e`` stands for this checkout: ``/opt/reactorfed/`` is the
repository (the examples' programs), and the test programs (tests/e2e/programs) are on its
``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from .conftest import NAMESPACE
from .controlplane import ControlPlane
from .test_local_run import _local_process

__all__ = ["DiscoveryKubelet"]

PROGRAMS = Path(__file__).parent / "programs"
TERMINATION_LOG = "/dev/termination-log"


class DiscoveryKubelet:
    """Runs every discovery pod in NAMESPACE as a local process, one at a time."""

    def __init__(self, cp: ControlPlane, workdir: Path) -> None:
        self.cp = cp
        self.dir = workdir
        self.done: set[str] = set()  # pod UIDs run
        #: (pod name, seconds the command took, exit code), in run order
        self.runs: list[tuple[str, float, int]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="discovery-kubelet", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def runs_of(self, federation: str) -> list[tuple[str, float, int]]:
        return [r for r in self.runs if r[0] == f"{federation}-discovery"]

    def _loop(self) -> None:
        while not self._stop.wait(0.3):
            try:
                self.sync()
            except Exception as exc:  # the control plane going away at the end, say: keep looking
                self.errors.append(repr(exc))

    def sync(self) -> None:
        items = self.cp.get_json("pods", "-n", NAMESPACE, "-l", "reactorfed.io/role=discovery")["items"]
        for pod in items:
            uid = pod["metadata"]["uid"]
            if uid in self.done or pod["metadata"].get("deletionTimestamp") or not pod["spec"].get("nodeName"):
                continue
            self.done.add(uid)
            self._run(pod)

    def _run(self, pod: dict[str, Any]) -> None:
        name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        argv, env = _local_process(self.cp, pod, {}, self.dir)
        message_file = self.dir / f"{name}.{uid[:8]}.termination-log"
        argv = [str(message_file) if a == TERMINATION_LOG else a for a in argv]
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(PROGRAMS)) if p)
        started = time.monotonic()
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
            code, log = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            code, log = 137, "killed: the command ran for 300 s"
        self.runs.append((name, time.monotonic() - started, code))
        (self.dir / f"{name}.{uid[:8]}.log").write_text(log)
        message = message_file.read_text()[:4096] if message_file.exists() else ""
        if not message and code != 0:
            message = "\n".join(log.splitlines()[-80:])[-2048:]
        self.cp.kubectl("annotate", "pod", name, "-n", NAMESPACE, "kwok.x-k8s.io/status=custom", "--overwrite",
                        check=False)  # fmt: skip
        terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error", "message": message}
        status = {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [{
            "name": pod["spec"]["containers"][0]["name"], "image": pod["spec"]["containers"][0]["image"],
            "imageID": "", "ready": False, "restartCount": 0, "state": {"terminated": terminated}}]}  # fmt: skip
        self.cp.kubectl("patch", "pod", name, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p",
                        json.dumps({"status": status}), check=False)  # fmt: skip
