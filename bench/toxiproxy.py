"""A Toxiproxy server of our own, on loopback, and the proxies and toxics made through its
HTTP API: distance (latency) and faults (a link disabled, reset, or gone silent) between
processes on this one machine. Used by ``bench/distance.py`` and the proxy tests
(``tests/federation/test_proxy_faults.py``).

The server is Toxiproxy's (Go module github.com/Shopify/toxiproxy/v2), built once by
``scripts/tools.sh`` into ``~/.cache/reactorfed/tools/bin/toxiproxy-server``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.ports import free_port
from bench.servers import stop

__all__ = ["TOOLS_SCRIPT", "Toxiproxy", "server_binary"]

TOOLS_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tools.sh"


def server_binary() -> Path | None:
    """Where ``scripts/tools.sh`` puts the server (or one on PATH); None if not built."""
    base = os.environ.get("REACTORFED_TOOLS") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reactorfed" / "tools"
    built = Path(base) / "bin" / "toxiproxy-server"
    if built.exists():
        return built
    found = shutil.which("toxiproxy-server")
    return Path(found) if found else None


class Toxiproxy:
    """A Toxiproxy server on 127.0.0.1 (a free port), closed with :meth:`close`."""

    def __init__(self, binary: Path | None = None) -> None:
        binary = binary or server_binary()
        if binary is None:
            raise FileNotFoundError(f"Toxiproxy is not built: run {TOOLS_SCRIPT}")
        self.port = free_port()
        self.proc = subprocess.Popen([str(binary), "-host", "127.0.0.1", "-port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        try:
            while True:
                try:
                    self._call("GET", "/version")
                    break
                except OSError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise RuntimeError("Toxiproxy did not start") from None
                    time.sleep(0.05)
        except BaseException:
            self.close()  # a server that did not answer is not left behind
            raise

    def __enter__(self) -> Toxiproxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            text = r.read()
        try:
            return json.loads(text) if text else None
        except json.JSONDecodeError:
            return text.decode()  # /version answers plain text

    def proxy(self, upstream: int, rtt_ms: int = 0, name: str | None = None) -> int:
        """A proxy to 127.0.0.1:``upstream`` adding ``rtt_ms`` to a round trip, half each
        way; the port it listens on. ``name`` (default ``p<port>``) is how :meth:`toxic`
        and :meth:`enable` find it.

        Toxiproxy's latency is whole milliseconds, so ``rtt_ms`` must be even: a link's
        two directions are not interchangeable (a ZeroMQ data link carries its payloads
        from client to server only, the upstream stream), so an odd millisecond put on one
        of them would be paid by some traffic and not by the rest."""
        if rtt_ms < 0 or rtt_ms % 2:
            raise ValueError(f"an added round trip is whole milliseconds each way: {rtt_ms} ms is not even")
        listen = free_port()
        name = name or f"p{listen}"
        self._call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{listen}",
                                        "upstream": f"127.0.0.1:{upstream}", "enabled": True})
        if rtt_ms:
            for stream in ("downstream", "upstream"):
                self.toxic(name, "latency", stream, latency=rtt_ms // 2, jitter=0)
        return listen

    def toxic(self, proxy: str, kind: str, stream: str = "downstream", toxicity: float = 1.0, **attributes: Any) -> str:
        """Add a toxic (``latency``, ``reset_peer``, ``timeout``, ``bandwidth``, ...) to
        ``proxy``'s ``stream`` (downstream: towards the client); its name."""
        name = f"{kind}_{stream}_{len(self.toxics(proxy))}"
        self._call("POST", f"/proxies/{proxy}/toxics", {"name": name, "type": kind, "stream": stream,
                                                        "toxicity": toxicity, "attributes": attributes})
        return name

    def toxics(self, proxy: str) -> list[dict[str, Any]]:
        return list(self._call("GET", f"/proxies/{proxy}/toxics") or [])

    def remove_toxic(self, proxy: str, toxic: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{toxic}")

    def enable(self, proxy: str, on: bool = True) -> None:
        """Disabling a proxy closes its connections (both ends see them close) and refuses
        new ones until it is enabled again."""
        self._call("POST", f"/proxies/{proxy}", {"enabled": on})

    def reset(self) -> None:
        """Every proxy removed."""
        for name in list(self._call("GET", "/proxies") or {}):
            self._call("DELETE", f"/proxies/{name}")

    def close(self) -> None:
        stop(self.proc)
