"""The test control plane's processes die with the process that spawned them, even when
it is killed outright (a pytest worker's timeout or crash): none is left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from .controlplane import wait_for


def test_a_child_dies_with_its_spawner_killed_outright() -> None:
    spawner = textwrap.dedent("""
        import subprocess, sys, time
        from tests.e2e.controlplane import dies_with_this_process
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 start_new_session=True, preexec_fn=dies_with_this_process())
        print(child.pid, flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", spawner], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    os.kill(child, 0)  # running, in a session of its own
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)

    def gone() -> bool | None:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        try:  # (a zombie until it is reaped: dead all the same)
            state = Path(f"/proc/{child}/stat").read_text().split(")")[1].split()[0]
        except FileNotFoundError:
            return True
        return True if state == "Z" else None

    wait_for("the child's end", gone, timeout=10)
