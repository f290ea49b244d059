"""The chart's Grafana dashboard against a real Prometheus: a federation of real processes
trains (APPO: an RTI, a learner, two samplers, each serving ``/metrics``), a Prometheus
built from its Go module (``scripts/prometheus.sh``) scrapes all four every second, and
every query of every panel of ``charts/reactorfed-operator/dashboards/reactorfed.json``
(the chart's file, the one copy), sent to Prometheus's HTTP API, returns a non-empty series
for each federate it should show, each carrying the labels its legend names, with a
number for a value.

Grafana's variables are put in as Grafana would: ``$federation`` is the federation's label
(the PodMonitor's relabelling gives every series its pod's; here the scrape config's
static labels do), ``$__rate_interval`` four scrape intervals (Grafana's least).

The scrape interval here (1 s) is for a test of a few seconds, not a setting to copy: the
metrics are read at scrape time, and a scrape holds the scraped process's GIL while it
writes the text (the test prints how long, for the learner: the largest /metrics), so a
Prometheus that scrapes too often takes that time, over and over, from the reactions; the
chart's PodMonitor scrapes every 15 s, and below ~5 s buys nothing the dashboard shows
(docs/observability.md)."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.ports import free_port

from ..federation.processes import Processes, get, processes
from .prometheus import Prometheus, require_prometheus

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "charts" / "reactorfed-operator" / "dashboards" / "reactorfed.json"
PROGRAM = f"{REPO / 'tests' / 'rl' / 'async_programs.py'}:SlowAPPO"
FEDERATION = "dash-test"
INTERVAL_S = 1
RATE_INTERVAL = f"{4 * INTERVAL_S}s"

EVERYONE = {"learner", "samplers[0]", "samplers[1]"}
LEARNER = {"learner"}
#: each panel (by title): the federates its series must cover (None: the RTI's whole-
#: federation series, no federate label). A panel missing here fails the test: a new panel
#: says what it shows.
EXPECTED: dict[str, set[str] | None] = {
    "Lag per federate (physical minus logical time)": EVERYONE,
    "Logical time per federate": EVERYONE,
    "Tag grants and RTI messages per second": None,
    "Data messages per second per federate": EVERYONE,
    "Payload bytes per second per federate": EVERYONE,
    "Joins and leaves": EVERYONE,
    "Env steps per second": LEARNER,
    "Training return": LEARNER,
    "Policy lag (iterations)": LEARNER,
    "Policy lag (logical time)": LEARNER,
    "Progress": LEARNER,
    "Tags processed per second per federate": EVERYONE,
}


def panels() -> list[dict[str, Any]]:
    return list(json.loads(DASHBOARD.read_text())["panels"])


def grafana(expr: str) -> str:
    """``expr`` with Grafana's variables put in."""
    return expr.replace("$__rate_interval", RATE_INTERVAL).replace("$federation", FEDERATION)


def legend_labels(legend: str) -> set[str]:
    return set(re.findall(r"\{\{\s*(\w+)\s*\}\}", legend))


def test_every_panel_queries_prometheus_and_says_what_it_shows() -> None:
    seen = [p["title"] for p in panels()]
    assert sorted(seen) == sorted(EXPECTED), "a panel without an expectation here, or one gone"
    for p in panels():
        assert p["datasource"]["type"] == "prometheus" and p["targets"], p["title"]
        for t in p["targets"]:
            assert 'federation=~"$federation"' in t["expr"], (p["title"], t["expr"])  # the variable filters
            assert legend_labels(t["legendFormat"]), t  # a series is named by its labels


@pytest.fixture
def federation(tmp_path: Path) -> Iterator[tuple[Processes, Prometheus, dict[str, int]]]:
    """The RTI listening, and a Prometheus scraping it and the federates' metrics ports (the
    federates are not started yet: the first scrapes see the federation before its joins)."""
    binary = require_prometheus()  # (first: a missing one is said before any process starts)
    env = {"OMP_NUM_THREADS": "1", "REACTORFED_LOGDIR": ""}  # (no curves written into the repository)
    # APPO with sampler 0 slowed by 40 ms a fragment (the learner trains on stale weights: a policy
    # lag), and more iterations than the test waits for (it ends the processes)
    args = ("--fast", "-p", "iterations=100000", "-p", "slow_ms=40")
    with processes(tmp_path, PROGRAM, FEDERATION, "1h", time.monotonic() + 60, args=args, env=env) as fed:
        ports = {name: free_port() for name in sorted(EVERYONE)}
        prom = Prometheus(binary, tmp_path / "prometheus", {
            "rti": [f"127.0.0.1:{fed.status_port}"],
            "federates": [f"127.0.0.1:{p}" for p in ports.values()],
        }, interval=f"{INTERVAL_S}s", labels={"federation": FEDERATION})
        try:
            yield fed, prom, ports
        finally:
            prom.stop()


def _check(panel: dict[str, Any], results: list[list[dict[str, Any]]]) -> str | None:
    """Why ``panel``'s query results fall short (None: they do not)."""
    want = EXPECTED[panel["title"]]
    covered: set[str] = set()
    for target, series in zip(panel["targets"], results, strict=True):
        if not series:
            return f"{target['refId']}: no series"
        for s in series:
            labels, value = s["metric"], float(s["value"][1])
            absent = legend_labels(target["legendFormat"]) - set(labels)
            if absent:
                return f"{target['refId']}: {labels} lacks {absent}"
            if labels.get("federation") != FEDERATION:
                return f"{target['refId']}: {labels} is not the federation's"
            if math.isnan(value):
                return f"{target['refId']}: {labels} is NaN (nothing in the interval yet)"
            if "federate" in labels:
                covered.add(labels["federate"])
    if want is not None and not want <= covered:
        return f"federates {sorted(want - covered)} missing (got {sorted(covered)})"
    if want is None and covered:
        return f"federate labels {sorted(covered)} on a whole-federation panel"
    if panel["title"] == "Joins and leaves" and not any(float(s["value"][1]) > 0 for s in results[0]):
        return "no join seen"  # (the first scrapes were before the joins: each federate's join shows)
    return None


def test_every_panels_query_returns_the_federates_series(federation: tuple[Processes, Prometheus, dict[str, int]]) -> None:
    fed, prom, ports = federation
    t0 = time.monotonic()
    # Prometheus has scraped the RTI before any federate joins
    while not [s for s in prom.query('up{job="rti"}') if s["value"][1] == "1"]:
        assert time.monotonic() - t0 < 30, f"Prometheus never scraped the RTI: {prom.log_path.read_text()[-2000:]}"
        time.sleep(0.2)
    for name, port in ports.items():
        fed.federate(name, "--metrics-port", str(port))
    started = time.monotonic()

    # Each panel's queries, sent again until they return what the panel should show (a rate
    # needs two scrapes in its interval, the return an episode's end, the policy lag an update)
    todo = {p["title"]: p for p in panels()}
    why: dict[str, str] = {}
    answered: dict[str, float] = {}
    deadline = started + 150
    while todo and time.monotonic() < deadline:
        assert fed.running(), "a process of the federation ended"
        for title, panel in list(todo.items()):
            results = [prom.query(grafana(t["expr"])) for t in panel["targets"]]
            reason = _check(panel, results)
            if reason is None:
                del todo[title]
                answered[title] = time.monotonic() - started
            else:
                why[title] = reason
        time.sleep(0.5)
    first = min(answered.values(), default=0.0)
    print(f"the panels answered {first:.1f} to {max(answered.values(), default=0.0):.1f} s after the federates "
          f"started; the last: {sorted(answered, key=answered.__getitem__)[-3:]}")
    assert not todo, {t: why[t] for t in todo}

    # what a scrape costs the learner (a note on scraping too often, not a bound: a loaded machine's)
    took = []
    for _ in range(5):
        t = time.perf_counter()
        get(ports["learner"], "/metrics")
        took.append(time.perf_counter() - t)
    print(f"a scrape of the learner: median {sorted(took)[2] * 1e3:.1f} ms")

    # the dashboard's $federation variable: Grafana's label_values(metric, label)
    variable = json.loads(DASHBOARD.read_text())["templating"]["list"][1]
    m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", variable["query"]["query"])
    assert m is not None, variable
    assert prom.label_values(m.group(2), m.group(1)) == [FEDERATION]
