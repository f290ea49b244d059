"""A federation of real ``reactorfed`` processes for the tests that read its HTTP endpoints
(``/status``, ``/metrics``, the live page) while it runs: ``reactorfed rti`` on ports it
picks (its ready file tells them), then ``reactorfed federate`` processes started one by
one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["Processes", "get", "processes", "status"]


def get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        assert r.status == 200
        return str(r.read().decode())


def status(port: int) -> dict[str, Any]:
    """The ``/status`` served on ``port``."""
    return dict(json.loads(get(port, "/status")))


class Processes:
    """The processes of a federation of ``program``; each passes ``common`` (the federation
    id and the like), and its output is piped."""

    def __init__(self, program: str, common: list[str], env: dict[str, str]) -> None:
        self.program = program
        self.common = common
        self.env = env
        self.procs: list[subprocess.Popen[str]] = []
        #: the RTI's ready file: its ``endpoint`` and ``status_port``
        self.info: dict[str, Any] = {}

    def start(self, *args: str) -> subprocess.Popen[str]:
        """``python -m reactorfed ARGS``."""
        p = subprocess.Popen([sys.executable, "-m", "reactorfed", *args], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def federate(self, name: str, *args: str) -> subprocess.Popen[str]:
        """A process for federate ``name``, connecting to the RTI; ``args`` its own flags."""
        return self.start("federate", self.program, *self.common, "--federate", name, "--rti", self.info["endpoint"],
                          *args)

    @property
    def status_port(self) -> int:
        """The RTI's status (and metrics) port."""
        return int(self.info["status_port"])

    def running(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def rti_status(self) -> dict[str, Any]:
        """The RTI's ``/status``; ``{}`` while it does not answer."""
        try:
            return status(self.status_port)
        except OSError:
            return {}


@contextmanager
def processes(tmp: Path, program: str, federation_id: str, timeout: str, deadline: float,
              args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Iterator[Processes]:
    """The RTI of a federation of ``program`` (``--timeout`` ``timeout``, and ``args`` for
    every process: ``--fast``, ``-p`` parameters), started and listening (by ``deadline``, a
    ``time.monotonic()``): start its federates with :meth:`Processes.federate`. ``env``: more
    environment for every process. At the end every process still running is killed, and
    the output of one that failed printed."""
    env = {**os.environ, "REACTORFED_SECRET": f"{federation_id}-secret", "PYTHONUNBUFFERED": "1", **(env or {})}
    fed = Processes(program, ["--federation-id", federation_id, "--timeout", timeout, *args], env)
    ready = tmp / "rti.json"
    try:
        rti = fed.start("rti", program, *fed.common, "--port", "0", "--metrics-port", "0", "--ready-file", str(ready))
        while not ready.exists():
            assert rti.poll() is None and time.monotonic() < deadline, "the RTI did not start"
            time.sleep(0.02)
        fed.info = json.loads(ready.read_text())
        yield fed
    finally:
        for p in fed.procs:
            if p.poll() is None:
                p.kill()
            out = p.communicate(timeout=10)[0]
            if p.returncode not in (0, -9):
                print(out)
