"""Lingua Franca's federated sequence diagram (``fedsd``) of a traced run, as one
self-contained HTML file with an inline SVG: the RTI and each federate a lifeline,
physical time going down, each message an arrow from its send to its receive, each
grant an arrow from the RTI, each promise a dashed arrow to the peer, joins, leaves,
stops and deadline misses as marks on a lifeline; every arrow labelled with its tag.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from ...time.tag import FOREVER, MAX_MICROSTEP
from . import records as R
from .merge import Process, load

__all__ = ["sequence_html", "write_sequence"]

_COL = 190  # between lifelines
_ROW = 20  # between events
_TOP = 60
_LEFT = 110
_MARKS = (R.JOIN, R.LEAVE, R.STOP, R.DEADLINE_MISS, R.USER)


def _tag(rec: list[Any], first: int) -> str:
    if rec[2] >= FOREVER:
        return "(FOREVER)"
    dt = rec[2] - first
    ms, rem = divmod(dt, 1_000_000)
    t = f"{ms}" if rem == 0 else f"{ms}.{rem:06d}".rstrip("0")
    m = "max" if rec[3] >= MAX_MICROSTEP else rec[3]
    return f"({t} ms, {m})"


def sequence_html(procs: list[Process], *, max_rows: int = 3000, title: str = "reactorfed run") -> str:
    """The diagram of a loaded trace (see :func:`.merge.load`) as an HTML document."""
    col = {p.name: i for i, p in enumerate(procs)}
    rows: list[tuple[int, Process, list[Any]]] = sorted(
        ((rec[1], p, rec) for p in procs for rec in p.records
         if rec[0] in (R.SEND, R.RECV, R.GRANT, R.PROMISE, *_MARKS)),
        key=lambda x: x[0])
    truncated = len(rows) > max_rows
    rows = rows[:max_rows]
    first = min((r[2] for _, _, r in rows if r[0] in (R.SEND, R.GRANT, R.PROMISE)), default=0)
    y_of: dict[int, int] = {}
    for i, (_, _, rec) in enumerate(rows):
        y_of[id(rec)] = _TOP + (i + 1) * _ROW
    sends: dict[tuple[int, int, int], tuple[str, int]] = {}
    shapes: list[str] = []
    x = {name: _LEFT + i * _COL for name, i in col.items()}
    for _, p, rec in rows:
        kind, y = rec[0], y_of[id(rec)]
        if kind == R.SEND:
            sends[(rec[5], rec[2], rec[3])] = (p.name, y)
        elif kind == R.RECV:
            src = sends.pop((rec[5], rec[2], rec[3]), None)
            if src is not None and src[0] in x:
                shapes.append(_arrow(x[src[0]], src[1], x[p.name], y, f"{_tag(rec, first)} link {rec[5]}", "msg"))
        elif kind == R.GRANT and rec[5] in x:
            name = "PTAG" if rec[6] else "TAG"
            shapes.append(_arrow(x[p.name], y, x[rec[5]], y, f"{name} {_tag(rec, first)}", "grant"))
        elif kind == R.PROMISE and rec[5] in x:
            shapes.append(_arrow(x[p.name], y, x[rec[5]], y, f"promise {_tag(rec, first)}", "promise"))
        elif kind in _MARKS:
            label = f"{R.KIND_NAMES[kind]} {rec[5] if len(rec) > 5 else ''} {_tag(rec, first)}"
            shapes.append(f'<circle cx="{x[p.name]}" cy="{y}" r="4" class="mark"/>'
                          f'<text x="{x[p.name] + 8}" y="{y + 4}" class="mark">{html.escape(label)}</text>')
    height = _TOP + (len(rows) + 2) * _ROW
    width = _LEFT + max(len(procs), 1) * _COL
    heads = "".join(
        f'<text x="{x[p.name]}" y="{_TOP - 20}" class="head">{html.escape(p.name)}</text>'
        f'<line x1="{x[p.name]}" y1="{_TOP - 10}" x2="{x[p.name]}" y2="{height}" class="life"/>'
        for p in procs)
    note = f"<p>The first {max_rows} events are shown.</p>" if truncated else ""
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; }}
.head {{ font-weight: bold; text-anchor: middle; font-size: 13px; }}
.life {{ stroke: #999; stroke-dasharray: 4 3; }}
.msg {{ stroke: #1f6feb; }} .grant {{ stroke: #2da44e; }} .promise {{ stroke: #8250df; stroke-dasharray: 5 3; }}
text.lbl {{ font-size: 10px; fill: #333; }} text.mark {{ font-size: 10px; fill: #b35900; }} circle.mark {{ fill: #b35900; }}
</style></head><body>
<h3>{html.escape(title)}: federated sequence diagram</h3>{note}
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" id="sequence">
<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
<path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>
{heads}
{"".join(shapes)}
</svg></body></html>
"""


def _arrow(x1: int, y1: int, x2: int, y2: int, label: str, cls: str) -> str:
    if x1 == x2:  # to itself: a small loop
        return (f'<path d="M {x1} {y1} C {x1 + 40} {y1} {x1 + 40} {y2 + 10} {x2} {y2 + 10}" fill="none" '
                f'class="{cls}" marker-end="url(#head)"/><text x="{x1 + 44}" y="{y1 + 8}" class="lbl">'
                f"{html.escape(label)}</text>")
    mx = (x1 + x2) // 2
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="{cls}" marker-end="url(#head)"/>'
            f'<text x="{mx}" y="{(y1 + y2) // 2 - 3}" class="lbl" text-anchor="middle">{html.escape(label)}</text>')


def write_sequence(directory: str | os.PathLike[str], out: str | os.PathLike[str], **kwargs: Any) -> None:
    """Draw ``directory``'s trace as a sequence diagram into ``out`` (HTML)."""
    Path(out).write_text(sequence_html(load(directory), **kwargs))
