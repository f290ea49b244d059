from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from reactorfed_operator.progress import (
    MemberChange,
    Progress,
    fetch_progress,
    format_logical_time,
    parse_status,
)

from .helpers import NOW, FakeCluster, make_fed


def test_format_logical_time() -> None:
    assert format_logical_time(0) == "0.000s"
    assert format_logical_time(1_250_000_000) == "1.250s"
    assert format_logical_time(61_000_000_000, 2) == "61.000s+2"


def test_parse_status() -> None:
    p = parse_status({"phase": "running", "tag": [2_000_000_000, 1], "elapsed_ns": 1_500_000_000,
                      "federates": {"samplers[0]": {"joined": True, "resigned": False}, "learner": {"joined": False},
                                    "samplers[1]": {"joined": True, "resigned": True}}})  # fmt: skip
    assert p == Progress(True, "running", 2_000_000_000, 1, 1_500_000_000, 1)
    status = p.as_status("2026-01-01T00:00:00Z")
    assert status["logicalTime"] == "1.500s+1" and status["rtiPhase"] == "running"


def test_the_programs_progress_for_the_columns() -> None:
    doc = {"phase": "running", "tag": [0, 105], "elapsed_ns": 0, "federates": {},
           "progress": {"done": 37, "total": 400, "figures": {"env_steps": 12_800, "mean_return": 212.41372918}}}
    p = parse_status(doc)
    assert (p.done, p.total, dict(p.figures)) == (37, 400, {"env_steps": 12_800, "mean_return": 212.41372918})
    status = p.as_status("2026-01-01T00:00:00Z")
    assert status["doneText"] == "37/400" and (status["done"], status["total"]) == (37, 400)
    assert status["figures"] == {"env_steps": 12_800, "mean_return": 212.4}  # for a person
    assert status["logicalTime"] == "0.000s+105"  # still there, for the wide column
    doc["progress"] = {"done": 5}
    assert parse_status(doc).as_status("t")["doneText"] == "5"


def test_a_program_that_reports_nothing_shows_its_logical_time_only() -> None:
    status = parse_status({"phase": "running", "tag": [2_000_000_000, 0], "elapsed_ns": 2_000_000_000,
                           "federates": {}}).as_status("t")
    assert status["logicalTime"] == "2.000s"
    assert not {"done", "total", "doneText", "figures"} & set(status)


@pytest.mark.parametrize("report", [
    [1], "x", {"done": -1, "total": 4}, {"done": "3", "total": 4}, {"done": True},
    {"figures": {"a": "1", "b": float("nan"), "c": True, "d": [1]}}, {"figures": [1, 2]}, {"total": 4},
])
def test_a_malformed_progress_report_is_left_out(report: object) -> None:
    status = parse_status({"phase": "running", "progress": report}).as_status("t")
    assert not {"done", "total", "doneText", "figures"} & set(status), status


def test_parse_malformed_is_tolerated() -> None:
    assert parse_status([1, 2]).error.startswith("unexpected")
    p = parse_status({"tag": "x", "elapsed_ns": "7", "federates": ["a", "b"]})
    assert p.tag_ns is None and p.elapsed_ns is None and p.federates_connected == 2


@pytest.fixture
def rti_status_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"phase": "running", "tag": [5, 0], "elapsed_ns": 5, "federates": {}}).encode()
            code = 200 if self.path == "/status" else 404
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if code == 200 else b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_fetch_progress_from_a_real_http_server(rti_status_server: str) -> None:
    p = fetch_progress(rti_status_server + "/status")
    assert p.reachable and p.tag_ns == 5 and p.rti_phase == "running"
    assert not fetch_progress(rti_status_server + "/nope").reachable


def test_fetch_progress_unreachable_never_raises() -> None:
    from bench.ports import free_port

    port = free_port()  # nobody listens on it (and nobody can start to, but its listener)
    p = fetch_progress(f"http://127.0.0.1:{port}/status", timeout=0.5)
    assert not p.reachable and "127.0.0.1" in p.error


def test_parse_membership_record() -> None:
    p = parse_status({
        "phase": "running", "tag": [3, 0], "elapsed_ns": 3,
        "federates": {"learner": {"joined": True, "present": True}, "samplers[0]": {"joined": True, "present": True},
                      "samplers[1]": {"joined": False, "present": False}},
        "membership": [
            {"tag": [1_500_000_000, 2], "member": "samplers[1]", "bank": "samplers", "index": 1, "joined": True},
            {"tag": [2_000_000_000, 0], "bank": "samplers", "index": 1, "joined": False},
            {"tag": "x", "member": "samplers[2]", "joined": True},  # malformed: skipped
        ],
    })  # fmt: skip
    assert p.membership == (MemberChange(1_500_000_000, 2, "samplers[1]", True),
                            MemberChange(2_000_000_000, 0, "samplers[1]", False))  # fmt: skip
    assert p.present == ("learner", "samplers[0]")
    assert p.membership[0].as_status(3) == {"incarnation": 3, "logicalTime": "1.500s+2", "tagNs": 1_500_000_000,
                                            "microstep": 2, "member": "samplers[1]", "joined": True}  # fmt: skip
    assert parse_status({"phase": "running"}).membership is None  # no elastic bank: no record


def _columns(obj: dict[str, Any], wide: bool = False) -> dict[str, Any]:
    """What ``kubectl get rfed`` shows of ``obj``: each printer column's simple JSONPath
    followed (None: the field is missing, an empty cell)."""
    from reactorfed_operator.crdgen import crd

    out: dict[str, Any] = {}
    for column in crd()["spec"]["versions"][0]["additionalPrinterColumns"]:
        if column.get("priority") and not wide:
            continue
        value: Any = obj
        for key in column["jsonPath"].lstrip(".").split("."):
            value = value.get(key) if isinstance(value, dict) else None
        out[column["name"]] = value
    return out


def test_the_columns_show_the_learners_progress_and_the_wide_ones_the_logical_time() -> None:
    cluster = FakeCluster(make_fed())
    cluster.settle()
    doc = {"phase": "running", "tag": [0, 105], "elapsed_ns": 0, "federates": {"learner": {"joined": True}},
           "progress": {"done": 37, "total": 400, "figures": {"env_steps": 12_800, "mean_return": 212.4137}}}
    cluster.step(progress=parse_status(doc))
    obj = {"metadata": {"creationTimestamp": NOW}, "status": cluster.status}
    shown = _columns(obj)
    assert shown["Progress"] == "37/400" and shown["Return"] == 212.4, shown
    assert "Logical-Time" not in shown
    assert _columns(obj, wide=True)["Logical-Time"] == "0.000s+105"


def test_the_columns_of_a_program_that_reports_nothing() -> None:
    cluster = FakeCluster(make_fed())
    cluster.settle()
    cluster.step(progress=parse_status({"phase": "running", "tag": [1_000_000_000, 0], "elapsed_ns": 1_000_000_000,
                                        "federates": {}}))
    obj = {"metadata": {"creationTimestamp": NOW}, "status": cluster.status}
    shown = _columns(obj, wide=True)
    assert shown["Progress"] is None and shown["Return"] is None  # empty cells
    assert shown["Logical-Time"] == "1.000s"  # as before (a wide column now)
