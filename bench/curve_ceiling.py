"""The ceiling of encryption on this machine: raw ZeroMQ PUSH/PULL of 100 KB frames between
two processes, CurveZMQ against plain text, 3 rounds each; prints the frames/s of every
round, sorted (what docs/federation.md's "What it costs" quotes). The keys are used as a
federation uses its own: one keypair, the server's and the client's (pyzmq's
``curve_keypair``: any Curve25519 keypair costs the same).

    .venv/bin/python -m bench.curve_ceiling
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from typing import Any

import zmq

from bench.federation import FRAME as SIZE

N = 5000
#: (public, secret), or None: plain text
Keys = tuple[bytes, bytes] | None


def pull(ports: Any, keys: Keys, out: Any, n: int = N) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    if keys:
        s.curve_server = True
        s.curve_publickey, s.curve_secretkey = keys
    ports.put(s.bind_to_random_port("tcp://127.0.0.1"))
    s.recv()
    t0 = time.perf_counter()
    for _ in range(n - 1):
        s.recv(copy=False)
    out.put((n - 1) / (time.perf_counter() - t0))
    s.close()
    ctx.term()


def push(port: int, keys: Keys, n: int = N) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.PUSH)
    if keys:
        s.curve_serverkey = keys[0]
        s.curve_publickey, s.curve_secretkey = keys
    s.connect(f"tcp://127.0.0.1:{port}")
    buf = bytearray(SIZE)
    for _ in range(n):
        s.send(buf, copy=False)
    s.close(linger=10_000)
    ctx.term()


def frames_per_s(keys: Keys, n: int = N) -> float:
    """One round: ``n`` frames from a pushing process to a pulling one, frames/s as the
    puller counts them from its first frame on (connection and handshake excluded)."""
    ports: Any = mp.Queue()
    out: Any = mp.Queue()
    a = mp.Process(target=pull, args=(ports, keys, out, n))
    a.start()
    b = mp.Process(target=push, args=(ports.get(), keys, n))
    b.start()
    rate = float(out.get())
    a.join()
    b.join()
    return rate


def main() -> int:
    res: dict[str, list[float]] = {"plain": [], "curve": []}
    keypair = zmq.curve_keypair()
    for _ in range(3):
        for curve in (False, True):
            res["curve" if curve else "plain"].append(round(frames_per_s(keypair if curve else None)))
    print(json.dumps({"frames_per_s": {k: sorted(v) for k, v in res.items()}, "frame_bytes": SIZE}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
