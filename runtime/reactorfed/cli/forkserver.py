"""A fork server for ``reactorfed launch``: federates forked from one process that has
already imported the program, instead of N fresh interpreters that each import it.

Starting a federate as a new ``python -m reactorfed federate`` costs the interpreter's
start-up and every import (numpy, ZeroMQ, msgpack, the program and what it imports:
gymnasium, torch) in every process: hundreds of milliseconds of CPU each, so on a small
machine N federates take seconds to join, and the first to start wait, idle, for the
last. The fork server pays that once: it imports and builds the program, computes its
layout (and imports the federation's modules), then forks a child per federate; a child
only assembles its own part of the program and joins.

The launcher talks to it over a Unix socket pair: a request is one JSON line with the
federate's command-line arguments and, as ancillary data (SCM_RIGHTS), the write end of
the pipe that becomes the child's stdout and stderr; the server answers with the child's
pid, and later with its exit status. The server forks only from its main thread, before
any ZeroMQ context or worker thread exists in it, so a child starts as a clean copy.

The children's parent is the server, not the launcher: each dies with the server
(``PR_SET_PDEATHSIG``), and the server dies with the launcher.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..federation.process.forkclient import Lines, send_line

if TYPE_CHECKING:
    from ..federation.coordination.layout import Layout
    from ..model.reactor import Reactor

__all__ = ["Prepared", "serve"]


@dataclass(frozen=True)
class Prepared:
    """A program built once with its parameters, and its layout: what every federate forked
    from one process (the fork server) shares instead of building it again. Assembly never
    mutates the reactor tree, so each federate assembles its own part of the same ``main``."""

    program: str
    params: tuple[str, ...]
    main: Reactor
    layout: Layout

    @classmethod
    def of(cls, program: str, params: Sequence[str]) -> Prepared:
        from ..federation.process.runner import layout_of
        from .loader import load_program, parse_params

        main = load_program(program, parse_params(list(params)))
        return cls(program, tuple(params), main, layout_of(main))

    def matches(self, program: str, params: Sequence[str]) -> bool:
        return program == self.program and tuple(params) == self.params


def serve(fd: int, threads: int, program: str, params: list[str]) -> int:
    """Import ``program`` (building it once, so that what it imports lazily is loaded
    too), with the run's ``threads``, then fork a federate for each request on the socket
    ``fd`` until it closes."""
    from ..execution.threads import apply_threads
    from ..federation.process import federate  # noqa: F401  (imported once, here, for every child)
    from .main import build_parser

    apply_threads(threads)  # (before the program loads torch; each child sets its own again)

    _die_with_parent()
    sock = socket.socket(fileno=fd)
    # Everything a federate would do before it differs from its siblings, done once:
    # import and build the program (and what it imports lazily), compute the layout,
    # build the command line's parser. A child only parses its arguments, assembles its
    # own part and joins.
    prepared = Prepared.of(program, params)
    parser = build_parser()
    sys.stdout.flush()
    sys.stderr.flush()
    send_line(sock, {"ready": os.getpid()})
    lines = Lines(sock)
    children: dict[int, str] = {}
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    while True:
        ready = sel.select(timeout=0.05)
        burst: list[dict[str, Any]] = []
        while ready:  # every request already sent: forked as one burst
            got = lines.read()
            if got is None:  # the launcher is gone or done: end with it
                for pid in children:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
                return 0
            burst.extend(got)
            ready = sel.select(timeout=0)
        if burst:
            _fork_burst(burst, lines.fds, sock, children, parser, prepared)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            name = children.pop(pid, "?")
            send_line(sock, {"exited": name, "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def _fork_burst(burst: list[dict[str, Any]], fds: list[int], sock: socket.socket, children: dict[int, str],
                parser: Any, prepared: Any) -> None:
    """Fork a child per request of ``burst`` (``fds``: their output pipes, in order), held
    at a gate until the last is forked. Children that started at once would compete with
    this process for the CPU: on a small machine each fork then waits for its turn behind
    the children already running, and the last federate starts seconds late. Held, they
    cost nothing until the burst is done."""
    outs = [fds.pop(0) for _ in burst]
    gate_r, gate_w = os.pipe()
    try:
        for i, req in enumerate(burst):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child, measured through its output
                for fd in (gate_w, *outs[:i], *outs[i + 1:]):  # not its siblings' pipes, nor the gate's end
                    with contextlib.suppress(OSError):
                        os.close(fd)
                os._exit(_child(outs[i], sock, req["argv"], parser, prepared, gate_r))
            os.close(outs[i])
            outs[i] = -1
            children[pid] = req["name"]
            send_line(sock, {"started": req["name"], "pid": pid})
    finally:
        for fd in (gate_r, gate_w, *(o for o in outs if o >= 0)):
            os.close(fd)  # closing the gate's write end lets the burst's children go


def _child(out: int, sock: socket.socket, argv: list[str], parser: Any, prepared: Any,
           gate: int) -> int:  # pragma: no cover
    """In the forked child: its own output, the server's socket closed, a federate."""
    from .main import run_parsed

    try:
        _die_with_parent()
        while os.read(gate, 1):  # until the server closes the gate (end of file)
            pass
        os.close(gate)
        sock.close()
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
        args = parser.parse_args(["federate", *argv])
        args.preloaded = prepared
        code = int(run_parsed(parser, args) or 0)
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


if __name__ == "__main__":  # python -m reactorfed.cli.forkserver FD THREADS PROGRAM [PARAM ...]
    code = serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
    # Without the interpreter's teardown: with the program's torch loaded it took 1-5 s
    # (by the load), which the launcher waited out after the federation had ended. The
    # server holds nothing to release: its children are gone or told to end, and it
    # never ran the program.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
