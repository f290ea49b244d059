"""Faults and distance on the network between real processes: Toxiproxy on every link of
a federation (the RTI's port, per federate, and each federate's data port; see
:mod:`.proxied`), so a test can cut one federate's link to the RTI, or the data link
between two federates, while both processes live on, or put 20 ms on every link.

What the product promises (shared/DESIGN.md, issue 18): a federate whose link fails is
detected, from the closed connection when it closes and from silence (ZeroMQ's heartbeats,
3 s by default) when it does not; the federation then ends with an error that names the
federate, never hangs; and the same program gives the same output in one process and
federated, whatever the distance.

Measured here (2 cores, default settings, each test's run printed with ``-s``): a
federate's RTI link disabled or reset is reported by the RTI about 1.0 s after the cut
(the connection closes at once; the RTI allows 1 s for a RESIGN on the other connection),
and every process has ended by 1.3 s; a link gone silent (no packet passes, none is
refused) is reported after about 4.1 s (3 s of unanswered heartbeats, then that 1 s), every
process ended by 4.3 s. The bounds asserted leave room for a loaded machine.

The tests skip when Toxiproxy is not built (``scripts/tools.sh``), and fail under CI=true.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.toxiproxy import TOOLS_SCRIPT, Toxiproxy, server_binary

from ..kind.prereq import missing
from .proxied import REPO, ProxiedFederation

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

HERE = Path(__file__).resolve().parent
SLOW = f"{HERE / 'programs.py'}:Slow"  # src -> sink, a value every 50 ms of real time
DISTANT = f"{HERE / 'distance_programs.py'}:Main"

#: a cut that closes the connection: reported within the 3 s issue 18 asks of a killed federate
CLOSED_REPORTED_S = 3.0
#: a link gone silent: 3 s of unanswered heartbeats, the RTI's 1 s grace, and room for load
SILENT_REPORTED_S = 3.0 + 1.0 + 2.0
#: after the report, the rest of the federation (the aborts, each process's exit)
ENDED_AFTER_REPORT_S = 2.0


@pytest.fixture(scope="module")
def toxiproxy() -> Iterator[Toxiproxy]:
    if server_binary() is None:
        missing(f"Toxiproxy is not built: run {TOOLS_SCRIPT.relative_to(REPO)} (needs Go; scripts/test.sh runs it)")
    with Toxiproxy() as tp:
        yield tp


@pytest.fixture
def federation(toxiproxy: Toxiproxy) -> Iterator[Callable[..., ProxiedFederation]]:
    started: list[ProxiedFederation] = []

    def start(program: str, names: list[str], **kw: Any) -> ProxiedFederation:
        fed = ProxiedFederation(toxiproxy, program, names, **kw)
        started.append(fed)
        return fed

    yield start
    for fed in started:  # no process and no proxy left behind, whatever happened
        fed.close()


def _running_slow(federation: Callable[..., ProxiedFederation], timeout: str = "20s") -> ProxiedFederation:
    fed = federation(SLOW, ["src", "sink"], args=["--timeout", timeout])
    fed.wait_for(r"received 20", "sink", timeout=60)  # both run, data flows through the proxies
    return fed


def _assert_ended_naming(fed: ProxiedFederation, cut: float, culprit: str, report_within: float) -> tuple[float, float]:
    """The RTI names ``culprit`` within ``report_within`` s of the cut, each other federate
    is told why, and every process has ended non-zero soon after; (reported, ended) in s."""
    reported = fed.wait_for(rf"federation failed: federate {re.escape(culprit)} stopped responding", "rti",
                            timeout=report_within + 5, since=cut) - cut
    codes = fed.end(timeout=report_within + ENDED_AFTER_REPORT_S + 5)
    ended = max(fed.ended_at(n) for n in fed.procs) - cut
    print(f"\n{culprit}: reported by the RTI {reported:.2f} s after the cut, every process ended at {ended:.2f} s")
    assert reported <= report_within, (reported, fed.output)
    assert ended <= report_within + ENDED_AFTER_REPORT_S, (ended, fed.output)
    assert all(code != 0 for code in codes.values()), (codes, fed.output)
    # the federate cut off knows it lost the RTI; the others were told whom the RTI lost
    assert "lost the RTI" in fed.out_of(culprit), fed.output
    for other in (n for n in fed.names if n != culprit):
        assert f"the federation was aborted: federate {culprit} stopped responding" in fed.out_of(other), fed.output
    return reported, ended


# -- a federate's link to the RTI ---------------------------------------------------------
@pytest.mark.parametrize("culprit", ["sink", "src"])
def test_a_federate_whose_rti_link_is_cut_is_named_within_3_s(federation: Callable[..., ProxiedFederation],
                                                              culprit: str) -> None:
    """The proxy disabled: its connections close (both ends see it), and it refuses new ones."""
    fed = _running_slow(federation)
    cut = time.monotonic()
    fed.tp.enable(f"rti-{culprit}", False)
    _assert_ended_naming(fed, cut, culprit, CLOSED_REPORTED_S)


def test_a_federate_whose_rti_link_is_reset_is_named_within_3_s(federation: Callable[..., ProxiedFederation]) -> None:
    """A TCP reset (RST) on the next byte towards the federate, and on every reconnection."""
    fed = _running_slow(federation)
    cut = time.monotonic()
    fed.tp.toxic("rti-sink", "reset_peer", "downstream", timeout=0)
    _assert_ended_naming(fed, cut, "sink", CLOSED_REPORTED_S)


def test_a_federate_whose_rti_link_goes_silent_is_named_by_the_heartbeat(
        federation: Callable[..., ProxiedFederation]) -> None:
    """Nothing passes either way and nothing closes (a partition, a dead router): only the
    heartbeats' silence tells."""
    fed = _running_slow(federation)
    cut = time.monotonic()
    for stream in ("downstream", "upstream"):
        fed.tp.toxic("rti-sink", "timeout", stream, timeout=0)
    reported, _ = _assert_ended_naming(fed, cut, "sink", SILENT_REPORTED_S)
    assert reported >= 2.5, f"reported {reported:.2f} s after the cut: before the heartbeat timeout could tell"


# -- the data link between two federates ------------------------------------------------------
def _ended_or_completed(fed: ProxiedFederation, cut: float, within: float, values: int) -> str:
    """Either every value arrived and the run ended cleanly, or it ended non-zero naming
    a federate of the link (src -> sink), within ``within`` s of the cut; which one."""
    codes = fed.end(timeout=within)
    took = max(fed.ended_at(n) for n in fed.procs) - cut
    print(f"\nended {took:.2f} s after the cut, exit codes {codes}")
    if all(c == 0 for c in codes.values()):
        assert f"sink: {values} values" in fed.out_of("sink"), f"the run completed but lost data:\n{fed.output}"
        return "completed"
    assert re.search(r"ERROR .*\b(src|sink)\b", fed.out_of("rti")), f"the RTI's error names neither end:\n{fed.output}"
    return "failed"


def test_a_cut_data_link_ends_the_federation_naming_it(federation: Callable[..., ProxiedFederation]) -> None:
    """The receiver sees its upstream's data connection close before the upstream's last
    message: after a grace (2 s: the RTI names a process that ended first) it ends the
    federation naming the link. ZeroMQ's reconnection cannot save it: what was in flight
    is lost, and the new connection is not authenticated again."""
    fed = _running_slow(federation, timeout="20s")
    cut = time.monotonic()
    fed.tp.enable("data-sink", False)  # src -> sink: closed, and refused from now on
    assert _ended_or_completed(fed, cut, within=SILENT_REPORTED_S + ENDED_AFTER_REPORT_S, values=401) == "failed"
    reported = fed.wait_for(r"federation failed: federate sink failed: LinkDownError: the data link from src to sink "
                            r"closed before src finished", "rti", timeout=1, since=cut) - cut
    print(f"the link named by the RTI {reported:.2f} s after the cut")
    assert 2.0 <= reported <= 2.0 + 1.5, "the grace (2 s) and a pump or two"


def test_a_data_link_down_for_half_a_second_loses_nothing_or_ends_the_federation(
        federation: Callable[..., ProxiedFederation]) -> None:
    fed = _running_slow(federation, timeout="4s")  # 81 values, the last at 4 s
    cut = time.monotonic()
    fed.tp.enable("data-sink", False)
    time.sleep(0.5)
    fed.tp.enable("data-sink", True)
    _ended_or_completed(fed, cut, within=4.0 + SILENT_REPORTED_S + ENDED_AFTER_REPORT_S, values=81)


# -- distance -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "real-time"])
def test_twenty_ms_on_every_link_changes_nothing_in_the_output(federation: Callable[..., ProxiedFederation],
                                                               fast: bool) -> None:
    """Every link 20 ms each way (a 40 ms round trip): a fan-in at one tag and a feedback
    loop one microstep long give exactly the trace of the single-process run."""
    mode = ["--fast"] if fast else []
    ref = subprocess.run([sys.executable, "-m", "reactorfed", "run", DISTANT, "--timeout", "200ms", *mode],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    expected = [line for line in ref.stdout.splitlines() if line.startswith("TRACE ")]
    assert len(expected) == 1 and expected[0].count("], [") == 20, ref.stdout  # 21 tags, 0 to 200 ms

    t0 = time.monotonic()
    fed = federation(DISTANT, ["src", "relay", "sink"], rtt_ms=40, args=["--timeout", "200ms", *mode])
    codes = fed.end(timeout=60)
    print(f"\nfederated at +40 ms round trips: {time.monotonic() - t0:.2f} s, processes started included")
    assert all(c == 0 for c in codes.values()), (codes, fed.output)
    got = [line for line in fed.out_of("sink").splitlines() if line.startswith("TRACE ")]
    assert got == expected, fed.output
