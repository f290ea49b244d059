"""The operator's external metrics server over TLS: only the aggregator's front-proxy
client certificate (signed by the requestheader client CA, with an allowed common name)
gets the metrics; health checks need none (:mod:`reactorfed_operator.metrics_api`)."""

from __future__ import annotations

import http.client
import json
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactorfed_operator.external_metrics import MetricStore
from reactorfed_operator.metrics_api import FrontProxy, serve

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
PATH = "/apis/external.metrics.k8s.io/v1beta1/namespaces/rl/learner_wait?labelSelector=federation%3Dq"


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def ca(d: Path, name: str) -> None:
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)  # fmt: skip


def signed(d: Path, name: str, cn: str, by: str) -> None:
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", cwd=d)  # fmt: skip
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{by}.crt", "-CAkey", f"{by}.key", "-CAcreateserial",
            "-days", "1", "-out", f"{name}.crt", cwd=d)  # fmt: skip


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("certs")
    ca(d, "front-proxy-ca")
    ca(d, "stranger-ca")
    ca(d, "serving")
    signed(d, "aggregator", "front-proxy-client", "front-proxy-ca")
    signed(d, "intruder", "someone", "front-proxy-ca")
    signed(d, "impostor", "front-proxy-client", "stranger-ca")
    return d


@pytest.fixture(scope="module")
def port(certs: Path) -> Iterator[int]:
    store = MetricStore()
    store.put("rl", "q", {"learner_wait": 0.42}, "2026-11-28T21:00:00Z")
    configmap = {"requestheader-client-ca-file": (certs / "front-proxy-ca.crt").read_text(),
                 "requestheader-allowed-names": '["front-proxy-client"]',
                 "requestheader-username-headers": '["X-Remote-User"]'}  # fmt: skip
    server = serve(0, str(certs / "serving.crt"), str(certs / "serving.key"), store,
                   FrontProxy.from_configmap(configmap), host="127.0.0.1")  # fmt: skip
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


def get(port: int, certs: Path, client: str | None, path: str = PATH) -> tuple[int, Any]:
    ctx = ssl.create_default_context(cafile=str(certs / "serving.crt"))
    ctx.check_hostname = False
    if client:
        ctx.load_cert_chain(str(certs / f"{client}.crt"), str(certs / f"{client}.key"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        conn.request("GET", path, headers={"X-Remote-User": "system:serviceaccount:kube-system:hpa"})
        response = conn.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body.startswith(b"{") else body.decode()
    finally:
        conn.close()


def test_the_aggregator_gets_the_metric(port: int, certs: Path) -> None:
    code, doc = get(port, certs, "aggregator")
    assert code == 200, doc
    assert [(i["metricLabels"], i["value"]) for i in doc["items"]] == [({"federation": "q"}, "420m")]
    assert get(port, certs, "aggregator", "/apis/external.metrics.k8s.io/v1beta1")[0] == 200


def test_without_a_client_certificate_only_health(port: int, certs: Path) -> None:
    code, doc = get(port, certs, None)
    assert code == 401 and doc["reason"] == "Unauthorized"
    assert get(port, certs, None, "/healthz") == (200, "ok")


def test_a_name_not_allowed_is_refused(port: int, certs: Path) -> None:
    code, doc = get(port, certs, "intruder")
    assert code == 401 and "someone" in doc["message"]


def test_a_certificate_of_another_ca_gets_no_connection(port: int, certs: Path) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
        get(port, certs, "impostor")


def test_the_configmap_must_hold_the_requestheader_ca() -> None:
    with pytest.raises(ValueError, match="requestheader-client-ca-file"):
        FrontProxy.from_configmap({"client-ca-file": "..."})
    fp = FrontProxy.from_configmap({"requestheader-client-ca-file": "-----BEGIN CERTIFICATE-----\n"})
    assert fp.allowed_names == () and fp.username_headers == ("X-Remote-User",)
    assert fp.allows({"subject": ((("commonName", "anyone"),),)}) == (True, "")
    assert fp.allows(None)[0] is False and fp.allows({})[0] is False
    assert fp.user({"X-Remote-User": "u"}) == "u"
