"""The ``reactorfed`` command line, run as a subprocess against examples/hello.py."""

from __future__ import annotations

import json
import logging
import os
import re
import selectors
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

import reactorfed.cli.main as cli

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "examples" / "hello.py"

HELLO_FAST_1S = """\
hello! the display starts at 0
t=  50 ms: mean of 3 sensors 20.933 C (measured at 0)
t= 150 ms: mean of 3 sensors 21.217 C (measured at 100 ms)
t= 250 ms: mean of 3 sensors 21.500 C (measured at 200 ms)
t= 350 ms: mean of 3 sensors 21.783 C (measured at 300 ms)
t= 450 ms: mean of 3 sensors 22.067 C (measured at 400 ms)
t= 550 ms: mean of 3 sensors 22.183 C (measured at 500 ms)
t= 650 ms: mean of 3 sensors 22.467 C (measured at 600 ms)
t= 750 ms: mean of 3 sensors 22.750 C (measured at 700 ms)  <- above threshold
t= 850 ms: mean of 3 sensors 23.033 C (measured at 800 ms)  <- above threshold
t= 950 ms: mean of 3 sensors 23.317 C (measured at 900 ms)  <- above threshold
shutdown at 1 s: 10 averages shown, hottest 23.317 C
"""


def reactorfed(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reactorfed.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def test_run_the_example_and_print_a_summary():
    r = reactorfed("run", "examples/hello.py:Main", "--fast", "--timeout", "1s")
    assert r.returncode == 0, r.stderr
    out, summary = r.stdout.rsplit("reactorfed: ", 1)
    assert out == HELLO_FAST_1S
    assert re.fullmatch(
        r"21 tags, 56 reactions in \d+\.\d{3} s wall, \d+\.\d{3} s CPU \([\d,]+ reactions/s\); stopped at 1 s \+0 microsteps \(timeout\); torch threads 1\n",
        summary,
    ), summary
    assert re.search(r"\d\d:\d\d:\d\d\.\d{3} INFO    reactorfed\.cli: running examples/hello\.py:Main \(fast, timeout 1 s\)", r.stderr)


def test_the_console_script_is_installed():
    script = Path(sys.executable).parent / "reactorfed"
    if not script.exists():
        pytest.skip("the reactorfed console script is not installed beside this interpreter")
    r = subprocess.run([str(script), "run", str(HELLO), "--fast", "--timeout", "1s"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(HELLO_FAST_1S)


def test_params_and_json_summary():
    r = reactorfed(
        "run", str(HELLO), "--fast", "--timeout", "300ms", "--param", "width=5", "-p", "delay=20ms", "--json", "--log-level", "warning"
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:5] == [
        "hello! the display starts at 0",
        "t=  20 ms: mean of 5 sensors 22.000 C (measured at 0)",
        "t= 120 ms: mean of 5 sensors 22.250 C (measured at 100 ms)",
        "t= 220 ms: mean of 5 sensors 22.500 C (measured at 200 ms)",
        "shutdown at 300 ms: 3 averages shown, hottest 22.500 C",
    ]
    summary = json.loads(lines[5])
    assert summary["cpu_s"] > 0  # (its value: test_the_summary_reports_the_cpu_time_of_the_run)
    assert {k: summary[k] for k in ("tags", "reactions", "last_tag_ns", "last_microstep", "stop_reason")} == {
        "tags": 7,
        "reactions": 29,
        "last_tag_ns": 300_000_000,
        "last_microstep": 0,
        "stop_reason": "timeout",
    }
    assert r.stderr == ""  # --log-level warning: nothing to say


def test_help_explains_itself():
    r = reactorfed("--help")
    assert r.returncode == 0
    assert "run       run a program in this process" in r.stdout
    assert "examples:\n  reactorfed run examples/hello.py:Main --fast --timeout 1s" in r.stdout
    r = reactorfed("run", "--help")
    assert r.returncode == 0
    for text in ("MODULE:ATTR", "--param KEY=VALUE", "--timeout DURATION", "--metrics-port PORT", "Ctrl-C", "exit codes:"):
        assert text in r.stdout, text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "examples/hello.py:Nope"], "error: program 'examples/hello.py:Nope': hello has no attribute 'Nope'"),
        (["run", "no_such_module_xyz:Main"], "no module named 'no_such_module_xyz'"),
        (["run", "examples/missing.py:Main"], "no such file: examples/missing.py"),
        (["run", "examples/hello.py:Main", "--param", "width=many"], "--param width=many: expected an integer"),
        (["run", "examples/hello.py:Main", "--param", "colour=red"], "has no parameter 'colour'; its parameters: width: int = 3"),
        (["run", "examples/hello.py:Main", "--param", "width"], "--param 'width': expected KEY=VALUE"),
        (["run", "examples/hello.py:Main", "--timeout", "5"], "argument --timeout: duration '5' needs a unit"),
        (["run", "examples/hello.py:Main", "--workers", "0"], "argument --workers: expected a number >= 1"),
        (["run"], "the following arguments are required: PROGRAM"),
        ([], "usage: reactorfed"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(args, message):
    r = reactorfed(*args)
    assert r.returncode == 2, r
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_a_failing_reaction_exits_1_naming_it(tmp_path):
    prog = tmp_path / "failing.py"
    prog.write_text(
        textwrap.dedent(
            """
            from reactorfed import STARTUP, Reactor, reaction

            class Main(Reactor):
                @reaction(triggers=[STARTUP])
                def start(self):
                    raise ValueError("bad input")
            """
        )
    )
    r = reactorfed("run", f"{prog}:Main", "--fast")
    assert r.returncode == 1
    assert 'raise ValueError("bad input")' in r.stderr  # the reaction's traceback
    assert "ERROR   reactorfed.cli: reaction Main.start failed at tag (0 ns, 0) after start: ValueError: bad input" in r.stderr


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)


def test_in_process_main_returns_the_exit_code(capsys, restore_logging):
    assert cli.main(["run", str(HELLO), "--fast", "--timeout", "1s", "--json", "--log-level", "error"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(HELLO_FAST_1S)
    assert json.loads(out.splitlines()[-1])["reactions"] == 56


def _read_until(proc: subprocess.Popen[str], pattern: str, timeout: float) -> re.Match[str]:
    """Read proc's stderr line by line until ``pattern`` matches."""
    assert proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not sel.select(timeout=deadline - time.monotonic()):
            break
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError(f"{pattern!r} not seen on stderr: {''.join(seen)}")


def _scrape(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("reactorfed_"):
            name_labels, value = line.rsplit(" ", 1)
            assert name_labels.endswith('{program="examples/hello.py:Main"}'), name_labels
            values[name_labels.split("{")[0]] = float(value)
        elif line.startswith("process_"):  # prometheus_client's process metrics: no labels
            name, value = line.split(" ")
            values[name] = float(value)
    return values


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_metrics_endpoint_and_ctrl_c_stop_cleanly():
    """A real-time run with --metrics-port: one scrape sees the scheduler's counters;
    SIGINT then stops the program at the next tag (shutdown reactions run, exit 0)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reactorfed.cli", "run", "examples/hello.py:Main", "--metrics-port", "0", "--metrics-addr", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        m = _read_until(proc, r"metrics on (http://127\.0\.0\.1:\d+/metrics)", timeout=30)
        time.sleep(0.35)  # a few timer periods (100 ms) of real time
        metrics = _scrape(m.group(1))
        assert metrics["reactorfed_up"] == 1
        assert metrics["reactorfed_tags_processed_total"] >= 3
        assert metrics["reactorfed_reactions_executed_total"] >= 3 * 2
        assert metrics["reactorfed_deadline_misses_total"] == 0
        assert 0.1 <= metrics["reactorfed_logical_time_elapsed_seconds"] < 30
        assert 0 <= metrics["reactorfed_lag_seconds"] < 5  # real time: logical never runs ahead
        if sys.platform.startswith("linux"):  # the process's own (prometheus_client reads /proc)
            assert metrics["process_cpu_seconds_total"] > 0
            assert metrics["process_resident_memory_bytes"] > 10 << 20
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "SIGINT: stopping at the next tag (Ctrl-C again to abort)" in err
    assert re.search(r"^shutdown at \d+ m?s: \d+ averages shown", out, re.M), out
    assert "(stop requested from outside)" in out.splitlines()[-1]
