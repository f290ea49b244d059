"""The RTI's live page in a real browser (headless Chromium driven by Playwright) against a
running federation of real processes: the program's diagram with each federate's logical
time and lag on it, the elastic bank's slots, the learner's curves; the numbers change as
the federation runs and are the ones ``/status`` and ``/history`` serve. (The docs'
screenshot, of Q-learning training: scripts/live_page_screenshot.py.)"""

from __future__ import annotations

import io
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reactorfed.observe.page import live_pages
from reactorfed.observe.status import StatusServer

from ...federation.processes import get, processes, status
from ..browser import chromium, watch_console

PROGRAM = f"{Path(__file__).with_name('live_programs.py')}:Main"


def test_the_page_its_diagram_and_history_are_served_status_stays_json() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><g class="federate" data-fqn="Main.a"/></svg>'
    srv = StatusServer(0, [], lambda: {"phase": "running"}, host="127.0.0.1",
                       pages=live_pages(svg, lambda: {"a": {"reports": 1, "t_ns": [5], "done": [1], "figures": {}}}))
    try:
        page = get(srv.port, "/")
        assert page.startswith("<!DOCTYPE html>") and "<script>" in page
        assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing from elsewhere
        assert get(srv.port, "/diagram.svg") == svg
        assert json.loads(get(srv.port, "/history"))["a"]["t_ns"] == [5]
        assert json.loads(get(srv.port, "/status")) == {"phase": "running"}
    finally:
        srv.close()
    plain = StatusServer(0, [], lambda: {"phase": "running"}, host="127.0.0.1")  # a federate's: / is /status
    try:
        assert json.loads(get(plain.port, "/")) == {"phase": "running"}
    finally:
        plain.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium (first: a missing one is said before any process starts)."""
    with chromium() as b:
        yield b


@pytest.fixture
def federation(tmp_path: Path) -> Iterator[tuple[int, Callable[[str], None]]]:
    """The RTI's status port, and a function that starts one more federate."""
    with processes(tmp_path, PROGRAM, "live-page", "60s", time.monotonic() + 40) as fed:

        def federate(name: str) -> None:
            fed.federate(name)

        for name in ("learner", "samplers[0]", "samplers[1]"):
            federate(name)
        yield fed.status_port, federate


def _wait(what: str, cond: Callable[[], Any], timeout: float = 40) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f} s"


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_the_live_page_follows_a_running_federation(browser: Any, federation: tuple[int, Callable[[str], None]],
                                                     tmp_path: Path) -> None:
    port, start_federate = federation
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = watch_console(page)
    page.goto(f"http://127.0.0.1:{port}/?interval=200")

    def polls() -> int:
        return int(page.evaluate("Number(document.body.dataset.polls || 0)"))

    def after_next_polls(n: int = 2) -> None:  # the page has read /status since now
        p0 = polls()
        _wait("the page's polls", lambda: polls() >= p0 + n)

    def cells() -> dict[tuple[str, str], tuple[str, str]]:
        return {(c["f"], c["k"]): (c["v"], c["t"]) for c in page.eval_on_selector_all(
            "#federates td[data-field]",
            "tds => tds.map(td => ({f: td.dataset.federate, k: td.dataset.field, v: td.dataset.value, t: td.textContent}))")}

    # the program's diagram: the learner's box and the samplers' bank, drawn once
    _wait("the diagram", lambda: page.locator("#diagram svg g.federate").count() == 2)
    assert page.eval_on_selector_all("#diagram g.federate", "gs => gs.map(g => g.dataset.fqn)") == [
        "Main.learner", "Main.samplers[0]"]
    # the learner has reported and the page has read it
    _wait("the learner's progress on /status", lambda: status(port).get("progress", {}).get("done", 0) > 5)

    # the page's numbers are /status's: each between what /status said before and after
    first_elapsed = None
    for _ in range(2):
        before = status(port)
        after_next_polls()
        # (the value and its text read at once: the page may poll again between two reads)
        shown, (value, text) = cells(), page.eval_on_selector("#elapsed", "e => [e.dataset.value, e.textContent]")
        elapsed = int(value or 0)
        after = status(port)
        assert before["elapsed_ns"] <= elapsed <= after["elapsed_ns"]
        assert text == _seconds(elapsed)
        for name in ("learner", "samplers[0]", "samplers[1]"):
            value, text = shown[(name, "ltc_elapsed_ns")]
            t = int(value)
            assert before["federates"][name]["ltc_elapsed_ns"] <= t <= after["federates"][name]["ltc_elapsed_ns"]
            assert text == _seconds(t)
            assert shown[(name, "state")][0] == "running"
            assert shown[(name, "lag_ns")][1] == _seconds(int(shown[(name, "lag_ns")][0]))
        done = int(shown[("learner", "done")][0])
        assert before["federates"]["learner"]["progress"]["done"] <= done <= after["federates"]["learner"]["progress"]["done"]
        assert shown[("samplers[2]", "state")][0] == "absent"
        # and they change: logical time went on between the two rounds
        if first_elapsed is not None:
            assert elapsed > first_elapsed
        first_elapsed = elapsed
        time.sleep(0.5)

    # on the diagram: the learner's time and lag, the bank's slots (2 of 3 present)
    learner_text = page.text_content("#diagram text.live[data-federate='learner']") or ""
    assert learner_text.startswith("t ") and " s · lag " in learner_text
    assert (page.text_content("#diagram text.live[data-federate='samplers']") or "").startswith("2/3 · t ")
    assert page.eval_on_selector_all("#diagram circle.slot", "cs => cs.map(c => c.classList.contains('present'))") == [
        True, True, False]
    assert page.get_attribute("#banks p[data-bank='samplers']", "data-present") == "2"

    # the curves: the learner's figures, as many points as /history has (or one more: newer)
    _wait("the curves", lambda: page.locator("#curves .chart[data-federate='learner']").count() == 2)
    # a report reaches the RTI at most once a second: wait for a second point, and for the page to draw it
    _wait("a second point", lambda: len(json.loads(get(port, "/history"))["learner"]["done"]) >= 2)
    _wait("a second point drawn", lambda: int(page.get_attribute(
        "#curves .chart[data-figure='learner: mean_return']", "data-points") or 0) >= 2)
    history = json.loads(get(port, "/history"))["learner"]
    assert set(history["figures"]) == {"env_steps", "mean_return"}
    charts = {c["f"]: int(c["n"]) for c in page.eval_on_selector_all(
        "#curves .chart", "ds => ds.map(d => ({f: d.dataset.figure, n: d.dataset.points}))")}
    n = len(history["done"])
    assert n >= 2 and all(abs(v - n) <= 1 for v in charts.values()), (charts, n)
    grown = _wait("the curves to grow", lambda: int(page.get_attribute(
        "#curves .chart[data-figure='learner: mean_return']", "data-points") or 0) > charts["learner: mean_return"])
    assert grown

    # a third sampler joins the running federation: its slot fills on the page
    start_federate("samplers[2]")
    _wait("the join on the page", lambda: page.get_attribute("#banks p[data-bank='samplers']", "data-present") == "3",
          timeout=60)
    after_next_polls()
    assert (page.text_content("#diagram text.live[data-federate='samplers']") or "").startswith("3/3 · t ")
    assert "samplers[2] joined" in page.inner_text("#membership")

    shot = page.screenshot(full_page=True)
    (tmp_path / "live-page.png").write_bytes(shot)
    assert errors == []
    _not_blank(shot)


def _not_blank(png: bytes) -> None:
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    lo, hi = img.getextrema()
    assert hi - lo > 100 and len(img.getcolors(1 << 16) or []) > 20, "a blank screenshot"


def test_a_diagram_is_valid_svg_for_the_page() -> None:
    """The diagram the RTI serves is the program's, drawn federated."""
    from reactorfed.assembly.assemble import assemble
    from reactorfed.cli.loader import load_program
    from reactorfed.observe.diagram import program_svg

    root = ET.fromstring(program_svg(assemble(load_program(PROGRAM, {})), federated=True))
    feds = [g.get("data-fqn") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "federate"]
    assert feds == ["Main.learner", "Main.samplers[0]"]


def test_the_page_is_package_data_so_a_wheel_serves_it() -> None:
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[3]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["reactorfed"]
    pkg = root / "runtime" / "reactorfed"
    data = [p.relative_to(pkg).as_posix() for p in (pkg / "observe" / "page").iterdir()
            if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert data == ["observe/page/live.html"]
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in data), (data, globs)
