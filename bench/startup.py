"""Start-up at scale: how long ``reactorfed launch`` takes until N federates have joined.

    python -m bench.startup                      # N = 16, 64, 128, 256; 3 runs each
    python -m bench.startup --federates 128 --runs 5

Each run launches ``examples/pipeline.py`` with N - 2 sensors (N federates: the sensors,
a filter and a logger) for 1 ms of logical time, and reads from the RTI's log when it
listened and when the last federate joined. Two figures per run: from the launcher's
start to all joined (what a user waits for), and from the RTI listening to all joined
(the federates' part). The peer, in the same run: the same launch with
``--no-fork-server``, every federate a fresh interpreter that imports everything again
(up to ``--spawn-max`` federates; beyond, it takes tens of seconds and is not measured;
the row then compares against the 2 s that issue 18 set for 128 federates). JSON lines
(``bench/results/startup.jsonl``) and a plot of the curve (``startup.png``).
"""

from __future__ import annotations

import datetime
import re
import statistics
import subprocess
import sys
import time
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

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0  # issue 18: 128 federates joined in under 2 s on this machine
_STAMP = re.compile(r"(\d\d):(\d\d):(\d\d\.\d+)")


def _stamp(line: str, day: float) -> float:
    m = _STAMP.search(line)
    assert m is not None, line
    return day + int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))


def one(n: int, fork_server: bool) -> dict[str, float]:
    """One launch of N federates: seconds from start to all joined, and from listening."""
    extra = [] if fork_server else ["--no-fork-server"]
    t0 = time.time()
    # The RTI's log stamps are local wall-clock times of day: put them on t0's day.
    local = datetime.datetime.fromtimestamp(t0)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", "examples/pipeline.py:Main",
                           "-p", f"sensors={n - 2}", "--fast", "--timeout", "1ms", "--no-progress", *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    out = proc.stdout + proc.stderr
    listen = next((_stamp(x, day) for x in out.splitlines() if x.startswith("[rti]") and " listening on " in x), None)
    joined = next((_stamp(x, day) for x in out.splitlines()
                   if x.startswith("[rti]") and "federates joined; the federation starts" in x), None)
    if proc.returncode != 0 or listen is None or joined is None:
        raise RuntimeError(f"launch of {n} federates failed ({proc.returncode}):\n{out[-3000:]}")
    return {"joined_s": joined - t0, "from_listening_s": joined - listen}


def measure(n: int, fork_server: bool, runs: int) -> dict[str, Any]:
    samples = []
    for _ in range(runs):
        wait_quiet()
        samples.append(one(n, fork_server))
    return {
        "joined_s": statistics.median(s["joined_s"] for s in samples),
        "from_listening_s": statistics.median(s["from_listening_s"] for s in samples),
        "samples": [round(s["joined_s"], 3) for s in samples],
    }


def plot(rows: list[dict[str, Any]], out: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ns = [r["federates"] for r in rows]
    ax.plot(ns, [r["reactorfed"] for r in rows], marker="o", label="fork server (default)")
    spawned = [r for r in rows if r["peer"] == "spawned"]
    if spawned:
        ax.plot([r["federates"] for r in spawned], [r["peer_value"] for r in spawned], marker="s",
                label="--no-fork-server (an interpreter per federate)")
    ax.axhline(TARGET_S, linestyle="--", linewidth=0.8, color="gray", label="2 s (issue 18's target at 128)")
    federates_axis(ax)
    ax.set_ylabel("seconds from launch to all joined (median)")
    ax.set_title("start-up of reactorfed launch against federate count", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(plt, fig, out, "startup.png")


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--federates", default=None, help="comma-separated N (default 16,64,128,256; 8,16 with --quick)")
    p.add_argument("--spawn-max", type=int, default=64,
                   help="measure --no-fork-server up to this N (default 64)")
    args = p.parse_args(argv)
    ns = [int(x) for x in (args.federates or ("8,16" if args.quick else "16,64,128,256")).split(",")]
    runs = 1 if args.quick else args.runs
    res = Results("startup", args.out)
    for n in ns:
        ours = measure(n, True, runs)
        extra: dict[str, Any] = {"federates": n, "from_listening_s": round(ours["from_listening_s"], 3),
                                 "samples": ours["samples"]}
        if n <= args.spawn_max:
            peer = measure(n, False, runs)
            progress(f"N={n}: joined {ours['joined_s']:.2f} s after launch (fork server), "
                     f"{peer['joined_s']:.2f} s with an interpreter per federate")
            res.add(f"joined N={n}", "joined_s", ours["joined_s"], "spawned", peer["joined_s"], "lower", runs,
                    peer_samples=peer["samples"], judged=False, why="start-up against the launcher's other way",
                    **extra)
        else:
            progress(f"N={n}: joined {ours['joined_s']:.2f} s after launch (fork server)")
            res.add(f"joined N={n}", "joined_s", ours["joined_s"], "target", TARGET_S, "lower", runs,
                    judged=False, why="start-up against issue 18's 2 s", **extra)
    path = res.write()
    pic = plot(res.rows, args.out)
    progress(f"wrote {path}" + (f" and {pic}" if pic else ""))
    return res


if __name__ == "__main__":
    main()
