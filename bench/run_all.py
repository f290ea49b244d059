"""The whole RL benchmark suite with one command: the paper's four workloads against Ray.

    python bench/run_all.py [--quick] [--runs 3] [--only gym_sampling,marl]

Runs gym_sampling, atari_sampling, qlearning and marl (each also runs alone),
writes their JSONL lines and PNG plots to bench/results/, a markdown table to
bench/results/SUMMARY.md, and prints the cases where reactorfed loses (ratio < 1)
and where it misses the bars of issue 4.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import atari_sampling
import gym_sampling
import marl
import qlearning
from common import base_parser, progress, summarize
from ray_util import shutdown_ray

SUITE = {
    "gym_sampling": gym_sampling.main,
    "atari_sampling": atari_sampling.main,
    "qlearning": qlearning.main,
    "marl": marl.main,
}


def bar(row: dict[str, Any]) -> tuple[float, str] | None:
    """The issue's bar for a result row: (minimum ratio, what it means), if one applies.

    Bars are judged on the federated rows (Ray runs every actor in its own process);
    the single-process rows show what the runtime costs when nothing crosses a process.
    The MARL bar is judged like for like: our federate per agent against Ray's actor per
    agent. The rows with every policy in one federate (against either Ray layout) show
    what the layout buys; they change the number of processes, not the runtime, so they
    are not judged.
    """
    case, peer = row["case"], row["peer"]
    if "federated" not in case:
        return None
    if row["bench"] == "gym_sampling" and case.startswith("CartPole-v1 step") and peer == "ray":
        return 5.0, ">= 5x Ray per-step (CartPole)"
    if row["bench"] == "atari_sampling" and case.startswith("Pong step") and peer == "ray":
        return 3.0, ">= 3x Ray per-step (Pong)"
    if "fragment" in case and peer == "ray":
        return 1.0, "ahead of Ray (fragments)"
    if "fragment" in case and peer == "raw":
        return 0.85, ">= 85% of the raw ceiling (fragments)"
    if row["bench"] == "qlearning":
        return 1.25, "wall time <= 0.8x Ray's (Q-learning)"
    if row["bench"] == "marl" and peer == "ray" and "in 1 federate" not in case:
        return 4.0, ">= 4x Ray (multi-agent inference)"
    return None


def write_summary(rows: list[dict[str, Any]], out: Path, how: str) -> str:
    """SUMMARY.md: the table, where reactorfed loses, which bars it misses."""
    lines = ["# RL benchmark results (reactorfed vs Ray, same run)", "", how, "", summarize(rows), ""]
    tail = ["## Where reactorfed loses (ratio < 1)", ""]
    tail += [f"- {r['bench']} / {r['case']}: {r['ratio']}x" for r in rows if r["ratio"] < 1] or ["- nowhere"]
    tail += ["", "## Bars of issue 4 missed (federated rows)", ""]
    misses = [(r, b) for r in rows if (b := bar(r)) is not None and r["ratio"] < b[0]]
    tail += [f"- {r['bench']} / {r['case']}: {r['ratio']}x, bar {b[1]}" for r, b in misses] or ["- none"]
    out.mkdir(parents=True, exist_ok=True)
    (out / "SUMMARY.md").write_text("\n".join(lines + tail) + "\n")
    return "\n".join(tail)


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__ or "")
    p.add_argument("--only", default=",".join(SUITE), help="comma-separated subset of " + ", ".join(SUITE))
    p.add_argument("--summarize", action="store_true", help="only rewrite SUMMARY.md from the JSONL files")
    args = p.parse_args(argv)
    if args.summarize:
        rows = [json.loads(line) for name in args.only.split(",") for line in (args.out / f"{name}.jsonl").open()]
        print(write_summary(rows, args.out, "Rewritten from the JSONL files of the last `bench/run_all.py`."),
              file=sys.stderr)
        return 0
    sub = ["--runs", str(args.runs), "--out", str(args.out)] + (["--quick"] if args.quick else [])
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for name in args.only.split(","):
        progress(f"=== {name}")
        rows += SUITE[name](sub).rows
    shutdown_ray()
    how = (
        f"`python bench/run_all.py{' --quick' if args.quick else ''} --runs {args.runs}`, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, {time.time() - t0:.0f} s. Medians of interleaved runs; "
        "ratio > 1 means reactorfed wins (for wall times: Ray's time / ours)."
    )
    print(write_summary(rows, args.out, how), file=sys.stderr)
    progress(f"results in {args.out}/ (SUMMARY.md, *.jsonl, *.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
