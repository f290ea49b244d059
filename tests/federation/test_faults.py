"""Faults with real processes (``reactorfed launch``): a federate killed or stopped, the
RTI killed, the launcher killed. Each ends within seconds, non-zero, naming the process
at fault, and leaves no process behind."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PROGRAM = f"{Path(__file__).with_name('programs.py')}:Slow"
END_WITHIN_S = 15.0


def children_of(pid: int) -> dict[int, str]:
    """Every descendant of ``pid`` (from /proc), with its command line."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
                parent[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p and c not in out:
                out[c] = cmdline(c)
                todo.append(c)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Launch:
    """``reactorfed launch`` of the Slow program in its own process group."""

    def __init__(self, timeout: str = "30s") -> None:
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", timeout, "--heartbeat-timeout", "1s",
             "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.pids: dict[str, int] = {}

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    m = rx.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no line matching {pattern!r}:\n" + "\n".join(self.lines[-30:]))
                self.cond.wait(min(left, 0.2))

    def running(self) -> dict[str, int]:
        """Wait until both federates run; the pid of every process of the federation."""
        self.wait_for(r"\[sink\] received 10")
        for name in ("src", "sink"):
            self.pids[name] = int(self.wait_for(rf"\[{re.escape(name)}\] PID (\d+)").group(1))
        kids = children_of(self.proc.pid)
        rti = [p for p, cmd in kids.items() if " rti " in cmd]
        assert len(rti) == 1, kids
        self.pids["rti"] = rti[0]
        assert set(self.pids.values()) <= set(kids), (self.pids, kids)
        self.all = {**kids, self.proc.pid: cmdline(self.proc.pid)}
        return self.pids

    def end(self, timeout: float = END_WITHIN_S) -> tuple[int, float]:
        t0 = time.monotonic()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            raise AssertionError(f"the launcher did not end within {timeout} s:\n" + "\n".join(self.lines[-30:])) from None
        self._reader.join(5)
        return code, time.monotonic() - t0

    def leftovers(self, within: float = 5.0) -> list[str]:
        deadline = time.monotonic() + within
        while True:
            left = [f"{p} {cmd}" for p, cmd in self.all.items() if alive(p) and cmdline(p) == cmd]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.05)

    def kill_all(self) -> None:
        """SIGKILL what is left of this federation: only our processes, by pid, and only
        while the pid still runs the command we saw (a pid may have been reused)."""
        if self.proc.poll() is None:
            self.proc.kill()
        for p, cmd in getattr(self, "all", {}).items():
            if p != self.proc.pid and alive(p) and cmdline(p) == cmd:
                with contextlib.suppress(OSError):
                    os.kill(p, signal.SIGKILL)

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


@pytest.fixture
def launch() -> Iterator[Callable[..., Launch]]:
    started: list[Launch] = []

    def start(**kw: str) -> Launch:
        ln = Launch(**kw)
        started.append(ln)
        return ln

    yield start
    for ln in started:  # never leave anything behind, whatever happened
        ln.kill_all()
        ln.proc.wait(5)


def test_a_killed_federate_ends_the_federation(launch: Callable[..., Launch]) -> None:
    ln = launch()
    pids = ln.running()
    os.kill(pids["sink"], signal.SIGKILL)
    code, took = ln.end()
    assert code != 0
    assert took < END_WITHIN_S
    assert "FAILED" in ln.lines[-1] and "(sink was killed by SIGKILL)" in ln.lines[-1], ln.output
    # the RTI noticed on its own and told the others why
    assert "federation failed: federate sink stopped responding" in ln.output, ln.output
    assert re.search(r"\[src\] .*the federation was aborted: federate sink stopped responding", ln.output), ln.output
    assert not ln.leftovers(), ln.output


def test_a_stopped_federate_is_detected_by_its_heartbeat(launch: Callable[..., Launch]) -> None:
    ln = launch()
    pids = ln.running()
    os.kill(pids["sink"], signal.SIGSTOP)
    try:
        code, took = ln.end()
    finally:
        if alive(pids["sink"]):
            os.kill(pids["sink"], signal.SIGCONT)
    assert code != 0 and took < END_WITHIN_S
    assert "federate sink stopped responding" in ln.output, ln.output
    last = ln.lines[-1]
    assert "FAILED" in last and "federate sink stopped responding" in last, ln.output
    assert "(sink: " in last, f"the launcher must blame the stopped federate, not a bystander: {last}"
    assert not ln.leftovers(), ln.output


def test_a_killed_rti_ends_every_federate(launch: Callable[..., Launch]) -> None:
    ln = launch()
    pids = ln.running()
    os.kill(pids["rti"], signal.SIGKILL)
    code, took = ln.end()
    assert code != 0 and took < END_WITHIN_S
    assert "FAILED" in ln.lines[-1] and "(rti was killed by SIGKILL)" in ln.lines[-1], ln.output
    for name in ("src", "sink"):  # each federate noticed on its own, from its closed connection
        assert re.search(rf"\[{name}\] .*lost the RTI: the connection to tcp://\S+ closed", ln.output), ln.output
    assert not ln.leftovers(), ln.output


def test_killing_the_launcher_leaves_no_process(launch: Callable[..., Launch]) -> None:
    ln = launch()
    ln.running()
    os.kill(ln.proc.pid, signal.SIGKILL)
    ln.proc.wait(5)
    left = ln.leftovers(within=5.0)
    assert not left, left


def test_a_failing_reaction_ends_the_federation_naming_it() -> None:
    """In threads: a reaction raises in one federate; it reports the failure, the RTI
    aborts the others with the reason, and nothing waits for a heartbeat timeout."""
    from reactorfed import sec
    from reactorfed.federation import FederationError, run_threads

    from .programs import FailingPipeline

    t0 = time.monotonic()
    run = run_threads(FailingPipeline, fast=False, timeout=sec(30), join_timeout_s=20)
    took = time.monotonic() - t0
    assert took < 5, took  # well before the 30 s timeout, and without waiting for liveness
    assert "the fifth value is one too many" in str(run.errors["sink"])
    rti = run.errors["rti"]
    assert isinstance(rti, FederationError) and "federate sink failed" in str(rti) and "fifth value" in str(rti)
    for name in ("src", "relay"):
        err = run.errors[name]
        assert isinstance(err, FederationError) and "aborted: federate sink failed" in str(err), (name, err)


def test_a_federate_holding_the_gil_past_the_heartbeat_timeout_is_not_declared_dead() -> None:
    """Its Python heartbeat thread cannot run for 2.5 s (the reaction holds the GIL in a C
    call), longer than the 1 s heartbeat timeout; ZeroMQ's own heartbeats, answered by
    its I/O thread, keep the connection alive: no false alarm, the run completes."""
    prog = f"{Path(__file__).with_name('programs.py')}:GilHog"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "launch", prog, "--heartbeat-timeout", "1s", "--no-progress"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[taker] GOT 1" in r.stdout
