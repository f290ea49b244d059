"""Command-line options shared by ``reactorfed``'s commands: each flag is defined once
here, with its validation, and turned into objects by the helpers below.

A flag a launcher must pass on to the processes it starts (``reactorfed launch`` to its
RTI and federates) is *forwarded*: :func:`forwarded` rebuilds it from the parsed value,
so adding a flag to a forwarded group is all it takes to have ``launch`` pass it on.

This module imports nothing heavy: ``reactorfed COMMAND --help`` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..execution.threads import ALLOW_FLAG, DEFAULT_THREADS, FLAG, apply_threads, current_threads
from ..federation.process.defaults import DEFAULT_METRICS_ADDR
from ..observe import LOGDIR_ENV
from ..time.duration import parse_duration

if TYPE_CHECKING:
    from ..execution.environment import Environment, RunSummary
    from ..federation.process.clock_sync import ClockSyncOptions
    from ..observe.status import StatusServer
    from ..observe.trace.recorder import Recorder
    from ..time.clock import Clock

__all__ = [
    "FORWARDED_GROUPS",
    "add_clock_sync_args",
    "add_execution_args",
    "add_logging_args",
    "add_metrics_args",
    "add_observability_args",
    "clock_sync_from_args",
    "duration",
    "environment_from_args",
    "forwarded",
    "lead_window",
    "logdir_from_args",
    "metrics_from_args",
    "port",
    "positive_int",
    "print_summary",
    "setup_logging",
    "stop_on_interrupt",
    "threads_from_args",
    "tracer_from_args",
]

log = logging.getLogger("reactorfed.cli")

LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-7s %(name)s: %(message)s"
LOG_DATEFMT = "%H:%M:%S"
LOG_LEVELS = ("debug", "info", "warning", "error")

#: a parser or one of its argument groups
Container = argparse.ArgumentParser | argparse._ArgumentGroup
#: argument groups whose flags a launcher passes on to the processes it starts
FORWARDED_GROUPS = ("execution", "federation", "output", "observability")


# -- value types -----------------------------------------------------------------------
def duration(text: str) -> int:
    """A duration flag's value (``5s``, ``100ms``, ``2min``) in integer ns."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def lead_window(text: str) -> int | str:
    """``--lead-window``'s value: a duration in integer ns, or ``"none"`` (no window)."""
    if text.strip().lower() in ("none", "off"):
        return "none"
    return duration(text)


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535 (0: any free port), got {v}")
    return v


# -- the shared flags ------------------------------------------------------------------
def add_logging_args(parser: Container) -> None:
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
        type=port,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics on http://ADDR:PORT/metrics and a JSON status on /status "
        "(0: any free port; the address is logged). Counters are read at scrape time: no cost "
        "while running",
    )
    g.add_argument(
        "--metrics-addr", default=DEFAULT_METRICS_ADDR, metavar="ADDR",
        help=f"address for --metrics-port (default: {DEFAULT_METRICS_ADDR}: this machine only, since the "
        "endpoints are not authenticated; 0.0.0.0 serves every interface)",
    )


def add_observability_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("observability")
    g.add_argument(
        "--trace", type=Path, default=None, metavar="DIR",
        help="record a trace of the run in DIR (one file per process: each reaction's start and end, "
        "actions scheduled, messages, grants, promises, joins, leaves, stops, deadline misses, user "
        "events); 'reactorfed trace merge DIR -o run.json' makes one trace for Perfetto or Chrome",
    )
    g.add_argument(
        "--logdir", type=Path, default=None, metavar="DIR",
        help="where RL learners write TensorBoard curves (tensorboard --logdir DIR); default for run and "
        "launch: runs/PROGRAM-DATE-TIME (REACTORFED_LOGDIR set and empty: no curves)",
    )
    g.add_argument(
        "--otlp-endpoint", default=None, metavar="URL",
        help="export the same records as OpenTelemetry spans to this OTLP/HTTP traces endpoint, e.g. "
        "http://collector:4318/v1/traces (needs the otlp extra)",
    )


def logdir_from_args(args: argparse.Namespace, program: str, clock: Clock | None = None) -> None:
    """Give the learners their TensorBoard directory (REACTORFED_LOGDIR, inherited by the
    processes this one starts): ``--logdir``, or with ``clock`` (run, launch) a new
    ``runs/PROGRAM-DATE-TIME``; an environment that already names one keeps it."""
    import os
    import time

    if args.logdir is not None:
        os.environ[LOGDIR_ENV] = str(args.logdir)
    elif clock is not None and LOGDIR_ENV not in os.environ:
        stem = program.rsplit("/", 1)[-1].replace(".py", "").replace(":", "-")
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(clock.now() // 1_000_000_000))
        os.environ[LOGDIR_ENV] = str(Path("runs") / f"{stem}-{stamp}")


def tracer_from_args(args: argparse.Namespace, process: str, clock: Clock, role: str) -> Recorder | None:
    """The recorder the observability flags ask for (None: the run is not traced)."""
    if args.trace is None and args.otlp_endpoint is None:
        return None
    from ..observe.trace import Recorder, trace_path

    path = trace_path(args.trace, process) if args.trace is not None else None
    return Recorder(path, process, clock, role=role, otlp_endpoint=args.otlp_endpoint)


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("execution")
    g.add_argument(
        "--fast",
        action="store_true",
        help="do not wait for physical time: logical time runs as fast as the program can go",
    )
    g.add_argument(
        "--timeout",
        type=duration,
        default=None,
        metavar="DURATION",
        help="stop at start + DURATION of logical time, e.g. 5s, 100ms, 2min (default: run "
        "until nothing is left to do, a reaction requests stop, or Ctrl-C)",
    )
    g.add_argument(
        "--workers",
        type=positive_int,
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
    g.add_argument(
        FLAG,
        type=positive_int,
        default=DEFAULT_THREADS,
        metavar="N",
        help="torch's threads (intra-op and inter-op) and OMP_NUM_THREADS in every process of the run, "
        "whatever the machine's cores: the thread count changes torch's float sums, so one seed gives the "
        f"same weights only with the same N. Recorded in the summary and in learners' checkpoints (default: "
        f"{DEFAULT_THREADS}, the fastest for small models on shared cores; OMP_NUM_THREADS is overridden)",
    )
    g.add_argument(
        ALLOW_FLAG,
        action="store_true",
        help=f"let a learner resume from a checkpoint written with another {FLAG} (refused by default: the "
        "resumed run would not end with the weights of an uninterrupted one)",
    )


def forwarded(parser: argparse.ArgumentParser, args: argparse.Namespace,
              groups: tuple[str, ...] = FORWARDED_GROUPS) -> list[str]:
    """The command line that gives another process the values ``args`` holds for every
    flag of ``parser``'s ``groups`` that differs from its default."""
    out: list[str] = []
    for group in parser._action_groups:
        if group.title not in groups:
            continue
        for action in group._group_actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            value = getattr(args, action.dest, action.default)
            if value is None or value == action.default:
                continue
            flag = action.option_strings[0]
            if action.nargs == 0 and action.const is True:  # store_true: the flag alone
                out.append(flag)
            elif isinstance(value, str):  # a word among numbers (--lead-window none)
                out += [flag, value]
            elif action.metavar == "DURATION":  # parsed to ns; every duration flag says so
                out += [flag, f"{value}ns"]
            else:
                out += [flag, str(value)]
    return out


def add_clock_sync_args(group: Container) -> None:
    """LF's ``clock-sync`` and ``clock-sync-options``, for the RTI and every federate."""
    from ..federation.coordination.clock_sync import CLOCK_SYNC_MODES

    group.add_argument("--clock-sync", choices=CLOCK_SYNC_MODES, default="off",
                       help="synchronize the federates' clocks with the RTI's (LF's clock-sync): init, before the "
                       "start; on, also every --clock-sync-period while running (default: off)")
    group.add_argument("--clock-sync-period", type=duration, default=5_000_000, metavar="DURATION",
                       help="with --clock-sync on: how often each federate's clock is measured (default: 5ms)")
    group.add_argument("--clock-sync-trials", type=positive_int, default=10, metavar="N",
                       help="exchanges per estimate of a federate's clock error (default: 10)")
    group.add_argument("--clock-sync-attenuation", type=positive_int, default=10, metavar="N",
                       help="a runtime estimate corrects the clock by 1/N of the error (default: 10)")
    group.add_argument("--clock-sync-test-offset", type=duration, default=0, metavar="DURATION",
                       help="for testing: offset each federate's clock by (1 + its index) times this, for clock "
                       "synchronization to remove (default: 0)")


# -- what the flags become ---------------------------------------------------------------
def clock_sync_from_args(args: argparse.Namespace) -> ClockSyncOptions:
    from ..federation.process.clock_sync import ClockSyncOptions

    return ClockSyncOptions(mode=args.clock_sync, period_ns=args.clock_sync_period, trials=args.clock_sync_trials,
                            attenuation=args.clock_sync_attenuation, test_offset_ns=args.clock_sync_test_offset)


def threads_from_args(args: argparse.Namespace) -> None:
    """The run's thread count in this process (before the program is imported)."""
    apply_threads(args.threads, allow_change=args.allow_thread_change)


def environment_from_args(args: argparse.Namespace) -> Environment:
    from ..execution.environment import Environment

    return Environment(
        fast=args.fast,
        timeout=args.timeout,
        keepalive=args.keepalive,
        workers=args.workers,
        check_types=args.check_types,
    )


def metrics_from_args(args: argparse.Namespace, env: Environment, labels: dict[str, str]) -> StatusServer | None:
    from ..observe.metrics import serve_metrics
    from .loader import ProgramError

    if args.metrics_port is None:
        return None
    try:
        return serve_metrics(env, args.metrics_port, args.metrics_addr, labels)
    except OSError as e:
        raise ProgramError(f"--metrics-port {args.metrics_port}: cannot listen on {args.metrics_addr}: {e}") from None


class _CliHandler(logging.StreamHandler):
    """The handler :func:`setup_logging` installs (a later call replaces it)."""


def setup_logging(level: str) -> None:
    """Readable logs on stderr: ``12:03:04.123 INFO    reactorfed.cli: message``."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if isinstance(h, _CliHandler):  # ours from an earlier call; leave others be
            root.removeHandler(h)
    handler = _CliHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATEFMT))
    root.addHandler(handler)
    root.setLevel(level.upper())


@contextlib.contextmanager
def stop_on_interrupt(request_stop: Callable[[], None], what: str = "stopping at the next tag") -> Iterator[None]:
    """While inside: the first Ctrl-C (SIGINT) or SIGTERM calls ``request_stop`` (from a
    helper thread, so the scheduler sees a request from outside and wakes up, whatever
    it was waiting for), logging ``what`` it does; a second Ctrl-C raises
    KeyboardInterrupt. (An elastic bank's member passes its request to leave: Kubernetes
    deletes a scaled-down pod with SIGTERM.)"""
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
        log.warning("%s: %s (Ctrl-C again to abort)", signal.Signals(signum).name, what)
        threading.Thread(target=request_stop, name="reactorfed-stop", daemon=True).start()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def print_summary(summary: RunSummary, as_json: bool) -> None:
    """The run's summary on stdout: a line for a person and, after it, one line per
    reactor that reported a result (``reactorfed: result of FQN: {json}``); or all of it
    as one JSON object with ``as_json``."""
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
                    "threads": current_threads(),
                    "results": summary.results,
                },
                default=_jsonable,
            ),
            flush=True,
        )
        return
    threads = current_threads()
    print(f"reactorfed: {summary}" + ("" if threads is None else f"; torch threads {threads}"), flush=True)
    for fqn, values in summary.results.items():
        print(f"reactorfed: result of {fqn}: {json.dumps(values, default=_jsonable)}", flush=True)


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays, and anything else a reactor reports, as JSON can hold it."""
    for conv in ("item", "tolist"):
        f = getattr(value, conv, None)
        if callable(f):
            try:
                return f()
            except (TypeError, ValueError):
                pass
    return str(value)
