"""A reactor program drawn as Lingua Franca draws it, in SVG: reactors nested in their
containers, inputs on the left edge and outputs on the right, reactions in declaration
order (numbered chevrons), timers and actions, the connections between ports with their
delays (physical ones dashed), banks as one box marked with their width, and, for a
federated program, each federate's boundary.

The layout is a simple layered one: a container's children go into columns by the
longest chain of connections that reaches them (delayed connections do not count, so a
feedback loop does not push its source to the right), one under another in a column.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from ...assembly.program import Program
from ...model.action import ActionDecl
from ...model.port import Port
from ...model.reactor import Reactor
from ...model.timer import Timer
from ...time.duration import format_duration

__all__ = ["program_svg"]

_PORT = 14  # between ports on an edge
_HEAD = 34  # a box's title and reaction row
_PAD = 16
_GAP = 60  # between columns
_VGAP = 18
_LEAF_W = 150
_BANK = re.compile(r"^(.*)\[(\d+)\]$")


@dataclass
class _Box:
    reactor: Reactor
    label: str
    width: int = 0
    height: int = 0
    x: int = 0
    y: int = 0
    children: list[_Box] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # port names (a multiport once, with its width)
    outputs: list[str] = field(default_factory=list)
    widths: dict[str, int] = field(default_factory=dict)
    reactions: list[str] = field(default_factory=list)
    elements: list[str] = field(default_factory=list)  # timers and actions
    bank: int = 1  # members drawn as this one box
    federate: bool = False


def _visible(children: list[Reactor]) -> list[tuple[Reactor, int]]:
    """The children to draw, a bank's members once (the first, with the bank's width)."""
    out: list[tuple[Reactor, int]] = []
    banks: dict[str, int] = {}
    for c in children:
        m = _BANK.match(c.name)
        if m is None:
            out.append((c, 1))
            continue
        base = m.group(1)
        if base in banks:
            r, n = out[banks[base]]
            out[banks[base]] = (r, n + 1)
        else:
            banks[base] = len(out)
            out.append((c, 1))
    return out


class _Drawing:
    def __init__(self, prog: Program, federated: bool) -> None:
        self.prog = prog
        self.federated = federated
        self.ports: dict[Reactor, list[Port[Any]]] = {}
        for ch in prog.channels:
            self.ports.setdefault(ch.reactor, []).append(ch)
        self.rx: dict[Reactor, list[Any]] = {}
        for rx in sorted(prog.reactions, key=lambda r: r.index):
            self.rx.setdefault(rx.reactor, []).append(rx)
        self.where: dict[tuple[Reactor, str], tuple[int, int]] = {}  # (reactor, port name) -> point
        self.shown: dict[Reactor, Reactor] = {}  # a bank member -> the member drawn
        self.out: list[str] = []
        self.bottom = 0  # the drawing's lowest box edge: feedback connections run below it
        self.lanes = 0

    # -- sizes ---------------------------------------------------------------------------
    def box(self, r: Reactor, bank: int = 1, federate: bool = False) -> _Box:
        base = _BANK.sub(r"\1", r.name)
        label = r.name if bank == 1 else f"{base} × {bank}"  # noqa: RUF001 (a drawing's label)
        b = _Box(r, label, bank=bank, federate=federate)
        for p in self.ports.get(r, []):
            name = p.decl.name
            lst = b.inputs if p.is_input else b.outputs
            if name not in lst:
                lst.append(name)
            b.widths[name] = b.widths.get(name, 0) + 1
        for rx in self.rx.get(r, []):
            b.reactions.append(rx.decl.name)
        for name in sorted(dir(type(r))):  # its timers and actions, declared on its class
            decl = getattr(type(r), name, None)
            if isinstance(decl, Timer):
                b.elements.append(f"timer {name}")
            elif isinstance(decl, ActionDecl):
                b.elements.append(f"{'physical action' if decl.physical else 'action'} {name}")
        kids = _visible(r.children)
        for child, n in kids:
            b.children.append(self.box(child, n, federate=self.federated and r.parent is None))
        cols = self.columns(r, [k.reactor for k in b.children])
        col_w: dict[int, int] = {}
        col_h: dict[int, int] = {}
        for k, c in zip(b.children, cols, strict=True):
            col_w[c] = max(col_w.get(c, 0), k.width)
            col_h[c] = col_h.get(c, 0) + k.height + _VGAP
        inner_w = sum(col_w.values()) + _GAP * max(len(col_w) - 1, 0)
        inner_h = max(col_h.values(), default=0)
        ports_h = _PORT * (max(len(b.inputs), len(b.outputs)) + 1)
        el_h = 14 if b.elements else 0
        b.width = max(_LEAF_W, inner_w + 2 * _PAD + 2 * _GAP * bool(b.children), 22 * len(b.reactions) + 2 * _PAD)
        b.height = _HEAD + el_h + max(ports_h, inner_h + _PAD)
        # place the children (relative to the box, shifted when the box is placed)
        x = _PAD + (_GAP if b.children else 0)
        offsets: dict[int, int] = {}
        for c in sorted(col_w):
            offsets[c] = x
            x += col_w[c] + _GAP
        ys: dict[int, int] = {}
        for k, c in zip(b.children, cols, strict=True):
            k.x = offsets[c]
            k.y = _HEAD + el_h + ys.get(c, _PAD // 2)
            ys[c] = k.y - _HEAD - el_h + k.height + _VGAP
        return b

    def columns(self, parent: Reactor, kids: list[Reactor]) -> list[int]:
        """Each child's column: the longest chain of connections that reaches it, a
        feedback connection (one that closes a cycle, found depth first in declaration
        order) left out."""
        index = {k: i for i, k in enumerate(kids)}
        owner = {d: k for k in kids for d in _descendants(k)}
        succ: dict[int, list[int]] = {i: [] for i in range(len(kids))}
        for dst, w in self.prog.wires.items():
            a, b = owner.get(w.src.reactor), owner.get(dst.reactor)
            if a is not None and b is not None and a is not b and index[b] not in succ[index[a]]:
                succ[index[a]].append(index[b])
        state = [0] * len(kids)  # 0 new, 1 on the path, 2 done
        order: list[int] = []
        forward: dict[int, list[int]] = {i: [] for i in range(len(kids))}

        def visit(i: int) -> None:
            state[i] = 1
            for j in succ[i]:
                if state[j] == 1:
                    continue  # a feedback connection
                forward[i].append(j)
                if state[j] == 0:
                    visit(j)
            state[i] = 2
            order.append(i)

        for i in range(len(kids)):
            if state[i] == 0:
                visit(i)
        col = [0] * len(kids)
        for i in reversed(order):  # a topological order of the forward connections
            for j in forward[i]:
                col[j] = max(col[j], col[i] + 1)
        return col

    # -- drawing -------------------------------------------------------------------------
    def draw(self, b: _Box, ox: int, oy: int) -> None:
        x, y = ox + b.x, oy + b.y
        cls = "federate" if b.federate else "reactor"
        self.out.append(f'<g class="{cls}" data-fqn="{html.escape(b.reactor.fqn)}">'
                        f'<rect x="{x}" y="{y}" width="{b.width}" height="{b.height}" rx="8" class="{cls}"/>'
                        f'<text x="{x + 8}" y="{y + 14}" class="name">{html.escape(b.label)}</text>')
        if b.bank > 1:
            self.out.append(f'<rect x="{x + 4}" y="{y + 4}" width="{b.width}" height="{b.height}" rx="8" class="bankshadow"/>')
        for i, name in enumerate(b.reactions):
            cx = x + _PAD + 22 * i
            self.out.append(f'<path d="M {cx} {y + 19} h 14 l 5 6 l -5 6 h -14 l 5 -6 z" class="reaction">'
                            f'<title>{html.escape(name)}</title></path>'
                            f'<text x="{cx + 7}" y="{y + 29}" class="rnum">{i + 1}</text>')
        if b.elements:
            self.out.append(f'<text x="{x + _PAD}" y="{y + _HEAD + 10}" class="elem">'
                            f"{html.escape(', '.join(b.elements))}</text>")
        for side, names in ((0, b.inputs), (1, b.outputs)):
            px = x if side == 0 else x + b.width
            for i, name in enumerate(names):
                py = y + _HEAD + 10 + _PORT * (i + 1)
                w = b.widths.get(name, 1) // max(b.bank, 1) if b.bank > 1 else b.widths.get(name, 1)
                label = name if w <= 1 else f"{name}[{w}]"
                tri = (f"{px - 6},{py - 5} {px},{py} {px - 6},{py + 5}" if side == 0
                       else f"{px},{py - 5} {px + 6},{py} {px},{py + 5}")
                anchor, tx = ("start", px + 4) if side == 0 else ("end", px - 4)
                self.out.append(f'<polygon points="{tri}" class="port {"input" if side == 0 else "output"}"/>'
                                f'<text x="{tx}" y="{py + 4}" class="port" text-anchor="{anchor}">{html.escape(label)}</text>')
                self.where[(b.reactor, name)] = (px - 6 if side == 0 else px + 6, py)
        for k in b.children:
            self.draw(k, x, y)
        self.out.append("</g>")

    def connections(self, root: _Box) -> None:
        for k in _all(root):
            for m in _descendants(k.reactor):
                self.shown.setdefault(m, m)
            if k.bank > 1:
                base = _BANK.sub(r"\1", k.reactor.name)
                parent = k.reactor.parent
                if parent is not None:
                    for c in parent.children:
                        mm = _BANK.match(c.name)
                        if mm and mm.group(1) == base:
                            for a, b in zip(_descendants(c), _descendants(k.reactor), strict=False):
                                self.shown[a] = b
        seen: set[tuple[Any, ...]] = set()
        for dst, w in self.prog.wires.items():
            s = self.where.get((self.shown.get(w.src.reactor, w.src.reactor), w.src.decl.name))
            d = self.where.get((self.shown.get(dst.reactor, dst.reactor), dst.decl.name))
            if s is None or d is None:
                continue
            key = (s, d, w.delay, w.physical)
            if key in seen:
                continue
            seen.add(key)
            cls = "conn physical" if w.physical else "conn"
            if d[0] > s[0] + 20:  # forward: an S curve
                mx = (s[0] + d[0]) // 2
                path = f"M {s[0]} {s[1]} C {mx} {s[1]} {mx} {d[1]} {d[0]} {d[1]}"
            else:  # back to an earlier column: around, below every box (a lane each)
                lane = self.bottom + 12 + 8 * self.lanes
                self.lanes += 1
                r, left = s[0] + 10 + 3 * self.lanes, d[0] - 10 - 3 * self.lanes
                path = f"M {s[0]} {s[1]} H {r} V {lane} H {left} V {d[1]} H {d[0]}"
            self.out.append(f'<path d="{path}" class="{cls}" marker-end="url(#arrow)" '
                            f'data-src="{html.escape(w.src.fqn)}" data-dst="{html.escape(dst.fqn)}"/>')
            if w.delay is not None:
                label = "after 0" if w.delay == 0 else f"after {format_duration(w.delay)}"
                self.out.append(f'<text x="{s[0] + 6}" y="{s[1] - 4}" class="delay">{html.escape(label)}</text>')


def _descendants(r: Reactor) -> list[Reactor]:
    out = [r]
    for c in r.children:
        out += _descendants(c)
    return out


def _all(b: _Box) -> list[_Box]:
    out = [b]
    for k in b.children:
        out += _all(k)
    return out


_STYLE = """
rect.reactor { fill: #f6f8fa; stroke: #57606a; }
rect.federate { fill: #fff8e6; stroke: #b35900; stroke-width: 2; stroke-dasharray: 8 4; }
rect.bankshadow { fill: none; stroke: #8c959f; }
text.name { font: bold 12px sans-serif; }
text.port, text.elem, text.delay, text.rnum { font: 10px sans-serif; }
text.rnum { text-anchor: middle; fill: white; }
path.reaction { fill: #57606a; }
polygon.port { fill: #1f2328; }
path.conn { fill: none; stroke: #0969da; stroke-width: 1.3; }
path.conn.physical { stroke-dasharray: 6 4; }
text.delay { fill: #0969da; text-anchor: start; }
"""


def program_svg(prog: Program, *, federated: bool = False) -> str:
    """The drawing of an assembled program (``assemble(main)``) as an SVG document; with
    ``federated``, main's children are drawn as federates."""
    d = _Drawing(prog, federated)
    root = d.box(prog.main)
    d.draw(root, 10, 10)
    d.bottom = 10 + root.height
    d.connections(root)
    w, h = root.width + 60, root.height + 40 + 8 * d.lanes
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'class="reactorfed-program"><style>{_STYLE}</style><defs><marker id="arrow" viewBox="0 0 10 10" '
            'refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            '<path d="M 0 0 L 10 5 L 0 10 z" fill="#0969da"/></marker></defs>'
            + "".join(d.out) + "</svg>\n")
