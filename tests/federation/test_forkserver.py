"""``reactorfed launch`` forks its federates from one process that imported the program
(the fork server): the same federation, the same output, started at the cost of one
import instead of one per federate."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(180), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _launch(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reactorfed", "launch", program, "--no-progress", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_federates_are_forked_from_one_process_unless_told_otherwise() -> None:
    prog = f"{HERE / 'programs.py'}:Parents"
    r = subprocess.Popen([sys.executable, "-m", "reactorfed", "launch", prog, "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    out, _ = r.communicate(timeout=120)
    assert r.returncode == 0, out
    parents = {int(p) for p in re.findall(r"^\[[abc]\] PARENT (\d+)$", out, re.MULTILINE)}
    assert len(parents) == 1 and r.pid not in parents, out  # one fork server, not the launcher
    # The program is built once, by the fork server, and its federates share it.
    assert re.findall(r"^\[(\w+)\] BUILT \d+$", out, re.MULTILINE).count("forkserver") == 1, out
    assert not re.findall(r"^\[[abc]\] BUILT", out, re.MULTILINE), out
    r = subprocess.Popen([sys.executable, "-m", "reactorfed", "launch", prog, "--no-progress", "--no-fork-server"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    out, _ = r.communicate(timeout=120)
    assert r.returncode == 0, out
    assert re.findall(r"^\[[abc]\] PARENT (\d+)$", out, re.MULTILINE) == [str(r.pid)] * 3, out
    assert sorted(re.findall(r"^\[([abc])\] BUILT \d+$", out, re.MULTILINE)) == ["a", "b", "c"], out


def _program_lines(out: str) -> list[str]:
    """What the federates' reactions printed: their output less logs and summaries."""
    return sorted(line for line in out.splitlines()
                  if line.startswith("[") and not line.startswith(("[rti]", "[forkserver]"))
                  and " INFO " not in line and "reactorfed:" not in line)


def test_forked_and_spawned_federations_print_the_same() -> None:
    args = ("examples/pipeline.py:Main", "--fast", "--timeout", "1s", "-p", "sensors=5")
    forked, spawned = _launch(*args), _launch(*args, "--no-fork-server")
    assert forked.returncode == 0 and spawned.returncode == 0, forked.stderr + spawned.stderr
    lines = _program_lines(forked.stdout)
    assert len(lines) == 11 and lines == _program_lines(spawned.stdout)


def test_a_program_that_cannot_be_imported_fails_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import no_such_module_anywhere\n")
    r = _launch(f"{bad}:Main")
    assert r.returncode != 0
    assert "no_such_module_anywhere" in r.stdout + r.stderr


def test_each_forked_federate_prints_through_its_own_pipe() -> None:
    # 40 federates forked in one burst (held at a gate until the last is forked): each
    # must get its own output pipe (its lines under its own name) and its own exit status.
    r = _launch(f"{HERE / 'programs.py'}:Names", "-p", "n=40")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    said = re.findall(r"^\[(\S+)\] NAME (\S+)$", r.stdout, re.MULTILINE)
    assert sorted(said) == sorted((f"namers[{i}]", f"namers[{i}]") for i in range(40)), said


def test_spawn_requests_beyond_the_window_wait_their_turn() -> None:
    # Driven directly, with a window of 3: 8 requests go in several bursts, and every
    # child reports its exit (here: it fails at once, it has no RTI to join).
    import io
    import os
    import threading

    from reactorfed.federation.process.launch import _close_fork_server, _start_fork_server

    server = _start_fork_server(sys.executable, f"{HERE / 'programs.py'}:Names", ["n=8"], dict(os.environ),
                                io.StringIO(), threading.Lock())
    assert server is not None
    try:
        argv = ["--federation-id", "x", "--rti", "tcp://127.0.0.1:1", "--join-timeout", "1ms"]
        started = server[0].spawn_many([(f"namers[{i}]", [f"{HERE / 'programs.py'}:Names", "-p", "n=8",
                                                          "--federate", f"namers[{i}]", *argv]) for i in range(8)],
                                       window=3)
        assert [c.name for c, _ in started] == [f"namers[{i}]" for i in range(8)]
        assert len({c.pid for c, _ in started}) == 8
        server[0].watch()
        for child, fd in started:
            with os.fdopen(fd) as f:
                f.read()  # to its end: the child closed its only copy of the pipe
            assert child.wait(30) not in (None, 0)
    finally:
        _close_fork_server(server)
