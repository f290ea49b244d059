"""The ``reactorfed`` command line.

Subcommands register themselves in :data:`COMMANDS` (a function that adds its parser
to the subparsers); the flags they share are defined once, in :mod:`reactorfed.cli.options`.
The federation's commands (``rti``, ``federate``, ``launch``) live in
:mod:`reactorfed.cli.launch`, which imports its heavy modules only when one
of them runs: ``reactorfed run --help`` loads no network stack.

Exit codes: 0 the program ran to its end (timeout, starvation or a stop request,
including Ctrl-C); 1 a reaction failed or the runtime refused the program; 2 a usage
error (bad option, program spec or parameter); 130 interrupted hard (Ctrl-C twice).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..errors import ReactorError, ValidationError
from ..time.duration import format_duration
from .loader import ProgramError, add_program_args, load_program, parse_params
from .options import (
    add_execution_args,
    add_logging_args,
    add_metrics_args,
    add_observability_args,
    environment_from_args,
    logdir_from_args,
    metrics_from_args,
    print_summary,
    setup_logging,
    stop_on_interrupt,
    threads_from_args,
    tracer_from_args,
)

__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main", "run_parsed"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

log = logging.getLogger("reactorfed.cli")

_Formatter = argparse.RawDescriptionHelpFormatter

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
  reactorfed run examples/rl/ppo_cartpole.py:Main --fast --threads 2 -p resume=true
      two torch threads; a checkpoint written with another count is refused
      (--allow-thread-change resumes anyway)

exit codes: 0 ran to its end (timeout, starvation, stop request, Ctrl-C);
            1 a reaction failed or the program was refused (e.g. a causality loop);
            2 usage error (bad option, program or parameter); 130 aborted.
"""


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
    add_observability_args(p)
    g = p.add_argument_group("output")
    add_logging_args(g)
    g.add_argument("--json", action="store_true", help="print the summary as one JSON line on stdout")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    threads_from_args(args)
    main = load_program(args.program, parse_params(args.params))
    env = environment_from_args(args)
    logdir_from_args(args, args.program, env.clock)
    env.tracer = tracer = tracer_from_args(args, main.name, env.clock, "program")
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
        if tracer is not None:
            tracer.close()
    print_summary(summary, args.json)
    return EXIT_OK


#: Each adds one subcommand to the subparsers (``set_defaults(func=...)`` returning the
#: exit code). ``rti``, ``federate`` and ``launch`` go here beside ``run``.
COMMANDS: list[Callable[[Any], None]] = [_add_run]


def _federation_commands() -> list[Callable[[Any], None]]:
    from .inspect import add_diagram, add_federates, add_layout, add_trace
    from .launch import add_federate, add_launch, add_rti

    return [add_launch, add_rti, add_federate, add_federates, add_layout, add_diagram, add_trace]


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
    if argv is None:
        atexit.register(_quiet_end)  # (first registered, so the last to run)
    parser = build_parser()
    try:
        code = _exit_code[0] = run_parsed(parser, parser.parse_args(argv))
    except SystemExit as e:  # (usage errors, --help): its code, for _quiet_end
        _exit_code[0] = e.code if isinstance(e.code, int) else 1
        raise
    except BaseException:
        _exit_code[0] = 1
        raise
    if argv is None:  # the process's own command line: it ends now
        # What it built (torch's modules, the program's state) needs no cyclic collection on
        # the way out: the interpreter's last collection took seconds under load (a member
        # that left a federation exited 2.5-4 s after its leave, in gc_collect_main). Objects
        # frozen now are still released; only their cycles are not searched. Files, sockets
        # and shared memory are closed explicitly before this, and atexit handlers still run.
        gc.freeze()
    return code


_exit_code = [0]


def _quiet_end() -> None:
    """The process's last step when torch loaded triton: end without the interpreter's
    final teardown, where triton's bindings (nanobind) print dozens of "leaked instance"
    lines about their own module objects, on every process that imported torch (the RTI
    and the launcher included): noise, not a fault of the program. Every other atexit
    handler has run; files, sockets and shared memory were closed explicitly before."""
    if "triton" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(_exit_code[0])


def run_parsed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the command ``args`` were parsed for (by ``parser``) and map errors to exit
    codes. Split from :func:`main` so that the fork server parses with a parser it built
    once, before forking, and can hand a command what it prepared (``args.preloaded``)."""
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    setup_logging(getattr(args, "log_level", "info"))
    try:
        return int(args.func(args))
    except ProgramError as e:
        parser.exit(EXIT_USAGE, f"reactorfed {args.command}: error: {e}\n")
    except ReactorError as e:
        # A reaction failed (its traceback is the cause, unless it refused a user's mistake
        # with a message of its own) or assembly refused the program.
        cause = e.__cause__
        if cause is not None and not isinstance(cause, ValidationError):
            traceback.print_exception(cause, file=sys.stderr)
        log.error("%s", e)
        return EXIT_FAILED
    except KeyboardInterrupt:
        log.error("aborted")
        return EXIT_INTERRUPTED
    return EXIT_OK  # unreachable (parser.exit raises), for type checkers


if __name__ == "__main__":
    sys.exit(main())
