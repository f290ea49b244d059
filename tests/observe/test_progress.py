"""A program's progress for a person (``Reactor.report_progress``): the report's checks,
the run's board, and the ``/status`` and ``/metrics`` of ``reactorfed run`` (``serve_metrics``)."""

from __future__ import annotations

import json
import math
import threading
import urllib.request
from typing import Any

import numpy as np
import pytest

from reactorfed import STARTUP, Environment, Reactor, Timer, ValidationError, ms, reaction
from reactorfed.observe.metrics import serve_metrics
from reactorfed.observe.progress import MAX_FIGURES, ProgressBoard, ProgressReport, check_progress


def test_a_report_keeps_ints_and_floats_and_leaves_out_what_is_not_known() -> None:
    r = check_progress(37, 400, {"env_steps": np.int64(12_800), "mean_return": np.float64(212.4), "eps": math.nan})
    assert r == ProgressReport(37, 400, {"env_steps": 12_800, "mean_return": 212.4})
    assert type(r.figures["env_steps"]) is int and type(r.figures["mean_return"]) is float
    assert r.json() == {"done": 37, "total": 400, "figures": {"env_steps": 12_800, "mean_return": 212.4}}
    assert check_progress(figures={"loss": 0.5}).json() == {"figures": {"loss": 0.5}}
    assert check_progress(5).json() == {"done": 5}
    assert check_progress(450, 400).done == 450  # past its total (a run resumed with fewer iterations): shown as is


@pytest.mark.parametrize(
    ("done", "total", "figures", "names"),
    [
        (-1, None, {}, "done"),
        (1.5, None, {}, "done"),
        (True, None, {}, "done"),
        ("3", None, {}, "done"),
        (1, -1, {}, "total"),
        (1, 2.0, {}, "total"),
        (None, 10, {}, "total"),
        (1, 2, {"return": "high"}, "figure return"),
        (1, 2, {"ok": True}, "figure ok"),
        (1, 2, {"big": math.inf}, "figure big"),
        (1, 2, {"huge": 2**63}, "figure huge"),
        (1, 2, {"no spaces": 1}, "'no spaces'"),
        (1, 2, {"9lives": 1}, "'9lives'"),
        (1, 2, {"x" * 33: 1}, "x" * 33),
        (1, 2, {f"f{i}": i for i in range(MAX_FIGURES + 1)}, "figures"),
    ],
)
def test_a_bad_field_is_named(done: Any, total: Any, figures: dict[str, Any], names: str) -> None:
    with pytest.raises(ValidationError, match=names):
        check_progress(done, total, figures)


def test_the_board_counts_reports() -> None:
    board = ProgressBoard()
    assert board.latest() == (0, None) and board.json() is None
    board.report(check_progress(1, 3))
    board.report(check_progress(2, 3))
    assert board.latest() == (2, ProgressReport(2, 3))
    assert board.json() == {"done": 2, "total": 3}


class Counter(Reactor):
    tick = Timer(0, ms(1))

    def __init__(self, total: int) -> None:
        self.total, self.i = total, 0

    @reaction(triggers=[tick])
    def step(self) -> None:
        self.i += 1
        self.report_progress(done=self.i, total=self.total, mean_return=self.i / 2)
        if self.i == self.total:
            self.request_stop()


def test_a_reactor_reports_on_its_runs_board() -> None:
    env = Environment(fast=True)
    sched = env.assemble(Counter(5))
    env.run()
    assert sched.progress.json() == {"done": 5, "total": 5, "figures": {"mean_return": 2.5}}
    assert sched.progress.latest()[0] == 5


def test_reporting_outside_a_run_or_a_bad_field_is_an_error() -> None:
    with pytest.raises(ValidationError, match="not running"):
        Counter(1).report_progress(done=1)

    class Bad(Reactor):
        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            self.report_progress(done=1, total=10, steps="many")  # type: ignore[arg-type]

    with pytest.raises(Exception, match="figure steps must be a number"):
        Environment(fast=True).run(Bad())


def _status(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5) as r:
        return dict(json.loads(r.read()))


class Gate(Reactor):
    """Reports (or not) at startup, then waits in its second reaction until the test read /status."""

    tick = Timer(ms(1))

    def __init__(self, report: bool, read: threading.Event) -> None:
        self.report, self.read = report, read

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        if self.report:
            self.report_progress(done=3, total=4, env_steps=30)

    @reaction(triggers=[tick])
    def wait(self) -> None:
        assert self.read.wait(10)


@pytest.mark.parametrize("report", [True, False])
def test_the_status_of_a_run_shows_its_progress_or_none(report: bool) -> None:
    read = threading.Event()
    env = Environment(fast=True)
    env.assemble(Gate(report, read))
    server = serve_metrics(env, port=0, addr="127.0.0.1")
    run = threading.Thread(target=env.run)
    run.start()
    try:
        deadline = 100
        while deadline and not (_status(server.port).get("tags") or 0):
            deadline -= 1
            threading.Event().wait(0.05)
        st = _status(server.port)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as r:
            metrics = [line for line in r.read().decode().splitlines() if line.startswith("reactorfed_progress")]
        if report:
            assert st["progress"] == {"done": 3, "total": 4, "figures": {"env_steps": 30}}
            # the same report as gauges, a figure by its label (the dashboard's env steps per second)
            assert metrics == ["reactorfed_progress_done 3.0", "reactorfed_progress_total 4.0",
                               'reactorfed_progress_figure{figure="env_steps"} 30.0']
        else:
            assert "progress" not in st and "tag" in st  # logical time only, as before
            assert metrics == []
    finally:
        read.set()
        run.join(10)
        server.close()


def test_a_history_keeps_the_whole_run_at_a_coarser_grain_and_the_latest_report() -> None:
    from reactorfed.observe.progress import ProgressHistory, ProgressReport

    h = ProgressHistory(capacity=8)
    for i in range(1, 101):
        h.add("learner", 1000 * i, ProgressReport(i, 100, {"mean_return": i / 2} if i > 3 else {}))
    curve = h.json()["learner"]
    assert curve["reports"] == 100
    assert len(curve["done"]) <= 8 + 1
    assert curve["done"][0] == 1 and curve["done"][-1] == 100  # the first and the latest
    assert curve["done"] == sorted(curve["done"])
    steps = {b - a for a, b in zip(curve["done"][:-2], curve["done"][1:-1], strict=True)}
    assert len(steps) == 1  # evenly spaced (the latest aside)
    assert curve["t_ns"] == [1000 * d for d in curve["done"]]
    assert curve["figures"]["mean_return"] == [None if d <= 3 else d / 2 for d in curve["done"]]
    h.add("other", None, ProgressReport(None, None, {}))
    assert h.json()["other"] == {"reports": 1, "t_ns": [None], "done": [None], "figures": {}}
