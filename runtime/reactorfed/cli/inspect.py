"""The commands that look at a program or at a traced run without running anything:
``reactorfed diagram`` (the program drawn as LF draws it), ``reactorfed federates`` (what
the program's federates are, for the operator to check its federate groups against) and
``reactorfed layout`` (the federation as an RTI needs it: ``reactorfed rti --layout``) and
``reactorfed trace`` (``merge``: one trace for Perfetto or Chrome; ``sequence``: LF's
federated sequence diagram)."""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import re
from pathlib import Path
from typing import Any

from ..errors import ReactorError
from .loader import (
    ProgramError,
    add_program_args,
    load_program,
    parse_params,
    program_params,
    resolve_spec,
)

__all__ = ["add_diagram", "add_federates", "add_layout", "add_trace", "describe_federates"]

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


LAYOUT_DESCRIPTION = """\
Write the federation a program declares as an RTI needs it, for `reactorfed rti
--layout FILE`: its federates, the links between them with their delays, its
elastic banks, its digest (the RTI admits only federates that run the same
program and parameters) and its drawing for the RTI's live page. That RTI then
imports neither the program nor what the program imports (torch, gymnasium).
"""


def add_layout(sub: Any) -> None:
    p = sub.add_parser("layout", help="write the federation's layout for `reactorfed rti --layout`",
                       description=LAYOUT_DESCRIPTION, formatter_class=_RAW,
                       epilog="example:\n  reactorfed layout examples/rl/dqn_cartpole.py:Main -o dqn.layout.json\n"
                              "  REACTORFED_SECRET=s3cret reactorfed rti --layout dqn.layout.json --port 15045\n")
    add_program_args(p)
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="where to write it (JSON)")
    p.add_argument("--no-diagram", action="store_true", help="leave the drawing out (the live page shows none)")
    p.set_defaults(func=cmd_layout)


def cmd_layout(args: argparse.Namespace) -> int:
    from ..federation.process.layout_file import LayoutFile

    served = LayoutFile.of(load_program(args.program, parse_params(args.params)), diagram=not args.no_diagram)
    try:
        served.write(args.output)
    except OSError as e:
        raise ProgramError(f"--output {args.output}: {e}") from None
    log.info("layout of %s (%d federates, digest %s) written to %s", args.program, len(served.layout.names),
             served.layout.digest, args.output)
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
        write_sequence(args.directory, out, title=args.directory.resolve().name)
        print(f"{out}: the sequence diagram of {len(procs)} processes")
    return 0


FEDERATES_DESCRIPTION = """\
Print the program's federates (main's children, each bank member on its own) and its
banks: their width, the parameter that sets the width (found by building the program
with that parameter one larger: null when the width is fixed in code) and, for an
elastic bank, its bounds. With --json, one JSON object (what the Kubernetes operator
reads to check a ReactorFederation's federate groups against the program):

  {"program": "...", "federates": [{"name": "learner", "bank": null},
   {"name": "samplers[0]", "bank": "samplers", "index": 0}, ...],
   "banks": [{"name": "samplers", "width": 2, "width_param": "num_samplers",
              "elastic": {"min": 1, "max": 8} or null}]}
"""


def add_federates(sub: Any) -> None:
    p = sub.add_parser("federates", help="list the program's federates and banks", description=FEDERATES_DESCRIPTION,
                       formatter_class=_RAW)
    add_program_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--output", type=Path, metavar="FILE",
                   help="also write the JSON object to FILE (the operator's discovery pod writes its "
                        "termination message, /dev/termination-log)")
    p.set_defaults(func=cmd_federates)


def cmd_federates(args: argparse.Namespace) -> int:
    answer = describe_federates(args.program, parse_params(args.params))
    if args.output is not None:
        args.output.write_text(json.dumps(answer))
    if args.json:
        print(json.dumps(answer))
        return 0
    for f in answer["federates"]:
        print(f["name"])
    for b in answer["banks"]:
        el = f", elastic {b['elastic']['min']}..{b['elastic']['max']}" if b["elastic"] else ""
        print(f"bank {b['name']}: width {b['width']} (set by {b['width_param'] or 'the program itself'}{el})")
    return 0


_MEMBER = re.compile(r"^(.+)\[([0-9]+)\]$")


def _shape(main: Any) -> tuple[list[str], dict[str, int]]:
    """main's federates that are not bank members, and each bank's member count."""
    singles: list[str] = []
    banks: dict[str, int] = {}
    for child in main.children:
        m = _MEMBER.match(child.name)
        if m is None:
            singles.append(child.name)
        else:
            banks[m[1]] = banks.get(m[1], 0) + 1
    return singles, banks


def describe_federates(spec: str, params: dict[str, str]) -> dict[str, Any]:
    """What ``reactorfed federates --json`` prints for ``spec`` with ``params``."""
    from ..model.elastic import elastic_banks, elastic_width

    main = load_program(spec, params)
    _singles, banks = _shape(main)
    elastic = {name: elastic_width(b) for name, b in elastic_banks(main).items()}
    ints = {n: p for n, p in program_params(resolve_spec(spec)).items()
            if p.annotation is int or (p.annotation is inspect.Parameter.empty and type(p.default) is int)}
    out_banks = []
    for name, width in banks.items():
        el = elastic.get(name)
        param = None if el is not None else _width_param(spec, params, ints, name, width)
        out_banks.append({"name": name, "width": width, "width_param": param,
                          "elastic": {"min": el.min, "max": el.max} if el is not None else None})
    federates: list[dict[str, Any]] = []
    for child in main.children:
        m = _MEMBER.match(child.name)
        federates.append({"name": child.name, "bank": None} if m is None
                         else {"name": child.name, "bank": m[1], "index": int(m[2])})
    return {"program": spec, "federates": federates, "banks": out_banks}


def _width_param(spec: str, params: dict[str, str], ints: dict[str, inspect.Parameter], bank: str,
                 width: int) -> str | None:
    """The integer parameter that sets ``bank``'s width: one whose value is the width and
    that, one larger, makes the bank one wider (None: the program fixes it)."""
    for name, p in ints.items():
        try:
            if int(params.get(name, p.default)) != width:
                continue
        except (TypeError, ValueError):
            continue
        for other in (width + 1, width - 1):  # (one wider may be refused: a bound, a ratio)
            if other < 1:
                continue
            try:
                probe = load_program(spec, {**params, name: str(other)})
            except (ProgramError, TypeError, ValueError, ReactorError):
                continue
            if _shape(probe)[1].get(bank) == other:
                return name
    return None
