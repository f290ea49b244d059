"""The trace recorder: records go to the file off the caller's thread, a full buffer drops
and counts, and a file that cannot be written costs the program nothing but its records."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

from reactorfed import VirtualClock
from reactorfed.observe.trace import Recorder, read, trace_path
from reactorfed.observe.trace import records as R
from reactorfed.observe.trace.recorder import THREAD


def test_records_are_read_back_with_a_header_thread_names_and_a_trailer(tmp_path: Path) -> None:
    clock = VirtualClock(5_000)
    rec = Recorder(trace_path(tmp_path, "fed"), "fed", clock, role="federate")
    rec.record(R.REACTION_START, (100, 0), "Main.a.go", 0)
    clock.advance(7)
    rec.record(R.REACTION_END, (100, 0), "Main.a.go", 0)
    rec.record(R.USER, (100, 1), "loss", 0.5)
    rec.record(R.USER, (100, 1), "note", "text")
    rec.close()
    got = read(tmp_path / "fed.rftrace")
    assert got[0][:5] == [R.HEADER, 5_000, 0, 0, 0] and got[0][5:8] == [R.VERSION, "fed", "federate"]
    threads = [r for r in got if r[0] == THREAD]
    assert [(t[4], t[5]) for t in threads] == [(threading.get_ident(), threading.current_thread().name)]
    got = [r for r in got if r[0] != THREAD]
    assert got[1] == [R.REACTION_START, 5_000, 100, 0, threading.get_ident(), "Main.a.go", 0]
    assert got[2][1] == 5_007 and got[2][0] == R.REACTION_END
    assert got[3][5:] == ["loss", 0.5]
    assert got[4][5:] == ["note", "text"]
    assert got[-1][0] == R.TRAILER and got[-1][5:] == [5, 0]  # header and 4 records written, none dropped


def test_a_full_buffer_drops_and_counts_and_never_blocks(tmp_path: Path) -> None:
    rec = Recorder(trace_path(tmp_path, "f"), "f", VirtualClock(), capacity=10)
    for i in range(1000):  # faster than the writer's 100 ms
        rec.record(R.ACTION, (i, 0), "a", i, 0)
    rec.close()
    got = read(tmp_path / "f.rftrace")
    written, dropped = got[-1][5:]
    assert dropped > 0 and written + dropped == 1001  # the header counts as written
    assert len([r for r in got if r[0] == R.ACTION]) == written - 1


def test_a_directory_that_cannot_be_written_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with caplog.at_level(logging.WARNING, "reactorfed.observe.trace"):
        rec = Recorder(trace_path(blocker / "traces", "f"), "f", VirtualClock())
        for i in range(100):
            rec.record(R.ACTION, (i, 0), "a", i, 0)
        rec.close()
    assert rec.dropped == 101
    said = [r.getMessage() for r in caplog.records if "cannot write the trace file" in r.getMessage()]
    assert len(said) == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_said_once_and_the_records_counted(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "reactorfed.observe.trace"):
        rec = Recorder("/dev/full", "f", VirtualClock())  # every write: ENOSPC
        for i in range(50):
            rec.record(R.ACTION, (i, 0), "a", i, 0)
        rec.close()
    assert rec.written == 0 and rec.dropped == 51
    assert len([r for r in caplog.records if "No space left" in r.getMessage()]) == 1
