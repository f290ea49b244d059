"""What tracing costs: the same runs with ``--trace DIR`` and without, run after run
interleaved, so the machine's load hits both alike.

    .venv/bin/python -m bench.tracing            # median of 3 runs
    .venv/bin/python -m bench.tracing --quick    # fewer tags and frames, one run

1. **Tag advance, 2 federates**: ``bench/federation_programs.py:TagChain`` launched, each
   tag a message src -> sink: per-tag cost from the source's first tick to the sink's last
   arrival (a traced tag records two reactions, a send, a receive, a promise). Target: at
   most 10% slower traced.
2. **Tag chain in one process**: the same program with ``reactorfed run`` (two reactions
   a tag, no messages): the cost per reaction.
3. **100 KB frames, 2 federates**: the chain, each tag a 100 KB numpy frame; frames/s.
4. **PPO CartPole to 475** (``examples/rl/ppo_cartpole.py``, launched): seconds of training
   to the threshold, as the learner measures them. Target: at most 10% slower traced.

Beside them, one record's cost in this interpreter (:func:`record_floor_ns`): the least a
recorder written in Python can spend (a clock read through the clock object and a tuple
appended to a list) and what the project's recorder spends. The tag-advance rows give the
10% budget per tag against that floor times the records a tag writes: when the floor alone
is over the budget, no Python recorder meets the bar on that benchmark.

Each row's peer is the untraced run (ratio > 1: tracing costs nothing); ``overhead_pct`` is
the traced run's cost in percent, and ``per_record_ns`` the extra time per record written
where the run counts its records (the trace files' own count).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Better, Results, base_parser, progress, wait_quiet
from bench.federation import FRAME, _rf
from bench.rf_runner import ProgramFailed, run_program
from reactorfed.observe.trace import load


def _records(directory: Path) -> int:
    return sum(p.written or 0 for p in load(directory))


def tag_chain(mode: str, n: int, traced: bool, frame: int = 0) -> tuple[float, int]:
    """(per-tag us, or frames/s with ``frame``; trace records written)."""
    with tempfile.TemporaryDirectory(prefix="rftrace-") as tmp:
        flags = ("--trace", tmp) if traced else ()
        wait_quiet()
        r, _ = _rf(mode, {"n": n, "federates": 2, "frame_bytes": frame}, flags=flags)
        assert r["count"] == n
        span = r["last"] - r["src_first"]
        records = _records(Path(tmp)) if traced else 0
    return (n / span if frame else span * 1e6 / n), records


def ppo_seconds(traced: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="rftrace-") as tmp:
        extra = ["--trace", tmp] if traced else []
        r = run_program("examples/rl/ppo_cartpole.py:Main", {"progress": "false", "checkpoint": "", "seed": 1},
                        "federated", extra=extra, result_of=".learner")
        assert r["reached"], r
        return float(r["reached_seconds"]), _records(Path(tmp)) if traced else 0


def record_floor_ns(n: int = 200_000) -> dict[str, float]:
    """What one record costs in this interpreter, in this process, best of 5: ``floor``, the
    least a recorder written in Python can do (read the clock through its object and append
    a tuple of the record's fields to a list), and ``recorder``, the project's
    :meth:`Recorder.record <reactorfed.observe.trace.Recorder.record>` (its writer
    thread stopped: packing and writing are not in it)."""
    import threading
    import timeit

    from reactorfed.observe.trace import Recorder
    from reactorfed.time import SystemClock

    clock = SystemClock()
    buf: list[tuple[Any, ...]] = []
    rec = Recorder(None, "floor", clock, capacity=1 << 30)
    rec.close()  # (the writer gone: only the recording is timed)
    env = {"ap": buf.append, "now": clock.now, "tag": (1_000, 0), "ident": threading.get_ident(), "rec": rec.record}
    out = {}
    for key, stmt in (("floor", "ap((2, now(), tag[0], tag[1], ident, 'Main.sink.take', 1))"),
                      ("recorder", "rec(2, tag, 'Main.sink.take', 1)")):
        best = min(timeit.repeat(stmt, globals=env, number=n, repeat=5))
        buf.clear()
        out[key] = best / n * 1e9
    return out


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__.split("\n\n")[0])
    p.add_argument("--tags", type=int, default=None, help="tags per tag-chain run (default 20000; 3000 with --quick)")
    p.add_argument("--frames", type=int, default=None, help="100 KB frames per run (default 3000; 500 with --quick)")
    p.add_argument("--no-ppo", action="store_true", help="skip the PPO case (needs torch)")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/tracing.*")
    args = p.parse_args(argv)
    n = args.tags or (3_000 if args.quick else 20_000)
    nframes = args.frames or (500 if args.quick else 3_000)
    runs = 1 if args.quick else args.runs
    cases: dict[str, tuple[Callable[[bool], tuple[float, int]], str, Better, str]] = {
        "tag advance, 2 federates": (lambda t: tag_chain("launch", n, t), "per_tag_us", "lower", "<= 10% slower"),
        "tag chain, one process": (lambda t: tag_chain("run", n, t), "per_tag_us", "lower", ""),
        "100 KB frames, 2 federates": (lambda t: tag_chain("launch", nframes, t, FRAME), "frames_per_s", "higher", ""),
    }
    if not args.no_ppo:
        cases["PPO CartPole-v1 to 475, federated"] = (ppo_seconds, "seconds_to_threshold", "lower", "<= 10% slower")
    samples: dict[str, dict[bool, list[tuple[float, int]]]] = {c: {False: [], True: []} for c in cases}
    load0 = [round(x, 2) for x in os.getloadavg()]
    progress(f"load average {load0} on {os.cpu_count()} cores; {runs} runs")
    for i in range(runs):
        for case, (fn, metric, _, _) in cases.items():
            for traced in (True, False) if i % 2 == 0 else (False, True):  # alternate who goes first
                try:
                    samples[case][traced].append(fn(traced))
                except (ProgramFailed, RuntimeError, AssertionError) as exc:
                    progress(f"{case} ({'traced' if traced else 'untraced'}) failed: {exc}")
            got = samples[case]
            progress(f"run {i + 1}: {case}: traced {got[True][-1:]} untraced {got[False][-1:]} {metric}")
    floor = record_floor_ns()
    progress(f"one record: {floor['floor']:.0f} ns at the least (a clock read and an append), "
             f"{floor['recorder']:.0f} ns in the recorder")
    res = Results("tracing", args.out)
    common: dict[str, Any] = {"load_avg_start": load0, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                              "cores": os.cpu_count(), "judged": False,
                              "why": "a cost of reactorfed's own against itself, not a comparison with a peer"}
    for case, (_, metric, better, target) in cases.items():
        on = [v for v, _ in samples[case][True]]
        off = [v for v, _ in samples[case][False]]
        if not on or not off:
            continue
        t, u = statistics.median(on), statistics.median(off)
        overhead = (t / u - 1) if better == "lower" else (1 - t / u)
        records = statistics.median(r for _, r in samples[case][True])
        extra: dict[str, Any] = {"records": int(records)}
        if metric == "per_tag_us" and records:
            per_tag_records = records / n
            extra["per_record_ns"] = round((t - u) * 1000 / per_tag_records, 1)
            # the 10% budget against the least a Python recorder can spend on this tag's records
            extra["records_per_tag"] = round(per_tag_records, 2)
            extra["budget_per_tag_us"] = round(0.10 * u, 3)
            extra["floor_per_tag_us"] = round(per_tag_records * floor["floor"] / 1000, 3)
            extra["recorder_per_tag_us"] = round(per_tag_records * floor["recorder"] / 1000, 3)
        limit = 0.10 if target else None
        res.add(case, metric, t, "untraced", u, better, len(on), overhead_pct=round(overhead * 100, 1),
                samples=[round(x, 3) for x in on], peer_samples=[round(x, 3) for x in off], **extra,
                **({"bar": target, "meets_bar": overhead <= limit} if limit is not None else {}), **common)
    if not args.no_write:
        res.write()
        res.plot("--trace on vs off (ratio > 1: tracing costs nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
