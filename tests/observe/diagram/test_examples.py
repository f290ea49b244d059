"""The examples' diagrams: docs/diagrams/ has one for every example program, each the
one ``reactorfed diagram PROGRAM --federated`` draws today, and each draws in a real
browser (headless Chromium): every reactor, port, connection and label it holds is
rendered with a non-empty box inside the drawing's viewport, with no console error and
a screenshot that is not blank.

``REACTORFED_UPDATE_DOCS=1`` rewrites docs/diagrams/ from the examples."""

from __future__ import annotations

import io
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from reactorfed.assembly.assemble import assemble
from reactorfed.cli.loader import load_program
from reactorfed.observe.diagram import program_svg

from ..browser import chromium, watch_console

ROOT = Path(__file__).resolve().parents[3]
DIAGRAMS = ROOT / "docs" / "diagrams"
SVG = "{http://www.w3.org/2000/svg}"


def _programs() -> dict[str, str]:
    """docs/diagrams/NAME.svg -> its program: every example's ``Main`` (and the data-parallel
    example's parameter server)."""
    out = {}
    for path in sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("examples/rl/*.py")]):
        if re.search(r"^class Main\b", path.read_text(), re.M):
            out[path.stem] = f"{path.relative_to(ROOT)}:Main"
    out["ppo_data_parallel_cartpole-ParamServer"] = "examples/rl/ppo_data_parallel_cartpole.py:ParamServer"
    return out


PROGRAMS = _programs()


@pytest.fixture(scope="module")
def drawn() -> dict[str, str]:
    """Each example drawn now (importing the examples imports torch: once for all)."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return {name: program_svg(assemble(load_program(spec, {})), federated=True) for name, spec in PROGRAMS.items()}
    finally:
        os.chdir(cwd)


@pytest.mark.slow
def test_the_docs_have_every_examples_diagram_as_drawn_today(drawn: dict[str, str]) -> None:
    assert len(PROGRAMS) >= 12
    if os.environ.get("REACTORFED_UPDATE_DOCS") == "1":
        for name, svg in drawn.items():
            (DIAGRAMS / f"{name}.svg").write_text(svg)
    on_disk = {p.stem for p in DIAGRAMS.glob("*.svg")}
    assert on_disk == set(PROGRAMS), "docs/diagrams/ and the examples differ (REACTORFED_UPDATE_DOCS=1 redraws)"
    stale = [name for name, svg in drawn.items() if (DIAGRAMS / f"{name}.svg").read_text() != svg]
    assert not stale, f"stale diagrams in docs/diagrams/: {stale} (REACTORFED_UPDATE_DOCS=1 redraws them)"


# Every drawn element's box, in the page's pixels, with the drawing's own.
_BOXES = """svg => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const kind = e => e.matches("g[data-fqn]") ? "reactor" : e.matches("polygon.port") ? "port"
    : e.matches("path.conn") ? "connection" : e.matches("path.reaction") ? "reaction" : "text";
  const els = [...svg.querySelectorAll("g[data-fqn] > rect:first-of-type, polygon.port, path.conn, path.reaction, text")];
  return {view: box(svg), items: els.map(e => ({kind: kind(e.matches("rect") ? e.parentNode : e), box: box(e),
    id: e.parentNode.dataset.fqn || e.dataset.src || e.textContent,
    length: e.getTotalLength ? e.getTotalLength() : null}))};
}"""


def _counts(svg: str) -> dict[str, int]:
    root = ET.fromstring(svg)
    cls = [(e.tag, e.get("class") or "") for e in root.iter()]
    return {
        "reactor": sum(1 for t, _ in cls if t == f"{SVG}g"),
        "port": sum(1 for t, c in cls if t == f"{SVG}polygon" and "port" in c.split()),
        "connection": sum(1 for t, c in cls if t == f"{SVG}path" and "conn" in c.split()),
        "reaction": sum(1 for t, c in cls if t == f"{SVG}path" and c == "reaction"),
        "text": sum(1 for t, _ in cls if t == f"{SVG}text"),
    }


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_every_examples_diagram_renders_in_chromium(drawn: dict[str, str], tmp_path: Path) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        errors = watch_console(page)
        for name, svg in drawn.items():
            page.set_content(f"<!DOCTYPE html><html><body style='margin:0;background:#fff'>{svg}</body></html>")
            got: dict[str, Any] = page.eval_on_selector("svg.reactorfed-program", _BOXES)
            vx, vy, vw, vh = got["view"]
            assert vw > 0 and vh > 0, name
            seen = {k: 0 for k in ("reactor", "port", "connection", "reaction", "text")}
            for item in got["items"]:
                seen[item["kind"]] += 1
                x, y, w, h = item["box"]
                what = f"{name}: {item['kind']} {item['id']!r} at {item['box']}"
                if item["kind"] == "connection":  # (a straight one is flat: one side of its box is 0)
                    assert item["length"] > 0 and w + h > 0, f"{what}: not drawn"
                else:
                    assert w > 0 and h > 0, f"{what}: not drawn"
                assert vx - 1 <= x and x + w <= vx + vw + 1 and vy - 1 <= y and y + h <= vy + vh + 1, f"{what}: outside {got['view']}"
            assert seen == _counts(svg), name  # every element of the file was rendered
            assert seen["reactor"] >= 2 and seen["port"] >= 2 and seen["connection"] >= 1, name
            shot = page.locator("svg.reactorfed-program").screenshot()
            (tmp_path / f"{name}.png").write_bytes(shot)
            _not_blank(shot, name)
        assert errors == []


def _not_blank(png: bytes, name: str) -> None:
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    lo, hi = img.getextrema()
    dark = sum(img.histogram()[:128])
    assert hi - lo > 100 and dark > 200, f"{name}: the rendered diagram is blank"
