"""The one HTTP endpoint of a long-running reactorfed process (``reactorfed run``, a
federate, the RTI): Prometheus ``/metrics``, a JSON ``/status`` (what the Kubernetes
operator polls) and ``/healthz``; and whatever other pages its owner adds (the RTI: its live
page at ``/``, :mod:`reactorfed.observe.page`). Without a page at ``/``, ``/`` is ``/status``.

A page is ``(body, content type)`` from a callable, called at each request."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Page", "StatusServer"]

#: a page's body and content type, made at each request
Page = Callable[[], tuple[bytes, str]]

log = logging.getLogger("reactorfed.observe.status")


class StatusServer:
    """Serves ``/metrics`` from ``collectors``, ``/status`` from ``status()`` and each of
    ``pages`` at its path."""

    def __init__(self, port: int, collectors: Iterable[Any], status: Callable[[], dict[str, Any]], host: str = "0.0.0.0",
                 pages: Mapping[str, Page] | None = None) -> None:
        from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest

        registry = CollectorRegistry(auto_describe=False)
        ProcessCollector(registry=registry)  # process_cpu_seconds_total, resident memory, open fds (Linux)
        for c in collectors:
            registry.register(c)
        routes = dict(pages or {})

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                try:
                    if path in routes:
                        body, ctype = routes[path]()
                    elif path == "/metrics":
                        body, ctype = generate_latest(registry), "text/plain; version=0.0.4; charset=utf-8"
                    elif path in ("/status", "/"):
                        body, ctype = json.dumps(status()).encode(), "application/json"
                    elif path == "/healthz":
                        body, ctype = b"ok\n", "text/plain"
                    else:
                        self.send_error(404, "try /metrics or /status")
                        return
                except Exception as e:  # a broken collector must not kill the server
                    log.exception("status endpoint failed")
                    self.send_error(500, str(e))
                    return
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="reactorfed-status", daemon=True)
        self._thread.start()
        log.info("metrics on http://%s:%d/metrics, status on /status", self.address, self.port)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def address(self) -> str:
        return str(self._httpd.server_address[0])

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
