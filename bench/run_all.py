"""Every benchmark with one command: the paper's four workloads against Ray, the
runtime's overhead against xronos (chain) and the federation's against raw ZeroMQ and
Ray (federation).

    python -m bench.run_all [--quick] [--runs 3] [--only gym_sampling,marl]

Runs gym_sampling, atari_sampling, qlearning, marl, chain, federation and scale (each also
runs alone: ``python -m bench.NAME``),
writes their JSONL lines and PNG plots to bench/results/, a markdown table to
bench/results/SUMMARY.md, and prints the cases where reactorfed loses (ratio < 1)
and where it misses its bars (judged on the like-for-like rows only).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import atari_sampling, chain, federation, gym_sampling, marl, qlearning, scale
from bench.common import Results, base_parser, load, progress, summarize
from bench.ray_util import shutdown_ray

SUITE: dict[str, Callable[[list[str]], Results | int]] = {
    "gym_sampling": gym_sampling.main,
    "atari_sampling": atari_sampling.main,
    "qlearning": qlearning.main,
    "marl": marl.main,
    "chain": chain.main,
    "federation": federation.main,
    "scale": scale.main,
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
    if "federated" not in case or kind(row) not in ("like-for-like", "ceiling"):
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


def kind(row: dict[str, Any]) -> str:
    """Which table a row belongs in.

    * ``like-for-like``: the judged rows: reactorfed federated (a process per sampler
      or agent, as Ray's actors) against Ray, with the same synchronisation pattern and
      the same data on both sides;
    * ``ceiling``: against the raw ceiling (the same work with no framework at all);
    * ``context``: rows that change the comparison's terms: one process against Ray's
      actors, an open loop (``step``: samplers step on their own) against Ray's closed
      loop, agents grouped into fewer processes than Ray's actors, the raw ceiling
      against Ray, the single-process runtime against xronos.
    """
    case, peer = row["case"], row["peer"]
    if row["bench"] in ("chain", "federation", "scale"):
        return "context"
    if peer.startswith("raw"):
        return "ceiling"
    if peer != "ray" or "federated" not in case or " step " in f" {case} " or "in 1 federate" in case:
        return "context"
    return "like-for-like"


def write_summary(rows: list[dict[str, Any]], out: Path, how: str) -> str:
    """SUMMARY.md: the judged (like-for-like) rows apart from the context and ceiling
    rows, where reactorfed loses, which bars it misses."""
    lines = ["# Benchmark results (reactorfed vs its peers, same run)", "", how, ""]
    for title, which in (
        ("Like for like (judged): federated vs Ray's actors, same pattern, same data", "like-for-like"),
        ("Against the raw ceiling (no framework)", "ceiling"),
        ("Context (not judged): single process, open loop, other layouts, other peers", "context"),
    ):
        part = [r for r in rows if kind(r) == which]
        if part:
            lines += [f"## {title}", "", summarize(part), ""]
    tail = ["## Where reactorfed loses (ratio < 1)", ""]
    tail += [f"- {r['bench']} / {r['case']} ({kind(r)}): {r['ratio']}x" for r in rows if r["ratio"] < 1] or ["- nowhere"]
    tail += ["", "## Bars missed (like-for-like rows)", ""]
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
        saved = [json.loads(line) for name in args.only.split(",") for line in (args.out / f"{name}.jsonl").open()]
        print(write_summary(saved, args.out, "Rewritten from the JSONL files of the last `bench/run_all.py`."),
              file=sys.stderr)
        return 0
    sub = ["--runs", str(args.runs), "--out", str(args.out)] + (["--quick"] if args.quick else [])
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for name in args.only.split(","):
        progress(f"=== {name}")
        outcome = SUITE[name](sub)
        if isinstance(outcome, int):  # chain and federation write their JSONL and return a code
            if outcome != 0:
                progress(f"{name} did not run (exit {outcome}); its rows are left out")
                continue
            outcome = load(args.out / f"{name}.jsonl")
        rows += outcome.rows
    shutdown_ray()
    how = (
        f"`python -m bench.run_all{' --quick' if args.quick else ''} --runs {args.runs}`, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, {time.time() - t0:.0f} s. Medians of interleaved runs; "
        "ratio > 1 means reactorfed wins (for wall times: Ray's time / ours)."
    )
    print(write_summary(rows, args.out, how), file=sys.stderr)
    progress(f"results in {args.out}/ (SUMMARY.md, *.jsonl, *.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
