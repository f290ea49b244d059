"""Running a reactorfed program for a benchmark, in either execution mode.

Both modes run in a fresh process through the ``reactorfed`` command line, with
``--fast`` (logical time does not wait for physical time):

* ``single``: ``reactorfed run`` (one process, reactions on one thread);
* ``federated``: ``reactorfed launch`` (the RTI plus one process per federate:
  each child of the main reactor, each bank member its own).

The program measures itself (a reactor records the physical time of its first
and last events) and reports the result (``Reactor.report_result``), which the
command line prints after the run's summary: start-up of the processes and of the
federation is not part of the figure, as Ray's actor start-up is not part of Ray's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from bench.common import wait_quiet

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "reactorfed.cli"]
MODES = ("single", "federated")


class ProgramFailed(RuntimeError):
    pass


@cache
def federated_available() -> bool:
    """Whether this reactorfed has ``reactorfed launch`` (the federation launcher)."""
    out = subprocess.run([*CLI, "--help"], capture_output=True, text=True, cwd=ROOT)
    return "launch" in out.stdout


def program_command(program: str, params: dict[str, Any], mode: str = "single",
                    extra: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run ``program`` with ``params`` in ``mode``
    (what :func:`run_program` runs; a benchmark that reads the output as it comes uses it)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    cmd = [*CLI, "run" if mode == "single" else "launch", program, "--fast"]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    cmd += extra or []
    # the examples beside whatever the caller put first (a checkout's own runtime, say)
    path = os.pathsep.join(x for x in (str(ROOT / "examples" / "rl"), os.environ.get("PYTHONPATH")) if x)
    # no learning curves (REACTORFED_LOGDIR empty): the peers write none by default either
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path, "REACTORFED_LOGDIR": ""}
    return cmd, env


def run_program(
    program: str,
    params: dict[str, Any],
    mode: str = "single",
    timeout: float = 300,
    extra: list[str] | None = None,
    expect: dict[str, Any] | None = None,
    result_of: str | None = None,
) -> dict[str, Any]:
    """Run ``program`` (``path/file.py:Main``) with ``params``; return its JSON result.

    ``expect``: result fields that must have these values (e.g. the number of steps
    done), so that a run that did less work never counts as a fast one. ``result_of``:
    the reactor whose result it is (the end of its full name, e.g. ``".learner"``), for a
    program where several report one (a Q-learning sampler reports its sample count).
    """
    cmd, env = program_command(program, params, mode, extra)
    wait_quiet()  # (the program times itself once every process is up)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        tail = "\n".join(str(e.stderr or "").splitlines()[-25:])
        raise ProgramFailed(f"{' '.join(cmd)} did not finish within {timeout:.0f} s:\n{tail}") from e
    reported = {k: v for k, v in results_by_reactor(proc.stdout).items() if result_of is None or k.endswith(result_of)}
    if proc.returncode != 0 or len(reported) != 1:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-25:])
        raise ProgramFailed(f"{' '.join(cmd)} exited {proc.returncode} with {len(reported)} results (1 expected):\n{tail}")
    data: dict[str, Any] = next(iter(reported.values()))
    wrong = {k: (v, data.get(k)) for k, v in (expect or {}).items() if data.get(k) != v}
    if wrong:
        raise ProgramFailed(f"{' '.join(cmd)}: result differs from the work asked (expected, got): {wrong}")
    data["cpu_s"] = cpu_by_process(proc.stdout)
    return data


# A reactor's reported result, printed after its process's summary.
_RESULT = re.compile(r"^(?:\[.+?\] )?reactorfed: result of (?P<fqn>\S+): (?P<json>\{.*\})$", re.MULTILINE)


def results_by_reactor(stdout: str) -> dict[str, dict[str, Any]]:
    """What the program's reactors reported, by full name, from the command's output."""
    return {m["fqn"]: json.loads(m["json"]) for m in _RESULT.finditer(stdout)}


# A run's summary line; the launcher prefixes each federate's output with [its name].
_SUMMARY = re.compile(r"^(?:\[(?P<name>.+?)\] )?reactorfed: \d+ tags, \d+ reactions in [\d.]+ s wall, (?P<cpu>[\d.]+) s CPU",
                      re.MULTILINE)


def cpu_by_process(stdout: str) -> dict[str, float]:
    """The CPU seconds each process spent in its run, from the summaries it printed:
    {federate: seconds} (``main`` for a single-process run)."""
    return {m["name"] or "main": float(m["cpu"]) for m in _SUMMARY.finditer(stdout)}
