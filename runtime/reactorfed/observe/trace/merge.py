"""A run's trace files merged into one trace in the Trace Event Format, which Perfetto's
UI and Chrome's ``about:tracing`` open: a process track per federate (and the RTI), a
thread track per thread, a slice per reaction, a slice per message sent and received
with a flow arrow from each send to its receive, instants for actions, grants, promises,
joins, leaves, stops, deadline misses and user events, a counter track per counter (a
learner's policy lag); logical tags as arguments.

Physical times are each process's clock (epoch-anchored, so processes of one host line
up); the merged trace starts at the earliest record. Times stay integer nanoseconds until
they are written, as microseconds with three decimals (the format's unit).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import records as R
from .recorder import THREAD, read

__all__ = ["Process", "chrome_trace", "load", "write_chrome_trace"]


@dataclass
class Process:
    """One trace file: its process's name and role, records, thread names and trailer."""

    name: str
    role: str
    pid: int
    records: list[list[Any]]
    threads: dict[int, str] = field(default_factory=dict)
    written: int | None = None  # from the trailer (None: the file was cut short)
    dropped: int | None = None


def load(directory: str | os.PathLike[str]) -> list[Process]:
    """Every trace file in ``directory``, the RTI first, then by name."""
    out: list[Process] = []
    for path in sorted(Path(directory).glob(f"*{R.SUFFIX}")):
        recs = read(path)
        if not recs or recs[0][0] != R.HEADER:
            raise ValueError(f"{path} is not a reactorfed trace file (no header)")
        head = recs[0]
        if head[5] != R.VERSION:
            raise ValueError(f"{path} is a trace of version {head[5]}; this reads version {R.VERSION}")
        p = Process(name=head[6], role=head[7], pid=head[8], records=[])
        for rec in recs[1:]:
            if rec[0] == THREAD:
                p.threads[rec[4]] = rec[5]
            elif rec[0] == R.TRAILER:
                p.written, p.dropped = rec[5], rec[6]
            else:
                p.records.append(rec)
        out.append(p)
    out.sort(key=lambda p: (p.role != "rti", p.name))
    return out


class _Ts:
    """Physical ns as the format's microseconds, exactly (written by _dumps)."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns


def _tag_args(rec: list[Any], first_tag: int) -> dict[str, Any]:
    return {"tag_ns": rec[2] - first_tag, "microstep": rec[3]}


def chrome_trace(procs: list[Process]) -> dict[str, Any]:
    """The merged trace (a JSON object; :func:`write_chrome_trace` writes it)."""
    real = [r for p in procs for r in p.records]
    t0 = min((r[1] for r in real), default=0)
    first_tag = min((r[2] for r in real if r[0] in (R.REACTION_START, R.SEND, R.ACTION)), default=0)
    ev: list[dict[str, Any]] = []
    sends: dict[tuple[int, int, int], tuple[int, int, int]] = {}  # (link, t, m) -> flow id, pid, tid
    recvs: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    flow = 0
    for i, p in enumerate(procs):
        pid = i + 1  # (federates run as threads of one OS process share its pid)
        ev.append({"ph": "M", "name": "process_name", "pid": pid,
                   "args": {"name": f"{p.name} ({p.role}, pid {p.pid})"}})
        ev.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": i}})
        tids: dict[int, int] = {}
        open_: dict[int, list[list[Any]]] = {}
        for rec in p.records:
            ident = rec[4]
            if ident not in tids:
                tids[ident] = tid = len(tids) + 1
                name = p.threads.get(ident, f"thread {tid}")
                ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
            tid = tids[ident]
            kind, ts = rec[0], _Ts(rec[1] - t0)
            if kind == R.REACTION_START:
                open_.setdefault(tid, []).append(rec)
            elif kind == R.REACTION_END:
                stack = open_.get(tid)
                start = stack.pop() if stack else None
                if start is None or start[5] != rec[5]:
                    continue  # an end without its start (the buffer dropped it)
                ev.append({"ph": "X", "cat": "reaction", "name": rec[5], "pid": pid, "tid": tid,
                           "ts": _Ts(start[1] - t0), "dur": _Ts(rec[1] - start[1]),
                           "args": {**_tag_args(rec, first_tag), "level": rec[6]}})
            elif kind in (R.SEND, R.RECV):
                sent = kind == R.SEND
                e = {"ph": "X", "cat": "message", "name": f"{'send to' if sent else 'receive from'} {rec[6]}",
                     "pid": pid, "tid": tid, "ts": ts, "dur": _Ts(1),
                     "args": {**_tag_args(rec, first_tag), "link": rec[5], "bytes": rec[7]}}
                ev.append(e)
                key = (rec[5], rec[2], rec[3])
                if sent:
                    flow += 1
                    sends[key] = (flow, pid, tid)
                    ev.append({"ph": "s", "cat": "message", "name": "message", "id": flow, "pid": pid, "tid": tid,
                               "ts": ts})
                else:
                    recvs.append((key, {"pid": pid, "tid": tid, "ts": ts}))
            elif kind == R.COUNTER:  # a counter track of the process (Perfetto draws its values over time)
                ev.append({"ph": "C", "cat": "counter", "name": rec[5], "pid": pid, "ts": ts, "args": {"value": rec[6]}})
            else:
                fields = R.FIELDS.get(kind, ())
                args = {**_tag_args(rec, first_tag), **dict(zip(fields, rec[5:], strict=False))}
                ev.append({"ph": "i", "s": "t", "cat": R.KIND_NAMES.get(kind, str(kind)),
                           "name": _instant_name(kind, rec), "pid": pid, "tid": tid, "ts": ts, "args": args})
        for stack in open_.values():  # started, never ended (the process died in it)
            for rec in stack:
                ev.append({"ph": "B", "cat": "reaction", "name": rec[5], "pid": pid, "tid": tids[rec[4]],
                           "ts": _Ts(rec[1] - t0), "args": _tag_args(rec, first_tag)})
    for key, at in recvs:
        s = sends.get(key)
        if s is not None:
            ev.append({"ph": "f", "bp": "e", "cat": "message", "name": "message", "id": s[0], **at})
    other = {p.name: {"records": len(p.records), "written": p.written, "dropped": p.dropped} for p in procs}
    return {"traceEvents": ev, "displayTimeUnit": "ns", "otherData": {"reactorfed": other}}


def _instant_name(kind: int, rec: list[Any]) -> str:
    if kind == R.ACTION:
        return f"schedule {rec[5]}"
    if kind == R.GRANT:
        return f"{'PTAG' if rec[6] else 'TAG'} to {rec[5]}"
    if kind == R.PROMISE:
        return f"promise to {rec[5]}"
    if kind in (R.JOIN, R.LEAVE):
        return f"{R.KIND_NAMES[kind]} {rec[5]}"
    if kind == R.DEADLINE_MISS:
        return f"deadline missed: {rec[5]}"
    if kind == R.USER:
        return str(rec[5])
    return R.KIND_NAMES.get(kind, str(kind))


_TS = re.compile(r'"@ts:(-?\d+)@"')


def _dumps(obj: dict[str, Any]) -> str:
    def default(o: Any) -> Any:
        if isinstance(o, _Ts):
            return f"@ts:{o.ns}@"
        raise TypeError(f"cannot write {o!r}")

    def micros(m: re.Match[str]) -> str:
        ns = int(m.group(1))
        sign, ns = ("-", -ns) if ns < 0 else ("", ns)
        return f"{sign}{ns // 1000}.{ns % 1000:03d}"

    return _TS.sub(micros, json.dumps(obj, default=default, separators=(",", ":")))


def write_chrome_trace(directory: str | os.PathLike[str], out: str | os.PathLike[str]) -> dict[str, Any]:
    """Merge ``directory``'s trace files into ``out``; returns the merged trace."""
    trace = chrome_trace(load(directory))
    Path(out).write_text(_dumps(trace))
    return trace
