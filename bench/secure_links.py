"""What encryption costs (issue 21): the same federations with every TCP link CurveZMQ
(the default) and in plain text (``REACTORFED_INSECURE_PLAINTEXT_TCP=1``), run after run
interleaved, so the machine's load hits both alike.

    .venv/bin/python -m bench.secure_links            # median of 3 runs
    .venv/bin/python -m bench.secure_links --quick    # fewer tags and frames, one run

1. **Tag advance over TCP**: ``bench/federation_programs.py:TagChain``, 2 federates, each
   tag a message src -> sink, with ``--no-unix-sockets`` (every link TCP, as between hosts;
   the RTI's links are TCP in any case); per-tag cost from the source's first tick to
   the sink's last arrival. Target: encrypted at most 10% slower.
2. **Tag advance, default links**: the same on one host with the defaults (the data link
   over a Unix socket, unencrypted by design; the RTI's links CurveZMQ).
3. **100 KB payloads over TCP**: the same chain, each tag a 100 KB numpy frame,
   ``--no-shm --no-unix-sockets``; frames/s. Target: encrypted throughput at most 25% lower.
   Its judged row: the encrypted federation against **raw CurveZMQ**, libzmq PUSH/PULL of
   the same frames between two processes with no framework (``bench/curve_ceiling.py``),
   interleaved in the same run. Target: at least 0.8 of that ceiling.
4. **Q-learning** (``examples/rl/qlearning.py``, 2 samplers and the learner, over TCP):
   wall time as the program measures it (``--quick``: fewer iterations).

Each row's peer is the plain-text run, its ratio > 1 when encryption costs nothing;
``overhead_pct`` is the encrypted run's cost in percent: how much longer for a time, how
much lower for a throughput (with ``time_per_item_overhead_pct`` beside it).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from typing import Any

import zmq

from bench.common import Better, Results, base_parser, progress, wait_quiet
from bench.curve_ceiling import frames_per_s as raw_frames_per_s
from bench.federation import FRAME, _rf
from bench.rf_runner import ProgramFailed, run_program

OPT_OUT = "REACTORFED_INSECURE_PLAINTEXT_TCP"
FRAMES = "100 KB frames, 2 federates, TCP"
CEILING_BAR = 0.8
TCP = ("--no-unix-sockets",)
TCP_NO_SHM = ("--no-shm", "--no-unix-sockets")


def _with(plaintext: bool, fn: Callable[[], float]) -> float:
    """``fn()`` with the processes it starts in plain text or encrypted."""
    before = os.environ.get(OPT_OUT)
    if plaintext:
        os.environ[OPT_OUT] = "1"
    else:
        os.environ.pop(OPT_OUT, None)
    try:
        wait_quiet()
        return fn()
    finally:
        if before is None:
            os.environ.pop(OPT_OUT, None)
        else:
            os.environ[OPT_OUT] = before


def per_tag_us(n: int, flags: tuple[str, ...]) -> float:
    r, _ = _rf("launch", {"n": n, "federates": 2}, flags=flags)
    assert r["count"] == n
    return float((r["last"] - r["src_first"]) * 1e6 / n)


def frames_per_s(n: int) -> float:
    r, _ = _rf("launch", {"n": n, "federates": 2, "frame_bytes": FRAME}, flags=TCP_NO_SHM)
    assert r["count"] == n
    return float(n / (r["last"] - r["src_first"]))


def qlearning_s(iterations: int) -> float:
    params = {"num_samplers": 2, "iterations": iterations}
    return float(run_program("examples/rl/qlearning.py:Main", params, "federated", extra=list(TCP_NO_SHM),
                             expect={"iterations": iterations}, result_of=".learner")["seconds"])


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__.split("\n\n")[0])
    p.add_argument("--tags", type=int, default=None, help="tags per tag-advance run (default 20000; 3000 with --quick)")
    # 20,000 frames: a run of 5,000 lasts under a second, its first fill of the flow-control
    # window included, and four such runs on a quiet machine spread from 5,292 to 6,591 frames/s
    p.add_argument("--frames", type=int, default=None, help="100 KB frames per run (default 20000; 1000 with --quick)")
    p.add_argument("--iterations", type=int, default=None, help="Q-learning iterations (default 300; 50 with --quick)")
    p.add_argument("--no-qlearning", action="store_true", help="skip the Q-learning case (needs torch)")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/secure_links.*")
    args = p.parse_args(argv)
    n = args.tags or (3_000 if args.quick else 20_000)
    nframes = args.frames or (1_000 if args.quick else 20_000)
    iters = args.iterations or (50 if args.quick else 300)
    runs = 1 if args.quick else args.runs
    cases: dict[str, tuple[Callable[[], float], str, Better, str]] = {
        "tag advance, 2 federates, TCP": (lambda: per_tag_us(n, TCP), "per_tag_us", "lower", "<= 10% slower"),
        "tag advance, 2 federates, default links": (lambda: per_tag_us(n, ()), "per_tag_us", "lower", ""),
        FRAMES: (lambda: frames_per_s(nframes), "frames_per_s", "higher", "<= 25% lower"),
    }
    if not args.no_qlearning:
        cases[f"Q-learning, 2 samplers, {iters} iterations, TCP"] = (lambda: qlearning_s(iters), "wall_s", "lower", "")
    samples: dict[str, dict[bool, list[float]]] = {c: {False: [], True: []} for c in cases}
    raw: list[float] = []
    keypair = zmq.curve_keypair()
    load0 = [round(x, 2) for x in os.getloadavg()]
    progress(f"load average {load0} on {os.cpu_count()} cores; {runs} runs")
    for i in range(runs):
        for case, (fn, metric, _, _) in cases.items():
            for plaintext in (False, True) if i % 2 == 0 else (True, False):  # alternate who goes first
                try:
                    samples[case][plaintext].append(_with(plaintext, fn))
                except (ProgramFailed, RuntimeError) as exc:
                    progress(f"{case} ({'plain' if plaintext else 'curve'}) failed: {exc}")
            if case == FRAMES:
                wait_quiet()
                raw.append(raw_frames_per_s(keypair, nframes))
                progress(f"run {i + 1}: raw CurveZMQ {raw[-1]:.0f} frames_per_s")
            got = samples[case]
            progress(f"run {i + 1}: {case}: curve {got[False][-1:]} plain {got[True][-1:]} {metric}")
    res = Results("secure_links", args.out)
    common: dict[str, Any] = {"load_avg_start": load0, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                              "cores": os.cpu_count(), "mode": "federated", "judged": False,
                              "why": "a cost of reactorfed's own against itself, not a comparison with a peer"}
    for case, (_, metric, better, target) in cases.items():
        enc, plain = samples[case][False], samples[case][True]
        if not enc or not plain:
            continue
        e, q = statistics.median(enc), statistics.median(plain)
        # a time: how much longer; a throughput: how much lower (the targets' terms), with
        # the time per item beside it
        overhead = (e / q - 1) if better == "lower" else (1 - e / q)
        per_item = {} if better == "lower" else {"time_per_item_overhead_pct": round((q / e - 1) * 100, 1)}
        limit = {"<= 10% slower": 0.10, "<= 25% lower": 0.25}.get(target)
        res.add(case, metric, e, "plain text (REACTORFED_INSECURE_PLAINTEXT_TCP=1)", q, better, len(enc),
                overhead_pct=round(overhead * 100, 1), **per_item, samples=[round(x, 3) for x in enc],
                peer_samples=[round(x, 3) for x in plain],
                **({"bar": target, "meets_bar": overhead <= limit} if limit is not None else {}), **common)
    if samples[FRAMES][False] and raw:
        e, c = statistics.median(samples[FRAMES][False]), statistics.median(raw)
        res.add(f"{FRAMES}, encrypted vs raw CurveZMQ", "frames_per_s", e, "raw CurveZMQ", c, "higher", len(raw),
                samples=[round(x, 3) for x in samples[FRAMES][False]], peer_samples=[round(x, 3) for x in raw],
                bar=f">= {CEILING_BAR} of raw CurveZMQ", meets_bar=e / c >= CEILING_BAR,
                **{**common,
                   "why": "the raw ceiling: libzmq PUSH/PULL of the same encrypted frames between two "
                          "processes, no framework (bench/curve_ceiling.py)"})
    if not args.no_write:
        res.write()
        res.plot("CurveZMQ on every TCP link vs plain text (ratio > 1: encryption costs nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
