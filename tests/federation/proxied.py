"""A federation of real processes with a Toxiproxy proxy on every link, for the proxy
tests (``test_proxy_faults.py``): ``reactorfed rti`` and one ``reactorfed federate`` per
federate, each federate reaching the RTI through a proxy of its own (``rti-<federate>``)
and advertising a proxy in front of its data port (``data-<federate>``), with Unix sockets
and shared memory off, so every byte between two processes crosses a proxy. A test then
adds latency, or cuts a link, by the proxy's name.

Every line a process prints is kept with the time it was read, so a test can tell when a
failure was reported, not only that it was.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.ports import free_port
from bench.toxiproxy import Toxiproxy

REPO = Path(__file__).resolve().parents[2]


def proxy_name(kind: str, federate: str) -> str:
    """The name of a federate's proxy: ``rti-sink``, ``data-workers_0_``."""
    return f"{kind}-{re.sub(r'[^A-Za-z0-9]', '_', federate)}"


class Proc:
    """One process of the federation, its output kept line by line with the time read."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], sink: ProxiedFederation) -> None:
        self.name = name
        self._fed = sink
        self.proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.ended_at: float | None = None
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"read-{name}")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._fed._line(self.name, line.rstrip("\n"))
        self.proc.wait()
        with self._fed.cond:
            self.ended_at = time.monotonic()
            self._fed.cond.notify_all()

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)  # its own session: the process and any child of it
        self.proc.wait(10)
        self._reader.join(5)


class ProxiedFederation:
    """``program``'s RTI and federates ``names`` as processes, every link through ``tp``.

    ``rtt_ms`` is added to every link's round trip (half each way). ``args`` go to every
    process (e.g. ``--timeout 20s``); the RTI also gets ``rti_args``."""

    def __init__(self, tp: Toxiproxy, program: str, names: Sequence[str], *, rtt_ms: int = 0,
                 params: dict[str, Any] | None = None, args: Sequence[str] = (), rti_args: Sequence[str] = ()) -> None:
        self.tp = tp
        self.names = list(names)
        self.cond = threading.Condition()
        self.lines: list[tuple[float, str, str]] = []  # (when read, process, line)
        self.procs: dict[str, Proc] = {}
        fid = f"proxied-{secrets.token_hex(4)}"
        env = {**os.environ, "REACTORFED_SECRET": secrets.token_hex(16), "PYTHONUNBUFFERED": "1"}
        common = [program, *(a for k, v in (params or {}).items() for a in ("--param", f"{k}={v}")),
                  "--federation-id", fid, *args]
        rti_port = free_port()
        try:
            self.rti_proxy = {n: tp.proxy(rti_port, rtt_ms, name=proxy_name("rti", n)) for n in self.names}
            self.procs["rti"] = Proc("rti", [sys.executable, "-m", "reactorfed", "rti", *common, *rti_args,
                                             "--host", "127.0.0.1", "--port", str(rti_port)], env, self)
            for n in self.names:
                data = free_port()
                advertised = tp.proxy(data, rtt_ms, name=proxy_name("data", n))
                self.procs[n] = Proc(n, [sys.executable, "-m", "reactorfed", "federate", *common, "--federate", n,
                                         "--rti", f"127.0.0.1:{self.rti_proxy[n]}", "--data-port", str(data),
                                         "--advertise-port", str(advertised), "--no-unix-sockets", "--no-shm"], env, self)
        except BaseException:
            self.close()
            raise

    def _line(self, who: str, line: str) -> None:
        with self.cond:
            self.lines.append((time.monotonic(), who, line))
            self.cond.notify_all()

    def wait_for(self, pattern: str, who: str | None = None, timeout: float = 60.0, since: float = 0.0) -> float:
        """When a line matching ``pattern`` was read (from process ``who``, if given; not
        before ``since``); fails after ``timeout`` s or once every process ended."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for t, w, line in self.lines:
                    if t >= since and (who is None or w == who) and rx.search(line):
                        return t
                left = deadline - time.monotonic()
                if left <= 0 or all(p.ended_at is not None for p in self.procs.values()):
                    raise AssertionError(f"no line matching {pattern!r} from {who or 'any process'}:\n{self.output}")
                self.cond.wait(min(left, 0.2))

    def end(self, timeout: float) -> dict[str, int]:
        """Every process's exit code, once all ended; fails if one still runs after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while any(p.ended_at is None for p in self.procs.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    running = [n for n, p in self.procs.items() if p.ended_at is None]
                    raise AssertionError(f"still running after {timeout} s: {running}\n{self.output}")
                self.cond.wait(min(left, 0.2))
        return {n: p.proc.returncode for n, p in self.procs.items()}

    def ended_at(self, who: str) -> float:
        t = self.procs[who].ended_at
        assert t is not None, f"{who} has not ended"
        return t

    @property
    def output(self) -> str:
        with self.cond:
            return "\n".join(f"[{w}] {line}" for _, w, line in self.lines)

    def out_of(self, who: str) -> str:
        with self.cond:
            return "\n".join(line for _, w, line in self.lines if w == who)

    def close(self) -> None:
        """Every process ended (killed if still running) and every proxy removed."""
        for p in self.procs.values():
            p.kill()
        with contextlib.suppress(OSError):
            self.tp.reset()
