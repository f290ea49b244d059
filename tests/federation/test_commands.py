"""Options of ``reactorfed launch`` that reach the federate processes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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


def test_fast_federates_run_under_sched_batch() -> None:
    """As fast as possible: a woken federate does not preempt the one that sent to it."""
    assert policies("--fast") == [os.SCHED_BATCH] * 2


def test_real_time_federates_and_the_opt_out_keep_the_default_policy() -> None:
    assert policies() == [os.SCHED_OTHER] * 2
    assert policies("--fast", "--no-sched-batch") == [os.SCHED_OTHER] * 2


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
