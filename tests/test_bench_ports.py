"""bench.ports.free_port, the tests' and benchmarks' one way to pick a listener's port:
below the ephemeral range, bindable, never twice in a process, and never to two processes
at once (real processes asking together)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench import ports
from bench.ports import free_port

ROOT = Path(__file__).resolve().parents[1]


def test_a_port_is_below_the_ephemeral_range_bindable_and_never_given_twice() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    given = [free_port() for _ in range(200)]
    assert len(set(given)) == len(given)
    assert all(1024 <= p < low for p in given)
    with socket.socket() as s:
        s.bind(("127.0.0.1", given[-1]))


def test_processes_asking_at_once_get_different_ports() -> None:
    code = "from bench.ports import free_port\nprint(*(free_port() for _ in range(300)))"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    each = [set(map(int, o.split())) for o in outs]
    assert all(len(s) == 300 for s in each)
    assert len(set().union(*each)) == 4 * 300  # no port went to two processes


def test_a_port_another_process_claimed_is_not_given_until_its_claim_lapses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "_CLAIMS", tmp_path)
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    other = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    # every port of the range claimed just now by another process (ended since: its child may bind it)
    now = time.monotonic_ns()
    for port in range(max(1024, low - 12_000), low):
        (tmp_path / str(port)).write_text(f"{other.stdout.strip()} {now}")
    with pytest.raises(OSError, match="no free port"):
        free_port()
    monkeypatch.setattr(ports, "CLAIM_NS", 1)  # the claims lapse
    assert 1024 <= free_port() < low
