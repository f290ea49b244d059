"""The commands that look at a program: ``reactorfed federates`` (the operator's contract:
its own parser reads the answer), ``reactorfed diagram`` and ``reactorfed trace``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed.cli.inspect import describe_federates
from reactorfed_operator.discovery import parse_federates

REPO = Path(__file__).resolve().parents[2]


def test_federates_of_a_program_with_a_bank_set_by_a_parameter() -> None:
    answer = describe_federates("examples/pipeline.py:Main", {})
    assert [f["name"] for f in answer["federates"]] == ["sensors[0]", "sensors[1]", "sensors[2]", "filter", "logger"]
    assert answer["banks"] == [{"name": "sensors", "width": 3, "width_param": "sensors", "elastic": None}]
    wider = describe_federates("examples/pipeline.py:Main", {"sensors": "5"})
    assert wider["banks"][0]["width"] == 5 and wider["banks"][0]["width_param"] == "sensors"
    parsed = parse_federates(json.dumps(answer))  # the operator reads it
    assert parsed.singles == ("filter", "logger") and parsed.banks[0].width_param == "sensors"


def test_federates_of_an_elastic_bank_and_a_settings_dataclass() -> None:
    answer = describe_federates(f"{REPO}/tests/federation/elastic_programs.py:Main", {})
    assert answer["banks"] == [{"name": "samplers", "width": 3, "width_param": None, "elastic": {"min": 1, "max": 3}}]
    apex = describe_federates("examples/rl/apex_dqn_cartpole.py:Main", {})
    assert {b["name"]: b["width_param"] for b in apex["banks"]} == {"samplers": "num_samplers", "shards": "num_shards"}
    parse_federates(apex)


def test_the_federates_command_prints_json(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "federates", "examples/pipeline.py:Main", "--json"],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["program"] == "examples/pipeline.py:Main"
    out = tmp_path / "termination-log"  # the operator's discovery pod: the same JSON in its termination message
    r = subprocess.run([sys.executable, "-m", "reactorfed", "federates", "examples/pipeline.py:Main", "--json",
                        "--output", str(out)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == json.loads(r.stdout)


@pytest.mark.parametrize("program", ["examples/pipeline.py:Main", "examples/rl/ppo_cartpole.py:Main"])
def test_the_diagram_command_writes_an_svg(program: str, tmp_path: Path) -> None:
    out = tmp_path / "p.svg"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "diagram", program, "--federated", "-o", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("<svg") and 'class="federate"' in out.read_text()


def test_trace_refuses_a_directory_without_traces(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "trace", "merge", str(tmp_path)], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "holds no trace files" in r.stderr
