"""Merging a run's trace files: one trace in the Trace Event Format with a process per
federate, a thread track per thread, reactions as slices, a flow from each send to its
receive, tags as arguments; and the federated sequence diagram."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from reactorfed import VirtualClock
from reactorfed.observe.trace import Recorder, load, sequence_html, trace_path, write_chrome_trace
from reactorfed.observe.trace import records as R

T0 = 1_000_000_000


def _run(tmp: Path) -> None:
    """Two federates and an RTI, as their drivers would record them: a sends b a message
    on link 3 at (T0 + 5 ms, 0) from a reaction; the RTI grants b."""
    clock = VirtualClock(T0)
    rti = Recorder(trace_path(tmp, "rti"), "rti", clock, role="rti")
    a = Recorder(trace_path(tmp, "a"), "a", clock)
    b = Recorder(trace_path(tmp, "b"), "b", clock)
    tag = (T0 + 5_000_000, 0)
    a.record(R.REACTION_START, tag, "Main.a.send", 0)
    clock.advance(1_234)
    a.record(R.SEND, tag, 3, "b", 100)
    clock.advance(10)
    a.record(R.REACTION_END, tag, "Main.a.send", 0)
    rti.record(R.GRANT, tag, "b", False)
    clock.advance(500)

    def receive() -> None:  # another thread of b: its own track
        b.record(R.RECV, tag, 3, "a", 100)

    t = threading.Thread(target=receive, name="b-io")
    t.start()
    t.join()
    b.record(R.REACTION_START, tag, "Main.b.got", 1)
    b.record(R.REACTION_END, tag, "Main.b.got", 1)
    b.record(R.USER, tag, "checkpoint", 7)
    for r in (rti, a, b):
        r.close()


def test_the_merged_trace_has_processes_threads_slices_flows_and_tags(tmp_path: Path) -> None:
    _run(tmp_path)
    out = tmp_path / "run.json"
    write_chrome_trace(tmp_path, out)
    trace = json.loads(out.read_text())  # valid JSON
    ev = trace["traceEvents"]
    procs = {e["args"]["name"].split(" ")[0]: e["pid"] for e in ev if e.get("name") == "process_name"}
    assert list(procs) == ["rti", "a", "b"]  # the RTI first
    threads = {(e["pid"], e["args"]["name"]) for e in ev if e.get("name") == "thread_name"}
    assert (procs["b"], "b-io") in threads and len([t for t in threads if t[0] == procs["b"]]) == 2
    slices = [e for e in ev if e["ph"] == "X" and e["cat"] == "reaction"]
    assert sorted(e["name"] for e in slices) == ["Main.a.send", "Main.b.got"]
    send = next(e for e in slices if e["name"] == "Main.a.send")
    assert send["ts"] == 0.0 and send["dur"] == 1.244  # 1,244 ns, exact
    assert send["args"] == {"tag_ns": 0, "microstep": 0, "level": 0}
    starts = [e for e in ev if e["ph"] == "s"]
    ends = [e for e in ev if e["ph"] == "f"]
    assert len(starts) == len(ends) == 1 and starts[0]["id"] == ends[0]["id"]
    assert starts[0]["pid"] == procs["a"] and ends[0]["pid"] == procs["b"]
    grant = next(e for e in ev if e.get("cat") == "grant")
    assert grant["name"] == "TAG to b" and grant["pid"] == procs["rti"]
    user = next(e for e in ev if e.get("cat") == "user")
    assert user["name"] == "checkpoint" and user["args"]["value"] == 7
    assert trace["otherData"]["reactorfed"]["a"] == {"records": 3, "written": 4, "dropped": 0}


def test_the_timestamps_are_written_exactly(tmp_path: Path) -> None:
    _run(tmp_path)
    text = (tmp_path / "run.json")
    write_chrome_trace(tmp_path, text)
    raw = text.read_text()
    assert '"dur":1.244' in raw and '"ts":0.000' in raw


def test_a_file_cut_short_still_merges(tmp_path: Path) -> None:
    _run(tmp_path)
    p = tmp_path / "b.rftrace"
    p.write_bytes(p.read_bytes()[:-7])  # the trailer cut in the middle: the process died
    procs = load(tmp_path)
    b = next(x for x in procs if x.name == "b")
    assert b.written is None and len(b.records) == 4


def test_the_sequence_diagram_draws_lifelines_messages_and_grants(tmp_path: Path) -> None:
    _run(tmp_path)
    page = sequence_html(load(tmp_path), title="t")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page  # self-contained, static
    for name in ("rti", "a", "b"):
        assert f'class="head">{name}</text>' in page
    assert page.count('class="msg"') == 1 and "(0 ms, 0) link 3" in page
    assert page.count('class="grant"') == 1 and "TAG (0 ms, 0)" in page
    assert "user checkpoint" in page
