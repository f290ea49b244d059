"""A federation of ``reactorfed`` processes started one by one: ``reactorfed rti`` and a
``reactorfed federate`` per member, as Kubernetes runs them (a pod each), so that a
benchmark or a test can start a member while the federation runs, signal one, and read
the RTI's ``/status``. Used by ``bench/rescale.py`` and ``tests/rl/test_live_scale.py``.

Every process is a fresh interpreter (no fork server): what a new pod pays.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reactorfed.federation import CREDENTIAL_ENV_VARS, SECRET_ENV, issue_key_files

ROOT = Path(__file__).resolve().parent.parent


class FederationError(AssertionError):
    """A process of the federation failed, or what was awaited did not come (an
    ``AssertionError``: in a test it is the test's failure, with every process's tail)."""


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    out: Path

    def result(self, fqn: str) -> dict[str, Any] | None:
        """What the reactor ``fqn`` reported (the line the command prints), or None."""
        found = re.findall(rf"^reactorfed: result of {re.escape(fqn)}: (\{{.*\}})$", self.out.read_text(), re.M)
        if len(found) > 1:
            raise FederationError(f"{self.name}: {len(found)} results of {fqn}")
        return json.loads(found[0]) if found else None

    def tail(self) -> str:
        return f"--- {self.name} (exit {self.popen.poll()}):\n" + "\n".join(self.out.read_text().splitlines()[-25:])


class Federation:
    """An RTI and federates of ``program`` (``path/file.py:Main``), each a ``reactorfed``
    process whose output goes to a file in ``tmp``.

    ``port`` 0: the RTI picks one, and the constructor waits until it listens (its ready
    file). A fixed ``port``: the federates may start at once, beside the RTI (as the pods of
    a new incarnation do); :meth:`ready` then waits for it."""

    def __init__(self, tmp: Path, program: str, params: dict[str, Any], rti_args: list[str], tag: str,
                 run_args: tuple[str, ...] = (), port: int = 0, members: Sequence[str] = ()) -> None:
        self.tmp = tmp
        self.program = program
        self.tag = tag
        self.run_args = list(run_args)
        self.params = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
        self.env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_ENV_VARS}
        self.env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        # ``members``: a key per member, issued for them (as the operator does, without
        # spec.secretRef); none: one key per federation, from a shared secret (its
        # compatibility mode)
        self.key_flags: dict[str, list[str]] = {}
        if members:
            rti_keys, self.key_flags = issue_key_files(tmp, list(members))
            rti_args = [*rti_args, *rti_keys]
        else:
            self.env[SECRET_ENV] = secrets.token_hex(32)
        self.fid = f"scale-{tag}-{os.getpid()}"
        self.procs: list[Proc] = []
        self._ready_file = tmp / f"rti-{tag}.json"
        self.endpoint = f"tcp://127.0.0.1:{port}" if port else ""
        self.status_port = 0
        self.rti = self._spawn("rti", ["rti", program, *self.params, "--federation-id", self.fid,
                                       "--port", str(port), "--ready-file", str(self._ready_file),
                                       "--metrics-port", "0", *rti_args])
        if not port:
            self.ready()

    def ready(self, timeout: float = 60.0) -> None:
        """Wait until the RTI listens; learn its endpoint and its status port."""
        deadline = time.monotonic() + timeout
        while not self._ready_file.exists():
            if self.rti.popen.poll() is not None or time.monotonic() > deadline:
                raise FederationError(f"the RTI did not start\n{self.rti.tail()}")
            time.sleep(0.05)
        info = json.loads(self._ready_file.read_text())
        self.endpoint, self.status_port = info["endpoint"], info["status_port"]

    def _spawn(self, name: str, args: list[str]) -> Proc:
        out = self.tmp / f"{self.tag}-{name}-{len(self.procs)}.out"
        f: IO[bytes] = out.open("wb")
        p = subprocess.Popen([sys.executable, "-m", "reactorfed", *args], stdout=f, stderr=subprocess.STDOUT,
                             env=self.env, cwd=ROOT)
        f.close()
        proc = Proc(name, p, out)
        self.procs.append(proc)
        return proc

    def start(self, name: str, params: dict[str, Any] | None = None) -> Proc:
        """A process for federate ``name``; ``params`` override the federation's for it
        (a learner that resumes, say)."""
        extra = [a for k, v in (params or {}).items() for a in ("--param", f"{k}={v}")]
        return self._spawn(name, ["federate", self.program, *self.params, *extra, "--federate", name,
                                  "--federation-id", self.fid, "--rti", self.endpoint, *self.run_args,
                                  *self.key_flags.get(name, [])])

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.status_port}/status", timeout=5) as r:
            data: dict[str, Any] = json.loads(r.read())
        return data

    def await_status(self, pred: Callable[[dict[str, Any]], bool], what: str,
                     timeout: float = 90.0) -> dict[str, Any]:
        """Poll ``/status`` (every 50 ms) until ``pred`` holds; fail if a process failed."""
        deadline = time.monotonic() + timeout
        while True:
            for p in self.procs:
                if p.popen.poll() not in (None, 0):
                    raise FederationError(p.tail())
            st = self.status()
            if pred(st):
                return st
            if time.monotonic() > deadline:
                raise FederationError(f"timed out waiting for {what}: {st}\n" + self.tails())
            time.sleep(0.05)

    def wait(self, timeout: float = 180.0) -> None:
        """Every process ends, with 0."""
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise FederationError(f"{p.name} did not finish\n" + self.tails()) from None
            if p.popen.returncode != 0:
                raise FederationError(self.tails())

    def kill(self) -> None:
        for p in self.procs:
            if p.popen.poll() is None:
                p.popen.kill()
                p.popen.wait()

    def tails(self) -> str:
        return "\n".join(p.tail() for p in self.procs)
