"""The RTI's and a federate's /metrics and /status (``--metrics-port``), scraped once
while a federation of real processes runs."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from bench.ports import free_port

from .processes import get, processes
from .test_faults import PROGRAM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


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
    deadline = time.monotonic() + 30
    with processes(tmp_path, PROGRAM, "metrics-test", "20s", deadline) as fed:
        rti_port = fed.status_port
        fed_ports = {"src": free_port(), "sink": free_port()}
        for name, port in fed_ports.items():
            fed.federate(name, "--metrics-port", str(port))

        # wait until logical time has advanced a while (half a second at least)
        while True:
            assert time.monotonic() < deadline and fed.running(), "the federation did not run"
            status = fed.rti_status()
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
            assert sample(text, "reactorfed_rti_federate_joins_total", federate=name) == 1  # its process, at the start
            assert sample(text, "reactorfed_rti_federate_leaves_total", federate=name) == 0  # running

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
