"""Every benchmark with one command: the paper's four workloads against Ray, the
runtime's overhead against xronos (chain) and the federation's against raw ZeroMQ and
Ray (federation).

    python -m bench.run_all [--quick] [--runs 3] [--only gym_sampling,marl]

Runs gym_sampling, atari_sampling, qlearning, marl, marl_training, chain, federation, scale, liveness and
startup
Runs gym_sampling, atari_sampling, qlearning, marl, chain, federation, scale, liveness, startup
and pbt (population-based training against Ray Tune's, about 20 minutes of it)
(each also runs alone: ``python -m bench.NAME``; ``distance`` needs Toxiproxy, built by
``scripts/tools.sh``, and runs alone),
writes their JSONL lines and PNG plots to bench/results/, a markdown table to
bench/results/SUMMARY.md (two tables: the judged like-for-like rows, the context rows),
and prints the cases where reactorfed loses (ratio < 1) and where it misses its bars
(judged on the like-for-like rows only).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import (
    atari_sampling,
    chain,
    federation,
    gym_sampling,
    liveness,
    marl,
    marl_training,
    pbt,
    qlearning,
    scale,
    startup,
)
from bench.common import Results, base_parser, classify, load, progress, summarize
from bench.ray_util import shutdown_ray

SUITE: dict[str, Callable[[list[str]], Results | int]] = {
    "gym_sampling": gym_sampling.main,
    "atari_sampling": atari_sampling.main,
    "qlearning": qlearning.main,
    "marl": marl.main,
    "marl_training": marl_training.main,
    "chain": chain.main,
    "federation": federation.main,
    "scale": scale.main,
    "liveness": liveness.main,
    "startup": startup.main,
    "pbt": pbt.main,
}


def bar(row: dict[str, Any]) -> tuple[float, str] | None:
    """The issue's bar for a result row: (minimum ratio, what it means), if one applies.

    Bars against Ray are judged on the judged rows only (like for like: federated, a
    process per sampler or agent as Ray's actors, the same pattern and data). The
    fragments' federated rows also have a bar against the raw ceiling (a context row:
    no framework at all), which says how much of the ceiling the runtime keeps.
    """
    case, peer = row["case"], row["peer"]
    if "federated" not in case:
        return None
    if "fragment" in case and peer == "raw":
        return 0.85, ">= 85% of the raw ceiling (fragments)"
    if not is_judged(row) or peer != "ray":
        return None
    if row["bench"] == "gym_sampling" and case.startswith("CartPole-v1 step") and peer == "ray":
        return 5.0, ">= 5x Ray per-step (CartPole)"
    if row["bench"] == "atari_sampling" and case.startswith("Pong step") and peer == "ray":
        return 3.0, ">= 3x Ray per-step (Pong)"
    if "fragment" in case:
        return 1.0, "ahead of Ray (fragments)"
    if row["bench"] == "qlearning":
        return 1.25, "wall time <= 0.8x Ray's (Q-learning)"
    if row["bench"] == "marl":
        return 4.0, ">= 4x Ray (multi-agent inference)"
    return None


def is_judged(row: dict[str, Any]) -> bool:
    """The row's class as its benchmark wrote it (``judged``), or as
    :func:`bench.common.classify` says for lines written before rows carried it."""
    if "judged" not in row:
        row["judged"], row["why"] = classify(row["bench"], row["case"], row["peer"])
    return bool(row["judged"])


def summarize_with_why(rows: list[dict[str, Any]]) -> str:
    lines = summarize(rows).splitlines()
    lines[0] += " why |"
    lines[1] += "---|"
    return "\n".join([*lines[:2], *(f"{line} {r['why']} |" for line, r in zip(lines[2:], rows, strict=True))])


def write_summary(rows: list[dict[str, Any]], out: Path, how: str) -> str:
    """SUMMARY.md: the judged rows (like for like) in one table, the context rows in
    another, then where reactorfed loses and which bars it misses."""
    judged = [r for r in rows if is_judged(r)]
    context = [r for r in rows if not is_judged(r)]
    lines = [
        "# Benchmark results (reactorfed vs its peers, same run)", "", how, "",
        "Two tables. **Judged** rows compare like for like: reactorfed federated against Ray's "
        "actors with the same synchronisation pattern, the same process layout and the same data "
        "on both sides; only these rows say whether reactorfed is faster than Ray. **Context** rows "
        "are not judged: one process against Ray's actors, an open loop against Ray's closed loop, "
        "the raw ceilings (no framework), and the runtime's own benchmarks against other peers. "
        "Each row's `why` says which it is (the `judged` and `why` fields of the JSON lines).", "",
    ]
    for title, part in (("Judged: like for like", judged), ("Context: not judged", context)):
        if part:
            lines += [f"## {title}", "", summarize_with_why(part), ""]
    tail = ["## Where reactorfed loses (ratio < 1)", ""]
    tail += [f"- {r['bench']} / {r['case']} ({'judged' if is_judged(r) else 'context'}): {r['ratio']}x"
             for r in rows if r["ratio"] is not None and r["ratio"] < 1] or ["- nowhere"]
    tail += ["", "## Bars missed (judged rows; the fragments' federated rows against the raw ceiling)", ""]
    misses = [(r, b) for r in rows if (b := bar(r)) is not None and r["ratio"] is not None and r["ratio"] < b[0]]
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
