"""Coordination cost against federate count: how far one RTI goes.

    python -m bench.scale                 # N = 2 .. 256, 3 runs each (long: ~1 h)
    python -m bench.scale --quick         # N = 2, 4, 8, one run
    python -m bench.scale --shapes loop --federates 2,16,64

Three shapes of N federates (``bench/scale_programs.py``): a fan-in of N - 1 sources
into one sink, a chain of N, and a zero-delay closed loop of a driver and N - 1 workers
(the shape of synchronous RL). Each runs under ``reactorfed launch --fast`` twice: with
peer grants (federates advance on their upstream peers' promises; the default) and
with the RTI's grants only (``--no-peer-grants``). Reported per case: tags per second
(from the federation's start to the last tag, measured inside the program), the RTI's
CPU per tag, and the federates' CPU per tag (mean and the busiest), each from the
processes' own run summaries. The peer of a row is the same case under RTI grants
only, so ``ratio`` says what peer grants buy. Results: ``bench/results/scale.jsonl``
and ``scale.png`` (the curves against N).

The federations run with the product's default failure detection (ZeroMQ's heartbeats,
3 s): a run that raised a false alarm fails the benchmark instead of being hidden by a
longer timeout.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import (
    Results,
    base_parser,
    federates_axis,
    progress,
    pyplot,
    save_figure,
    wait_quiet,
)
from bench.rf_runner import cpu_by_process, results_by_reactor

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = "bench/scale_programs.py"
SHAPE_CLASSES = {"fan-in": "FanIn", "chain": "Chain", "loop": "Loop"}
MODES = {"peer grants": [], "RTI grants": ["--no-peer-grants"]}

_RTI_CPU = re.compile(r"^\[rti\] RTI: .* in [\d.]+ s wall, (?P<cpu>[\d.]+) s CPU", re.MULTILINE)


def run_case(shape: str, federates: int, tags: int, mode: str, timeout_s: float) -> dict[str, float]:
    """One launch; the figures of its run."""
    cmd = [sys.executable, "-m", "reactorfed", "launch", f"{PROGRAM}:{SHAPE_CLASSES[shape]}", "--fast",
           "--no-progress", "-p", f"federates={federates}", "-p", f"tags={tags}",
           *MODES[mode]]
    wait_quiet()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout_s,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    reported = list(results_by_reactor(proc.stdout).values())
    rti = _RTI_CPU.search(proc.stdout)
    if proc.returncode != 0 or len(reported) != 1 or rti is None:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{tail}")
    r = reported[0]
    if r["tags"] != tags:
        raise RuntimeError(f"{shape} N={federates}: {r['tags']} tags done, {tags} asked")
    cpus = cpu_by_process(proc.stdout)  # every federate's run summary (the RTI prints its own kind)
    if len(cpus) != federates:
        raise RuntimeError(f"{shape} N={federates}: {len(cpus)} federate summaries, {federates} expected")
    return {
        "tags_per_s": tags / r["seconds"],
        "rti_cpu_us_per_tag": float(rti["cpu"]) * 1e6 / tags,
        "federate_cpu_us_per_tag": statistics.mean(cpus.values()) * 1e6 / tags,
        "busiest_federate_cpu_us_per_tag": max(cpus.values()) * 1e6 / tags,
    }


def plot(rows: list[dict[str, Any]], out: Path) -> Path | None:
    """Tags/s and the RTI's CPU per tag against N, one line per shape and grant mode."""
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    for shape in SHAPE_CLASSES:
        part = sorted((r for r in rows if r["shape"] == shape), key=lambda r: r["federates"])
        if not part:
            continue
        ns = [r["federates"] for r in part]
        for ax, key, peer_key in ((axes[0], "reactorfed", "peer_value"),
                                  (axes[1], "rti_cpu_us_per_tag", "rti_cpu_us_per_tag_rti_grants"),
                                  (axes[2], "federate_cpu_us_per_tag", "federate_cpu_us_per_tag_rti_grants")):
            ax.plot(ns, [r[key] for r in part], marker="o", label=f"{shape}, peer grants")
            ax.plot(ns, [r[peer_key] for r in part], marker="x", linestyle="--", label=f"{shape}, RTI grants")
    for ax, title in zip(axes, ("tags per second", "RTI CPU per tag (us)", "mean federate CPU per tag (us)"),
                         strict=True):
        federates_axis(ax)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("coordination cost against federate count (reactorfed launch --fast, one machine)")
    return save_figure(plt, fig, out, "scale.png")


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--shapes", default=",".join(SHAPE_CLASSES), help="comma-separated: fan-in, chain, loop")
    p.add_argument("--federates", default=None, help="comma-separated N (default 2,4,...,256; 2,4,8 with --quick)")
    p.add_argument("--tags", type=int, default=None, help="tags per run (default 2000; 300 with --quick)")
    args = p.parse_args(argv)
    ns = [int(x) for x in (args.federates or ("2,4,8" if args.quick else "2,4,8,16,32,64,128,256")).split(",")]
    tags = args.tags or (300 if args.quick else 2000)
    runs = 1 if args.quick else args.runs
    res = Results("scale", args.out)
    for shape in args.shapes.split(","):
        for n in ns:
            samples: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
            for i in range(runs):
                for mode in MODES:  # interleaved, so a noisy moment hits both alike
                    samples[mode].append(run_case(shape, n, tags, mode, timeout_s=900))
                    s = samples[mode][-1]
                    progress(f"{shape} N={n} {mode} run {i + 1}: {s['tags_per_s']:,.0f} tags/s, RTI "
                             f"{s['rti_cpu_us_per_tag']:.1f} us/tag, federates {s['federate_cpu_us_per_tag']:.1f} us/tag")
            med = {m: {k: statistics.median(x[k] for x in samples[m]) for k in samples[m][0]} for m in MODES}
            peer, rti = med["peer grants"], med["RTI grants"]
            res.add(f"{shape} N={n}", "tags_per_s", peer["tags_per_s"], "rti-grants", rti["tags_per_s"], "higher",
                    runs, shape=shape, federates=n, tags=tags,
                    rti_cpu_us_per_tag=round(peer["rti_cpu_us_per_tag"], 2),
                    rti_cpu_us_per_tag_rti_grants=round(rti["rti_cpu_us_per_tag"], 2),
                    federate_cpu_us_per_tag=round(peer["federate_cpu_us_per_tag"], 2),
                    federate_cpu_us_per_tag_rti_grants=round(rti["federate_cpu_us_per_tag"], 2),
                    busiest_federate_cpu_us_per_tag=round(peer["busiest_federate_cpu_us_per_tag"], 2))
    path = res.write()
    pic = plot(res.rows, args.out)
    progress(f"wrote {path}" + (f" and {pic}" if pic else ""))
    return res


if __name__ == "__main__":
    main()
