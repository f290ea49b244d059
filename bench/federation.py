"""Federation benchmark: tag advance, payload throughput and start-up of a federated
program, against raw ZeroMQ and Ray measured in the same run.

    .venv/bin/python -m bench.federation            # median of 3 runs
    .venv/bin/python -m bench.federation --quick    # fewer tags and frames
    .venv/bin/python -m bench.federation --federates 8 --profile   # cProfile every process

1. **Tag advance.** ``bench/federation_programs.py:TagChain``: a source reschedules
   itself 1 us later (one tag per step) and sends a counter through a zero-delay chain
   of relays into a sink, 2 and 8 federates (one process each, plus the RTI), N tags.
   Per-tag cost = (sink's last arrival - source's first tick) / N, wall clock, so the
   start-up of the processes is not in it. Peers: a raw ZeroMQ REQ/REP round trip over
   TCP loopback between two processes, and a Ray actor round trip (``ray.get`` of a
   no-op method). Bars (issue 3): per-tag cost at most 2x the raw round trip, and at
   least 3x better than Ray's. The same program in one process (``reactorfed run``) is a
   separate case: the runtime's cost when nothing crosses a process boundary.
2. **Payload.** The same chain with two federates, each tag carrying a 100 KB numpy
   frame; frames/s and MB/s from the source's first tick to the sink's last arrival,
   beside raw ZeroMQ PUSH/PULL of the same frames (zero-copy send) between two processes,
   timed the same way. Bar: at least 70% of raw. The two federates share a host, so the
   frames go through shared memory; the same run with ``--no-shm`` (over the federates'
   Unix socket) and with ``--no-shm --no-unix-sockets`` (all over TCP, as between hosts)
   are reported as cases of their own.
3. **Start-up and memory.** ``reactorfed launch`` of RTI + two federates: time from
   starting the launcher to the sink's first tag (its start-up reaction), and the whole
   wall time of a one-tag program; the RSS (and PSS) sum of the RTI and the two
   federates while idle (real-time mode, waiting for the next tag), without torch.
   Peer: a fresh Python process doing ``import ray; ray.init()`` and creating two
   actors, timed from its start to both actors answering (``ray.init`` alone is
   recorded beside it), the whole wall time of the same with one call each and
   ``ray.shutdown()``, and the RSS/PSS sum of every process Ray started (the driver
   not counted, as the launcher is not).

4. **Live page clients** (``--only page``): the tag advance of 2 federates while
   ``--page-clients`` (default 20) clients read the RTI's live page as a browser's page
   does (``/`` and ``/diagram.svg`` once, then ``/status`` every ``--page-interval`` ms
   and ``/history`` every other time), against the same run with nobody reading; RTI
   and federates spawned directly (``reactorfed rti --metrics-port``), interleaved.
   Bar: the clients cost at most 5% of the tag rate. N defaults to 10x the tag
   advance's, so that a run lasts some seconds of polling. Asked for alone, its rows go
   to ``bench/results/federation_page.jsonl``.

Every run of every case is interleaved with the peers' runs, so machine load hits
both alike; the load average is recorded in every line. The default pipeline is the
launcher's (``reactorfed launch``), which spawns ``reactorfed rti`` and one
``reactorfed federate`` per federate.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Results, base_parser, progress

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = "bench/federation_programs.py:TagChain"
PY = sys.executable
FRAME = 100 * 1024


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0"}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- reactorfed -------------------------------------------------------------------------
def _rf(mode: str, params: dict[str, Any], fast: bool = True, timeout: float = 600,
        flags: tuple[str, ...] = ()) -> tuple[dict[str, Any], float]:
    """Run TagChain with ``reactorfed run`` or ``launch``; (sink's result, launcher wall s)."""
    with tempfile.TemporaryDirectory(prefix="rffed-") as tmp:
        res = Path(tmp) / "result.json"
        cmd = [PY, "-m", "reactorfed", mode, PROGRAM, *(["--fast"] if fast else [])]
        if mode == "launch":
            cmd.append("--no-progress")
        cmd += flags
        for k, v in {**params, "result_path": str(res)}.items():
            cmd += ["--param", f"{k}={v}"]
        t0 = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=_env())
        wall = time.time() - t0
        if proc.returncode != 0 or not res.exists():
            tail = "\n".join((proc.stderr + proc.stdout).splitlines()[-20:])
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{tail}")
        out: dict[str, Any] = json.loads(res.read_text())
        out["src_first"] = json.loads(Path(f"{res}.src").read_text())["first"]
        out["ready"] = json.loads(Path(f"{res}.ready").read_text())["ready"]
        out["t0"] = t0
        return out, wall


def rf_per_tag_us(mode: str, federates: int, n: int) -> float:
    r, _ = _rf(mode, {"n": n, "federates": federates})
    assert r["count"] == n
    return (r["last"] - r["src_first"]) * 1e6 / n


def rf_frames_per_s(n: int, flags: tuple[str, ...] = ()) -> float:
    r, _ = _rf("launch", {"n": n, "federates": 2, "frame_bytes": FRAME}, flags=flags)
    assert r["count"] == n
    return n / (r["last"] - r["src_first"])


def rf_startup() -> dict[str, float]:
    """Launcher start -> sink's first tag; whole wall of a one-tag program."""
    r, wall = _rf("launch", {"n": 1, "federates": 2})
    return {"ready_s": r["ready"] - r["t0"], "total_s": wall}


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out: list[int] = []
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _mem_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in kB, from smaps_rollup."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def _has_torch(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return "libtorch" in f.read()
    except OSError:
        return False


def rf_memory() -> dict[str, Any]:
    """RSS/PSS of the RTI and two federates idling in real time (a tag every 30 s)."""
    with tempfile.TemporaryDirectory(prefix="rffed-") as tmp:
        res = Path(tmp) / "result.json"
        cmd = [PY, "-m", "reactorfed", "launch", PROGRAM, "--no-progress", "--timeout", "60s",
               "--param", "n=2", "--param", "federates=2", "--param", "step=30s", "--param", f"result_path={res}"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ready = Path(f"{res}.ready")
            deadline = time.time() + 120
            while not ready.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            time.sleep(1.0)  # idle: the first tag is done, the next is 30 s away
            pids = _descendants(proc.pid)
            mem = [_mem_kb(p) for p in pids]
            return {
                "processes": len(pids),
                "rss_mb": sum(m[0] for m in mem) / 1024,
                "pss_mb": sum(m[1] for m in mem) / 1024,
                "launcher_rss_mb": _mem_kb(proc.pid)[0] / 1024,
                "torch_loaded": any(_has_torch(p) for p in pids),
            }
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def rf_profile(federates: int, n: int, top: int = 12) -> str:
    """cProfile every process of a federated chain (RTI and federates spawned directly,
    ``reactorfed rti`` / ``reactorfed federate``); each one's top functions by own time."""
    import pstats

    from bench.federation_programs import TagChain
    from reactorfed.federation import layout_of

    names = layout_of(TagChain(federates=federates)).names
    env = {**_env(), "REACTORFED_SECRET": os.urandom(16).hex()}
    with tempfile.TemporaryDirectory(prefix="rffed-prof-") as tmp:
        res = Path(tmp) / "result.json"
        params = ["--param", f"n={n}", "--param", f"federates={federates}", "--param", f"result_path={res}"]

        def cmd(name: str, *rest: str) -> list[str]:
            return [PY, "-m", "cProfile", "-o", f"{tmp}/{name}.prof", "-m", "reactorfed", *rest, PROGRAM, *params,
                    "--fast", "--federation-id", "prof"]

        ready = Path(tmp) / "rti.json"
        procs = [subprocess.Popen(cmd("rti", "rti", "--port", "0", "--ready-file", str(ready)), cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        while not ready.exists():
            time.sleep(0.02)
        endpoint = json.loads(ready.read_text())["endpoint"]
        for name in names:
            procs.append(subprocess.Popen(cmd(name, "federate", "--federate", name, "--rti", endpoint), cwd=ROOT, env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for pr in procs:
            pr.wait(600)
        r = json.loads(res.read_text())
        per_tag = (r["last"] - json.loads(Path(f"{res}.src").read_text())["first"]) * 1e6 / n
        out = [f"{federates} federates, {n} tags: {per_tag:.1f} us/tag under cProfile"]
        for name in ["rti", names[0], names[len(names) // 2], names[-1]]:
            buf = io.StringIO()
            st = pstats.Stats(f"{tmp}/{name}.prof", stream=buf)
            st.sort_stats("tottime").print_stats(r"federation|scheduler|zmq|msgpack", top)
            out.append(f"--- {name}\n" + buf.getvalue().split("\n\n", 2)[-1].strip())
        return "\n".join(out)


def rf_per_tag_us_polled(federates: int, n: int, clients: int, interval_ms: int) -> dict[str, Any]:
    """The chain's per-tag cost with the RTI and federates spawned directly, the RTI serving
    its status port, while ``clients`` threads poll it as the live page does (0: nobody
    reads it); and how many requests they made."""
    import threading
    import urllib.request

    from bench.federation_programs import TagChain
    from reactorfed.federation import layout_of

    names = layout_of(TagChain(federates=federates)).names
    env = {**_env(), "REACTORFED_SECRET": os.urandom(16).hex()}
    with tempfile.TemporaryDirectory(prefix="rffed-page-") as tmp:
        res = Path(tmp) / "result.json"
        params = ["--param", f"n={n}", "--param", f"federates={federates}", "--param", f"result_path={res}"]
        ready = Path(tmp) / "rti.json"

        def spawn(*args: str) -> subprocess.Popen[bytes]:
            return subprocess.Popen([PY, "-m", "reactorfed", *args[:1], PROGRAM, *args[1:], *params, "--fast",
                                     "--federation-id", "page"], cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        procs = [spawn("rti", "--port", "0", "--metrics-port", "0", "--metrics-addr", "127.0.0.1",
                       "--ready-file", str(ready))]
        while not ready.exists():
            if procs[0].poll() is not None:
                raise RuntimeError("the RTI exited before it was ready")
            time.sleep(0.02)
        info = json.loads(ready.read_text())
        base = f"http://127.0.0.1:{info['status_port']}"
        stop = threading.Event()
        requests = [0] * clients

        def client(i: int) -> None:
            def get(path: str) -> None:
                with urllib.request.urlopen(base + path, timeout=5) as r:
                    r.read()
                requests[i] += 1

            try:
                get("/")
                get("/diagram.svg")
                k = 0
                while not stop.is_set():
                    get("/status")
                    if k % 2 == 0:
                        get("/history")
                    k += 1
                    stop.wait(interval_ms / 1000)
            except OSError:
                pass  # the RTI is gone: the run is over

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        for t in threads:
            t.start()
        for name in names:
            procs.append(spawn("federate", "--federate", name, "--rti", info["endpoint"]))
        try:
            for pr in procs:
                if pr.wait(600) != 0:
                    raise RuntimeError(f"{pr.args} exited {pr.returncode}")
        finally:
            stop.set()
            for pr in procs:
                if pr.poll() is None:
                    pr.kill()
        for t in threads:
            t.join(10)
        r = json.loads(res.read_text())
        assert r["count"] == n
        first = json.loads(Path(f"{res}.src").read_text())["first"]
        return {"per_tag_us": (r["last"] - first) * 1e6 / n, "requests": sum(requests)}


# -- raw ZeroMQ -------------------------------------------------------------------------
_ZMQ_REP = """
import sys, zmq
ctx = zmq.Context(); s = ctx.socket(zmq.REP); port = s.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
n = int(sys.argv[1])
for _ in range(n): s.send(s.recv())
"""

_ZMQ_REQ = """
import sys, time, zmq, json
ctx = zmq.Context(); s = ctx.socket(zmq.REQ); s.connect(f"tcp://127.0.0.1:{sys.argv[1]}")
warm, n = int(sys.argv[2]), int(sys.argv[3])
msg = b"x" * 32  # about the size of a TAG/LTC message
for _ in range(warm): s.send(msg); s.recv()
t0 = time.perf_counter()
for _ in range(n): s.send(msg); s.recv()
print(json.dumps({"rtt_us": (time.perf_counter() - t0) * 1e6 / n}))
"""

_ZMQ_PULL = """
import sys, time, zmq, json
ctx = zmq.Context(); s = ctx.socket(zmq.PULL); port = s.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
n, size = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    f = s.recv(copy=False)
    assert len(f) == size
print(json.dumps({"last": time.time()}), flush=True)
"""

_ZMQ_PUSH = """
import sys, time, zmq, json
import numpy as np
ctx = zmq.Context(); s = ctx.socket(zmq.PUSH); s.connect(f"tcp://127.0.0.1:{sys.argv[1]}")
n, size = int(sys.argv[2]), int(sys.argv[3])
frame = np.arange(size, dtype=np.uint8)
time.sleep(0.2)  # connected
first = time.time()
for _ in range(n): s.send(frame, copy=False)
print(json.dumps({"first": first}), flush=True)
s.close(linger=-1); ctx.term()
"""


def _pair(server: str, server_args: list[str], client: str, client_args: Callable[[str], list[str]]) -> tuple[str, str]:
    srv = subprocess.Popen([PY, "-c", server, *server_args], stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert srv.stdout is not None
        port = srv.stdout.readline().strip()
        cli = subprocess.run([PY, "-c", client, *client_args(port)], capture_output=True, text=True, env=_env(), timeout=300)
        if cli.returncode != 0:
            raise RuntimeError(cli.stderr)
        rest = srv.communicate(timeout=60)[0]
        return cli.stdout, rest
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def zmq_rtt_us(n: int) -> float:
    warm = max(100, n // 10)
    out, _ = _pair(_ZMQ_REP, [str(warm + n)], _ZMQ_REQ, lambda port: [port, str(warm), str(n)])
    return float(json.loads(out)["rtt_us"])


def zmq_frames_per_s(n: int, size: int = FRAME) -> float:
    out, rest = _pair(_ZMQ_PULL, [str(n), str(size)], _ZMQ_PUSH, lambda port: [port, str(n), str(size)])
    first = json.loads(out)["first"]
    last = json.loads(rest.strip().splitlines()[-1])["last"]
    return n / (last - first)


# -- Ray --------------------------------------------------------------------------------
_RAY = """
import json, os, sys, time
t_start = float(sys.argv[1]); n = int(sys.argv[2])
import ray
t_import = time.time()
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
t_init = time.time()

@ray.remote(num_cpus=0)
class Actor:
    def ready(self): return True
    def ping(self, x): return x

actors = [Actor.remote(), Actor.remote()]
ray.get([a.ready.remote() for a in actors])
t_ready = time.time()
print(json.dumps({"t_import": t_import, "t_init": t_init, "t_ready": t_ready, "pid": os.getpid()}), flush=True)
if n:
    a = actors[0]
    for i in range(max(50, n // 10)): ray.get(a.ping.remote(i))
    time.sleep(1.0)  # idle, for the memory sample the parent takes now
    t0 = time.perf_counter()
    for i in range(n): ray.get(a.ping.remote(i))
    rtt = (time.perf_counter() - t0) * 1e6 / n
else:
    ray.get([a.ping.remote(0) for a in actors]); rtt = 0.0
ray.shutdown()
print(json.dumps({"rtt_us": rtt}), flush=True)
"""


def ray_run(n: int, sample_memory: bool) -> dict[str, Any]:
    """A fresh process: import ray, ray.init, two actors; then n round trips (or, with
    n == 0, the tiny program: one call each and shutdown)."""
    t0 = time.time()
    proc = subprocess.Popen([PY, "-c", _RAY, str(t0), str(n)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=_env(), cwd=tempfile.gettempdir())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the Ray process failed (is ray installed? REACTORFED_EXTRAS=bench scripts/setup.sh)")
        first = json.loads(line)
        out: dict[str, Any] = {"ready_s": first["t_ready"] - t0, "init_s": first["t_ready"] - first["t_import"],
                               "import_s": first["t_import"] - t0}
        if sample_memory:
            time.sleep(0.5)
            pids = _descendants(proc.pid)
            mem = [_mem_kb(p) for p in pids]
            out.update(processes=len(pids), rss_mb=sum(m[0] for m in mem) / 1024, pss_mb=sum(m[1] for m in mem) / 1024,
                       driver_rss_mb=_mem_kb(proc.pid)[0] / 1024)
        rest = proc.communicate(timeout=600)[0]
        out["total_s"] = time.time() - t0
        out["rtt_us"] = json.loads(rest.strip().splitlines()[-1])["rtt_us"]
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- the benchmark ----------------------------------------------------------------------
def _med(xs: list[float]) -> float:
    return float(statistics.median(xs))


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=["tags", "payload", "startup", "page"], action="append", default=None,
                   help="run only these parts (repeatable; default: all)")
    p.add_argument("--federates", type=str, default="2,8", help="chain lengths for the tag advance (default 2,8)")
    p.add_argument("--tags", type=int, default=None, help="N tags per tag-advance run (default 20000; 3000 with --quick)")
    p.add_argument("--frames", type=int, default=None, help="100 KB frames per payload run (default 5000; 1000 with --quick)")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/federation.*")
    p.add_argument("--page-clients", type=int, default=20, help="clients reading the live page (--only page; default 20)")
    p.add_argument("--page-interval", type=int, default=1000,
                   help="ms between a page client's reads of /status (default 1000, the page's own)")
    p.add_argument("--page-tags", type=int, default=None, help="N tags per page run (default 10x --tags)")
    p.add_argument("--profile", action="store_true",
                   help="only cProfile the chain (every process; the last of --federates) and print where time goes")
    args = p.parse_args(argv)
    parts = set(args.only or ["tags", "payload", "startup"])  # (page: asked for by name)
    n = args.tags or (3_000 if args.quick else 20_000)
    nframes = args.frames or (1_000 if args.quick else 5_000)
    nrtt = 2_000 if args.quick else 10_000
    feds = [int(x) for x in args.federates.split(",")]
    runs = args.runs
    if args.profile:
        progress(rf_profile(feds[-1], n))
        return 0
    # (the page alone has a file of its own, so that it does not replace the other cases' rows)
    res = Results("federation_page" if parts == {"page"} else "federation", args.out)
    load0 = _load()
    progress(f"load average {load0} on {os.cpu_count()} cores; {runs} runs, N={n} tags, {nframes} frames")

    zrtt: list[float] = []
    ray: list[dict[str, Any]] = []
    ours: dict[str, list[float]] = {}
    zframes: list[float] = []
    rfmem: list[dict[str, Any]] = []
    rfstart: list[dict[str, float]] = []
    polled: dict[str, list[dict[str, Any]]] = {"quiet": [], "clients": []}
    npage = args.page_tags or 10 * n
    for i in range(runs):
        if "tags" in parts or "startup" in parts:
            zrtt.append(zmq_rtt_us(nrtt))
            ray.append(ray_run(nrtt // 5 if "tags" in parts else 0, sample_memory=True))
            progress(f"run {i + 1}: zmq rtt {zrtt[-1]:.1f} us, ray rtt {ray[-1]['rtt_us']:.1f} us, "
                     f"ray ready {ray[-1]['ready_s']:.2f} s, ray RSS {ray[-1]['rss_mb']:.0f} MB")
        if "tags" in parts:
            for f in feds:
                ours.setdefault(f"{f} federates", []).append(rf_per_tag_us("launch", f, n))
                progress(f"run {i + 1}: {f} federates: {ours[f'{f} federates'][-1]:.1f} us/tag")
            ours.setdefault("single process", []).append(rf_per_tag_us("run", 2, n))
            progress(f"run {i + 1}: single process: {ours['single process'][-1]:.2f} us/tag")
        if "payload" in parts:
            zframes.append(zmq_frames_per_s(nframes))
            ours.setdefault("payload", []).append(rf_frames_per_s(nframes))
            ours.setdefault("payload unix", []).append(rf_frames_per_s(nframes, ("--no-shm",)))
            ours.setdefault("payload tcp", []).append(rf_frames_per_s(nframes, ("--no-shm", "--no-unix-sockets")))
            progress(f"run {i + 1}: 100 KB frames/s: reactorfed {ours['payload'][-1]:,.0f} (over the Unix socket: "
                     f"{ours['payload unix'][-1]:,.0f}, over TCP only: {ours['payload tcp'][-1]:,.0f}), "
                     f"zmq {zframes[-1]:,.0f}")
        if "startup" in parts:
            rfstart.append(rf_startup())
            rfmem.append(rf_memory())
            tiny = ray_run(0, sample_memory=False)
            ray[-1]["tiny_total_s"] = tiny["total_s"]
            progress(f"run {i + 1}: start-up: reactorfed ready {rfstart[-1]['ready_s']:.2f} s, total "
                     f"{rfstart[-1]['total_s']:.2f} s, RSS {rfmem[-1]['rss_mb']:.0f} MB; ray tiny total {tiny['total_s']:.2f} s")
        if "page" in parts:
            polled["quiet"].append(rf_per_tag_us_polled(2, npage, 0, args.page_interval))
            polled["clients"].append(rf_per_tag_us_polled(2, npage, args.page_clients, args.page_interval))
            progress(f"run {i + 1}: 2 federates: {polled['quiet'][-1]['per_tag_us']:.1f} us/tag unread, "
                     f"{polled['clients'][-1]['per_tag_us']:.1f} us/tag with {args.page_clients} page clients "
                     f"({polled['clients'][-1]['requests']} requests)")
    load1 = _load()
    common = {"load_avg_start": load0, "load_avg_end": load1, "cores": os.cpu_count()}

    if "tags" in parts:
        rtt, rrtt = _med(zrtt), _med([r["rtt_us"] for r in ray])
        for case, xs in ours.items():
            if case.startswith("payload"):
                continue
            mode = "single-process" if case == "single process" else "federated"
            med = _med(xs)
            extra = {"mode": mode, "tags": n, "samples": [round(x, 2) for x in xs], **common}
            res.add(case, "per_tag_us", med, "zmq REQ/REP round trip", rtt, "lower", runs,
                    bar="<= 2x the raw round trip (ratio >= 0.5)", meets_bar=rtt / med >= 0.5,
                    peer_samples=[round(x, 2) for x in zrtt], **extra)
            res.add(case, "per_tag_us", med, "ray actor round trip", rrtt, "lower", runs,
                    bar=">= 3x better than Ray (ratio >= 3)", meets_bar=rrtt / med >= 3,
                    peer_samples=[round(r["rtt_us"], 2) for r in ray], **extra)
            res.add(case, "tags_per_s", 1e6 / med, "zmq round trips/s", 1e6 / rtt, "higher", runs, **extra)
    if "payload" in parts:
        ozf, zf = _med(ours["payload"]), _med(zframes)
        extra = {"mode": "federated", "frames": nframes, "frame_bytes": FRAME, **common,
                 "samples": [round(x) for x in ours["payload"]], "peer_samples": [round(x) for x in zframes]}
        res.add("100 KB frames, 2 federates", "frames_per_s", ozf, "zmq PUSH/PULL", zf, "higher", runs,
                bar=">= 70% of raw (ratio >= 0.7)", meets_bar=ozf / zf >= 0.7, **extra)
        res.add("100 KB frames, 2 federates", "MB_per_s", ozf * FRAME / 1e6, "zmq PUSH/PULL", zf * FRAME / 1e6,
                "higher", runs, **extra)
        # Without shared memory: over the Unix socket, and over TCP (what federates on
        # different hosts, or pods, get).
        ouf = _med(ours["payload unix"])
        res.add("100 KB frames, 2 federates, Unix socket (--no-shm)", "frames_per_s", ouf, "zmq PUSH/PULL", zf,
                "higher", runs, **{**extra, "samples": [round(x) for x in ours["payload unix"]]})
        otf = _med(ours["payload tcp"])
        res.add("100 KB frames, 2 federates, TCP only (--no-shm --no-unix-sockets)", "frames_per_s", otf,
                "zmq PUSH/PULL", zf, "higher", runs, **{**extra, "samples": [round(x) for x in ours["payload tcp"]]})
    if "startup" in parts:
        extra = {"mode": "federated", **common}
        res.add("RTI + 2 federates", "ready_s", _med([r["ready_s"] for r in rfstart]), "ray: import + init + 2 actors",
                _med([r["ready_s"] for r in ray]), "lower", runs, samples=[round(r["ready_s"], 3) for r in rfstart],
                peer_samples=[round(r["ready_s"], 3) for r in ray],
                ray_init_only_s=round(_med([r["init_s"] for r in ray]), 3),
                ray_import_s=round(_med([r["import_s"] for r in ray]), 3), **extra)
        res.add("tiny program", "total_s", _med([r["total_s"] for r in rfstart]), "ray: init + 2 actors + 1 call + shutdown",
                _med([r["tiny_total_s"] for r in ray]), "lower", runs, samples=[round(r["total_s"], 3) for r in rfstart],
                peer_samples=[round(r["tiny_total_s"], 3) for r in ray], **extra)
        res.add("RTI + 2 idle federates", "rss_mb", _med([m["rss_mb"] for m in rfmem]), "ray + 2 idle actors",
                _med([r["rss_mb"] for r in ray]), "lower", runs,
                pss_mb=round(_med([m["pss_mb"] for m in rfmem]), 1), peer_pss_mb=round(_med([r["pss_mb"] for r in ray]), 1),
                processes=rfmem[-1]["processes"], peer_processes=ray[-1]["processes"],
                launcher_rss_mb=round(_med([m["launcher_rss_mb"] for m in rfmem]), 1),
                peer_driver_rss_mb=round(_med([r["driver_rss_mb"] for r in ray]), 1),
                torch_loaded=any(m["torch_loaded"] for m in rfmem), **extra)
    if "page" in parts:
        quiet = _med([r["per_tag_us"] for r in polled["quiet"]])
        busy = _med([r["per_tag_us"] for r in polled["clients"]])
        res.add(f"2 federates, {args.page_clients} live page clients", "per_tag_us", busy, "2 federates, page unread",
                quiet, "lower", runs, bar="the clients cost <= 5% (ratio >= 0.95)", meets_bar=quiet / busy >= 0.95,
                mode="federated", tags=npage, page_clients=args.page_clients, page_interval_ms=args.page_interval,
                requests=[r["requests"] for r in polled["clients"]],
                samples=[round(r["per_tag_us"], 2) for r in polled["clients"]],
                peer_samples=[round(r["per_tag_us"], 2) for r in polled["quiet"]], **common)
    if not args.no_write:
        path = res.write()
        plot = res.plot(f"federation (median of {runs}; load {load0[0]}-{load1[0]} on {os.cpu_count()} cores)")
        progress(f"wrote {path}" + (f" and {plot}" if plot else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
