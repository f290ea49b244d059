"""A real OpenTelemetry collector for the tests: Jaeger (v2, built from its Go module by
scripts/tools.sh), keeping spans in memory, with its OTLP/HTTP receiver and its query API
on free ports of this host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from bench.ports import free_port
from bench.servers import stop, wait_ready

_CONFIG = """
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:{query}
    grpc:
      endpoint: 127.0.0.1:{query_grpc}
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:{health}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
"""


def jaeger_binary() -> str | None:
    """The Jaeger binary scripts/tools.sh built (None: not built)."""
    root = Path(__file__).resolve().parents[3]
    r = subprocess.run([str(root / "scripts" / "tools.sh"), "--bin-dir"], capture_output=True, text=True, check=True)
    path = Path(r.stdout.strip()) / "jaeger"
    return str(path) if path.exists() else shutil.which("jaeger")


class Jaeger:
    """A Jaeger process for one test: ``endpoint`` is its OTLP/HTTP traces URL."""

    def __init__(self, binary: str, workdir: Path) -> None:
        ports = {k: free_port() for k in ("query", "query_grpc", "health", "otlp")}
        cfg = workdir / "jaeger.yaml"
        cfg.write_text(_CONFIG.format(**ports))
        self.endpoint = f"http://127.0.0.1:{ports['otlp']}/v1/traces"
        self.query = f"http://127.0.0.1:{ports['query']}"
        self.log = open(workdir / "jaeger.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen([binary, "--config", str(cfg)], stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "JAEGER_LISTEN_HOST": "127.0.0.1"})
        wait_ready(self.proc, f"http://127.0.0.1:{ports['health']}/status", "jaeger", workdir / "jaeger.log",
                   interval=0.2)

    def traces(self, service: str) -> list[dict[str, Any]]:
        """What the collector holds for ``service`` (Jaeger's query API)."""
        url = f"{self.query}/api/traces?service={service}&limit=10000&lookback=1h"
        with urllib.request.urlopen(url, timeout=10) as r:
            return list(json.load(r).get("data") or [])

    def stop(self) -> None:
        stop(self.proc)
        self.log.close()
