"""The federation's progress as reported by its RTI's JSON ``/status`` endpoint.

The RTI serves ``{"phase": ..., "tag": [ns, microstep], "elapsed_ns": ..., "federates": {...}}``
on its metrics port; with elastic banks also ``"membership"``, the record of joins and
leaves (``{"tag": [ns after the start, microstep], "member", "bank", "index", "joined"}``);
once a federate reported the program's progress for a person, ``"progress"``:
``{"done", "total", "figures": {name: number}}``, each when known (the learner's
iteration of its total, its env steps and mean return in the RL plans). The status shows
it as ``done``, ``total``, ``doneText`` (``"37/400"``: the Progress column) and
``figures`` (rounded for a person: the Return column reads ``figures.mean_return``).
Fetching is tolerant: an unreachable RTI (starting, restarting, or an operator outside the
cluster network) yields a :class:`Progress` with ``reachable=False`` and the error, never
an exception.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MemberChange", "Progress", "fetch_progress", "format_logical_time", "parse_status", "readable"]


@dataclass(frozen=True)
class MemberChange:
    """One entry of the RTI's membership record: from ``tag`` on, ``member`` is present
    (``joined``) or absent."""

    tag_ns: int  # after the start
    microstep: int
    member: str
    joined: bool

    def as_status(self, incarnation: int) -> dict[str, Any]:
        return {
            "incarnation": incarnation,
            "logicalTime": format_logical_time(self.tag_ns, self.microstep),
            "tagNs": self.tag_ns,
            "microstep": self.microstep,
            "member": self.member,
            "joined": self.joined,
        }


@dataclass(frozen=True)
class Progress:
    reachable: bool
    rti_phase: str | None = None
    tag_ns: int | None = None
    microstep: int | None = None
    elapsed_ns: int | None = None
    federates_connected: int | None = None
    error: str = ""
    #: the RTI's membership record (None: it keeps none, the program has no elastic bank)
    membership: tuple[MemberChange, ...] | None = None
    #: the federates the RTI counts present (elastic banks: absent slots are not)
    present: tuple[str, ...] = ()
    #: the program's own progress (None: not reported)
    done: int | None = None
    total: int | None = None
    figures: tuple[tuple[str, int | float], ...] = ()

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
        if self.done is not None:
            out["done"] = self.done
            out["doneText"] = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
        if self.total is not None:
            out["total"] = self.total
        if self.figures:
            out["figures"] = {name: readable(value) for name, value in self.figures}
        return out


def readable(value: int | float) -> int | float:
    """A figure for a person: an int as it is, a float to 4 significant digits (``kubectl
    get`` prints what the status holds: 212.4, not 212.41372918)."""
    return value if isinstance(value, int) else float(f"{value:.4g}")


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
    present: tuple[str, ...] = ()
    if isinstance(feds, Mapping):
        connected = sum(1 for f in feds.values() if _connected(f))
        present = tuple(sorted(str(n) for n, f in feds.items() if isinstance(f, Mapping) and f.get("present")))
    elif isinstance(feds, list):
        connected = len(feds)
    phase = doc.get("phase")
    report = doc.get("progress")
    report = report if isinstance(report, Mapping) else {}
    done, total = _int_or_none(report.get("done")), _int_or_none(report.get("total"))
    done = done if done is not None and done >= 0 else None
    total = total if done is not None and total is not None and total >= 0 else None  # (of nothing done: no total)
    return Progress(
        reachable=True,
        rti_phase=str(phase) if phase is not None else None,
        tag_ns=tag_ns,
        microstep=microstep,
        elapsed_ns=_int_or_none(doc.get("elapsed_ns")),
        federates_connected=connected,
        membership=_membership(doc.get("membership")),
        present=present,
        done=done,
        total=total,
        figures=_figures(report.get("figures")),
    )


def _figures(figures: Any) -> tuple[tuple[str, int | float], ...]:
    """The report's figures; what is not a finite number under a string name is skipped."""
    if not isinstance(figures, Mapping):
        return ()
    return tuple((str(k), v) for k, v in figures.items()
                 if isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v))


def _membership(record: Any) -> tuple[MemberChange, ...] | None:
    """The RTI's record; malformed entries are skipped (the status shows what it can)."""
    if not isinstance(record, list):
        return None
    out: list[MemberChange] = []
    for e in record:
        if not isinstance(e, Mapping) or not isinstance(e.get("joined"), bool):
            continue
        tag = e.get("tag")
        ns, micro = (_int_or_none(tag[0]), _int_or_none(tag[1])) if isinstance(tag, list) and len(tag) == 2 else (None, None)
        member = e.get("member") or f"{e.get('bank')}[{e.get('index')}]"
        if ns is not None and micro is not None:
            out.append(MemberChange(ns, micro, str(member), e["joined"]))
    return tuple(out)


def fetch_progress(url: str, timeout: float = 1.0) -> Progress:
    """GET ``url`` (the RTI's ``/status``) and parse it; never raises."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = response.read(1 << 20)
        return parse_status(json.loads(body))
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return Progress(reachable=False, error=f"{url}: {exc}")
