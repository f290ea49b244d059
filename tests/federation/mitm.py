"""A man in the middle for the secure-links tests: :class:`Tap`, a TCP proxy that keeps
every byte it forwards and may change them, and :class:`TappedFederation`, a federation of
real processes (``reactorfed rti`` and one ``reactorfed federate`` each) whose every TCP
link crosses a tap: each federate's link to the RTI, and each federate's data port (its
upstream peers are told the tap's port). Unix sockets and shared memory are off, so every
byte between two processes crosses a tap.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.ports import free_port

REPO = Path(__file__).resolve().parents[2]
#: (connection number, offset of the chunk in that connection's stream, the chunk) -> what to forward
Mangle = Callable[[int, int, bytes], bytes]


class Tap:
    """Listens on :attr:`port` and forwards each connection to ``target_port``. Keeps, per
    connection, what the client sent (:attr:`sent`) and what it got back (:attr:`got`);
    ``mangle`` may change what the client sends before it is forwarded, ``mangle_back``
    what the server sends back."""

    def __init__(self, target_port: int, mangle: Mangle | None = None, mangle_back: Mangle | None = None) -> None:
        self.target_port = target_port
        self.mangle = mangle
        self.mangle_back = mangle_back
        self.sent: list[bytearray] = []
        self.got: list[bytearray] = []
        self.lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True, name=f"tap-{self.port}").start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                conn.close()
                continue
            up.settimeout(None)
            with self.lock:
                n = len(self.sent)
                self.sent.append(bytearray())
                self.got.append(bytearray())
                self._socks += [conn, up]
            threading.Thread(target=self._pipe, args=(n, conn, up, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(n, up, conn, False), daemon=True).start()

    def _pipe(self, n: int, src: socket.socket, dst: socket.socket, upstream: bool) -> None:
        offset = 0
        try:
            while data := src.recv(65536):
                with self.lock:
                    (self.sent if upstream else self.got)[n].extend(data)
                mangle = self.mangle if upstream else self.mangle_back
                if mangle is not None:
                    changed = mangle(n, offset, data)
                    offset += len(data)
                    data = changed
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def captured(self) -> bytes:
        """Every byte seen, both ways, all connections."""
        with self.lock:
            return b"".join(bytes(b) for b in (*self.sent, *self.got))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()
        with self.lock:
            for s in self._socks:
                with contextlib.suppress(OSError):
                    s.close()


def replay(data: bytes, port: int, wait_s: float = 1.0) -> bytes:
    """Send ``data`` (a recorded client's bytes) on a new connection to ``port``; what came back."""
    got = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as s:
        with contextlib.suppress(OSError):
            s.sendall(data)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return bytes(got)


class TappedFederation:
    """``program``'s RTI and federates ``names`` as processes, every TCP link through a
    :class:`Tap` (``taps["rti-<name>"]``, ``taps["data-<name>"]``). ``mangle`` (by tap name)
    changes what crosses a tap towards the server, ``mangle_back`` what comes back; ``env`` adds to every process's environment; ``args`` go to
    every process; ``fid`` and ``secret``: the federation's (default: made up)."""

    def __init__(self, program: str, names: Sequence[str], *, args: Sequence[str] = (),
                 env: dict[str, str] | None = None, mangle: dict[str, Mangle] | None = None,
                 mangle_back: dict[str, Mangle] | None = None, fid: str | None = None,
                 secret: str | None = None) -> None:
        self.names = list(names)
        self.cond = threading.Condition()
        self.lines: list[tuple[float, str, str]] = []
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.readers: dict[str, threading.Thread] = {}
        self.taps: dict[str, Tap] = {}
        self.fid = fid or f"tapped-{secrets.token_hex(4)}"
        self.secret = secret or secrets.token_hex(16)
        self.env = {**os.environ, "REACTORFED_SECRET": self.secret, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.common = [program, "--federation-id", self.fid, *args]
        mangle, back = mangle or {}, mangle_back or {}
        self.rti_port = free_port()
        self.data_ports: dict[str, int] = {}
        try:
            self.spawn("rti", ["rti", *self.common, "--host", "127.0.0.1", "--port", str(self.rti_port)])
            for n in self.names:
                self.taps[f"rti-{n}"] = Tap(self.rti_port, mangle.get(f"rti-{n}"), back.get(f"rti-{n}"))
                self.data_ports[n] = free_port()
                self.taps[f"data-{n}"] = Tap(self.data_ports[n], mangle.get(f"data-{n}"), back.get(f"data-{n}"))
                self.spawn(n, self.federate_argv(n, self.taps[f"rti-{n}"].port, self.taps[f"data-{n}"].port))
        except BaseException:
            self.close()
            raise

    def federate_argv(self, name: str, rti_port: int, advertised: int) -> list[str]:
        return ["federate", *self.common, "--federate", name, "--rti", f"127.0.0.1:{rti_port}",
                "--data-port", str(self.data_ports[name]), "--advertise-port", str(advertised),
                "--no-unix-sockets", "--no-shm"]  # fmt: skip

    def spawn(self, who: str, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-m", "reactorfed", *argv], env=env or self.env, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.procs[who] = proc
        reader = threading.Thread(target=self._read, args=(who, proc), daemon=True, name=f"read-{who}")
        reader.start()
        self.readers[who] = reader
        return proc

    def _read(self, who: str, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), who, line.rstrip("\n")))
                self.cond.notify_all()

    def wait_for(self, pattern: str, who: str | None = None, timeout: float = 60.0) -> str:
        """The first line matching ``pattern`` (from ``who``, if given)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for _, w, line in self.lines:
                    if (who is None or w == who) and rx.search(line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no line matching {pattern!r} from {who or 'any process'}:\n{self.output}")
                self.cond.wait(min(left, 0.2))

    def end(self, timeout: float, who: Sequence[str] | None = None) -> dict[str, int]:
        """Exit codes once the processes ``who`` (default: all) ended."""
        deadline = time.monotonic() + timeout
        codes = {}
        for name in who or list(self.procs):
            try:
                codes[name] = self.procs[name].wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"{name} still runs after {timeout} s:\n{self.output}") from None
            self._drained(name)
        return codes

    def _drained(self, who: str) -> None:
        # A process's exit is seen before its reader has taken the last lines of its pipe:
        # once it has ended, wait for the reader to reach the end of its output.
        if self.procs[who].poll() is not None:
            self.readers[who].join(10)

    @property
    def output(self) -> str:
        with self.cond:
            return "\n".join(f"[{w}] {line}" for _, w, line in self.lines)

    def out_of(self, who: str) -> str:
        """What ``who`` printed so far: all of it, once it has ended."""
        self._drained(who)
        with self.cond:
            return "\n".join(line for _, w, line in self.lines if w == who)

    def close(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(p.pid, 9)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(10)
        for t in self.taps.values():
            t.close()
