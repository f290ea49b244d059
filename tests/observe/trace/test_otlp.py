"""Trace records exported as OTLP spans to a real collector (Jaeger, in memory), read back
through its query API; an endpoint that is down is said once and costs the program
nothing."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.ports import free_port

from reactorfed import SystemClock, VirtualClock
from reactorfed.observe.trace import Recorder, trace_path
from reactorfed.observe.trace import records as R

from ...kind.prereq import missing
from .collector import Jaeger, jaeger_binary


@pytest.fixture(autouse=True)
def _sdk() -> None:
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        missing("the OpenTelemetry SDK is not installed (the otlp extra; scripts/setup.sh installs it)")


@pytest.fixture
def jaeger(tmp_path: Path) -> Iterator[Jaeger]:
    binary = jaeger_binary()
    if binary is None:
        missing("Jaeger is not built: run scripts/tools.sh (needs Go; scripts/test.sh runs it)")
    j = Jaeger(binary, tmp_path)
    yield j
    j.stop()


@pytest.mark.collector
def test_spans_reach_a_real_collector_with_the_tag_as_attributes(jaeger: Jaeger, tmp_path: Path) -> None:
    clock = VirtualClock(SystemClock().now())  # now (the collector's queries look back an hour), then virtual
    rec = Recorder(trace_path(tmp_path, "learner"), "learner", clock, otlp_endpoint=jaeger.endpoint)
    for i in range(5):
        tag = (2_000_000_000 + i * 1_000_000, i % 2)
        rec.record(R.REACTION_START, tag, "Main.learner.update", 3)
        clock.advance(250_000)
        rec.record(R.SEND, tag, 7, "samplers[0]", 4096)
        rec.record(R.REACTION_END, tag, "Main.learner.update", 3)
    rec.record(R.USER, (2_000_000_000, 0), "checkpoint", 12)
    rec.close()
    spans: list[dict[str, object]] = []
    for _ in range(50):  # the collector's batch: 100 ms
        spans = [s for t in jaeger.traces("reactorfed") for s in t["spans"]]  # type: ignore[union-attr]
        if len(spans) >= 11:
            break
        time.sleep(0.2)
    names = sorted(s["operationName"] for s in spans)  # type: ignore[type-var]
    assert names.count("Main.learner.update") == 5 and names.count("send") == 5 and "user" in names
    upd = [s for s in spans if s["operationName"] == "Main.learner.update"]
    tags = {t["key"]: t["value"] for t in upd[1]["tags"]}  # type: ignore[index]
    assert tags["reactorfed.model.reaction"] == "Main.learner.update" and tags["reactorfed.level"] == 3
    assert tags["reactorfed.federate"] == "learner"
    assert sorted(s["duration"] for s in upd) == [250] * 5  # microseconds, as Jaeger gives them
    elapsed = sorted({t["value"] for s in upd for t in s["tags"] if t["key"] == "reactorfed.time.tag.elapsed"})  # type: ignore[index]
    assert elapsed == [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
    proc = upd[0]["processID"]
    trace = jaeger.traces("reactorfed")[0]
    ptags = {t["key"]: t["value"] for t in trace["processes"][proc]["tags"]}  # type: ignore[index]
    assert ptags["host.name"] and ptags["process.pid"] == os.getpid()


def test_an_endpoint_that_is_down_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1/traces"  # nobody listens
    with caplog.at_level(logging.WARNING, "reactorfed.observe.trace"):
        rec = Recorder(None, "f", VirtualClock(), otlp_endpoint=down)
        t0 = time.monotonic()
        for i in range(2000):
            rec.record(R.ACTION, (i, 0), "a", i, 0)
        assert time.monotonic() - t0 < 1.0  # recording never waits for the exporter
        time.sleep(0.3)
        for i in range(2000):
            rec.record(R.ACTION, (i, 0), "a", i, 0)
        rec.close()
    said = [r for r in caplog.records if "could not export trace spans" in r.getMessage()]
    assert len(said) == 1
