"""The RTI's grant computation alone (RtiCore: no sockets, no processes), CPU per tag
against the number of samplers N.

    python -m bench.rti_core                          # N = 8, 32, 128; 3 runs each
    python -m bench.rti_core --quick                  # N = 8, 32; 1 run
    python -m bench.rti_core --samplers 8,64 --against HEAD~3

The reports of ``bench/scale_programs.py``'s Loop (its layout, built from the program): a
learner (the driver) and N samplers (the workers), the learner broadcasting each round
without delay and the samplers answering after 0. Round k is at microstep k: the learner
reports completing it (LTC, next event FOREVER: it waits for answers) having sent the
round to every sampler and received the k answers before; then each sampler reports
completing it having received the round and answered. Counts and tags as FederateCore
reports them (cumulative counts, the earliest tag sent since the last report). Two ways
the RTI server meets them:

* ``per report``: the grants of each report computed on its own (a server that never
  finds two reports waiting; every report of the issue-18 measurement);
* ``per batch``: the learner's report alone, then the N samplers' reports in one batch
  (``regrant=False`` and one ``regrant``, as the server does with a backlog).

Reported: CPU (``time.process_time``) per tag, in ms, the median of ``--runs``; each run
takes rounds until it has used ``--min-cpu`` seconds. The peer is the RtiCore of the git
revision ``--against`` (default: the one before issue 18), loaded from ``git show`` into
the current package and run alternately with it; both must make the same grants, round by
round (checked). Results: ``bench/results/rti_core.jsonl``.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from bench.common import Results, base_parser, progress
from bench.scale_programs import Loop
from reactorfed.federation.coordination import rti_core as rti
from reactorfed.federation.coordination.layout import Layout
from reactorfed.federation.process.runner import layout_of

ROOT = Path(__file__).resolve().parent.parent
#: the last commit before issue 18 made the grant computation incremental
BEFORE = "2e9bb52"
START = 1_000_000_000
MODES = ("per report", "per batch")


def load_rti(rev: str) -> types.ModuleType:
    """The RTI core as it was at ``rev``, imported beside the current one (its relative
    imports resolve to the current package: tag, layout). Before the federation package
    was layered it was ``federation/rti.py`` and imported ``.layout`` beside it."""
    new = "runtime/reactorfed/federation/coordination/rti_core.py"
    show = subprocess.run(["git", "show", f"{rev}:{new}"], cwd=ROOT, capture_output=True, text=True)
    package = "reactorfed.federation.coordination"
    if show.returncode != 0:
        show = subprocess.run(["git", "show", f"{rev}:runtime/reactorfed/federation/rti.py"], cwd=ROOT,
                              check=True, capture_output=True, text=True)
        package = "reactorfed.federation"
        sys.modules.setdefault("reactorfed.federation.layout", sys.modules[Layout.__module__])
    src = show.stdout
    name = f"{package}._rti_" + re.sub(r"\W", "_", rev)
    mod = types.ModuleType(name)
    mod.__package__ = package
    sys.modules[name] = mod  # dataclasses look their module up
    exec(compile(src, f"{rev}:rti.py", "exec"), mod.__dict__)
    return mod


def _grants(gs: list[Any]) -> list[tuple[Any, ...]]:
    return [(g.federate, g.tag, g.provisional, list(g.counts.items())) for g in gs]


def run(mod: types.ModuleType, layout: Layout, mode: str, min_cpu: float) -> tuple[float, list[Any]]:
    """One run: CPU seconds per round, and the grants of each round."""
    learner = layout.index("driver")
    samplers = [i for i in range(len(layout.names)) if i != learner]
    forever = rti.FOREVER_T
    batched = mode == "per batch"
    core = mod.RtiCore(layout)
    core.start(START)
    rounds: list[Any] = []
    cpu = 0.0
    k = 0
    while cpu < min_cpu:
        t0 = time.process_time()
        out = core.on_ltc(learner, (START, k), forever, {i: [k + 1, START, k] for i in samplers},
                          dict.fromkeys(samplers, k), regrant=not batched)
        if batched:
            out += core.regrant((learner,))
        for i in samplers:
            out += core.on_ltc(i, (START, k), forever, {learner: [k + 1, START, k + 1]}, {learner: k + 1},
                               regrant=not batched)
        if batched:
            out += core.regrant(samplers)
        cpu += time.process_time() - t0
        rounds.append(_grants(out))
        k += 1
    return cpu / k, rounds


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--samplers", default=None, help="comma-separated N (default 8,32,128; 8,32 with --quick)")
    p.add_argument("--against", default=BEFORE, help=f"git revision of the peer rti.py (default {BEFORE})")
    p.add_argument("--min-cpu", type=float, default=None, help="CPU seconds per run (default 0.5; 0.1 with --quick)")
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    args = p.parse_args(argv)
    ns = [int(x) for x in (args.samplers or ("8,32" if args.quick else "8,32,128")).split(",")]
    runs = 1 if args.quick else args.runs
    min_cpu = args.min_cpu or (0.1 if args.quick else 0.5)
    impls = {"current": rti, args.against: load_rti(args.against)}
    res = Results("rti_core", args.out)
    for n in ns:
        layout = layout_of(Loop(federates=n + 1))
        for mode in args.modes.split(","):
            per_tag: dict[str, list[float]] = {name: [] for name in impls}
            made: dict[str, list[Any]] = {}
            for i in range(runs):
                for name, mod in impls.items():  # alternately, so a noisy moment hits both alike
                    cpu, rounds = run(mod, layout, mode, min_cpu)
                    per_tag[name].append(cpu * 1e3)
                    if len(rounds) > len(made.get(name, [])):
                        made[name] = rounds
                    progress(f"N={n} {mode} {name} run {i + 1}: {cpu * 1e3:.3f} ms/tag over {len(rounds)} tags")
            ours, theirs = made["current"], made[args.against]
            common = min(len(ours), len(theirs))
            if ours[:common] != theirs[:common]:
                raise SystemExit(f"N={n} {mode}: the grants differ from {args.against}'s")
            med = {name: statistics.median(v) for name, v in per_tag.items()}
            res.add(f"hub N={n} {mode}", "rti_cpu_ms_per_tag", med["current"], f"rti.py@{args.against}",
                    med[args.against], "lower", runs, samplers=n, mode=mode,
                    grants_per_tag=round(sum(map(len, ours)) / len(ours), 2), tags_compared=common)
    path = res.write()
    progress(f"wrote {path}")
    return res


if __name__ == "__main__":
    main()
