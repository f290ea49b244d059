"""Where a process's wall time goes, thread by thread: running, waiting for a core, or
asleep. A background thread samples the Linux scheduler's counters
(``/proc/<pid>/task/<tid>/schedstat``: ns on a CPU, ns runnable on a run queue) every few
milliseconds, stamped with ``time.time_ns()``; :meth:`CpuWatch.split` then tells, for any
interval, how much of it each thread ran, waited for a CPU, and slept (the rest: waiting for
a message, a grant, a lock). A long pause with a large wait share is a process starved of
cores, not one waiting on the protocol.

The process may be a container's (a kind node's pod): the kind nodes are containers on this
host's kernel, so their processes are this host's, found by their container ID
(:func:`pid_of_container`).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuWatch", "Split", "pid_of_container"]


@dataclass(frozen=True)
class Split:
    """One thread's share of an interval, ms."""

    thread: str
    run_ms: float
    wait_ms: float
    sleep_ms: float


def pid_of_container(container_id: str, proc: Path = Path("/proc")) -> int | None:
    """The host PID of the oldest process in the container ``container_id`` (its cgroup path
    names the ID), or None when no process here is in it."""
    found: list[tuple[int, int]] = []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            if container_id in (d / "cgroup").read_text():
                found.append(
                    (int((d / "stat").read_text().rsplit(")", 1)[1].split()[19]), int(d.name))
                )
        except OSError:
            continue
    return min(found)[1] if found else None


class CpuWatch:
    """Samples ``pid``'s threads every ``interval_ns`` until :meth:`stop`."""

    def __init__(self, pid: int, interval_ns: int = 2_000_000) -> None:
        self.pid = pid
        self.interval_ns = interval_ns
        #: thread name (comm:tid) -> [(wall ns, run ns, wait ns)]
        self.samples: dict[str, list[tuple[int, int, int]]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"cpu-watch-{pid}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tasks = Path(f"/proc/{self.pid}/task")
        while not self._stop.is_set():
            now = time.time_ns()
            try:
                tids = [t.name for t in tasks.iterdir()]
            except OSError:  # the process ended
                return
            for tid in tids:
                try:
                    comm = (tasks / tid / "comm").read_text().strip()
                    run, wait, _ = (int(x) for x in (tasks / tid / "schedstat").read_text().split())
                except (OSError, ValueError):
                    continue
                self.samples.setdefault(f"{comm}:{tid}", []).append((now, run, wait))
            self._stop.wait(self.interval_ns / 1e9)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def split(self, start_ns: int, end_ns: int) -> list[Split]:
        """Each thread's run, run-queue wait and sleep over [``start_ns``, ``end_ns``], from
        the samples nearest inside it (so the interval read is at most two sampling periods
        shorter), threads that ran the most first."""
        out = []
        for name, s in self.samples.items():
            i = bisect_left(s, (start_ns,))
            j = bisect_left(s, (end_ns + 1,)) - 1
            if i >= len(s) or j <= i:
                continue
            (t0, r0, w0), (t1, r1, w1) = s[i], s[j]
            run, wait = (r1 - r0) / 1e6, (w1 - w0) / 1e6
            out.append(
                Split(
                    name,
                    round(run, 1),
                    round(wait, 1),
                    round(max(0.0, (t1 - t0) / 1e6 - run - wait), 1),
                )
            )
        return sorted(out, key=lambda x: -(x.run_ms + x.wait_ms))
