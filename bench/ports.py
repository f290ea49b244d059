"""The one way the tests and benchmarks pick a TCP port for a listener that binds it later
(an RTI, a federate, a proxy, a control plane started as a process), or a port where
nothing listens.

Binding port 0 and closing the socket races: between the close and the listener's bind,
the kernel may hand the port to an outgoing connection (a proxy's to its upstream) or to
the next caller, and a second test session beside this one may pick it too; then the
listener's bind fails. So a port here is

* below the kernel's ephemeral range (never given to an outgoing connection),
* never given twice by one process,
* claimed across processes for :data:`CLAIM_NS`: a claim file per port under the system's
  temporary directory, read and written under an exclusive ``flock``, so two sessions never
  hand out the same port at once (a claim older than that has been bound, or never will be),
* and **held** from the moment it is handed out: this process keeps a socket bound to it,
  with ``SO_REUSEADDR``, not listening. Linux then refuses every other bind of the port
  but one with ``SO_REUSEADDR`` while nothing listens on it, and every bind once something
  does. The listeners it is for all set ``SO_REUSEADDR`` (ZeroMQ's, Python's
  ``http.server`` and ``socket.create_server``, Go's ``net.Listen``: Prometheus, Jaeger,
  Toxiproxy), so they bind and listen on it, in this process or a child, while nothing
  else can take it meanwhile. Until one listens, a connection to it is refused: it is
  also the port "where nothing listens" a test needs.

The last :data:`HELD` ports handed out stay held (a process that asks for more lets the
oldest go: their listeners have bound them long since, or never will); :func:`release`
lets one go sooner.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

__all__ = ["CLAIM_NS", "HELD", "free_port", "release"]

#: how long a port handed out stays claimed for its process (time enough to start a listener)
CLAIM_NS = 120 * 1_000_000_000
#: how many of the ports handed out this process keeps holding
HELD = 256

_GIVEN: set[int] = set()
_HOLDERS: OrderedDict[int, socket.socket] = OrderedDict()
_CLAIMS = Path(tempfile.gettempdir()) / "reactorfed-ports"
_SPAN = 12_000  # ports below the ephemeral range to choose from


def free_port() -> int:
    """A port nothing listens on, claimed and held for this process until a listener with
    ``SO_REUSEADDR`` binds it (see the module's docstring)."""
    low, _ = _ephemeral_range()
    _CLAIMS.mkdir(exist_ok=True)
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(max(1024, low - _SPAN), low)
        if port in _GIVEN or not _claim(port):
            continue
        holder = _hold(port)
        if holder is None:
            continue
        _GIVEN.add(port)
        _HOLDERS[port] = holder
        while len(_HOLDERS) > HELD:
            _HOLDERS.popitem(last=False)[1].close()
        return port
    raise OSError(f"no free port among {_SPAN} below the ephemeral range (from {low})")


def release(port: int) -> None:
    """Stop holding ``port`` (handed out by :func:`free_port`): anything may bind it now."""
    holder = _HOLDERS.pop(port, None)
    if holder is not None:
        holder.close()


def _hold(port: int) -> socket.socket | None:
    """A socket bound to ``port`` with SO_REUSEADDR, not listening (None: the port is in use:
    bound without SO_REUSEADDR, or listened on)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        return None
    return s


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
