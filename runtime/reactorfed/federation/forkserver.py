"""A fork server for ``reactorfed launch``: federates forked from one process that has
already imported the program, instead of N fresh interpreters that each import it.

Starting a federate as a new ``python -m reactorfed federate`` costs the interpreter's
start-up and every import (numpy, ZeroMQ, msgpack, the program and what it imports:
gymnasium, torch) in every process: hundreds of milliseconds of CPU each, so on a small
machine N federates take seconds to join, and the first to start wait, idle, for the
last. The fork server pays that once: it imports the program (and the federation's
modules), then forks a child per federate; a child only builds its reactors and joins.

The launcher talks to it over a Unix socket pair: a request is one JSON line with the
federate's command-line arguments and, as ancillary data (SCM_RIGHTS), the write end of
the pipe that becomes the child's stdout and stderr; the server answers with the child's
pid, and later with its exit status. The server forks only from its main thread, before
any ZeroMQ context or worker thread exists in it, so a child starts as a clean copy.

The children's parent is the server, not the launcher: each dies with the server
(``PR_SET_PDEATHSIG``), and the server dies with the launcher.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["ForkServer", "Forked", "serve"]

_MAX_LINE = 1 << 20


def _send(sock: socket.socket, msg: dict[str, Any], fds: list[int] | None = None) -> None:
    data = (json.dumps(msg) + "\n").encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(data)


class _Lines:
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


# -- the server (a process of its own) -----------------------------------------------------
def serve(fd: int, program: str, params: list[str]) -> int:
    """Import ``program`` (building it once, so that what it imports lazily is loaded
    too), then fork a federate for each request on the socket ``fd`` until it closes."""
    from ..cli import main as cli_main
    from ..program import load_program, parse_params
    from . import federate, runner  # noqa: F401  (imported once, here, for every child)

    _die_with_parent()
    sock = socket.socket(fileno=fd)
    load_program(program, parse_params(params))  # imports the program and its dependencies
    sys.stdout.flush()
    sys.stderr.flush()
    _send(sock, {"ready": os.getpid()})
    lines = _Lines(sock)
    children: dict[int, str] = {}
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    while True:
        for _ in sel.select(timeout=0.05):
            got = lines.read()
            if got is None:  # the launcher is gone or done: end with it
                for pid in children:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
                return 0
            for req in got:
                out = lines.fds.pop(0)
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child, measured through its output
                    os._exit(_child(out, sock, req["argv"], cli_main))
                os.close(out)
                children[pid] = req["name"]
                _send(sock, {"started": req["name"], "pid": pid})
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            name = children.pop(pid, "?")
            _send(sock, {"exited": name, "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def _child(out: int, sock: socket.socket, argv: list[str], cli_main: Any) -> int:  # pragma: no cover
    """In the forked child: its own output, the server's socket closed, a federate."""
    try:
        _die_with_parent()
        sock.close()
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
        code = int(cli_main(["federate", *argv]) or 0)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


# -- the launcher's side -------------------------------------------------------------------
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
        self._lines = _Lines(sock)
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

    def spawn(self, name: str, argv: list[str]) -> tuple[Forked, int]:
        """Fork federate ``name``; returns it and the read end of its output pipe."""
        r, w = os.pipe()
        try:
            _send(self.sock, {"name": name, "argv": argv}, [w])
        finally:
            os.close(w)
        while True:
            got = self._lines.read()
            if got is None:
                os.close(r)
                raise OSError("the fork server ended")
            for msg in got:
                if msg.get("started") == name:
                    child = Forked(name, int(msg["pid"]), self)
                    self._by_pid[child.pid] = child
                    return child, r
                self._apply([msg])  # an earlier child's exit, reported meanwhile

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


if __name__ == "__main__":  # python -m reactorfed.federation.forkserver FD PROGRAM [PARAM ...]
    sys.exit(serve(int(sys.argv[1]), sys.argv[2], sys.argv[3:]))
