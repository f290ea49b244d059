"""A server the tests and benchmarks run as a process (Prometheus, Jaeger, Toxiproxy):
waited for until it answers, and stopped, the same way for each."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from pathlib import Path

__all__ = ["stop", "wait_ready"]


def wait_ready(proc: subprocess.Popen[bytes], url: str, what: str, log: Path, timeout: float = 60.0,
               interval: float = 0.1) -> None:
    """Until ``url`` answers 200; a process that ends first, or no answer within ``timeout``
    seconds, stops it and raises with the end of its ``log``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"{what} did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(interval)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL after 10 s without an exit."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
