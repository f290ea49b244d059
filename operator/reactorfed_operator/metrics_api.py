"""The operator as an aggregated API server: the external metrics API over HTTPS.

The kube-apiserver's aggregator forwards the requests for ``external.metrics.k8s.io`` (an
APIService, in the chart) to this server, after it has authenticated and authorized the
caller (RBAC on ``external.metrics.k8s.io``: the HPA controller has it). The aggregator
proves itself with its front-proxy client certificate; this server takes only requests whose
TLS client certificate the *requestheader* client CA signed and whose common name is one of
the ``requestheader-allowed-names`` (both from the ConfigMap
``kube-system/extension-apiserver-authentication``, which the role
``extension-apiserver-authentication-reader`` may read). Anyone else reaching the pod gets
401, or no TLS connection at all when their certificate is signed by another CA. Only the
health paths answer without a certificate.

:func:`FrontProxy.from_configmap` and :meth:`FrontProxy.allows` are pure; :func:`serve`
runs the server on a thread and answers from a :class:`~.external_metrics.MetricStore`.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .external_metrics import MetricStore, respond

__all__ = ["FrontProxy", "serve", "server_context", "start_from_env"]

log = logging.getLogger(__name__)

CONFIGMAP_NAMESPACE = "kube-system"
CONFIGMAP = "extension-apiserver-authentication"
HEALTH = ("/healthz", "/livez", "/readyz")


@dataclass(frozen=True)
class FrontProxy:
    """Who may call: a client certificate from ``client_ca`` (PEM) whose common name is in
    ``allowed_names`` (empty: any it signed), the user named in ``username_headers``."""

    client_ca: str
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ("X-Remote-User",)

    @classmethod
    def from_configmap(cls, data: Mapping[str, str]) -> FrontProxy:
        """From the ConfigMap's data; a ValueError when it holds no requestheader client CA
        (the API server runs without aggregation: nothing could call us)."""
        ca = data.get("requestheader-client-ca-file") or ""
        if "BEGIN CERTIFICATE" not in ca:
            raise ValueError(f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP} has no requestheader-client-ca-file: "
                             "the API server does not aggregate (its --requestheader-client-ca-file is unset)")  # fmt: skip
        return cls(ca, tuple(_json_list(data.get("requestheader-allowed-names"))),
                   tuple(_json_list(data.get("requestheader-username-headers"))) or ("X-Remote-User",))  # fmt: skip

    def allows(self, peer: Mapping[str, Any] | None) -> tuple[bool, str]:
        """Whether the TLS peer certificate ``peer`` (``SSLSocket.getpeercert()``: only
        verified certificates show; None or empty without one) may call, and why not."""
        if not peer:
            return False, "no client certificate from the requestheader client CA"
        names = [v for rdn in peer.get("subject", ()) for k, v in rdn if k == "commonName"]
        if self.allowed_names and not any(n in self.allowed_names for n in names):
            return False, f"client certificate CN {names} is not one of {list(self.allowed_names)}"
        return True, ""

    def user(self, headers: Mapping[str, str]) -> str:
        return next((headers[h] for h in self.username_headers if headers.get(h)), "")


def _json_list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def server_context(certfile: str, keyfile: str, front_proxy: FrontProxy) -> ssl.SSLContext:
    """TLS with our serving certificate; client certificates optional (health checks have
    none) but, when sent, verified against the requestheader client CA."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certfile, keyfile)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(cadata=front_proxy.client_ca)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    store: MetricStore
    front_proxy: FrontProxy
    context: ssl.SSLContext

    def finish_request(self, request: Any, client_address: Any) -> None:
        # the TLS handshake on the request's own thread, not the accepting one
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log.debug("metrics API: TLS handshake with %s failed: %s", client_address, e)
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in HEALTH:
            self._send(200, b"ok", "text/plain")
            return
        peer = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
        ok, why = self.server.front_proxy.allows(peer)
        if not ok:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": f"Unauthorized: {why}", "reason": "Unauthorized", "code": 401}  # fmt: skip
            self._send(401, json.dumps(body).encode(), "application/json")
            return
        code, doc = respond(self.server.store, self.path)
        self._send(code, json.dumps(doc).encode(), "application/json")

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("metrics API: %s %s", self.address_string(), format % args)


def serve(port: int, certfile: str, keyfile: str, store: MetricStore, front_proxy: FrontProxy,
          host: str = "0.0.0.0") -> ThreadingHTTPServer:  # fmt: skip
    """Serve the external metrics API on ``host:port`` from a daemon thread; the server
    (``.shutdown()`` stops it, ``.server_address`` has the port when ``port`` was 0)."""
    server = _Server((host, port), _Handler)
    server.store = store
    server.front_proxy = front_proxy
    server.context = server_context(certfile, keyfile, front_proxy)
    threading.Thread(target=server.serve_forever, name="metrics-api", daemon=True).start()
    return server


#: the port to serve on (unset: the API is not served); the certificate and key files
PORT_ENV = "REACTORFED_METRICS_API_PORT"
CERT_ENV = "REACTORFED_METRICS_API_CERT"
KEY_ENV = "REACTORFED_METRICS_API_KEY"


def start_from_env(store: MetricStore, environ: Mapping[str, str] = os.environ) -> ThreadingHTTPServer | None:
    """At the operator's start: serve when ``REACTORFED_METRICS_API_PORT`` is set (the chart's
    ``externalMetrics.enabled``), with the front proxy's CA read from the API server now.
    A failure is logged, not fatal: the federations run on, the APIService shows it
    unavailable."""
    port = environ.get(PORT_ENV)
    if not port:
        return None
    from kubernetes import client  # (the API server's ConfigMap)

    try:
        cm = client.CoreV1Api().read_namespaced_config_map(CONFIGMAP, CONFIGMAP_NAMESPACE)
        front_proxy = FrontProxy.from_configmap(cm.data or {})
        server = serve(int(port), environ.get(CERT_ENV, "/etc/reactorfed/metrics-api/tls.crt"),
                       environ.get(KEY_ENV, "/etc/reactorfed/metrics-api/tls.key"), store, front_proxy)  # fmt: skip
    except Exception as e:  # (whatever it is, the operator itself runs on)
        log.error("the external metrics API is not served: %s", e)
        return None
    log.info("serving external.metrics.k8s.io on port %s (front proxy names %s)", port,
             list(front_proxy.allowed_names) or "any")  # fmt: skip
    return server
