"""Options of ``reactorfed launch`` that reach the federate processes."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux only")]

PROGRAM = f"{Path(__file__).with_name('programs.py')}:Policies"


def policies(*args: str) -> list[int]:
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress",
                           *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [int(p) for p in re.findall(r"\[[ab]\] POLICY (\d+)", proc.stdout)]
    assert len(found) == 2, proc.stdout
    return found


def test_fast_federates_run_their_reactions_under_sched_idle() -> None:
    """As fast as possible: a woken federate does not preempt the one that sent to it, and
    every normal thread (the ones answering heartbeats) runs ahead of busy reactions."""
    assert policies("--fast") == [os.SCHED_IDLE] * 2
    assert policies("--fast", "--reaction-sched", "batch") == [os.SCHED_BATCH] * 2


def test_real_time_federates_and_the_opt_out_keep_the_default_policy() -> None:
    assert policies() == [os.SCHED_OTHER] * 2
    assert policies("--reaction-sched", "idle") == [os.SCHED_OTHER] * 2  # real time: never
    assert policies("--fast", "--reaction-sched", "normal") == [os.SCHED_OTHER] * 2


def _nices(*args: str) -> list[tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress",
                           *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [(int(n), rest) for n, rest in re.findall(r"\[[ab]\] NICE (-?\d+) (.*)", proc.stdout)]
    assert len(found) == 2, proc.stdout
    return found


def test_reactions_run_below_the_threads_that_answer_heartbeats() -> None:
    """Launched federates run below the RTI (FEDERATE_NICE); once joined, the thread that
    runs reactions lowers itself further (by 10 by default) and, with --fast, alone takes
    SCHED_IDLE; ZeroMQ's I/O thread and the heartbeat thread keep the federate's level,
    so that busy reactions starve neither them nor the RTI (issue 18)."""
    from reactorfed.federation.process.launch import FEDERATE_NICE

    fed = min(19, os.getpriority(os.PRIO_PROCESS, 0) + FEDERATE_NICE)
    for own, others in _nices("--fast"):
        assert own == min(19, fed + 10)
        assert others == str(sorted({(fed, os.SCHED_OTHER)})), others  # every other thread: untouched
    assert [own for own, _ in _nices("--reaction-nice", "3")] == [min(19, fed + 3)] * 2
    assert [own for own, _ in _nices("--reaction-nice", "0")] == [fed] * 2


def test_each_federate_reports_the_cpu_time_of_its_run() -> None:
    """The launcher's output says where the federation spent its CPU, process by process."""
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--fast",
                           "--no-progress"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = dict(re.findall(r"^\[([ab])\] reactorfed: \d+ tags, \d+ reactions in [\d.]+ s wall, (\d+\.\d{3}) s CPU",
                            proc.stdout, re.MULTILINE))
    assert sorted(found) == ["a", "b"], proc.stdout
    assert all(float(c) > 0 for c in found.values()), found
    rti = re.search(r"^\[rti\] RTI: 2 federates resigned; .* in [\d.]+ s wall, (\d+\.\d{3}) s CPU;", proc.stdout, re.MULTILINE)
    assert rti is not None and float(rti.group(1)) > 0, proc.stdout


def _subparser(name: str) -> Any:
    from reactorfed.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_launch_forwards_every_execution_and_federation_flag_it_was_given() -> None:
    """One place rebuilds launch's flags for its children: each one a federate takes,
    given to launch, reaches the federate with the same value; defaults are not repeated."""
    from reactorfed.options import forwarded

    launch = _subparser("launch")
    given = ["prog.py:Main", "--fast", "--timeout", "1500ms", "--workers", "3", "--keepalive", "--check-types",
             "--heartbeat-timeout", "7s", "--join-timeout", "2min", "--no-peer-grants", "--no-shm", "--reaction-sched", "batch",
             "--no-unix-sockets", "--reaction-nice", "4", "--log-level", "debug"]
    args = launch.parse_args(given)
    out = forwarded(launch, args)
    federate = _subparser("federate")
    child = federate.parse_args(["prog.py:Main", "--federate", "a", "--rti", "h:1", *out])
    for dest in ("fast", "timeout", "workers", "keepalive", "check_types", "heartbeat_timeout", "join_timeout",
                 "no_peer_grants",
                 "no_shm", "reaction_sched", "no_unix_sockets", "reaction_nice", "log_level"):
        assert getattr(child, dest) == getattr(args, dest), dest
    assert child.timeout == 1_500_000_000 and child.heartbeat_timeout == 7_000_000_000
    assert child.join_timeout == 120_000_000_000
    assert forwarded(launch, launch.parse_args(["prog.py:Main"])) == []


def test_metrics_port_is_one_flag_with_one_validation() -> None:
    for command in ("run", "rti", "federate"):
        p = _subparser(command)
        action = next(a for a in p._actions if "--metrics-port" in a.option_strings)
        assert action.type("0") == 0
        with pytest.raises(argparse.ArgumentTypeError, match="0-65535"):
            action.type("70000")
        assert any("--metrics-addr" in a.option_strings for a in p._actions), command


def test_heartbeat_timeout_below_the_floor_is_a_usage_error() -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "federate", PROGRAM, "--federate", "a", "--rti", "h:1",
                        "--heartbeat-timeout", "50ms"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--heartbeat-timeout: must be at least 200ms" in r.stderr


def test_join_timeout_bounds_the_rtis_wait_and_is_validated() -> None:
    """An RTI whose federates never come gives up after --join-timeout, naming them."""
    r = subprocess.run([sys.executable, "-m", "reactorfed", "rti", PROGRAM, "--port", "0", "--join-timeout", "1s"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "REACTORFED_SECRET": "s3cret-s3cret"})
    assert r.returncode != 0
    assert "did not join within 1 s: a, b" in r.stdout + r.stderr, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "reactorfed", "rti", PROGRAM, "--join-timeout", "10ms"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--join-timeout: must be at least 1s" in r.stderr


def test_launch_gives_each_process_its_share_of_the_cores_unless_told() -> None:
    """Numeric libraries start a thread per core in every process unless told: launch
    tells them each process's share (2 federates here), and keeps the user's setting."""
    share = str(max(1, (os.cpu_count() or 1) // 2))
    for env, expect in (({k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}, share),
                        ({**os.environ, "OMP_NUM_THREADS": "3"}, "3")):
        proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert re.findall(r"\[[ab]\] THREADS (\S+)", proc.stdout) == [expect, expect], proc.stdout
