"""Traced runs, one process and federated: the merged trace holds every reaction, message,
process and thread the run's own counters say it had, flows from every send to its
receive, and a real consumer of the format reads it back (Chrome DevTools' own trace
engine, the importer of its Performance panel); LF's Tracing.lf with its user events."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from reactorfed.observe.trace import chrome_trace, load
from reactorfed.observe.trace import records as R

from ...kind.prereq import missing

REPO = Path(__file__).resolve().parents[3]
DEVTOOLS = Path(__file__).with_name("devtools")


def _launch(program: str, tmp: Path, *args: str) -> tuple[str, Path]:
    out = tmp / "trace"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "launch", program, "--fast", "--no-progress",
                        "--trace", str(out), *args], cwd=REPO, capture_output=True, text=True, timeout=240,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, out


def _reactions_by_federate(stdout: str) -> dict[str, int]:
    """Each federate's reactions, from its run summary's line."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^\[(.+?)\] reactorfed: \d+ tags, (\d+) reactions", stdout, re.M)}


def test_a_traced_federated_ppo_run_holds_every_reaction_and_message(tmp_path: Path) -> None:
    stdout, trace_dir = _launch("examples/rl/ppo_cartpole.py:Main", tmp_path, "--param", "ppo.total_timesteps=1024",
                                "--param", "progress=false", "--param", "checkpoint=")
    procs = {p.name: p for p in load(trace_dir)}
    assert set(procs) == {"rti", "learner", "samplers[0]", "samplers[1]"}
    assert all(p.dropped == 0 for p in procs.values())
    counted = _reactions_by_federate(stdout)
    assert set(counted) == {"learner", "samplers[0]", "samplers[1]"}
    for name, n in counted.items():
        assert len([r for r in procs[name].records if r[0] == R.REACTION_END]) == n, name
    sends = [r for p in procs.values() for r in p.records if r[0] == R.SEND]
    recvs = [r for p in procs.values() for r in p.records if r[0] == R.RECV]
    assert sends and len(sends) == len(recvs)  # every message sent was received
    assert {(r[5], r[2], r[3]) for r in sends} == {(r[5], r[2], r[3]) for r in recvs}
    assert any(r[0] == R.GRANT for r in procs["rti"].records)
    trace = chrome_trace(list(procs.values()))
    ev = trace["traceEvents"]
    assert len([e for e in ev if e["ph"] == "X" and e["cat"] == "reaction"]) == sum(counted.values())
    assert len([e for e in ev if e["ph"] == "s"]) == len([e for e in ev if e["ph"] == "f"]) == len(sends)
    names = {e["args"]["name"].split(" ")[0] for e in ev if e.get("name") == "process_name"}
    assert names == set(procs)
    # The same trace read by Chrome DevTools' own importer:
    merged = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "trace", "merge", str(trace_dir), "-o", str(merged)],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    seen = _devtools_read(merged)
    flows = seen["flows"]
    assert len(flows) == len(sends)
    for f in flows:  # each flow joins a send in one process to its receive in another
        kinds = sorted(e["name"].split(" ")[0] for e in f)
        assert kinds == ["receive", "send"] and f[0]["pid"] != f[1]["pid"], f
    entries = [n for threads in seen["processes"].values() for t in threads.values() for n in t["entries"]]
    assert len([n for n in entries if n.startswith("Main.")]) == sum(counted.values())


def _devtools_read(trace: Path) -> dict[str, Any]:
    """What Chrome DevTools' trace engine (npm @paulirish/trace_engine) makes of ``trace``."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("Node.js and npm are needed to read traces with Chrome DevTools' trace engine")
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reactorfed" / "devtools-trace"
    home.mkdir(parents=True, exist_ok=True)
    for f in ("package.json", "read_trace.mjs"):
        shutil.copyfile(DEVTOOLS / f, home / f)
    if not (home / "node_modules" / "@paulirish" / "trace_engine").exists():
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=home,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            missing(f"npm could not install Chrome DevTools' trace engine: {r.stderr[-500:]}")
    r = subprocess.run(["node", "read_trace.mjs", str(trace)], cwd=home, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_a_traced_appo_run_has_the_learners_policy_lag_as_counter_tracks(tmp_path: Path) -> None:
    """Each lag the learner observes goes to a counter track of its process when it
    changes: every value of the result's histogram is on the track, and the logical-time
    lags span the result's min to max. (One process: the federated learner's metrics are
    tests/rl/test_policy_lag.py's.)"""
    trace_dir = tmp_path / "trace"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "run", "tests/rl/async_programs.py:SlowAPPO", "--fast",
                        "-p", "iterations=12", "--trace", str(trace_dir)], cwd=REPO, capture_output=True, text=True,
                       timeout=240, env={**os.environ, "OMP_NUM_THREADS": "1", "REACTORFED_LOGDIR": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    found = re.findall(r"^reactorfed: result of SlowAPPO\.learner: (\{.*\})$", r.stdout, re.M)
    result = json.loads(found[0])
    merged = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "trace", "merge", str(trace_dir), "-o", str(merged)],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ev = json.loads(merged.read_text())["traceEvents"]
    pids = {e["args"]["name"].split(" ")[0]: e["pid"] for e in ev if e.get("name") == "process_name"}
    counters = [e for e in ev if e["ph"] == "C"]
    assert counters and {e["pid"] for e in counters} == {pids["SlowAPPO"]}
    its = [e["args"]["value"] for e in counters if e["name"] == "SlowAPPO.learner policy lag (iterations)"]
    ns = [e["args"]["value"] for e in counters if e["name"] == "SlowAPPO.learner policy lag (ns)"]
    assert set(its) == {int(k) for k in result["policy_lag_iterations"]}
    assert all(a != b for a, b in itertools.pairwise(its))  # a record when the value changes
    assert min(ns) == result["policy_lag_ns"]["min"] and max(ns) == result["policy_lag_ns"]["max"]
    assert all(isinstance(e["ts"], (int, float)) for e in counters)


def test_a_traced_run_in_one_process_records_every_reaction(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "run", "examples/hello.py:Main", "--fast", "--timeout",
                        "300ms", "--json", "--trace", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    (p,) = load(tmp_path)
    assert len([x for x in p.records if x[0] == R.REACTION_END]) == summary["reactions"]
    assert p.written is not None and p.dropped == 0


def test_tracing_is_off_by_default_and_an_unwritable_directory_changes_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = subprocess.run([sys.executable, "-m", "reactorfed", "run", "examples/hello.py:Main", "--fast", "--timeout",
                        "300ms", "--json", "--trace", str(blocker / "sub")], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("cannot write the trace file") == 1
    plain = subprocess.run([sys.executable, "-m", "reactorfed", "run", "examples/hello.py:Main", "--fast",
                            "--timeout", "300ms", "--json"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert json.loads(plain.stdout.splitlines()[-1])["reactions"] == json.loads(r.stdout.splitlines()[-1])["reactions"]
