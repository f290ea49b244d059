"""A program's progress (``Reactor.report_progress``) from the learner federate to the
RTI's ``/status``: a federation of real processes, the RTI's and each federate's
``/status`` read while it runs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from bench.ports import free_port

from .processes import get, processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

PROGRAM = f"{Path(__file__).with_name('progress_programs.py')}:Main"


def test_the_learners_progress_reaches_the_rtis_status(tmp_path: Path) -> None:
    deadline = time.monotonic() + 40
    with processes(tmp_path, PROGRAM, "progress-test", "20s", deadline) as fed:
        fed_ports = {"src": free_port(), "learner": free_port()}
        for name, port in fed_ports.items():
            fed.federate(name, "--metrics-port", str(port))

        # the learner reports at every value; the RTI hears of it at most once a second
        seen: list[dict[str, Any]] = []
        last: dict[str, Any] = {}
        while len(seen) < 2:
            assert time.monotonic() < deadline and fed.running(), "the federation did not run"
            status = fed.rti_status()
            progress = status.get("progress")
            if progress and (not seen or progress["done"] > seen[-1]["done"]):
                seen.append(progress)
                last = status
            time.sleep(0.1)

        # not every report went: a value every 20 ms, a PROGRESS at most once a second
        assert seen[1]["done"] - seen[0]["done"] >= 15, seen
        for report in seen:
            assert report["total"] == 1000 and 0 < report["done"] <= 1000
            assert report["figures"] == {"env_steps": 10 * report["done"], "mean_return": report["done"] / 2}
        # each federate's own entry: the learner's report, nothing of the source (it reports none)
        feds = last["federates"]
        assert feds["learner"]["progress"] == last["progress"]
        assert "progress" not in feds["src"]
        assert last["rejected"] == 0
        # the learner serves its own latest report on its /status (newer than the RTI's)
        own = json.loads(get(fed_ports["learner"], "/status"))["progress"]
        assert own["total"] == 1000 and own["done"] >= seen[-1]["done"]
        assert "progress" not in json.loads(get(fed_ports["src"], "/status"))


def test_the_launchers_line_shows_the_programs_progress_first() -> None:
    from reactorfed.federation.process.launch import progress_line

    st: dict[str, Any] = {"phase": "running", "elapsed_ns": 0, "tag": [0, 105], "grants": 7,
                          "federates": {"learner": {}, "samplers[0]": {}, "samplers[1]": {"resigned": True}},
                          "progress": {"done": 37, "total": 400,
                                       "figures": {"env_steps": 12800, "mean_return": 212.4137, "loss": 0.000123}}}
    line = progress_line(st, timeout_ns=None)
    assert line == ("[##............................]   9.2% 37/400  env_steps 12,800  mean_return 212.4  loss 0.000123"
                    " | logical time 0.000 s, running, 2/3 federates running, 7 grants")
    st["progress"] = {"done": 3, "figures": {"score": 1234.5}}  # no total: no bar
    assert progress_line(st, None).startswith("3  score 1,234 | logical time")  # (rounded half to even)


def test_the_launchers_line_of_a_program_that_reports_nothing_is_as_before() -> None:
    from reactorfed.federation.process.launch import progress_line

    st = {"phase": "running", "elapsed_ns": 1_500_000_000, "grants": 3, "federates": {"a": {}, "b": {}}}
    assert progress_line(st, timeout_ns=3_000_000_000) == (
        "[###############...............]  50.0% logical time 1.500 s, running, 2/2 federates running, 3 grants")
    assert progress_line(st, None) == "logical time 1.500 s, running, 2/2 federates running, 3 grants"
