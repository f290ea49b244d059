"""Failure detection on a loaded machine, with real processes and the default settings
(``bench/liveness.py`` runs the same at N = 256): healthy federates starved of CPU are
not declared dead, and a killed or stopped one is found within its bound."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest
from bench.liveness import KILL_BOUND_S, LOADED_SLACK_S, PROGRAMS, STOP_BOUND_S, completes, detects

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

HOG = "import time\nwhile True:\n    sum(range(10000))\n"


@pytest.fixture
def loaded() -> Iterator[None]:
    """Two processes spinning on this machine's two cores for the whole test."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def test_starved_federates_busy_in_numpy_are_not_declared_dead(loaded: None) -> None:
    """Ten federates (a driver and nine workers each busy 400 ms of its own CPU per round
    in numpy) beside two spinning processes on two cores: every worker waits seconds for
    a core while it holds the interpreter lock. The run completes."""
    r = completes([f"{PROGRAMS}:Busy", "-p", "federates=10", "-p", "rounds=2", "-p", "busy_ms=400", "--fast"],
                  timeout_s=150, quiet=False)
    assert r["completed"], r


@pytest.mark.parametrize(("sig", "bound"), [(signal.SIGKILL, KILL_BOUND_S), (signal.SIGSTOP, STOP_BOUND_S)],
                         ids=["killed", "stopped"])
def test_a_dead_federate_is_found_on_a_loaded_machine(loaded: None, sig: signal.Signals, bound: float) -> None:
    """Ten federates ticking in real time beside two spinning processes; one gets the
    signal: the RTI names that one (not a bystander) within the bound (plus the time the
    RTI and this test wait for a core beside the spinners), and all end."""
    d = detects(10, sig, timeout_s=90, quiet=False)
    assert d["named_s"] is not None and d["blamed_other"] is None, d
    assert d["named_s"] <= bound + LOADED_SLACK_S, d
    assert d["exit_code"] not in (0, None), d
