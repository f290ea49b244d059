"""The commands that look at a program or at a traced run without running anything:
``reactorfed diagram`` (the program drawn as LF draws it) and ``reactorfed trace``
(``merge``: one trace for Perfetto or Chrome; ``sequence``: LF's federated sequence
diagram)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from .loader import ProgramError, add_program_args, load_program, parse_params

__all__ = ["add_diagram", "add_trace"]

log = logging.getLogger("reactorfed.cli")
_RAW = argparse.RawDescriptionHelpFormatter

DIAGRAM_DESCRIPTION = """\
Draw a program as Lingua Franca draws it, as an SVG file: reactors nested in their
containers, inputs on the left and outputs on the right, reactions in order, timers
and actions, connections with their delays (physical ones dashed), banks as one box
with their width; with --federated, each federate's boundary (main's children).
"""

TRACE_DESCRIPTION = """\
Read the trace files a run wrote with --trace DIR (one per process):

  merge     one trace in the Trace Event Format: open it in Perfetto's UI
            (ui.perfetto.dev, "Open trace file") or Chrome's about:tracing; a
            process track per federate and the RTI, a thread track per thread, a
            slice per reaction, a flow arrow from each message sent to where it
            was received, logical tags as arguments
  sequence  LF's federated sequence diagram as one HTML file: federates and the
            RTI as lifelines, messages, grants and promises as arrows with tags
"""


def add_diagram(sub: Any) -> None:
    p = sub.add_parser("diagram", help="draw a program as an SVG diagram", description=DIAGRAM_DESCRIPTION,
                       formatter_class=_RAW,
                       epilog="example:\n  reactorfed diagram examples/rl/ppo_cartpole.py:Main --federated -o ppo.svg\n")
    add_program_args(p)
    p.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                   help="where to write the SVG (default: stdout)")
    p.add_argument("--federated", action="store_true", help="draw main's children as federates")
    p.set_defaults(func=cmd_diagram)


def cmd_diagram(args: argparse.Namespace) -> int:
    from ..assembly.assemble import assemble
    from ..observe.diagram import program_svg

    svg = program_svg(assemble(load_program(args.program, parse_params(args.params))), federated=args.federated)
    if args.output is None:
        print(svg, end="")
    else:
        args.output.write_text(svg)
        log.info("wrote %s", args.output)
    return 0


def add_trace(sub: Any) -> None:
    p = sub.add_parser("trace", help="merge a traced run's files, or draw its sequence diagram",
                       description=TRACE_DESCRIPTION, formatter_class=_RAW,
                       epilog="examples:\n  reactorfed launch examples/pipeline.py:Main --fast --timeout 1s --trace run\n"
                              "  reactorfed trace merge run -o run.json\n  reactorfed trace sequence run -o run.html\n")
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    for name, helptext, suffix in (("merge", "one trace for Perfetto or Chrome (JSON)", "json"),
                                   ("sequence", "the federated sequence diagram (HTML)", "html")):
        q = what.add_parser(name, help=helptext)
        q.add_argument("directory", type=Path, metavar="DIR", help="the --trace directory of the run")
        q.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                       help=f"where to write it (default: DIR/run.{suffix})")
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    from ..observe.trace import load, write_chrome_trace, write_sequence

    if not args.directory.is_dir():
        raise ProgramError(f"{args.directory} is not a directory")
    try:
        procs = load(args.directory)
    except ValueError as e:
        raise ProgramError(str(e)) from None
    if not procs:
        raise ProgramError(f"{args.directory} holds no trace files (*.rftrace): was the run started with --trace?")
    if args.what == "merge":
        out = args.output or args.directory / "run.json"
        trace = write_chrome_trace(args.directory, out)
        dropped = {n: v["dropped"] for n, v in trace["otherData"]["reactorfed"].items() if v["dropped"]}
        print(f"{out}: {len(trace['traceEvents'])} events from {len(procs)} processes"
              + (f"; records dropped: {dropped}" if dropped else ""))
    else:
        out = args.output or args.directory / "run.html"
        write_sequence(args.directory, out, title=str(args.directory))
        print(f"{out}: the sequence diagram of {len(procs)} processes")
    return 0
