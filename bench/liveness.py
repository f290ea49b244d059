"""Failure detection at scale: no false alarm for healthy federates however starved, and
every dead one found, with the product's default settings.

    python -m bench.liveness                      # N = 16, 64, 128, 256
    python -m bench.liveness --quick              # N = 8, 16
    python -m bench.liveness --federates 256 --cases busy,kill

Cases, each a ``reactorfed launch`` of N federates on this machine (``bench/liveness_programs.py``):

* ``pipeline``: ``examples/pipeline.py`` with N - 2 sensors, ``--fast --timeout 100s``
  (the run that, with N = 66, once raised a false alarm while its federates imported
  their modules): does it complete?
* ``busy``: a driver and N - 1 workers, each keeping its core busy in numpy for
  ``--busy-ms`` of its own CPU time per round (BLAS holds the interpreter lock; with N
  federates on 2 cores each one waits seconds for a core): does it complete?
* ``kill``: N - 1 sources ticking every 100 ms into a sink, in real time; once they run,
  one source gets SIGKILL: how long until the RTI names it, and until every process ended?
* ``stop``: the same with SIGSTOP (a hung process, or a network that went silent): only
  the connection's heartbeats (3 s by default) can tell.

JSON lines (``bench/results/liveness.jsonl``): per case and N, the outcome and the times;
there is no peer in this benchmark (Ray's failure detection is its GCS's health checks,
30 s by default: not comparable in one run), so ``peer`` is the bound the issue sets
(3 s for a kill) or, for a stop, one heartbeat interval (1 s), the heartbeat timeout
(3 s) and the RTI's 1 s grace. With ``--runs K`` every case runs K times: a completion
case reports how many of the K completed (any failure is a false alarm and is kept with
its error), a detection case the median time and the slowest.
A plot of detection time against N (``liveness.png``).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import (
    Results,
    base_parser,
    federates_axis,
    progress,
    pyplot,
    save_figure,
    wait_quiet,
)

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = "bench/liveness_programs.py"
CASES = ("pipeline", "busy", "kill", "stop")
KILL_BOUND_S = 3.0
#: ZeroMQ pings every heartbeat interval (timeout / 3: 1 s) and drops a connection that
#: sent nothing for the timeout (3 s) after a ping; the stop may come just after a ping
#: was answered, and the RTI gives a closed connection 1 s of grace (its resignation may
#: be on the way): 1 + 3 + 1
STOP_BOUND_S = 1.0 + 3.0 + 1.0
#: what a test on a loaded machine adds to a bound: the RTI's loop and the test's own
#: reading of the RTI's output wait for a core beside the spinning processes (a stop
#: named after 5.002 s, 2 ms past the mechanism's bound, failed CI once)
LOADED_SLACK_S = 0.5
#: where a failed run's whole output goes (named in its result line)
LOG_DIR = Path(tempfile.gettempdir()) / "reactorfed-liveness"


class _Launch:
    """A ``reactorfed launch`` whose output lines are read, with their arrival times."""

    def __init__(self, args: list[str]) -> None:
        self.t0 = time.monotonic()
        self.lines: list[tuple[float, str]] = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen([sys.executable, "-m", "reactorfed", "launch", *args, "--no-progress"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                     start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        #: the least memory the kernel called available while it ran (MiB): a federate the
        #: OOM killer took would look like a dead one
        self.min_available_mib: int | None = None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._watch_memory, daemon=True).start()

    def _watch_memory(self) -> None:
        while self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/meminfo") as f:
                kib = int(next(ln for ln in f if ln.startswith("MemAvailable:")).split()[1])
                mib = kib // 1024
                if self.min_available_mib is None or mib < self.min_available_mib:
                    self.min_available_mib = mib
            time.sleep(0.5)

    def save(self, path: Path) -> None:
        """Every line it printed, with its time since the start (to diagnose a failure)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.cond:
            path.write_text("".join(f"{t - self.t0:9.3f} {line}\n" for t, line in self.lines))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
                self.cond.notify_all()

    def wait_for(self, pattern: str, timeout: float, since: float = 0.0) -> tuple[float, re.Match[str]] | None:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for t, line in self.lines:
                    m = rx.search(line) if t >= since else None
                    if m:
                        return t, m
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    return None
                self.cond.wait(0.2)

    def pids(self) -> dict[str, int]:
        with self.cond:
            found = (re.match(r"\[(?P<name>.+?)\] PID (?P<pid>\d+)$", line) for _, line in self.lines)
            return {m["name"]: int(m["pid"]) for m in found if m}

    def end(self, timeout: float) -> tuple[int | None, float]:
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            code = None
        return code, time.monotonic()

    def tail(self, n: int = 15) -> str:
        with self.cond:
            return "\n".join(line for _, line in self.lines[-n:])


def completes(args: list[str], timeout_s: float, quiet: bool = True, log: Path | None = None) -> dict[str, Any]:
    """Run to the end: did it complete (exit 0) and in how long; the error if not.
    ``quiet``: wait for a quiet machine first (tests load it on purpose: they do not).
    ``log``: where to write the run's whole output if it failed."""
    if quiet:
        wait_quiet()
    ln = _Launch(args)
    code, t = ln.end(timeout_s)
    out: dict[str, Any] = {"completed": code == 0, "wall_s": round(t - ln.t0, 2),
                           "min_available_mib": ln.min_available_mib}
    if code != 0:
        out["error"] = next((line for _, line in reversed(ln.lines) if "FAILED" in line or "ERROR" in line), ln.tail(3))
        if log is not None:
            ln.save(log)
            out["log"] = str(log)
    return out


def detects(n: int, sig: signal.Signals, timeout_s: float, quiet: bool = True, seed: int = 0) -> dict[str, Any]:
    """A steady federation of ``n``; one source gets ``sig`` once all run: when the RTI
    names it and when every process has ended (seconds after the signal)."""
    if quiet:
        wait_quiet()
    ln = _Launch([f"{PROGRAMS}:Steady", "-p", f"federates={n}", "--timeout", "600s"])
    try:
        if ln.wait_for(r"\[sink\] tick 30$", timeout_s) is None:  # 3 s of ticks: every member runs
            raise RuntimeError(f"Steady N={n} never ran:\n{ln.tail()}")
        pids = {k: v for k, v in ln.pids().items() if k.startswith("sources[")}
        if len(pids) != n - 1:
            raise RuntimeError(f"Steady N={n}: {len(pids)} source PIDs seen, {n - 1} expected")
        victim = random.Random(n * 1000 + seed).choice(sorted(pids))  # another victim each run
        t_sig = time.monotonic()
        os.kill(pids[victim], sig)
        named = ln.wait_for(rf"federation failed: federate {re.escape(victim)} stopped responding", 60, since=t_sig)
        code, t_end = ln.end(60)
        if sig == signal.SIGSTOP:
            with contextlib.suppress(ProcessLookupError):  # the launcher may have killed it
                os.kill(pids[victim], signal.SIGCONT)
        wrong = ln.wait_for(r"federation failed: federate (?!" + re.escape(victim) + r" )", 0, since=t_sig)
        return {
            "victim": victim,
            "named_s": round(named[0] - t_sig, 3) if named else None,
            "ended_s": round(t_end - t_sig, 3),
            "exit_code": code,
            "blamed_other": wrong[1].group(0) if wrong and not named else None,
        }
    finally:
        if ln.proc.poll() is None:
            os.killpg(ln.proc.pid, signal.SIGKILL)


def plot(rows: list[dict[str, Any]], out: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for case, bound in (("kill", KILL_BOUND_S), ("stop", STOP_BOUND_S)):
        part = sorted((r for r in rows if r["case"].startswith(case) and r.get("named")),
                      key=lambda r: r["federates"])
        if part:
            ax.plot([r["federates"] for r in part], [r["reactorfed"] for r in part], marker="o",
                    label=f"{case}: RTI names the federate")
            ax.axhline(bound, linestyle="--", linewidth=0.8, color="gray")
    federates_axis(ax)
    ax.set_ylabel("seconds after the signal")
    ax.set_title("failure detection against federate count (defaults; dashed: bounds)", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(plt, fig, out, "liveness.png")


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--federates", default=None, help="comma-separated N (default 16,64,128,256; 8,16 with --quick)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    p.add_argument("--busy-ms", type=int, default=None, help="CPU per worker per round in 'busy' (default 1000; 200 with --quick)")
    p.add_argument("--rounds", type=int, default=2, help="rounds of 'busy' (default 2)")
    args = p.parse_args(argv)
    ns = [int(x) for x in (args.federates or ("8,16" if args.quick else "16,64,128,256")).split(",")]
    busy_ms = args.busy_ms or (200 if args.quick else 1000)
    res = Results("liveness", args.out)
    runs = 1 if args.quick else args.runs
    for n in ns:
        limit = 120 + n * (busy_ms / 1000) * args.rounds  # the work itself: N x busy over 2 cores, and room
        for case in args.cases.split(","):
            if case in ("pipeline", "busy"):
                cmd = (["examples/pipeline.py:Main", "-p", f"sensors={n - 2}", "--fast", "--timeout", "100s"]
                       if case == "pipeline" else
                       [f"{PROGRAMS}:Busy", "-p", f"federates={n}", "-p", f"rounds={args.rounds}",
                        "-p", f"busy_ms={busy_ms}", "--fast"])
                done = []
                for i in range(runs):
                    done.append(completes(cmd, limit, log=LOG_DIR / f"{case}-{n}-run{i + 1}.log"))
                    progress(f"{case} N={n} run {i + 1}/{runs}: {done[-1]}")
                ok = [r for r in done if r["completed"]]
                extra = {"busy_ms": busy_ms, "rounds": args.rounds} if case == "busy" else {}
                res.add(f"{case} N={n}", "completed_runs", len(ok), "runs", runs, "higher", runs, federates=n,
                        completed=len(ok) == runs,
                        wall_s=round(statistics.median(r["wall_s"] for r in ok), 2) if ok else None,
                        errors=[r["error"] for r in done if not r["completed"]], **extra)
            elif case in ("kill", "stop"):
                sig = signal.SIGKILL if case == "kill" else signal.SIGSTOP
                bound = KILL_BOUND_S if case == "kill" else STOP_BOUND_S
                found = []
                for i in range(runs):
                    found.append(detects(n, sig, limit, seed=i))
                    progress(f"{case} N={n} run {i + 1}/{runs}: {found[-1]}")
                times = [d["named_s"] for d in found if d["named_s"] is not None]
                # never named: recorded as a miss (999 s) with named=false, never hidden
                med = statistics.median(times) if len(times) == runs else 999.0
                res.add(f"{case} N={n}", "named_s", med, "bound", bound, "lower", runs, federates=n,
                        named=len(times) == runs, slowest_s=max(times) if times else None,
                        within_bound=len(times) == runs and max(times) <= bound,
                        ended_s=statistics.median(d["ended_s"] for d in found),
                        victims=[d["victim"] for d in found],
                        blamed_other=[d["blamed_other"] for d in found if d["blamed_other"]])
            else:
                raise SystemExit(f"unknown case {case!r}: one of {', '.join(CASES)}")
    path = res.write()
    pic = plot(res.rows, args.out)
    progress(f"wrote {path}" + (f" and {pic}" if pic else ""))
    return res


if __name__ == "__main__":
    main()
