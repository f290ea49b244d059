"""The ceiling of encryption on this machine: raw ZeroMQ PUSH/PULL of 100 KB frames between
two processes, CurveZMQ (a federation's keys) against plain text, 3 rounds each; prints
the frames/s of every round, sorted (what docs/federation.md's "What it costs" quotes).

    .venv/bin/python -m bench.curve_ceiling
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from typing import Any

import zmq

from reactorfed.federation.io.curve import federation_keys

N = 5000
SIZE = 100 * 1024
KEYS = federation_keys(b"x" * 32, "curve-ceiling")


def pull(ports: Any, curve: bool, out: Any) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    if curve:
        s.curve_server = True
        s.curve_secretkey = KEYS.secret
        s.curve_publickey = KEYS.public
    ports.put(s.bind_to_random_port("tcp://127.0.0.1"))
    s.recv()
    t0 = time.perf_counter()
    for _ in range(N - 1):
        s.recv(copy=False)
    out.put((N - 1) / (time.perf_counter() - t0))
    s.close()
    ctx.term()


def push(port: int, curve: bool) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.PUSH)
    if curve:
        s.curve_serverkey = KEYS.public
        s.curve_publickey = KEYS.public
        s.curve_secretkey = KEYS.secret
    s.connect(f"tcp://127.0.0.1:{port}")
    buf = bytearray(SIZE)
    for _ in range(N):
        s.send(buf, copy=False)
    s.close(linger=10_000)
    ctx.term()


def main() -> int:
    res: dict[str, list[float]] = {"plain": [], "curve": []}
    for _ in range(3):
        for curve in (False, True):
            ports: Any = mp.Queue()
            out: Any = mp.Queue()
            a = mp.Process(target=pull, args=(ports, curve, out))
            a.start()
            b = mp.Process(target=push, args=(ports.get(), curve))
            b.start()
            res["curve" if curve else "plain"].append(round(out.get()))
            a.join()
            b.join()
    print(json.dumps({"frames_per_s": {k: sorted(v) for k, v in res.items()}, "frame_bytes": SIZE}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
