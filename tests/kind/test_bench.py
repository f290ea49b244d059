"""Across nodes, measured: bench/federation.py's tag-advance and 100 KB payload programs
(bench/federation_programs.py:TagChain) with the source on one CPU worker and the sink on
the other (the RTI on the first), over TCP through the pod network; beside raw ZeroMQ
between two pods on the same two nodes (REQ/REP round trip, PUSH/PULL of the same 100 KB
frames), in the same run, alternating. Figures go to conftest.record. A measurement, not a
check: marker ``bench``, run by ``scripts/kind-test.sh -m bench`` and left out of CI."""

from __future__ import annotations

import json
import secrets
import statistics
from typing import Any

import pytest

from .conftest import REPO, Kind, record, wait_for

pytestmark = [pytest.mark.kind, pytest.mark.bench, pytest.mark.timeout(1800)]

NS = "kind-bench"
TAGS = 3000
FRAMES = 1000
FRAME = 100_000
RUNS = 3

RAW = r"""
import hashlib, os, sys, time, zmq
from zmq.utils import z85
role, addr, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ctx = zmq.Context()
# "curve-*": CurveZMQ with one keypair, both pods deriving it from the run's secret
secret = z85.encode(hashlib.sha256(os.environ["REACTORFED_SECRET"].encode()).digest())
public = zmq.curve_public(secret)
curve = role.startswith("curve-")
role = role.removeprefix("curve-")
if role == "rep":
    s = ctx.socket(zmq.REP); s.setsockopt(zmq.RCVTIMEO, 120000); s.bind("tcp://0.0.0.0:5555")
    for _ in range(n + 100): s.send(s.recv())
elif role == "req":
    s = ctx.socket(zmq.REQ); s.connect(f"tcp://{addr}:5555")
    for _ in range(100): s.send(b"x"); s.recv()
    t = time.perf_counter()
    for _ in range(n): s.send(b"x"); s.recv()
    print("RESULT", (time.perf_counter() - t) / n * 1e6)
elif role == "pull":
    s = ctx.socket(zmq.PULL); s.setsockopt(zmq.RCVTIMEO, 120000)
    if curve:
        s.curve_server = True; s.curve_publickey, s.curve_secretkey = public, secret
    s.bind("tcp://0.0.0.0:5555")
    s.recv(); t = time.perf_counter()
    for _ in range(n - 1): s.recv(copy=False)
    print("RESULT", (n - 1) / (time.perf_counter() - t))
elif role == "push":
    import numpy as np
    s = ctx.socket(zmq.PUSH)
    if curve:
        s.curve_serverkey = public; s.curve_publickey, s.curve_secretkey = public, secret
    s.connect(f"tcp://{addr}:5555")
    frame = np.arange(size, dtype=np.uint8)
    for _ in range(n): s.send(frame, copy=False)
    s.close(linger=-1); ctx.term()  # term() waits until every frame is delivered
"""


def _pod(name: str, node: str, image: str, command: list[str], secret: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "nodeSelector": {"kubernetes.io/hostname": node},  # pinned, through the scheduler
            "containers": [
                {
                    "name": "main",
                    "image": image,
                    "imagePullPolicy": "Never",
                    "command": command,
                    "env": [
                        {"name": "REACTORFED_SECRET", "value": secret},
                        {"name": "PYTHONPATH", "value": "/bench"},
                        {
                            "name": "POD_IP",
                            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
                        },
                    ],
                    "volumeMounts": [{"name": "bench", "mountPath": "/bench"}],
                }
            ],
            "volumes": [{"name": "bench", "configMap": {"name": "bench"}}],
        },
    }


class Bench:
    def __init__(self, k: Kind, image: str, nodes: list[str]) -> None:
        self.k, self.image, self.a, self.b = k, image, nodes[0], nodes[1]
        self.secret = secrets.token_hex(16)
        self.seq = 0

    def start(self, name: str, node: str, command: list[str]) -> None:
        pod = _pod(name, node, self.image, command, self.secret)
        self.k.kubectl("apply", "-f", "-", input=json.dumps(pod))

    def ip(self, name: str) -> str:
        def probe() -> str | None:
            st = self.k.get_json("pod", name, "-n", NS)["status"]
            return st.get("podIP") if st.get("phase") == "Running" else None

        return wait_for(f"pod {name} running", probe, 120, interval=0.2)

    def finish(self, name: str) -> str:
        def probe() -> str | None:
            phase = self.k.get_json("pod", name, "-n", NS)["status"].get("phase")
            return phase if phase in ("Succeeded", "Failed") else None

        phase = wait_for(f"pod {name} to finish", probe, 600, interval=0.5)
        out = self.k.kubectl("logs", "-n", NS, name, check=False)
        self.k.kubectl("delete", "pod", "-n", NS, name, "--wait=false")
        assert phase == "Succeeded", f"{name}: {phase}\n{out.stdout[-3000:]}{out.stderr[-3000:]}"
        return out.stdout

    def tagchain(self, n: int, frame_bytes: int) -> dict[str, float]:
        """RTI and source on node a, sink on node b; the sink's and source's results."""
        self.seq += 1
        fid = f"b{self.seq}"
        common = ["--federation-id", fid, "--fast", "--param", f"n={n}", "--param", "federates=2",
                  "--param", f"frame_bytes={frame_bytes}", "--param", "result_path=/tmp/r"]  # fmt: skip
        rti, src, sink = f"rti-{fid}", f"src-{fid}", f"sink-{fid}"
        self.start(rti, self.a, ["reactorfed", "rti", "federation_programs:TagChain", "--host", "0.0.0.0",
                                 "--port", "15045", *common])  # fmt: skip
        rti_ip = self.ip(rti)

        def fed(name: str, federate: str) -> list[str]:
            return ["sh", "-c", f"reactorfed federate federation_programs:TagChain --federate {federate} "
                    f"--rti {rti_ip}:15045 --advertise-host $POD_IP {' '.join(common)} && echo && echo RESULTS && cat /tmp/r*"]  # fmt: skip

        self.start(src, self.a, fed(src, "src"))
        self.start(sink, self.b, fed(sink, "sink"))
        out_src, out_sink = self.finish(src), self.finish(sink)
        self.finish(rti)
        docs = []
        for out in (out_src, out_sink):
            tail = out.split("\nRESULTS\n", 1)[1]  # the result files, concatenated
            docs += [
                json.loads(x) for x in tail.strip().replace("}{", "}\n{").splitlines() if x.strip()
            ]
        merged: dict[str, float] = {}
        first_src = next(d["first"] for d in docs if set(d) == {"first"})
        sink_doc = next(d for d in docs if "last" in d)
        merged["seconds"] = sink_doc["last"] - first_src
        merged["count"] = sink_doc["count"]
        return merged

    def raw(self, server_role: str, client_role: str, n: int, size: int) -> float:
        self.seq += 1
        server, client = f"raw-{server_role}-{self.seq}", f"raw-{client_role}-{self.seq}"
        self.start(server, self.b, ["python", "/bench/raw.py", server_role, "-", str(n), str(size)])
        ip = self.ip(server)
        self.start(client, self.a, ["python", "/bench/raw.py", client_role, ip, str(n), str(size)])
        out = self.finish(client) + self.finish(server)
        return float(
            next(line.split()[1] for line in out.splitlines() if line.startswith("RESULT"))
        )


def test_cross_node_tag_advance_and_payload(kind_cluster: Kind, images: dict[str, str]) -> None:
    k = kind_cluster
    nodes = sorted(
        n
        for n, v in k.nodes().items()
        if v["metadata"]["labels"].get("reactorfed.io/pool") == "cpu"
    )
    assert len(nodes) == 2
    k.kubectl("create", "namespace", NS)
    try:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench", "namespace": NS},
              "data": {"federation_programs.py": (REPO / "bench" / "federation_programs.py").read_text(), "raw.py": RAW}}  # fmt: skip
        k.kubectl("apply", "-f", "-", input=json.dumps(cm))
        b = Bench(k, images["runtime"], nodes)
        per_tag, raw_rtt, frames, raw_frames, curve_frames = [], [], [], [], []
        for _ in range(RUNS):
            r = b.tagchain(TAGS, 0)
            assert r["count"] == TAGS
            per_tag.append(r["seconds"] / TAGS * 1e6)
            raw_rtt.append(b.raw("rep", "req", TAGS, 0))
            r = b.tagchain(FRAMES, FRAME)
            assert r["count"] == FRAMES
            frames.append(FRAMES / r["seconds"])
            raw_frames.append(b.raw("pull", "push", FRAMES, FRAME))
            # the federation's links are CurveZMQ: its own ceiling is raw CurveZMQ
            curve_frames.append(b.raw("curve-pull", "curve-push", FRAMES, FRAME))
        how = f"tests/kind/test_bench.py: {nodes[0]} -> {nodes[1]}, median of {RUNS}, alternating"
        record(
            "xnode_tag_advance_us",
            statistics.median(per_tag),
            "us/tag",
            f"TagChain 2 federates, {TAGS} tags; {how}; runs {per_tag}",
        )
        record(
            "xnode_raw_zmq_rtt_us",
            statistics.median(raw_rtt),
            "us",
            f"raw ZeroMQ REQ/REP round trip; {how}; runs {raw_rtt}",
        )
        record("xnode_payload_frames_per_s", statistics.median(frames), "frames/s",
               f"TagChain 100 KB frames, {FRAMES} frames; {how}; runs {frames}")  # fmt: skip
        record("xnode_raw_zmq_frames_per_s", statistics.median(raw_frames), "frames/s",
               f"raw ZeroMQ PUSH/PULL 100 KB; {how}; runs {raw_frames}")  # fmt: skip
        record("xnode_raw_curve_frames_per_s", statistics.median(curve_frames), "frames/s",
               f"raw ZeroMQ PUSH/PULL 100 KB over CurveZMQ; {how}; runs {curve_frames}")  # fmt: skip
        record("xnode_payload_vs_raw_curve", statistics.median(frames) / statistics.median(curve_frames),
               "ratio", f"federated 100 KB frames (CurveZMQ links) against raw CurveZMQ; {how}")  # fmt: skip
    finally:
        k.kubectl("delete", "namespace", NS, "--wait=false", check=False)
