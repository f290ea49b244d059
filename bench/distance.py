"""Coordination across distance: federates as if on machines some milliseconds apart.

    python -m bench.distance                # every distance, 3 runs each
    python -m bench.distance --quick        # one run, shorter
    python -m bench.distance --rtts 0,10    # only these added round trips (even ms)

This kernel has no netem, so the distance comes from Toxiproxy (a real TCP proxy that
adds latency; its Go module github.com/Shopify/toxiproxy/v2, built once by
``scripts/tools.sh`` into ``~/.cache/reactorfed/tools/bin/toxiproxy-server``). Every
link of the federation goes through it: the RTI's port (federates connect to the proxy)
and each federate's data port (federates advertise the proxy's address: ``reactorfed
federate --data-port P --advertise-port Q``), with Unix sockets and shared memory off, so
every byte crosses TCP and the proxy. The added round trip is split evenly over the two
directions. Toxiproxy's latency is whole milliseconds per direction, so round trips are
even: 0, 2 and 10 ms by default. "+0" is the proxy alone, whose own round trip (measured
in every row as ``raw_rtt_us``, 0.2-0.3 ms here) stands for the nearest machines; 1 ms
cannot be made evenly, 2 ms is the nearest.

Measured at each distance, each beside raw ZeroMQ over the same proxy in the same run:

* tag advance in a 2-federate chain (a pipeline: the source never waits), us per tag,
  against the raw REQ/REP round trip (a ratio above 1: tags advance faster than one
  round trip each, the distance is hidden by pipelining);
* a closed loop of a driver and one worker, the shape of synchronous RL: rounds per
  second, against raw ZeroMQ REQ/REP round trips per second;
* 100 KB payloads between two federates, frames per second, against raw PUSH/PULL;
* the Q-learning example (2 samplers, a learner): wall time of its iterations, against
  one raw round trip per iteration (the least a synchronous iteration can cost).

Every row also carries ``at_proxy_alone``: the same figure at +0 ms, when measured.

Each federated figure is taken under both coordinations, run by run interleaved
(``--coordination``): centralized (the RTI grants each tag a federate with upstream peers
may process) and decentralized (LF's ``coordination: decentralized``: no grant, a federate
advances on its peers' promises). The decentralized rows' cases end in ", decentralized".

Results in ``bench/results/distance.jsonl`` and ``distance.png``.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from bench.common import Results, base_parser, progress, wait_quiet
from bench.federation import FRAME, _pair
from bench.ports import free_port
from bench.rf_runner import results_by_reactor
from bench.toxiproxy import Toxiproxy

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
_free_port = free_port
#: the RTI's ``--coordination`` choices, as the CLI names them
COORDINATIONS = ("centralized", "decentralized")


@contextmanager
def _processes() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def federation(tp: Toxiproxy, program: str, names: list[str], params: dict[str, Any], rtt_ms: int,
               coordination: str = "centralized", timeout_s: float = 600) -> tuple[str, float]:
    """Run ``program``'s RTI and federates as processes, every link through a proxy, under
    ``coordination`` (the RTI's ``--coordination``); (everything they printed, wall seconds)."""
    fid = f"distance-{secrets.token_hex(4)}"
    env = {**os.environ, "REACTORFED_SECRET": secrets.token_hex(16), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT / "examples" / "rl")}
    plist = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    rti_port = _free_port()
    rti_proxy = tp.proxy(rti_port, rtt_ms)
    t0 = time.monotonic()
    with _processes() as procs, tempfile.TemporaryDirectory() as tmp, ExitStack() as files:
        who = ["rti", *names]

        def log(name: str) -> IO[str]:
            return files.enter_context(open(Path(tmp) / f"{name}.out", "w"))

        procs.append(subprocess.Popen([PY, "-m", "reactorfed", "rti", program, *plist, "--federation-id", fid,
                                       "--host", "127.0.0.1", "--port", str(rti_port), "--coordination", coordination], env=env, cwd=ROOT, text=True,
                                      stdout=log("rti"), stderr=subprocess.STDOUT))
        for name in names:
            data = _free_port()
            procs.append(subprocess.Popen(
                [PY, "-m", "reactorfed", "federate", program, *plist, "--federate", name, "--federation-id", fid,
                 "--rti", f"127.0.0.1:{rti_proxy}", "--data-port", str(data), "--advertise-port",
                 str(tp.proxy(data, rtt_ms)), "--no-unix-sockets", "--no-shm", "--fast"],
                env=env, cwd=ROOT, text=True, stdout=log(name), stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout_s
        for p in procs:
            p.wait(max(1.0, deadline - time.monotonic()))
        wall = time.monotonic() - t0
        files.close()
        out = "".join((Path(tmp) / f"{n}.out").read_text() for n in who)
        bad = [name for name, p in zip(who, procs, strict=True) if p.returncode != 0]
        if bad:
            raise RuntimeError(f"{program} at +{rtt_ms} ms: failed ({bad}):\n" + "\n".join(out.splitlines()[-20:]))
    tp.reset()
    return out, wall


def _one(out: str, reactor: str | None = None) -> dict[str, Any]:
    """The one result reported, or the one ``reactor`` (a full name's ending) reported."""
    found = [r for name, r in results_by_reactor(out).items() if reactor is None or name.endswith(reactor)]
    if len(found) != 1:
        raise RuntimeError(f"expected one reported result, got {len(found)}:\n{out[-2000:]}")
    return found[0]


# -- the measurements at one distance --------------------------------------------------------
def pipeline_us_per_tag(tp: Toxiproxy, rtt: int, tags: int, coordination: str, timeout_s: float) -> float:
    r = _one(federation(tp, "bench/scale_programs.py:Chain", ["source", "sink"], {"federates": 2, "tags": tags}, rtt,
                        coordination, timeout_s)[0])
    return float(r["seconds"]) * 1e6 / tags


def loop_rounds_per_s(tp: Toxiproxy, rtt: int, rounds: int, coordination: str, timeout_s: float) -> float:
    r = _one(federation(tp, "bench/scale_programs.py:Loop", ["driver", "workers[0]"], {"federates": 2, "tags": rounds},
                        rtt, coordination, timeout_s)[0])
    return rounds / float(r["seconds"])


def payload_frames_per_s(tp: Toxiproxy, rtt: int, frames: int, coordination: str, timeout_s: float) -> float:
    r = _one(federation(tp, "bench/distance_programs.py:Frames", ["src", "sink"], {"n": frames}, rtt, coordination,
                        timeout_s)[0])
    return frames / float(r["seconds"])


def qlearning_wall_s(tp: Toxiproxy, rtt: int, iterations: int, coordination: str, timeout_s: float) -> float:
    r = _one(federation(tp, "examples/rl/qlearning.py:Main", ["samplers[0]", "samplers[1]", "learner"],
                        {"num_samplers": 2, "iterations": iterations}, rtt, coordination, timeout_s)[0],
             ".learner")
    return float(r["seconds"])


_REP = """
import sys, zmq
ctx = zmq.Context(); s = ctx.socket(zmq.REP); s.bind(f"tcp://127.0.0.1:{sys.argv[2]}")
print(sys.argv[1], flush=True)
for _ in range(int(sys.argv[3])): s.send(s.recv())
"""
_REQ = """
import sys, time, zmq, json
ctx = zmq.Context(); s = ctx.socket(zmq.REQ); s.connect(f"tcp://127.0.0.1:{sys.argv[1]}")
warm, n = int(sys.argv[2]), int(sys.argv[3])
for _ in range(warm): s.send(b"x" * 32); s.recv()
t0 = time.perf_counter()
for _ in range(n): s.send(b"x" * 32); s.recv()
print(json.dumps({"rtt_us": (time.perf_counter() - t0) * 1e6 / n}))
"""
_PULL = """
import sys, time, zmq, json
ctx = zmq.Context(); s = ctx.socket(zmq.PULL); s.bind(f"tcp://127.0.0.1:{sys.argv[2]}")
print(sys.argv[1], flush=True)
n, size = int(sys.argv[3]), int(sys.argv[4])
for i in range(n):
    assert len(s.recv(copy=False)) == size
print(json.dumps({"last": time.time()}), flush=True)
"""
_PUSH = """
import sys, time, zmq, json
import numpy as np
ctx = zmq.Context(); s = ctx.socket(zmq.PUSH); s.connect(f"tcp://127.0.0.1:{sys.argv[1]}")
n, size = int(sys.argv[2]), int(sys.argv[3])
frame = np.arange(size, dtype=np.uint8)
time.sleep(0.5)  # connected through the proxy
first = time.time()
for _ in range(n): s.send(frame, copy=False)
print(json.dumps({"first": first}), flush=True)
s.close(linger=-1); ctx.term()
"""


def raw_round_trips_per_s(tp: Toxiproxy, rtt: int, n: int) -> float:
    port = _free_port()
    proxied = str(tp.proxy(port, rtt))
    warm = max(10, n // 10)
    out, _ = _pair(_REP, [proxied, str(port), str(warm + n)], _REQ, lambda p: [p, str(warm), str(n)])
    tp.reset()
    return 1e6 / float(json.loads(out)["rtt_us"])


def raw_frames_per_s(tp: Toxiproxy, rtt: int, n: int) -> float:
    port = _free_port()
    proxied = str(tp.proxy(port, rtt))
    out, rest = _pair(_PULL, [proxied, str(port), str(n), str(FRAME)], _PUSH, lambda p: [p, str(n), str(FRAME)])
    tp.reset()
    return n / (json.loads(rest.strip().splitlines()[-1])["last"] - json.loads(out)["first"])


def _extra(rtt: int, med: dict[str, float], alone: dict[str, float], key: str) -> dict[str, Any]:
    """A row's context: the distance, the raw round trip measured over it, and the same
    figure over the proxy alone (when +0 was measured)."""
    out: dict[str, Any] = {"added_rtt_ms": rtt, "one_way_ms": rtt // 2, "raw_rtt_us": round(1e6 / med["raw_rt"], 1)}
    if key in alone:
        out["at_proxy_alone"] = round(alone[key], 3)
    return out


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--rtts", default="0,2,10",
                   help="added round trips in even ms (whole ms each way), comma-separated (default 0,2,10)")
    p.add_argument("--coordination", default="centralized,decentralized",
                   help="the coordinations measured, comma-separated, each run interleaved "
                   "(default centralized,decentralized; a decentralized row's case ends in ', decentralized')")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds a federated run may take before it counts as not ending (default 300)")
    args = p.parse_args(argv)
    rtts = sorted(int(x) for x in args.rtts.split(","))  # +0 first: the other rows refer to it
    if any(r < 0 or r % 2 for r in rtts):
        p.error(f"--rtts: each added round trip must be even (Toxiproxy adds whole ms each way): {args.rtts}")
    modes = [m.strip() for m in args.coordination.split(",") if m.strip()]
    if not modes or any(m not in COORDINATIONS for m in modes):
        p.error(f"--coordination: each must be one of {', '.join(COORDINATIONS)}: {args.coordination}")
    runs = 1 if args.quick else args.runs
    tags, rounds, frames, iters = (300, 100, 200, 5) if args.quick else (3000, 500, 1000, 20)
    res = Results("distance", args.out)
    try:
        tp = Toxiproxy()
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None
    try:
        alone: dict[str, dict[str, float]] = {}
        failed: dict[str, list[str]] = {}
        for rtt in rtts:
            got: dict[str, list[float]] = {}
            for i in range(runs):
                wait_quiet()
                got.setdefault("raw_rt", []).append(raw_round_trips_per_s(tp, rtt, max(20, rounds)))
                got.setdefault("raw_frames", []).append(raw_frames_per_s(tp, rtt, frames))
                for mode in modes:  # (interleaved: the machine's load hits every coordination alike)
                    for key, measure, size in (("pipeline", pipeline_us_per_tag, tags),
                                               ("loop", loop_rounds_per_s, rounds),
                                               ("frames", payload_frames_per_s, frames),
                                               ("qlearning", qlearning_wall_s, iters)):
                        try:
                            value = measure(tp, rtt, size, mode, args.timeout)
                        except (RuntimeError, subprocess.TimeoutExpired) as e:
                            # (said, and no row: a run that did not end has no figure)
                            failed.setdefault(f"+{rtt} ms {key}, {mode}", []).append(str(e).splitlines()[0][:200])
                            progress(f"+{rtt} ms {key}, {mode}: did not end: {str(e).splitlines()[0][:200]}")
                            tp.reset()
                            continue
                        got.setdefault(f"{mode}:{key}", []).append(value)
                progress(f"+{rtt} ms run {i + 1}: " + ", ".join(f"{k} {v[-1]:,.1f}" for k, v in got.items() if v))
            med = {k: statistics.median(v) for k, v in got.items() if v}
            for mode in modes:
                m = {**{k.split(":", 1)[1]: v for k, v in med.items() if k.startswith(f"{mode}:")},
                     "raw_rt": med["raw_rt"], "raw_frames": med["raw_frames"]}
                if rtt == 0:
                    alone[mode] = m
                a = alone.get(mode, {})
                suffix = "" if mode == "centralized" else f", {mode}"
                extra = {"coordination": mode}
                if "loop" in m:
                    res.add(f"+{rtt} ms closed loop{suffix}", "rounds_per_s", m["loop"], "raw-zmq-req-rep",
                            m["raw_rt"], "higher", runs, **_extra(rtt, m, a, "loop"), **extra)
                if "frames" in m:
                    res.add(f"+{rtt} ms 100 KB payloads{suffix}", "frames_per_s", m["frames"], "raw-zmq-push-pull",
                            m["raw_frames"], "higher", runs, **_extra(rtt, m, a, "frames"), **extra)
                if "pipeline" in m:
                    res.add(f"+{rtt} ms pipeline tag advance{suffix}", "us_per_tag", m["pipeline"], "raw-zmq-req-rep",
                            1e6 / m["raw_rt"], "lower", runs, **_extra(rtt, m, a, "pipeline"), **extra)
                if "qlearning" in m:
                    res.add(f"+{rtt} ms Q-learning ({iters} iterations, 2 samplers){suffix}", "wall_s", m["qlearning"],
                            "raw-zmq-req-rep", iters / m["raw_rt"], "lower", runs, **_extra(rtt, m, a, "qlearning"),
                            **extra)
    finally:
        tp.close()
    for case, why in failed.items():
        progress(f"{case}: {len(why)} of {runs} runs did not end ({why[0]})")
    path = res.write()
    pic = res.plot("federation across distance (Toxiproxy on every link), vs raw ZeroMQ over the same proxy")
    progress(f"wrote {path}" + (f" and {pic}" if pic else ""))
    return res


if __name__ == "__main__":
    main()
