"""The RTI's and a federate's /metrics and /status (``--metrics-port``), scraped once
while a federation of real processes runs."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .test_faults import PROGRAM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        assert r.status == 200
        return str(r.read().decode())


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one Prometheus sample."""
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    raise AssertionError(f"no sample {name}{labels} in:\n{text}")


def test_metrics_and_status_during_a_run(tmp_path: Path) -> None:
    env = {**os.environ, "REACTORFED_SECRET": "metrics-test-secret", "PYTHONUNBUFFERED": "1"}
    common = ["--federation-id", "metrics-test", "--timeout", "20s"]
    ready = tmp_path / "rti.json"
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen([sys.executable, "-m", "reactorfed", *args], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    try:
        rti = start("rti", PROGRAM, *common, "--port", "0", "--metrics-port", "0", "--ready-file", str(ready))
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert rti.poll() is None and time.monotonic() < deadline, "the RTI did not start"
            time.sleep(0.02)
        info: dict[str, Any] = json.loads(ready.read_text())
        rti_port = info["status_port"]
        fed_ports = {"src": free_port(), "sink": free_port()}
        for name, port in fed_ports.items():
            start("federate", PROGRAM, *common, "--federate", name, "--rti", info["endpoint"], "--metrics-port", str(port))

        # wait until logical time has advanced a while (half a second at least)
        while True:
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "the federation did not run"
            try:
                status = json.loads(get(rti_port, "/status"))
            except OSError:
                status = {}
            if status.get("phase") == "running" and (status.get("elapsed_ns") or 0) >= 500_000_000:
                break
            time.sleep(0.05)

        assert status["federation"] == "metrics-test" and status["error"] is None
        assert set(status["federates"]) == {"src", "sink"}
        for f in status["federates"].values():
            assert f["joined"] and not f["resigned"] and f["ltc_elapsed_ns"] is not None
        assert status["grants"] > 0 and status["rejected"] == 0
        assert "progress" not in status  # a program that reports none: logical time only

        text = get(rti_port, "/metrics")
        assert sample(text, "reactorfed_rti_grants_total") > 0
        assert sample(text, "reactorfed_rti_messages_total") > 0
        assert sample(text, "reactorfed_rti_rejected_total") == 0
        for name in ("src", "sink"):
            assert sample(text, "reactorfed_rti_federate_logical_time_seconds", federate=name) >= 0.4
            assert 0 <= sample(text, "reactorfed_rti_federate_lag_seconds", federate=name) < 5

        src = get(fed_ports["src"], "/metrics")
        assert sample(src, "reactorfed_federate_messages_sent_total", federate="src") >= 10
        assert sample(src, "reactorfed_federate_bytes_sent_total", federate="src") > 0
        sink = get(fed_ports["sink"], "/metrics")
        assert sample(sink, "reactorfed_federate_messages_received_total", federate="sink") >= 10
        assert sample(sink, "reactorfed_federate_rejected_total", federate="sink") == 0
        assert sample(sink, "reactorfed_federate_peer_grants_total", federate="sink") > 0  # src's promises
        assert sample(src, "reactorfed_federate_shm_payloads_total", federate="src") == 0  # small payloads
        for text in (src, sink, get(rti_port, "/metrics")):  # each process's own (Linux: /proc)
            if sys.platform.startswith("linux"):
                assert sample(text, "process_cpu_seconds_total") > 0
                assert sample(text, "process_resident_memory_bytes") > 10 << 20
        st = json.loads(get(fed_ports["sink"], "/status"))
        assert st["federate"] == "sink" and st["tags"] >= 10 and st["reactions"] >= 10
        assert get(rti_port, "/healthz").strip() == "ok"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            out = p.communicate(timeout=10)[0]
            if p.returncode not in (0, -9):
                print(out)
