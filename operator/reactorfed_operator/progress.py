"""The federation's progress as reported by its RTI's JSON ``/status`` endpoint.

The RTI serves ``{"phase": ..., "tag": [ns, microstep], "elapsed_ns": ..., "federates": {...}}``
on its metrics port. Fetching is tolerant: an unreachable RTI (starting, restarting, or an
operator outside the cluster network) yields a :class:`Progress` with ``reachable=False``
and the error, never an exception.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Progress", "fetch_progress", "format_logical_time", "parse_status"]


@dataclass(frozen=True)
class Progress:
    reachable: bool
    rti_phase: str | None = None
    tag_ns: int | None = None
    microstep: int | None = None
    elapsed_ns: int | None = None
    federates_connected: int | None = None
    error: str = ""

    def as_status(self, now: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.reachable:
            out["lastUpdate"] = now
        for key, value in (
            ("rtiPhase", self.rti_phase),
            ("tagNs", self.tag_ns),
            ("microstep", self.microstep),
            ("elapsedNs", self.elapsed_ns),
            ("federatesConnected", self.federates_connected),
        ):
            if value is not None:
                out[key] = value
        logical = self.elapsed_ns if self.elapsed_ns is not None else self.tag_ns
        if logical is not None:
            out["logicalTime"] = format_logical_time(logical, self.microstep or 0)
        return out


def format_logical_time(ns: int, microstep: int = 0) -> str:
    """``1_250_000_000, 0`` -> ``"1.250s"``; a non-zero microstep is appended: ``"1.250s+2"``."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    text = f"{sign}{ns // 1_000_000_000}.{(ns % 1_000_000_000) // 1_000_000:03d}s"
    return f"{text}+{microstep}" if microstep else text


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _connected(federate: Any) -> bool:
    """A federate entry counts as connected unless it says it has not joined or has resigned."""
    if not isinstance(federate, Mapping):
        return True
    return bool(federate.get("joined", federate.get("connected", True))) and not federate.get("resigned", False)


def parse_status(doc: Any) -> Progress:
    """Parse the RTI's ``/status`` JSON; malformed fields are dropped, not fatal."""
    if not isinstance(doc, Mapping):
        return Progress(reachable=True, error=f"unexpected /status document: {type(doc).__name__}")
    tag = doc.get("tag")
    tag_ns = microstep = None
    if isinstance(tag, list | tuple) and len(tag) == 2:
        tag_ns, microstep = _int_or_none(tag[0]), _int_or_none(tag[1])
    feds = doc.get("federates")
    connected: int | None = None
    if isinstance(feds, Mapping):
        connected = sum(1 for f in feds.values() if _connected(f))
    elif isinstance(feds, list):
        connected = len(feds)
    phase = doc.get("phase")
    return Progress(
        reachable=True,
        rti_phase=str(phase) if phase is not None else None,
        tag_ns=tag_ns,
        microstep=microstep,
        elapsed_ns=_int_or_none(doc.get("elapsed_ns")),
        federates_connected=connected,
    )


def fetch_progress(url: str, timeout: float = 1.0) -> Progress:
    """GET ``url`` (the RTI's ``/status``) and parse it; never raises."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = response.read(1 << 20)
        return parse_status(json.loads(body))
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return Progress(reachable=False, error=f"{url}: {exc}")
