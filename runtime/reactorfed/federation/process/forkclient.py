"""The launcher's side of the fork server (:mod:`reactorfed.cli.forkserver`): a handle on the server
process, and each federate it forked as a process-like object (a pid, an exit code the
server reports, signals sent to it directly). The wire between the two: JSON lines over a
Unix socket pair, the children's output pipes passed as SCM_RIGHTS ancillary data.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import signal
import socket
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["ForkServer", "Forked", "Lines", "send_line"]

_MAX_LINE = 1 << 20


def send_line(sock: socket.socket, msg: dict[str, Any], fds: list[int] | None = None) -> None:
    data = (json.dumps(msg) + "\n").encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(data)


class Lines:
    """JSON lines (and the descriptors that came with them) from a stream socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        self.fds: list[int] = []

    def read(self) -> list[dict[str, Any]] | None:
        """What one read brought: its complete lines; None at end of stream."""
        fds = array.array("i")
        data, anc, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16 * fds.itemsize))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        self.fds.extend(fds)
        if not data:
            return None
        self.buf += data
        if len(self.buf) > _MAX_LINE:
            raise ValueError("a fork server message longer than 1 MiB")
        *lines, self.buf = self.buf.split(b"\n")
        return [json.loads(line) for line in lines if line]


@dataclass
class Forked:
    """A federate forked by the server, as the launcher sees it: a pid, a returncode
    once the server reports its exit, and signals sent to it directly."""

    name: str
    pid: int
    server: ForkServer
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        self.server.exited.wait_for(self, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Exits:
    """Exit codes reported by the server, and a condition to wait on them."""

    def __init__(self) -> None:
        self.cond = threading.Condition()

    def wait_for(self, child: Forked, timeout: float | None) -> None:
        with self.cond:
            self.cond.wait_for(lambda: child.returncode is not None, timeout)


class ForkServer:
    """The launcher's handle on a running fork server process."""

    def __init__(self, sock: socket.socket, proc: Any) -> None:
        self.sock = sock
        self.proc = proc  # the server's own subprocess.Popen
        self.exited = _Exits()
        self._lines = Lines(sock)
        self._by_pid: dict[int, Forked] = {}
        self._reader: threading.Thread | None = None

    def ready(self, timeout_s: float) -> bool:
        """Wait until the server has imported the program (False: it failed or is too slow)."""
        self.sock.settimeout(timeout_s)
        try:
            while True:
                got = self._lines.read()
                if got is None:
                    return False
                for msg in got:
                    if "ready" in msg:
                        return True
        except (TimeoutError, OSError, ValueError):
            return False
        finally:
            self.sock.settimeout(None)

    def spawn_many(self, requests: list[tuple[str, list[str]]], window: int = 256) -> list[tuple[Forked, int]]:
        """Fork a federate for each ``(name, argv)``; returns them, in order, each with the
        read end of its output pipe. Up to ``window`` requests are in flight at a time: the
        server forks what it has received as one burst, its children held until the burst
        is done (see :func:`reactorfed.cli.forkserver.serve`), instead of a round trip to this process
        for each."""
        started: list[tuple[Forked, int]] = []
        pipes: dict[str, int] = {}
        sent = 0
        try:
            while len(started) < len(requests):
                while sent < len(requests) and sent - len(started) < window:
                    name, argv = requests[sent]
                    r, w = os.pipe()
                    pipes[name] = r
                    try:
                        send_line(self.sock, {"name": name, "argv": argv}, [w])
                    finally:
                        os.close(w)
                    sent += 1
                got = self._lines.read()
                if got is None:
                    raise OSError("the fork server ended")
                for msg in got:
                    if msg.get("started") in pipes:
                        name = msg["started"]
                        child = Forked(name, int(msg["pid"]), self)
                        self._by_pid[child.pid] = child
                        started.append((child, pipes.pop(name)))
                    else:
                        self._apply([msg])  # an earlier child's exit, reported meanwhile
        except BaseException:
            for r in pipes.values():
                os.close(r)
            raise
        return started

    def watch(self) -> None:
        """From now on, record exits in a thread of their own (after the last spawn)."""
        self._reader = threading.Thread(target=self._read_exits, name="launch-forkserver", daemon=True)
        self._reader.start()

    def _read_exits(self) -> None:
        while True:
            try:
                got = self._lines.read()
            except (OSError, ValueError):
                got = None
            if got is None:
                # The server is gone: whatever it did not report is lost with it.
                self._apply([{"exited": c.name, "pid": c.pid, "code": -signal.SIGKILL}
                             for c in self._by_pid.values() if c.returncode is None])
                return
            self._apply(got)

    def _apply(self, msgs: list[dict[str, Any]]) -> None:
        # The server reports a child's start before its exit (one stream, in order), so
        # every exit names a child already known.
        with self.exited.cond:
            for msg in msgs:
                child = self._by_pid.get(int(msg.get("pid", -1)))
                if "exited" in msg and child is not None:
                    child.returncode = int(msg["code"])
            self.exited.cond.notify_all()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
