"""The ``reactorfed`` command line.

Subcommands register themselves in :data:`COMMANDS` (a function that adds its parser
to the subparsers); options shared between subcommands come from the ``add_*_args``
helpers, and :func:`environment_from_args`, :func:`setup_logging`,
:func:`stop_on_interrupt` and :func:`metrics_from_args` turn them into objects.

Exit codes: 0 the program ran to its end (timeout, starvation or a stop request,
including Ctrl-C); 1 a reaction failed or the runtime refused the program; 2 a usage
error (bad option, program spec or parameter); 130 interrupted hard (Ctrl-C twice).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from . import __version__
from .duration import format_duration, parse_duration
from .environment import Environment, RunSummary
from .errors import ReactorError
from .metrics import MetricsServer, serve_metrics
from .program import ProgramError, add_program_args, load_program, parse_params

__all__ = [
    "COMMANDS",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_execution_args",
    "add_logging_args",
    "add_metrics_args",
    "build_parser",
    "environment_from_args",
    "main",
    "metrics_from_args",
    "setup_logging",
    "stop_on_interrupt",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

log = logging.getLogger("reactorfed.cli")

LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-7s %(name)s: %(message)s"
LOG_DATEFMT = "%H:%M:%S"
LOG_LEVELS = ("debug", "info", "warning", "error")

_Formatter = argparse.RawDescriptionHelpFormatter
#: a parser or one of its argument groups
_Container = argparse.ArgumentParser | argparse._ArgumentGroup

MAIN_DESCRIPTION = """\
reactorfed runs reactor programs (the reactor model of Lingua Franca:
reactors, ports, actions, timers, reactions) deterministically in logical
time: in one process, or split into federates coordinated by an RTI.
"""

MAIN_EPILOG = """\
examples:
  reactorfed run examples/hello.py:Main --fast --timeout 1s
  reactorfed run mypkg.programs:Training --timeout 10min --param samplers=8
  reactorfed run --help            options of one command

'reactorfed COMMAND --help' explains each command.
"""

RUN_DESCRIPTION = """\
Run a reactor program in this process and print a summary (tags, reactions,
wall time, why it stopped).

PROGRAM is MODULE:ATTR (imported from the working directory or PYTHONPATH)
or path/to/file.py:ATTR. ATTR is a Reactor class (built with the --param
values as keyword arguments, converted by its __init__ annotations or
defaults), a function returning the main reactor (called the same way), or
a reactor instance. Without :ATTR, 'Main' is used.

Parameter values: int also takes durations (10ms -> 10000000 ns), bool takes
true/false/yes/no/on/off/1/0, 'X | None' takes none, list[X] takes a,b,c.

Ctrl-C asks the program to stop at the next tag: shutdown reactions run and
the summary is printed. Ctrl-C again aborts at once.
"""

RUN_EPILOG = """\
examples:
  reactorfed run examples/hello.py:Main --fast --timeout 1s
      as fast as possible for 1 s of logical time
  reactorfed run examples/hello.py:Main --timeout 2s --param width=5 --param delay=20ms
      in real time, with parameters of Main(width: int, delay: int)
  reactorfed run mypkg.app:build --workers 4 --metrics-port 9464 --log-level debug
      a factory function; 4 threads per level; Prometheus metrics on :9464/metrics
  reactorfed run examples/hello.py:Main --fast --timeout 1s --json
      the summary as one JSON line (for scripts)

exit codes: 0 ran to its end (timeout, starvation, stop request, Ctrl-C);
            1 a reaction failed or the program was refused (e.g. a causality loop);
            2 usage error (bad option, program or parameter); 130 aborted.
"""


# -- shared options --------------------------------------------------------------------
def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535 (0: any free port), got {v}")
    return v


def add_logging_args(parser: _Container) -> None:
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        type=str.lower,
        help="how much the runtime logs to stderr (default: info)",
    )


def add_metrics_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("metrics")
    g.add_argument(
        "--metrics-port",
        type=_port,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics on http://ADDR:PORT/metrics (0: any free port; the "
        "address is logged). Counters are read at scrape time: no cost while running",
    )
    g.add_argument(
        "--metrics-addr", default="0.0.0.0", metavar="ADDR", help="address for --metrics-port (default: 0.0.0.0)"
    )


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("execution")
    g.add_argument(
        "--fast",
        action="store_true",
        help="do not wait for physical time: logical time runs as fast as the program can go",
    )
    g.add_argument(
        "--timeout",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="stop at start + DURATION of logical time, e.g. 5s, 100ms, 2min (default: run "
        "until nothing is left to do, a reaction requests stop, or Ctrl-C)",
    )
    g.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="threads running the reactions of one level in parallel; results are the same "
        "as with 1 (default: 1)",
    )
    g.add_argument(
        "--keepalive",
        action="store_true",
        default=None,
        help="keep running with no events pending, waiting for physical actions (default: "
        "on when the program has physical actions)",
    )
    g.add_argument(
        "--check-types", action="store_true", help="check every value written to a port against the port's type"
    )


def environment_from_args(args: argparse.Namespace) -> Environment:
    return Environment(
        fast=args.fast,
        timeout=args.timeout,
        keepalive=args.keepalive,
        workers=args.workers,
        check_types=args.check_types,
    )


def setup_logging(level: str) -> None:
    """Readable logs on stderr: ``12:03:04.123 INFO    reactorfed.cli: message``."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_reactorfed", False):  # ours from an earlier call; leave others be
            root.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATEFMT))
    handler._reactorfed = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())


@contextlib.contextmanager
def stop_on_interrupt(request_stop: Callable[[], None]) -> Iterator[None]:
    """While inside: the first Ctrl-C (SIGINT) or SIGTERM calls ``request_stop`` (from a
    helper thread, so the scheduler sees a request from outside and wakes up, whatever
    it was waiting for); a second Ctrl-C raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread
        return
    requested = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        if requested.is_set():
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            return
        requested.set()
        log.warning("%s: stopping at the next tag (Ctrl-C again to abort)", signal.Signals(signum).name)
        threading.Thread(target=request_stop, name="reactorfed-stop", daemon=True).start()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def metrics_from_args(args: argparse.Namespace, env: Environment, labels: dict[str, str]) -> MetricsServer | None:
    if args.metrics_port is None:
        return None
    try:
        return serve_metrics(env, args.metrics_port, args.metrics_addr, labels)
    except OSError as e:
        raise ProgramError(f"--metrics-port {args.metrics_port}: cannot listen on {args.metrics_addr}: {e}") from None


def print_summary(summary: RunSummary, as_json: bool) -> None:
    if as_json:
        print(
            json.dumps(
                {
                    "tags": summary.tags,
                    "reactions": summary.reactions,
                    "wall_s": round(summary.wall_ns / 1e9, 6),
                    "cpu_s": round(summary.cpu_ns / 1e9, 6),
                    "reactions_per_s": round(summary.reactions_per_s, 1),
                    "last_tag_ns": summary.last_tag.time,
                    "last_microstep": summary.last_tag.microstep,
                    "stop_reason": summary.stop_reason,
                    "deadline_misses": summary.deadline_misses,
                }
            ),
            flush=True,
        )
        return
    print(f"reactorfed: {summary}", flush=True)


# -- reactorfed run ------------------------------------------------------------------------
def _add_run(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run a program in this process",
        description=RUN_DESCRIPTION,
        epilog=RUN_EPILOG,
        formatter_class=_Formatter,
    )
    add_program_args(p)
    add_execution_args(p)
    add_metrics_args(p)
    g = p.add_argument_group("output")
    add_logging_args(g)
    g.add_argument("--json", action="store_true", help="print the summary as one JSON line on stdout")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    main = load_program(args.program, parse_params(args.params))
    env = environment_from_args(args)
    env.assemble(main)
    log.info("running %s (%s%s)", args.program, "fast" if args.fast else "real time",
             f", timeout {format_duration(args.timeout)}" if args.timeout is not None else "")
    server = metrics_from_args(args, env, {"program": args.program})
    try:
        with stop_on_interrupt(env.request_stop):
            summary = env.run()
    finally:
        if server is not None:
            server.close()
    print_summary(summary, args.json)
    return EXIT_OK


#: Each adds one subcommand to the subparsers (``set_defaults(func=...)`` returning the
#: exit code). ``rti``, ``federate`` and ``launch`` go here beside ``run``.
COMMANDS: list[Callable[[Any], None]] = [_add_run]


def _federation_commands() -> list[Callable[[Any], None]]:
    from .federation.commands import add_federate, add_launch, add_rti

    return [add_launch, add_rti, add_federate]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reactorfed", description=MAIN_DESCRIPTION, epilog=MAIN_EPILOG, formatter_class=_Formatter
    )
    parser.add_argument("--version", action="version", version=f"reactorfed {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for add in [*COMMANDS, *_federation_commands()]:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    setup_logging(getattr(args, "log_level", "info"))
    try:
        return int(args.func(args))
    except ProgramError as e:
        parser.exit(EXIT_USAGE, f"reactorfed {args.command}: error: {e}\n")
    except ReactorError as e:
        # A reaction failed (its traceback is the cause) or assembly refused the program.
        cause = e.__cause__
        if cause is not None:
            traceback.print_exception(cause, file=sys.stderr)
        log.error("%s", e)
        return EXIT_FAILED
    except KeyboardInterrupt:
        log.error("aborted")
        return EXIT_INTERRUPTED
    return EXIT_OK  # unreachable (parser.exit raises), for type checkers


if __name__ == "__main__":
    sys.exit(main())
