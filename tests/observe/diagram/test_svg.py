"""Reactor diagrams: every reactor, port, reaction and connection of a program is drawn,
with delays, physical connections dashed, banks as one box with their width, and the
federates' boundaries."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from reactorfed import (
    STARTUP,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble
from reactorfed.observe.diagram import program_svg

SVG = "{http://www.w3.org/2000/svg}"


class Source(Reactor):
    out = Output(int)
    t = Timer(0, ms(10))

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1)


class Stage(Reactor):
    inp = Input(int)
    out = Output(int)
    again = LogicalAction()

    @reaction(triggers=[inp], effects=[out, again])
    def work(self, inp: Any, out: Any, again: Any) -> None:
        out.set(inp.get())

    @reaction(triggers=[again])
    def later(self, again: Any) -> None:
        pass


class Inner(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.a = Stage()
        self.b = Stage()
        self.connect(self.inp, self.a.inp)
        self.connect(self.a.out, self.b.inp, after=ms(5))
        self.connect(self.b.out, self.out)


class Sink(Reactor):
    inp = Input(int, width=3)
    back = Output(int)
    p = PhysicalAction()

    @reaction(triggers=[inp, STARTUP], effects=[back])
    def got(self, inp: Any, back: Any) -> None:
        pass


class Program(Reactor):
    def __init__(self) -> None:
        self.src = bank(Source, 3)
        self.inner = Inner()
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp)
        self.connect(self.sink.back, self.inner.inp, after=0)


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_every_reactor_port_reaction_and_connection_is_drawn() -> None:
    main = Program()
    prog = assemble(main)
    root = _parse(program_svg(prog))
    groups = {g.get("data-fqn") for g in root.iter(f"{SVG}g")}
    # a bank is drawn once (its first member), everything else each
    assert groups == {"Program", "Program.src[0]", "Program.inner", "Program.inner.a", "Program.inner.b", "Program.sink"}
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "src \u00d7 3" in texts and "inp[3]" in texts and "back" in texts
    for port in ("inp", "out"):
        assert texts.count(port) >= 3
    assert "action again" in " ".join(t for t in texts if t) and "physical action p" in " ".join(t for t in texts if t)
    reactions = [p for p in root.iter(f"{SVG}path") if p.get("class") == "reaction"]
    assert len(reactions) == 1 + 2 + 2 + 1  # the bank's member once: emit, work+later x2, got
    conns = {(p.get("data-src"), p.get("data-dst")) for p in root.iter(f"{SVG}path") if "conn" in (p.get("class") or "")}
    assert ("Program.sink.back", "Program.inner.inp") in conns
    assert ("Program.inner.inp", "Program.inner.a.inp") in conns
    assert ("Program.inner.a.out", "Program.inner.b.inp") in conns
    assert ("Program.inner.b.out", "Program.inner.out") in conns
    assert ("Program.src[0].out", "Program.sink.inp[0]") in conns
    assert "after 5 ms" in texts and "after 0" in texts


class Physical(Reactor):
    def __init__(self) -> None:
        self.a = Source()
        self.b = Stage()
        self.connect(self.a.out, self.b.inp, physical=True)


def test_a_physical_connection_is_dashed_and_federates_have_a_boundary() -> None:
    root = _parse(program_svg(assemble(Physical()), federated=True))
    conn = next(p for p in root.iter(f"{SVG}path") if "conn" in (p.get("class") or ""))
    assert conn.get("class") == "conn physical"
    feds = [g.get("data-fqn") for g in root.iter(f"{SVG}g") if g.get("class") == "federate"]
    assert feds == ["Physical.a", "Physical.b"]
    plain = _parse(program_svg(assemble(Physical())))
    assert not [g for g in plain.iter(f"{SVG}g") if g.get("class") == "federate"]
