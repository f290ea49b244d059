"""The one way the tests and benchmarks pick a TCP port for a listener that binds it later
(an RTI, a federate, a proxy, a control plane started as a process).

Binding port 0 and closing the socket races twice: the kernel hands the same ephemeral port
to the next outgoing connection (a proxy's to its upstream) or to the next caller, and a
second test session beside this one can pick it too; then the listener's bind fails. So a
port here is

* below the kernel's ephemeral range (never given to an outgoing connection),
* never given twice by one process, and
* claimed across processes for :data:`CLAIM_NS`: a claim file per port under the system's
  temporary directory, read and written under an exclusive ``flock``, so two sessions never
  hand out the same port at once (a claim older than that has been bound, or never will be);

and it is free to bind when it is handed out.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
import time
from pathlib import Path

__all__ = ["CLAIM_NS", "free_port"]

#: how long a port handed out stays claimed for its process (time enough to start a listener)
CLAIM_NS = 120 * 1_000_000_000

_GIVEN: set[int] = set()
_CLAIMS = Path(tempfile.gettempdir()) / "reactorfed-ports"
_SPAN = 12_000  # ports below the ephemeral range to choose from


def free_port() -> int:
    """A port free on 127.0.0.1 now, claimed for this process (see the module's docstring)."""
    low, _ = _ephemeral_range()
    _CLAIMS.mkdir(exist_ok=True)
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(max(1024, low - _SPAN), low)
        if port in _GIVEN or not _bindable(port) or not _claim(port):
            continue
        _GIVEN.add(port)
        return port
    raise OSError(f"no free port among {_SPAN} below the ephemeral range (from {low})")


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _claim(port: int) -> bool:
    """Claim ``port`` unless another process claimed it less than CLAIM_NS ago."""
    fd = os.open(_CLAIMS / f"{port}", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held = os.read(fd, 64).split()
        now = time.monotonic_ns()
        if len(held) == 2 and held[0].isdigit() and held[1].lstrip(b"-").isdigit():
            pid, at = int(held[0]), int(held[1])
            if pid != os.getpid() and 0 <= now - at < CLAIM_NS:
                return False  # even if that process has ended: a child of it may bind the port
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {now}".encode())
        return True
    finally:
        os.close(fd)  # closing releases the lock


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
