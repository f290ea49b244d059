"""A real Prometheus server for a test: the binary ``scripts/prometheus.sh`` builds from
Prometheus's Go module (cached under ``~/.cache/reactorfed/tools/bin``), started on
loopback with a generated config that scrapes the given targets, and its HTTP API
(``/api/v1/query``, ``/api/v1/label/.../values``). Not built: a skip on a developer's
machine, a failure under CI (:func:`..kind.prereq.missing`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.ports import free_port
from bench.servers import stop, wait_ready

from ..kind.prereq import missing

__all__ = ["SCRIPT", "Prometheus", "prometheus_binary", "require_prometheus"]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "prometheus.sh"


def prometheus_binary() -> str | None:
    """The binary scripts/prometheus.sh built (or ``prometheus`` on the PATH); None: neither."""
    r = subprocess.run([str(SCRIPT), "--bin-dir"], capture_output=True, text=True, check=True)
    built = Path(r.stdout.strip()) / "prometheus"
    return str(built) if built.exists() else shutil.which("prometheus")


def require_prometheus() -> str:
    binary = prometheus_binary()
    if binary is None:
        missing("Prometheus is not built: run scripts/prometheus.sh (needs Go; scripts/test.sh runs it)")
    return binary


class Prometheus:
    """A Prometheus process scraping ``jobs`` (job name -> ``host:port`` targets) every
    ``interval``, each series labelled with ``labels`` too (as a PodMonitor's relabelling
    labels a pod's series with its federation). Stopped by :meth:`stop`."""

    def __init__(self, binary: str, workdir: Path, jobs: dict[str, list[str]], interval: str = "1s",
                 labels: dict[str, str] | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            # scrape_timeout: Prometheus refuses one longer than the interval (its default is 10 s)
            "global": {"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval},
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets, "labels": labels or {}}]}
                               for job, targets in jobs.items()],
        }
        cfg = workdir / "prometheus.yml"
        cfg.write_text(json.dumps(config, indent=2))  # (YAML is a superset of JSON)
        self.log_path = workdir / "prometheus.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen([binary, f"--config.file={cfg}", f"--storage.tsdb.path={workdir / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                                     stdout=self._log, stderr=subprocess.STDOUT, cwd=workdir,
                                     env={**os.environ, "GOMAXPROCS": "1"})  # (a small load beside the federation)
        wait_ready(self.proc, f"{self.url}/-/ready", "prometheus", self.log_path)

    def _get(self, path: str, **params: str) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query, now: its vector (each ``{"metric": labels, "value": [t, "v"]}``)."""
        data = self._get("/api/v1/query", query=expr)
        assert data["resultType"] == "vector", (expr, data)
        return list(data["result"])

    def label_values(self, label: str, match: str) -> list[str]:
        """``label``'s values on the series ``match`` selects (Grafana's ``label_values``)."""
        return list(self._get(f"/api/v1/label/{label}/values", **{"match[]": match}))

    def stop(self) -> None:
        stop(self.proc)
        self._log.close()
