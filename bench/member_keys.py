"""What a key per member costs against one key per federation: the same federation started
by hand, as pods run it (``reactorfed rti`` and a ``reactorfed federate`` per member, each a
fresh interpreter, every link TCP and CurveZMQ), once with a key per member (``--key-file``,
``--member-keys``: what the operator and ``reactorfed launch`` issue) and once with a shared
secret (one keypair per federation, derived from it: the operator's compatibility mode,
``spec.secretRef``), run after run interleaved, so the machine's load hits both alike.

    .venv/bin/python -m bench.member_keys            # median of 5 runs
    .venv/bin/python -m bench.member_keys --quick    # fewer tags and frames, one run

``bench/federation_programs.py:TagChain``, 2 federates (``src`` -> ``sink``):

1. **Join**: from spawning both federates (the RTI listening already) to the sink's
   startup reaction, which runs once the federation started: two interpreters' start, the
   program's import, the handshakes with the RTI (HELLO, CHALLENGE with the members' keys,
   PROOF, START) and the data link's; seconds.
2. **Tag advance over TCP**: one message src -> sink per tag; microseconds per tag from the
   source's first tick to the sink's last arrival.
3. **100 KB payloads over TCP**: the same, each tag a 100 KB numpy frame (``--no-shm``);
   frames per second.

Each row's peer is the shared-secret run (ratio > 1: a key per member costs nothing).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Better, Results, base_parser, progress, wait_quiet
from bench.federation import FRAME, PROGRAM
from bench.processes import Federation

NAMES = ("src", "sink")
LINKS = ("--no-unix-sockets", "--no-shm")


def run_chain(keyed: bool, n: int, frame_bytes: int = 0, quiet: bool = True) -> dict[str, float]:
    """TagChain of ``n`` tags (``frame_bytes`` each) with a key per member or a shared
    secret: its join time (s), its cost per tag (us) and its frames per second.
    ``quiet``: wait for a quiet machine first."""
    with tempfile.TemporaryDirectory(prefix="rfkeys-") as tmp:
        res = Path(tmp) / "result.json"
        params = {"n": n, "federates": 2, "frame_bytes": frame_bytes, "result_path": str(res)}
        fed = Federation(Path(tmp), PROGRAM, params, [], "keys" if keyed else "shared", run_args=("--fast", *LINKS),
                         members=NAMES if keyed else ())
        try:
            if quiet:
                wait_quiet()
            t0 = time.time()
            for name in NAMES:
                fed.start(name)
            fed.wait(300)
        finally:
            fed.kill()
        r: dict[str, Any] = json.loads(res.read_text())
        first = json.loads(Path(f"{res}.src").read_text())["first"]
        ready = json.loads(Path(f"{res}.ready").read_text())["ready"]
        assert r["count"] == n, r
        span = r["last"] - first
        return {"join_s": ready - t0, "per_tag_us": span * 1e6 / n, "frames_per_s": n / span}


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__.split("\n\n")[0])
    p.set_defaults(runs=5)
    p.add_argument("--tags", type=int, default=None, help="tags per tag-advance run (default 20000; 3000 with --quick)")
    p.add_argument("--frames", type=int, default=None, help="100 KB frames per run (default 5000; 1000 with --quick)")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/member_keys.*")
    args = p.parse_args(argv)
    n = args.tags or (3_000 if args.quick else 20_000)
    nframes = args.frames or (1_000 if args.quick else 5_000)
    runs = 1 if args.quick else args.runs
    # case -> (the figure it reports, which way is better, whether it is the frames' run)
    cases: dict[str, tuple[str, Better, bool]] = {
        "join, 2 federates": ("join_s", "lower", False),
        "tag advance, 2 federates, TCP": ("per_tag_us", "lower", False),
        "100 KB frames, 2 federates, TCP": ("frames_per_s", "higher", True),
    }
    samples: dict[str, dict[bool, list[float]]] = {c: {True: [], False: []} for c in cases}
    load0 = [round(x, 2) for x in os.getloadavg()]
    progress(f"load average {load0} on {os.cpu_count()} cores; {runs} runs")
    for i in range(runs):
        for keyed in (True, False) if i % 2 == 0 else (False, True):  # alternate who goes first
            tags = run_chain(keyed, n)  # (the join and the tag advance: one run)
            frames = run_chain(keyed, nframes, FRAME)
            for case, (metric, _, of_frames) in cases.items():
                samples[case][keyed].append((frames if of_frames else tags)[metric])
        progress(f"run {i + 1}: " + "; ".join(
            f"{c}: per member {s[True][-1]:.4g}, shared {s[False][-1]:.4g}" for c, s in samples.items()))
    res = Results("member_keys", args.out)
    common: dict[str, Any] = {"load_avg_start": load0, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                              "cores": os.cpu_count(), "mode": "processes by hand, every link TCP", "judged": False,
                              "why": "a cost of reactorfed's own against its compatibility mode, not a peer"}
    for case, (metric, better, _) in cases.items():
        mine, shared = samples[case][True], samples[case][False]
        m, q = statistics.median(mine), statistics.median(shared)
        overhead = (m / q - 1) if better == "lower" else (1 - m / q)
        res.add(case, metric, m, "one key per federation (a shared secret)", q, better, len(mine),
                overhead_pct=round(overhead * 100, 1), samples=[round(x, 4) for x in mine],
                peer_samples=[round(x, 4) for x in shared], **common)
    if not args.no_write:
        res.write()
        res.plot("A key per member vs one per federation (ratio > 1: per-member keys cost nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
