"""bench.ports.free_port, the tests' and benchmarks' one way to pick a listener's port:
below the ephemeral range, never twice in a process, never to two processes at once (real
processes asking together), and held until its listener binds it: nothing else can take
it meanwhile, a listener (here or in a child) can, and nothing answers on it before."""

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


def test_a_port_is_below_the_ephemeral_range_and_never_given_twice() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    given = [free_port() for _ in range(200)]
    assert len(set(given)) == len(given)
    assert all(1024 <= p < low for p in given)


def test_a_port_is_held_for_its_listener_until_it_binds() -> None:
    port = free_port()
    with socket.socket() as other, pytest.raises(OSError):  # anything else: refused
        other.bind(("127.0.0.1", port))
    with pytest.raises(ConnectionRefusedError):  # nothing listens yet
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with socket.create_server(
        ("127.0.0.1", port)
    ) as listener:  # its listener (SO_REUSEADDR): bound
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        listener.accept()[0].close()
        with socket.socket() as late, pytest.raises(OSError):  # listened on: nobody else
            late.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            late.bind(("127.0.0.1", port))
    ports.release(port)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_child_process_listens_on_a_held_port() -> None:
    port = free_port()
    code = (
        f"import socket\ns = socket.create_server(('0.0.0.0', {port}))\nprint('up', flush=True)\n"
        "s.accept()[0].close()"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert child.wait(10) == 0
    finally:
        child.kill()


def test_processes_asking_at_once_get_different_ports() -> None:
    code = "from bench.ports import free_port\nprint(*(free_port() for _ in range(300)))"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    each = [set(map(int, o.split())) for o in outs]
    assert all(len(s) == 300 for s in each)
    assert len(set().union(*each)) == 4 * 300  # no port went to two processes


def test_a_port_another_process_claimed_is_not_given_until_its_claim_lapses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ports, "_CLAIMS", tmp_path)
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    other = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    # every port of the range claimed just now by another process (ended since: its child may bind it)
    now = time.monotonic_ns()
    for port in range(max(1024, low - 12_000), low):
        (tmp_path / str(port)).write_text(f"{other.stdout.strip()} {now}")
    with pytest.raises(OSError, match="no free port"):
        free_port()
    monkeypatch.setattr(ports, "CLAIM_NS", 1)  # the claims lapse
    assert 1024 <= free_port() < low
