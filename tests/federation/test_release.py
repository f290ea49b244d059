"""A federate that resigns keeps its links open until what it sent has arrived.

Its last payloads may still be queued in its own process when it finishes. Before the
RTI's RELEASE, it closed its links with a linger of the heartbeat timeout and exited: what
had not left by then was lost, and the sink waited for ever for messages the counts said
were sent (the kind suite's Atari example hung so in pods). Each case here failed so
before (the first in about a third of the runs, the second in every run); the source
finishes well before the sink has read everything (here 2.4 s against 5.1 s, loaded), more
than the linger (the heartbeat timeout's 1 s floor) later:
* over encrypted TCP, 512 MiB as fast as the link takes them;
* over the Unix socket, 40 MiB to a sink that takes 600 ms over each 8 MiB array and
  reads nothing meanwhile (the sender's output waits in its process).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = f"{Path(__file__).with_name('release_programs.py')}:Flood"
MIB = 8


@pytest.mark.parametrize(("count", "slow_ms", "links"), [(64, 0, ["--no-unix-sockets"]), (5, 600, [])],
                         ids=["encrypted TCP, fast sink", "Unix socket, slow sink"])
def test_a_fast_senders_last_payloads_all_arrive_after_it_resigned(count: int, slow_ms: int, links: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reactorfed", "launch", PROGRAM, "-p", f"count={count}", "-p", f"mib={MIB}",
         "-p", f"slow_ms={slow_ms}", "--fast", "--timeout", "100ms", "--no-progress", "--no-shm", *links,
         "--heartbeat-timeout", "1s"],
        capture_output=True, text=True, timeout=120)
    out = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, out
    assert re.findall(r"^\[sink\] GOT (\d+) (\d+)$", proc.stdout, re.MULTILINE) == [(str(count), str(count * (MIB << 20)))], out
    assert "may be lost" not in proc.stderr, out
