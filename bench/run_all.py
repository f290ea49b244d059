"""The whole RL benchmark suite with one command: the paper's four workloads against Ray.

    python bench/run_all.py [--quick] [--runs 3] [--only gym_sampling,marl]

Runs gym_sampling, atari_sampling, qlearning and marl (each also runs alone),
writes their JSONL lines and PNG plots to bench/results/, a markdown table to
bench/results/SUMMARY.md, and prints the cases where reactorfed loses (ratio < 1)
and where it misses the bars of issue 4.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import atari_sampling
import gym_sampling
import marl
import qlearning
from common import RESULTS_DIR, base_parser, progress, summarize
from ray_util import shutdown_ray

SUITE = {
    "gym_sampling": gym_sampling.main,
    "atari_sampling": atari_sampling.main,
    "qlearning": qlearning.main,
    "marl": marl.main,
}


def bar(row: dict[str, Any]) -> tuple[float, str] | None:
    """The issue's bar for a result row: (minimum ratio, what it means), if one applies."""
    case, peer = row["case"], row["peer"]
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
    if row["bench"] == "marl":
        return 4.0, ">= 4x Ray (multi-agent inference)"
    return None


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__ or "")
    p.add_argument("--only", default=",".join(SUITE), help="comma-separated subset of " + ", ".join(SUITE))
    args = p.parse_args(argv)
    sub = ["--runs", str(args.runs), "--out", str(args.out)] + (["--quick"] if args.quick else [])
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for name in args.only.split(","):
        progress(f"=== {name}")
        rows += SUITE[name](sub).rows
    shutdown_ray()
    out: Path = args.out or RESULTS_DIR
    lines = [
        "# RL benchmark results (reactorfed vs Ray, same run)",
        "",
        f"`python bench/run_all.py{' --quick' if args.quick else ''} --runs {args.runs}`, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, {time.time() - t0:.0f} s. Medians; ratio > 1 means reactorfed wins.",
        "",
        summarize(rows),
        "",
    ]
    losses = [r for r in rows if r["ratio"] < 1]
    misses = [(r, b) for r in rows if (b := bar(r)) is not None and r["ratio"] < b[0]]
    lines.append("## Where reactorfed loses (ratio < 1)\n")
    lines += [f"- {r['bench']} / {r['case']}: {r['ratio']}x" for r in losses] or ["- nowhere"]
    lines.append("\n## Bars of issue 4 missed\n")
    lines += [f"- {r['bench']} / {r['case']}: {r['ratio']}x, bar {b[1]}" for r, b in misses] or ["- none"]
    out.mkdir(parents=True, exist_ok=True)
    (out / "SUMMARY.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[lines.index("## Where reactorfed loses (ratio < 1)\n"):]), file=sys.stderr)
    progress(f"results in {out}/ (SUMMARY.md, *.jsonl, *.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
