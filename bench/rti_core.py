"""The RTI's grant computation alone (RtiCore: no sockets, no processes), CPU per report
against the number of federates N, for the three shapes of ``bench/scale.py``.

    python -m bench.rti_core                          # every shape, N = 8, 32, 128; 5 runs
    python -m bench.rti_core --quick                  # N = 8, 32; 1 run; every line still
    python -m bench.rti_core --shapes chain --federates 8,32,128,256
    python -m bench.rti_core --against HEAD~3         # beside an older rti_core.py
    PYTHONPATH=/tmp/wt/runtime python -m bench.rti_core   # the core of a worktree (from the repo root)

The reports of ``bench/scale_programs.py``'s programs (their layouts, built from them), one
round a tag, as FederateCore makes them (cumulative counts, the earliest tag sent since
the last report):

* ``chain``: a source, N - 2 relays and a sink in a line, zero-delay links. At tag k the
  source reports completing k (next event k + 1) having sent k + 1 messages on; then each
  relay and the sink, in line order, report completing k having received them and (the
  relays) sent theirs (next event FOREVER: they wait for input);
* ``fan-in``: N - 1 sources, each reporting as the chain's source, then the sink;
* ``loop``: a driver (the learner) and N - 1 workers (samplers), the driver broadcasting
  each round without delay and the workers answering after 0. Round k is at microstep k:
  the driver reports completing it (next event FOREVER: it waits for answers) having sent
  the round to every worker and received the k answers before; then each worker reports
  completing it having received the round and answered.

Two ways the RTI server meets them:

* ``per report``: the grants of each report computed on its own (a server that never
  finds two reports waiting);
* ``per batch``: as a backlog gives them (``regrant=False`` and one ``regrant``, as the
  server does): the loop's driver alone, then its N - 1 workers in one batch; the chain's
  and the fan-in's N reports of a tag in one batch.

Reported: CPU (``time.process_time``) per report, in us (and per tag, in ms), the least of
``--runs`` (the least is the figure least disturbed by a busy machine: CPU time only
grows with what else runs); each run takes rounds until it has used ``--min-cpu``
seconds, timing blocks of rounds whose reports were built beforehand. One line per
shape and N: per report against per batch. With ``--against REV``, the RtiCore of that
git revision is loaded from ``git show`` beside the current package (with its parts: the
rest of ``coordination/`` at that revision, :func:`load_rti`) and run alternately with
the current one, one line per shape, N and mode; both must make the same grants, round
by round (checked). Results:
``bench/results/rti_core.{jsonl,png}``.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Results, base_parser, federates_axis, progress, pyplot, save_figure
from bench.scale_programs import STEP, Chain, FanIn, Loop
from reactorfed.federation import Layout, layout_of
from reactorfed.federation.coordination import RtiCore
from reactorfed.time import FOREVER_T

ROOT = Path(__file__).resolve().parent.parent
START = 1_000_000_000
MODES = ("per report", "per batch")
SHAPES = ("chain", "fan-in", "loop")
#: rounds whose reports are built before their block is timed
BLOCK = 16

#: a report: (federate, LTC, NET, sent, received)
Report = tuple[int, tuple[int, int], tuple[int, int], dict[int, list[int]], dict[int, int]]
#: a round's reports in the batches a backlog gives them
Round = list[list[Report]]


def load_rti(rev: str) -> type[Any]:
    """The RtiCore class as it was at ``rev``, imported beside the current one, with the
    rest of its package ``coordination/`` as it was then (the core composes parts of that
    package: one revision's core does not run on another's parts); what that package
    imports from outside it (tag, wire) resolves to the current modules. Before the
    federation package was layered it was ``federation/rti.py`` and imported ``.layout``
    beside it."""
    new = "runtime/reactorfed/federation/coordination"
    ls = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{new}"], cwd=ROOT, capture_output=True, text=True)
    files = ls.stdout.split() if ls.returncode == 0 else []
    if "rti_core.py" in files:
        tmp = Path(tempfile.mkdtemp(prefix="rti_core-"))
        atexit.register(shutil.rmtree, tmp, True)
        (tmp / "__init__.py").write_text("")
        for f in files:
            if f.endswith(".py") and f != "__init__.py":
                show = subprocess.run(["git", "show", f"{rev}:{new}/{f}"], cwd=ROOT, check=True, capture_output=True,
                                      text=True)
                (tmp / f).write_text(show.stdout)
        # beside the current coordination package, so that its ``..`` and ``...`` are the same
        package = "reactorfed.federation._coordination_" + re.sub(r"\W", "_", rev)
        spec = importlib.util.spec_from_file_location(package, tmp / "__init__.py", submodule_search_locations=[str(tmp)])
        assert spec is not None and spec.loader is not None
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[package] = pkg
        spec.loader.exec_module(pkg)
        core: type[Any] = importlib.import_module(f"{package}.rti_core").RtiCore
        return core
    show = subprocess.run(["git", "show", f"{rev}:runtime/reactorfed/federation/rti.py"], cwd=ROOT,
                          check=True, capture_output=True, text=True)
    package = "reactorfed.federation"
    sys.modules.setdefault("reactorfed.federation.layout", sys.modules[Layout.__module__])
    name = f"{package}._rti_" + re.sub(r"\W", "_", rev)
    mod = types.ModuleType(name)
    mod.__package__ = package
    sys.modules[name] = mod  # dataclasses look their module up
    exec(compile(show.stdout, f"{rev}:rti.py", "exec"), mod.__dict__)
    old: type[Any] = mod.RtiCore
    return old


def _tag(k: int) -> tuple[int, int]:
    return (START + k * STEP, 0)


def rounds_of(shape: str, n: int) -> tuple[Layout, Callable[[int], Round]]:
    """The layout of ``shape`` with N federates, and the reports of its round k."""
    forever = FOREVER_T
    if shape == "chain":
        layout = layout_of(Chain(federates=n))
        line = [layout.index("source"), *(layout.index(f"relays[{i}]") for i in range(n - 2)), layout.index("sink")]

        def chain(k: int) -> Round:
            t = _tag(k)
            reps: list[Report] = [(line[0], t, _tag(k + 1), {line[1]: [k + 1, *t]}, {})]
            for i in range(1, n):
                sent = {line[i + 1]: [k + 1, *t]} if i + 1 < n else {}
                reps.append((line[i], t, forever, sent, {line[i - 1]: k + 1}))
            return [reps]
        return layout, chain
    if shape == "fan-in":
        layout = layout_of(FanIn(federates=n))
        sink = layout.index("sink")
        sources = [layout.index(f"sources[{i}]") for i in range(n - 1)]

        def fan_in(k: int) -> Round:
            t = _tag(k)
            reps: list[Report] = [(s, t, _tag(k + 1), {sink: [k + 1, *t]}, {}) for s in sources]
            reps.append((sink, t, forever, {}, dict.fromkeys(sources, k + 1)))
            return [reps]
        return layout, fan_in
    if shape == "loop":
        layout = layout_of(Loop(federates=n))
        driver = layout.index("driver")
        workers = [i for i in range(n) if i != driver]

        def loop(k: int) -> Round:
            first: list[Report] = [(driver, (START, k), forever, {i: [k + 1, START, k] for i in workers},
                                    dict.fromkeys(workers, k))]
            return [first, [(i, (START, k), forever, {driver: [k + 1, START, k + 1]}, {driver: k + 1})
                            for i in workers]]
        return layout, loop
    raise SystemExit(f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")


def _grants(gs: list[Any]) -> list[tuple[Any, ...]]:
    return [(g.federate, g.tag, g.provisional, list(g.counts.items())) for g in gs]


def run(core_class: type[Any], layout: Layout, round_of: Callable[[int], Round], mode: str,
        min_cpu: float) -> tuple[float, int, list[Any]]:
    """One run: CPU seconds per round, reports per round, and the grants of each round."""
    batched = mode == "per batch"
    core = core_class(layout)
    core.start(START)
    made: list[Any] = []
    cpu = 0.0
    k = 0
    while cpu < min_cpu:
        block = [round_of(k + i) for i in range(BLOCK)]
        outs: list[list[Any]] = []
        t0 = time.process_time()
        for rnd in block:
            out: list[Any] = []
            for batch in rnd:
                for f, ltc, net, sent, received in batch:
                    out += core.on_ltc(f, ltc, net, sent, received, regrant=not batched)
                if batched:
                    out += core.regrant([r[0] for r in batch])
            outs.append(out)
        cpu += time.process_time() - t0
        made += [_grants(out) for out in outs]
        k += BLOCK
    return cpu / k, sum(map(len, block[0])), made


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    p.add_argument("--federates", default=None, help="comma-separated N (default 8,32,128; 8,32 with --quick)")
    p.add_argument("--against", default=None, help="git revision of an RtiCore to run beside the current one")
    p.add_argument("--min-cpu", type=float, default=None, help="CPU seconds per run (default 0.5; 0.05 with --quick)")
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    p.set_defaults(runs=5)
    args = p.parse_args(argv)
    ns = [int(x) for x in (args.federates or ("8,32" if args.quick else "8,32,128")).split(",")]
    runs = 1 if args.quick else args.runs
    min_cpu = args.min_cpu or (0.05 if args.quick else 0.5)
    modes = args.modes.split(",")
    impls: dict[str, type[Any]] = {"current": RtiCore}
    if args.against:
        impls[args.against] = load_rti(args.against)
    progress(f"RtiCore from {Path(inspect.getfile(RtiCore)).resolve()}")
    res = Results("rti_core", args.out)
    for shape in args.shapes.split(","):
        for n in ns:
            layout, round_of = rounds_of(shape, n)
            best: dict[tuple[str, str], float] = {}
            per_round = 0
            for mode in modes:
                per_tag: dict[str, list[float]] = {name: [] for name in impls}
                made: dict[str, list[Any]] = {}
                for i in range(runs):
                    for name, core_class in impls.items():  # alternately, so a noisy moment hits both alike
                        cpu, per_round, rounds = run(core_class, layout, round_of, mode, min_cpu)
                        per_tag[name].append(cpu)
                        if len(rounds) > len(made.get(name, [])):
                            made[name] = rounds
                        progress(f"{shape} N={n} {mode} {name} run {i + 1}: {cpu * 1e6 / per_round:.2f} us/report "
                                 f"over {len(rounds)} tags")
                ours = made["current"]
                if args.against:
                    theirs = made[args.against]
                    common = min(len(ours), len(theirs))
                    if ours[:common] != theirs[:common]:
                        raise SystemExit(f"{shape} N={n} {mode}: the grants differ from {args.against}'s")
                    us = {name: min(v) * 1e6 / per_round for name, v in per_tag.items()}
                    res.add(f"{shape} N={n} {mode}", "rti_cpu_us_per_report", us["current"],
                            f"rti_core.py@{args.against}", us[args.against], "lower", runs, shape=shape,
                            federates=n, mode=mode, reports_per_tag=per_round,
                            ms_per_tag=round(min(per_tag["current"]) * 1e3, 4),
                            peer_ms_per_tag=round(min(per_tag[args.against]) * 1e3, 4),
                            grants_per_tag=round(sum(map(len, ours)) / len(ours), 2), tags_compared=common,
                            judged=False, why="the RTI core's own cost against an earlier version of it")
                for name, v in per_tag.items():
                    best[(name, mode)] = min(v)
            if not args.against and len(modes) == 2:
                rep, bat = best[("current", MODES[0])], best[("current", MODES[1])]
                res.add(f"{shape} N={n}", "rti_cpu_us_per_report", rep * 1e6 / per_round, MODES[1],
                        bat * 1e6 / per_round, "lower", runs, shape=shape, federates=n, reports_per_tag=per_round,
                        ms_per_tag=round(rep * 1e3, 4), ms_per_tag_per_batch=round(bat * 1e3, 4),
                        judged=False, why="the RTI core's own cost: each report's grants on their own, against "
                                          "a batch's at once")
    path = res.write()
    pic = plot(res.rows, args.out)
    progress(f"wrote {path}" + (f" and {pic}" if pic else ""))
    return res


def plot(rows: list[dict[str, Any]], out: Path) -> Path | None:
    """CPU per report against N, a panel per shape."""
    plt = pyplot()
    if plt is None or not rows:
        return None
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    fig, axes = plt.subplots(1, len(shapes), figsize=(5 * len(shapes), 4), squeeze=False)
    for ax, shape in zip(axes[0], shapes, strict=True):
        mine = [r for r in rows if r["shape"] == shape]
        for mode in dict.fromkeys(r.get("mode") for r in mine):
            pts = [r for r in mine if r.get("mode") == mode]
            xs = [r["federates"] for r in pts]
            # one line per mode (against a revision), or per report against per batch
            ours, peer = (f"current, {mode}", f"{pts[0]['peer']}, {mode}") if mode else (MODES[0], MODES[1])
            ax.plot(xs, [r["reactorfed"] for r in pts], marker="o", label=ours)
            ax.plot(xs, [r["peer_value"] for r in pts], marker="o", linestyle="--", label=peer)
        federates_axis(ax)
        values = [v for r in mine for v in (r["reactorfed"], r["peer_value"]) if v > 0]
        if values and max(values) / min(values) > 10:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_ylabel("RTI core CPU per report (us)")
        ax.set_title(shape)
        ax.legend(fontsize=8)
    return save_figure(plt, fig, out, "rti_core.png")


if __name__ == "__main__":
    main()
