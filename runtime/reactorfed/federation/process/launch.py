"""``reactorfed launch``: an RTI and every federate as local processes.

Children print through the launcher with a ``[name]`` prefix; a progress line follows
the program's progress, when a federate reports it (``Reactor.report_progress``), and the
federation's logical time (both from the RTI's ``/status``: :func:`progress_line`). When any process fails,
the others are stopped (SIGTERM, then SIGKILL) and the launcher exits non-zero naming
the culprit. Children die with the launcher (``PR_SET_PDEATHSIG``), so none is left
behind even when the launcher is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ...execution.threads import DEFAULT_THREADS, thread_env
from ..io.curve import plaintext_opted_out
from .defaults import CREDENTIAL_ENV_VARS, SECRET_ENV
from .forkclient import ForkServer
from .member_keys import issue_key_files

if TYPE_CHECKING:
    from .layout_file import LayoutFile

__all__ = ["LaunchResult", "launch", "progress_line"]


@dataclass
class LaunchResult:
    code: int
    failed: str | None = None
    message: str = ""
    wall_s: float = 0.0
    exit_codes: dict[str, int | None] = field(default_factory=dict)


#: Federates (and the fork server they come from) run this many nice levels below the
#: RTI and the launcher: on a machine with more busy federates than cores, the RTI (one
#: process that every federate waits on, for joining, grants and heartbeats) still gets
#: the CPU when it needs it. Each federate also runs its reactions below its own I/O
#: threads (``--reaction-nice``).
FEDERATE_NICE = 5


def _die_with(parent: int, nice: int = 0) -> Callable[[], None]:
    def die_with_parent() -> None:  # pragma: no cover - runs in the child
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the launcher died before prctl took effect
            os._exit(1)
        if nice:
            with contextlib.suppress(OSError):
                os.nice(nice)

    return die_with_parent


class _Child:
    """A process of the federation as the launcher sees it: ``proc`` (a
    :class:`subprocess.Popen`, or a :class:`~.forkclient.Forked` federate) and a thread
    copying its output, prefixed with its name."""

    def __init__(self, name: str, proc: Any, stream: IO[str], out: IO[str], lock: threading.Lock) -> None:
        self.name = name
        self.proc = proc
        self.tail: list[str] = []
        self._stream = stream
        self._pump = threading.Thread(target=self._copy, args=(out, lock), daemon=True, name=f"launch-{name}")
        self._pump.start()

    @classmethod
    def spawn(cls, name: str, argv: list[str], env: dict[str, str], out: IO[str], lock: threading.Lock,
              pass_fds: Sequence[int] = (), nice: int = 0) -> _Child:
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
            preexec_fn=_die_with(os.getpid(), nice) if sys.platform.startswith("linux") else None, pass_fds=pass_fds,
        )
        assert proc.stdout is not None
        return cls(name, proc, proc.stdout, out, lock)

    @classmethod
    def forked(cls, server: ForkServer, argvs: list[tuple[str, list[str]]], out: IO[str],
               lock: threading.Lock) -> list[_Child]:
        return [cls(proc.name, proc, os.fdopen(fd, "r", buffering=1), out, lock)
                for proc, fd in server.spawn_many(argvs)]

    def _copy(self, out: IO[str], lock: threading.Lock) -> None:
        with self._stream:
            for line in self._stream:
                self.tail = [*self.tail[-19:], line.rstrip()]
                with lock:
                    out.write(f"[{self.name}] {line}")
                    out.flush()

    def join_output(self) -> None:
        self._pump.join(timeout=5)


def launch(
    program: str,
    federates: Sequence[str],
    *,
    params: Sequence[str] = (),
    run_args: Sequence[str] = (),
    rti_args: Sequence[str] = (),
    out: IO[str] | None = None,
    progress: bool | None = None,
    timeout_ns: int | None = None,
    grace_s: float = 3.0,
    python: str | None = None,
    fork_server: bool = True,
    relaunch: Mapping[str, int] | None = None,
    threads: int = DEFAULT_THREADS,
    layout: LayoutFile | None = None,
) -> LaunchResult:
    """Start the RTI and ``federates`` of ``program`` locally; wait for all of them.
    ``relaunch``: federates started again (a new interpreter) this many more times, each
    time their process ends with 0 (an elastic bank's slot replayed leaving and joining).
    ``threads``: the numeric libraries' threads in every process (the run's ``--threads``,
    which ``run_args`` carries to the federates when it is not the default).

    With ``fork_server`` (on Linux), the federates are forked from one process that has
    imported the program (:mod:`reactorfed.cli.forkserver`; the launcher side is :mod:`.forkclient`), instead of each starting an interpreter
    and importing everything again; if that process cannot start, they are spawned.

    ``layout``: the program's federation, already computed (``reactorfed launch`` gives it):
    the RTI gets it as a file (``reactorfed rti --layout``), a fresh interpreter that
    imports neither the program nor its libraries (torch). None: the RTI imports the
    program to compute it."""
    out = out or sys.stdout
    lock = threading.Lock()
    py = python or sys.executable
    federation_id = f"launch-{secrets.token_hex(4)}"
    env = dict(os.environ)
    # A key per member (the RTI's and each federate's, in files of their own): no process
    # holds another's secret key. Only in plain text (no keys at all) a shared secret
    # still says who belongs.
    plain = "--insecure-plaintext-tcp" in (*run_args, *rti_args) or plaintext_opted_out(env)
    for name in CREDENTIAL_ENV_VARS:  # (the caller's belong to another federation)
        env.pop(name, None)
    if plain:
        env[SECRET_ENV] = secrets.token_hex(32)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # The run's thread count, never this machine's share of cores: it changes torch's
    # float sums, so the weights a seed gives (each process also sets torch's own).
    env.update(thread_env(threads))
    plist = [a for p in params for a in ("--param", p)]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reactorfed-launch-") as tmp:  # (0700: the user's alone)
        ready = Path(tmp) / "rti.json"
        served = [program, *plist]
        if layout is not None:
            layout.write(Path(tmp) / "layout.json")
            served = ["--layout", str(Path(tmp) / "layout.json")]
        rti_keys, fed_keys = ([], {}) if plain else issue_key_files(Path(tmp), federates)
        # Every process is on this host: the RTI listens on the loopback only, as the
        # federates' data ports do (no other host reaches it, encrypted or not), and so
        # does its status port.
        rti = _Child.spawn("rti", [py, "-m", "reactorfed", "rti", *served, "--federation-id", federation_id,
                                   "--host", "127.0.0.1", "--port", "0", "--ready-file", str(ready), "--metrics-port",
                                   "0", "--metrics-addr", "127.0.0.1", *rti_keys, *rti_args, *run_args], env, out, lock)
        children = [rti]
        server = _start_fork_server(py, program, params, env, out, lock, threads) if fork_server else None
        info = _await_ready(ready, rti, 60.0)
        if info is None:
            _stop(children, grace_s)
            rti.join_output()
            _close_fork_server(server)
            return LaunchResult(1, "rti", "the RTI did not start: " + " | ".join(rti.tail[-5:]), time.monotonic() - t0,
                                {"rti": rti.proc.returncode})
        argvs = [(name, [program, *plist, "--federate", name, "--federation-id", federation_id,
                         "--rti", info["endpoint"], *fed_keys.get(name, []), *run_args]) for name in federates]
        if server is not None:
            children.extend(_Child.forked(server[0], argvs, out, lock))
            server[0].watch()
        else:
            for name, args in argvs:
                children.append(_Child.spawn(name, [py, "-m", "reactorfed", "federate", *args], env, out, lock,
                                             nice=FEDERATE_NICE))
        by_name = dict(argvs)

        def respawn(name: str) -> _Child:
            return _Child.spawn(name, [py, "-m", "reactorfed", "federate", *by_name[name]], env, out, lock,
                                nice=FEDERATE_NICE)

        show = progress if progress is not None else sys.stderr.isatty()
        try:
            result = _supervise(children, info.get("status_port"), show, timeout_ns, grace_s, respawn,
                                dict(relaunch or {}))
        finally:
            _close_fork_server(server)
    result.wall_s = time.monotonic() - t0
    return result


def _start_fork_server(py: str, program: str, params: Sequence[str], env: dict[str, str], out: IO[str],
                       lock: threading.Lock, threads: int = DEFAULT_THREADS) -> tuple[ForkServer, _Child] | None:
    """A fork server that has imported the program, or None (then federates are spawned)."""
    if not (sys.platform.startswith("linux") and hasattr(socket, "SCM_RIGHTS")):
        return None
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        proc = _Child.spawn("forkserver", [py, "-m", "reactorfed.cli.forkserver", str(theirs.fileno()),
                                           str(threads), program, *params], env, out, lock, pass_fds=[theirs.fileno()],
                            nice=FEDERATE_NICE)
    finally:
        theirs.close()
    server = ForkServer(mine, proc.proc)
    if server.ready(60.0):
        return server, proc
    with lock:
        out.write("[launch] the fork server did not start: every federate starts an interpreter of its own\n")
    server.close()
    _stop([proc], 1.0)
    proc.join_output()
    return None


def _close_fork_server(server: tuple[ForkServer, _Child] | None) -> None:
    if server is None:
        return
    server[0].close()  # it ends when its socket does
    with contextlib.suppress(subprocess.TimeoutExpired):
        server[1].proc.wait(timeout=5)
    _stop([server[1]], 1.0)
    server[1].join_output()


def _await_ready(path: Path, rti: _Child, limit_s: float) -> dict[str, Any] | None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if rti.proc.poll() is not None:
            return None
        if path.exists():
            try:
                data: dict[str, Any] = json.loads(path.read_text())
                return data
            except json.JSONDecodeError:
                pass  # being written
        time.sleep(0.01)
    return None


def _supervise(children: list[_Child], status_port: int | None, show: bool, timeout_ns: int | None, grace_s: float,
               respawn: Callable[[str], _Child] | None = None, again: dict[str, int] | None = None) -> LaunchResult:
    failed: _Child | None = None
    last_progress = 0.0
    again = again or {}
    ended: set[int] = set()  # (the children already started again)
    while True:
        for c in list(children):
            if c.proc.poll() == 0 and again.get(c.name, 0) > 0 and id(c) not in ended and respawn is not None:
                ended.add(id(c))
                again[c.name] -= 1
                children.append(respawn(c.name))
        running = [c for c in children if c.proc.poll() is None]
        for c in children:
            if c.proc.returncode not in (None, 0) and failed is None:
                failed = c
        if failed is not None or not running:
            break
        if show and status_port and time.monotonic() - last_progress > 0.5:
            last_progress = time.monotonic()
            _show_progress(status_port, timeout_ns)
        time.sleep(0.02)
    if show:
        sys.stderr.write("\r\033[K")
    if failed is not None:
        # Give the others a moment to end on their own (the RTI aborts them with a reason).
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(c.proc.poll() is None for c in children):
            time.sleep(0.02)
        _stop(children, grace_s)
    for c in children:
        c.join_output()
    codes = {c.name: c.proc.returncode for c in children}
    if failed is None:
        return LaunchResult(0, None, "all processes finished", exit_codes=codes)
    # The first to exit is often a bystander that heard the RTI name the culprit.
    by_name = {c.name: c for c in children}
    for c in children:
        for line in reversed(c.tail):
            m = _CULPRIT.search(line)
            if m and m.group(1) in by_name and by_name[m.group(1)] is not failed:
                culprit = m.group(1)
                return LaunchResult(1, culprit, f"{culprit}: {_LOG_PREFIX.sub('', line)}", exit_codes=codes)
    return LaunchResult(1, failed.name, _why(failed), exit_codes=codes)


_CULPRIT = re.compile(r"federate (\S+) (?:stopped responding|failed)")


_LOG_PREFIX = re.compile(r"^\d\d:\d\d:\d\d\.\d+\s+[A-Z]+\s+[\w.]+: ")


def _why(failed: _Child) -> str:
    """What to say about a failed child: the signal that killed it, or its last error line."""
    code = failed.proc.returncode
    if code is not None and code < 0:
        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = f"signal {-code}"
        return f"{failed.name} was killed by {sig}"
    why = next((line for line in reversed(failed.tail) if "error" in line.lower() or "failed" in line.lower()),
               failed.tail[-1] if failed.tail else "")
    return f"{failed.name} exited with code {code}: {_LOG_PREFIX.sub('', why)}"


def _stop(children: list[_Child], grace_s: float) -> None:
    for c in children:
        if c.proc.poll() is None:
            c.proc.send_signal(signal.SIGCONT)  # a stopped process cannot handle SIGTERM
            c.proc.terminate()
    deadline = time.monotonic() + grace_s
    for c in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            c.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for c in children:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=5)


def _show_progress(port: int, timeout_ns: int | None) -> None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=0.2) as r:
            st = json.loads(r.read())
    except Exception:
        return
    sys.stderr.write(f"\r\033[K{progress_line(st, timeout_ns)}")
    sys.stderr.flush()


def progress_line(st: Mapping[str, Any], timeout_ns: int | None) -> str:
    """The launcher's progress line from the RTI's ``/status``: the program's progress
    (``done``/``total`` and its figures, when a federate reported them: the bar follows
    them), then the logical time, the phase, the federates running and the grants. A
    program that reports nothing: the bar follows the logical time of ``timeout_ns``."""
    elapsed = st.get("elapsed_ns") or 0
    feds = st.get("federates", {})
    resigned = sum(1 for f in feds.values() if f.get("resigned"))
    report = st.get("progress") or {}
    done, total = report.get("done"), report.get("total")
    frac: float | None = None
    if isinstance(done, int) and isinstance(total, int) and total > 0:
        frac = min(1.0, done / total)
    elif timeout_ns:
        frac = min(1.0, elapsed / timeout_ns)
    line = ""
    if frac is not None:
        n = int(frac * 30)
        line = f"[{'#' * n}{'.' * (30 - n)}] {frac * 100:5.1f}% "
    figures = report.get("figures") or {}
    shown = ([f"{done}/{total}" if total is not None else f"{done}"] if done is not None else [])
    shown += [f"{name} {_figure(value)}" for name, value in figures.items()]
    if shown:
        line += "  ".join(shown) + " | "
    return (line + f"logical time {elapsed / 1e9:.3f} s, {st.get('phase')}, "
            f"{len(feds) - resigned}/{len(feds)} federates running, {st.get('grants', 0)} grants")


def _figure(value: Any) -> str:
    """A figure for a person: ints with thousands separators, other numbers to 4 significant
    digits (no exponent below a million)."""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float) and 1000 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
