"""bench/cpu_watch.py: a real process's threads, read from the scheduler's counters."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench.cpu_watch import CpuWatch, pid_of_container

# busy for 0.4 s of CPU, then asleep for 0.6 s
_PROGRAM = """
import time
end = time.process_time() + 0.4
while time.process_time() < end:
    pass
print("slept", flush=True)
time.sleep(0.6)
"""


def test_a_busy_then_sleeping_process_splits_into_run_and_sleep() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _PROGRAM], stdout=subprocess.PIPE, text=True)
    watch = CpuWatch(proc.pid, interval_ns=1_000_000)
    started = time.time_ns()
    assert proc.stdout is not None and proc.stdout.readline() == "slept\n"
    asleep = time.time_ns()
    proc.wait(timeout=10)
    watch.stop()
    busy = watch.split(started, asleep)
    assert busy, watch.samples
    main = busy[0]
    assert main.run_ms + main.wait_ms >= 300, main  # the busy loop, running or runnable
    nap = watch.split(asleep + 50_000_000, asleep + 500_000_000)
    assert nap and nap[0].run_ms < 20 and nap[0].sleep_ms > 300, nap


def test_a_container_process_is_found_by_its_cgroup(tmp_path: Path) -> None:
    def proc(pid: int, cgroup: str, start: int) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "cgroup").write_text(cgroup)
        fields = ["S"] + ["0"] * 18 + [str(start)] + ["0"] * 10
        (d / "stat").write_text(f"{pid} (python3) " + " ".join(fields))

    proc(10, "0::/kubelet/pod1/abc123\n", 500)
    proc(11, "0::/kubelet/pod1/abc123\n", 400)  # the container's first process
    proc(12, "0::/other\n", 100)
    (tmp_path / "self").mkdir()
    assert pid_of_container("abc123", tmp_path) == 11
    assert pid_of_container("def456", tmp_path) is None
