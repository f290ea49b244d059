"""Elastic banks when members fail and come back (issue 19), end to end over real ZeroMQ:
the RTI server and the learner in threads, samplers in processes of their own where the
test kills one.

- A sampler's process is SIGKILLed mid-run: the RTI fails it (its record has the leave) and
  tells the learner (LOST), which stops waiting for it; the federation goes on to its end,
  the learner sees the narrower bank from the agreed tag. A new process for that slot
  (present at the start) is told by the RTI's START to join, and its steps reach the learner.
- A replayed join (``RtiConfig.membership``): the joiner's CHANGE went out at the start,
  before its process connected; its address reaches the learner by PEER, and the learner's
  trace is the one-process replay's.
- What the RTI says is checked by the driver: a PEER or LOST naming what is not there, or
  not an address, is refused with a reason and counted, never a crash.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgpack
import pytest

from reactorfed import Environment, VirtualClock, ms
from reactorfed.federation import FederateConfig
from reactorfed.federation.coordination.layout import Layout
from reactorfed.federation.process.federate import FederateCoordinator
from reactorfed.federation.wire import protocol as P
from reactorfed.model.elastic import MemberChange
from reactorfed.time.clock import SystemClock

from .elastic_programs import DelayedMain, Main, Step, replayed
from .harness import Federation, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
RUN = ms(8000)  # long enough for two process starts, a failure's verdict and a join


def _trace(fed: Federation) -> list[Step]:
    """The learner's trace so far (none before its program exists)."""
    main = fed.programs.get("learner")
    return main.learner.trace if isinstance(main, Main) else []


class Process:
    """One federate of :class:`Main` in a process of its own (``elastic_programs``' main)."""

    def __init__(self, fed: Federation, name: str, log: Path, timeout: int) -> None:
        self.log = log
        self._out: IO[str] = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.federation.elastic_programs", name, fed.fid, fed.secret.hex(),
             fed.endpoint, str(timeout)], cwd=ROOT, stdout=self._out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        self._out.flush()
        return self.log.read_text()[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._out.close()


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    made: list[Process] = []
    yield made
    for p in made:
        p.close()


def _values(trace: list[Step], index: int) -> list[int]:
    return [v for s in trace for i, v in s[2] if i == index]


def test_a_killed_sampler_leaves_and_a_new_process_takes_its_slot(processes: list[Process], tmp_path: Path) -> None:
    fed = Federation(Main)
    fed.start("learner", fast=False, timeout=RUN)
    fed.start("samplers[0]", fast=False, timeout=RUN)
    first = Process(fed, "samplers[1]", tmp_path / "first.log", RUN)
    processes.append(first)
    wait_until(lambda: len(_values(_trace(fed), 1)) >= 20,
               timeout=60, what=f"samplers[1]'s steps at the learner ({first.output()})")
    first.proc.kill()  # SIGKILL: no resignation, no last promise
    first.proc.wait(10)
    server = fed.server
    wait_until(lambda: server.status()["membership"] != [], timeout=20, what="the RTI's record of the leave")
    assert fed.errors == {} and fed.rti_error is None, (fed.errors, fed.rti_error)
    again = Process(fed, "samplers[1]", tmp_path / "again.log", RUN)  # a slot present at the start
    processes.append(again)
    try:
        fed.wait(timeout=90)
    except AssertionError as e:  # what the new process and the RTI saw, to tell why
        raise AssertionError(f"{e}; RTI status {server.status()}; the new process: {again.output()}") from None
    assert again.proc.wait(30) == 0, again.output()
    assert fed.errors == {}, fed.errors
    assert fed.rti_error is None, fed.rti_error
    summary = fed.summary
    assert summary is not None
    got = [(r.member, r.joined) for r in summary.membership]
    assert got == [("samplers[1]", False), ("samplers[1]", True)], (summary.membership, again.output())
    leave, join = (r.tag for r in summary.membership)
    assert leave < join

    main = fed.programs["learner"]
    assert isinstance(main, Main)
    trace = main.learner.trace
    before = [s for s in trace if (s[0], s[1]) < leave]
    gap = [s for s in trace if leave <= (s[0], s[1]) < join]
    after = [s for s in trace if (s[0], s[1]) >= join]
    assert before and gap and after, (leave, join, len(before), len(gap), len(after))
    # the narrower bank from the agreed tag, the wider one again from the join
    assert all(s[3] == (0, 1) for s in before) and all(s[3] == (0,) for s in gap)
    assert all(s[3] == (0, 1) for s in after)
    assert not any(i == 1 for s in gap for i, _ in s[2])
    # the killed process's steps up to its death, in order; the new one's from its join
    old = _values(before, 1)
    assert len(old) >= 20 and old == list(range(1001, 1001 + len(old)))
    new = _values(after, 1)
    assert (after[0][0], after[0][1]) == join and (1, 1001) in after[0][2], "its first step, at its join"
    assert new == list(range(1001, 1001 + len(new))) and len(new) >= 10
    # samplers[0] went on throughout: every step, to the end
    assert _values(trace, 0) == list(range(1, len(_values(trace, 0)) + 1))
    assert trace[-1][0] == RUN
    learner = fed.coords["learner"]
    assert set(learner.core.membership.dropped) <= {2}, "only the killed process's late messages may be dropped"
    # The record replayed in one process: the killed member present and silent from its
    # quiet tag to its leave, as here. The quiet tag is after the last tag it completed as
    # the RTI knew, and after the last step the learner took from it (the learner runs ahead
    # on its promises: the member's reports lag, here by up to 18 steps). What the replay
    # does not repeat is counted here: a step it reported sending that came too late
    # (dropped) or never (lost with its process); then the traces differ by it.
    (quiet,) = [r.quiet for r in summary.membership if r.quiet is not None] or [None]
    assert quiet is None or quiet < leave
    replay = replayed([r.change() for r in summary.membership], RUN)
    mem = learner.core.membership
    print(f"\nrecord {summary.membership}; at the learner dropped {mem.dropped}, lost {mem.lost}")
    if not mem.dropped and not any(mem.lost.values()):
        assert replay.learner.trace == trace
    # The RTI's LOST let the learner go on on its peers' promises at once. Without it the run
    # still ended (on the RTI's grants, a report every 50 ms), in 85 s instead of 8.5
    assert summary.wall_ns < RUN + 20 * 10**9, f"the run took {summary.wall_ns / 1e9:.1f} s: it crawled"


def test_a_replayed_join_gets_its_address_by_peer_and_the_learner_trace_is_the_replays() -> None:
    timeout = ms(600)
    changes = [MemberChange(ms(200), 0, "samplers", 2, True)]
    fed = Federation(Main, membership=changes)
    for name in ("learner", "samplers[0]", "samplers[1]"):
        fed.start(name, fast=False, timeout=timeout)
    # it connects once the run is under way: its CHANGE went out at the start without its address
    wait_until(lambda: len(_trace(fed)) >= 5,
               timeout=20, what="the learner's first steps")
    assert fed.server.start_time is not None
    fed.start("samplers[2]", fast=False, timeout=timeout)
    fed.wait(timeout=30)
    assert fed.errors == {}, fed.errors
    assert fed.rti_error is None, fed.rti_error
    main, joiner = fed.programs["learner"], fed.programs["samplers[2]"]
    assert isinstance(main, Main) and isinstance(joiner, Main)
    assert fed.coords["learner"]._links.link_joins == {3: (fed.server.start_time + ms(200), 0)}, "linked by its PEER"
    assert joiner.samplers[2].weights, "the learner's weights reached the joiner"
    replay = replayed(changes, timeout)
    assert main.learner.trace == replay.learner.trace
    assert joiner.samplers[2].weights == replay.samplers[2].weights


def _late_replayed_joiner() -> tuple[Federation, Main, Main, Main]:
    """Samples 5 ms late: the learner runs a replayed joiner's first tags (and sends it
    weights) before the joiner's process is there; those wait for its PEER's link. The
    schedule also has it leave: its process stops there. Returns the federation, ended, the
    learner's and the joiner's programs, and the one-process replay."""
    timeout = ms(600)
    changes = [MemberChange(ms(203), 0, "samplers", 2, True), MemberChange(ms(403), 0, "samplers", 2, False)]
    fed = Federation(DelayedMain, membership=changes)
    for name in ("learner", "samplers[0]", "samplers[1]"):
        fed.start(name, fast=False, timeout=timeout)
    # its step at (205 ms) arrives at the join (203 ms) + 5: the learner runs (205, 0), and
    # sends the joiner its weights, before the joiner connects
    wait_until(lambda: any(s[0] >= ms(205) for s in _trace(fed)),
               timeout=20, what="the learner past the join's tag")
    assert 3 not in fed.server.admission.control_of
    fed.start("samplers[2]", fast=False, timeout=timeout)
    fed.wait(timeout=30)
    assert fed.errors == {}, fed.errors
    assert fed.rti_error is None, fed.rti_error
    main, joiner = fed.programs["learner"], fed.programs["samplers[2]"]
    assert isinstance(main, Main) and isinstance(joiner, Main)
    return fed, main, joiner, replayed(changes, timeout, DelayedMain)


def test_a_replayed_joiner_that_comes_late_gets_what_was_sent_before_its_address_and_leaves() -> None:
    fed, main, joiner, replay = _late_replayed_joiner()
    assert main.learner.trace == replay.learner.trace
    assert joiner.samplers[2].n == replay.samplers[2].n == 20, "its steps from its join until its leave"
    # Every weight, the first included: what arrived for the joiner before it processed its
    # join tag is its own (the scheduler's join dropped it, silently, before
    # Membership.senders_filter), and nothing sent before its leave is skipped.
    got, want = joiner.samplers[2].weights, replay.samplers[2].weights
    assert got == want, (got, want)
    coord = fed.coords["samplers[2]"]
    assert not coord.core.membership.dropped
    sched = coord._sched
    assert sched is not None and sched.membership is not None
    assert sched.membership.messages_dropped == 0
    # Its scheduler began at its ADMIT's tag and ended at its leave: in [203 ms, 403 ms) its
    # 20 steps (203 + 10k ms) and 40 weights (the learner's answers to the others' samples
    # at 5 + 10k and to its own at 8 + 10k, 3 ms later), then 403 ms, its last (where its
    # shutdown reactions, no-ops, run). It processed the federation's start tag too, empty,
    # before it began at its ADMIT (62), and, with a timeout, went on to (403 ms, 1) after
    # its leave (the timeout replaced the leave's stop tag)
    assert sched.membership.first == (fed.coords["learner"].start + ms(203), 0)
    assert sched.tags_processed == 61
    assert sched.stop_reason == "left the federation"


# -- what the RTI says, checked ---------------------------------------------------------------
def _learner() -> tuple[FederateCoordinator, Any]:
    """The learner's driver, set up as run_federate does (not joined: nothing here needs it)."""
    env = Environment(fast=True, clock=VirtualClock())
    sched = env.assemble(Main(), federate="learner")
    assert sched.program.partition is not None
    layout = Layout.of(sched.program.partition)
    coord = FederateCoordinator(sched.program, layout, FederateConfig("x", b"s" * 16, "tcp://127.0.0.1:1"),
                                SystemClock())
    sched.coordinator = coord
    coord.install(sched)
    return coord, sched


@pytest.mark.parametrize(("msg", "why"), [
    ([P.PEER, 5, 0, 0, "tcp://127.0.0.1:4000"], "PEER for federate 0, not a member of an elastic bank"),
    ([P.PEER, 5, 0, 99, "tcp://127.0.0.1:4000"], "PEER for federate 99, not a member"),
    ([P.PEER, 5, 0, 3, "ipc:///tmp/x"], "PEER for samplers\\[2\\]: 'ipc:///tmp/x' is not a data address"),
    ([P.PEER, 5, 0, 3, "tcp://127.0.0.1:0"], "is not a data address"),
    ([P.PEER, 5, 0, 3, "tcp://:80"], "is not a data address"),
    ([P.PEER, 5, 0, 3, "tcp://h:99999"], "is not a data address"),
    ([P.PEER, 5, 0, 3, 7], "PEER: field 4"),
    ([P.PEER, 5, -1, 3, "tcp://h:1"], "PEER: field 2"),
    ([P.PEER, 5, 0, 3], "PEER has 3 fields, expected 4"),
    ([P.LOST, 99, 0, 0], "LOST for federate 99, not a member"),
    ([P.LOST, -3, 0, 0], "LOST: field 1"),
    ([P.LOST, "samplers[0]", 0, 0], "LOST: field 1"),
    ([P.CHANGE, 5, 0, 3, True, "tcp://"], "CHANGE for samplers\\[2\\]: 'tcp://' is not a data address"),
    ([P.CHANGE, 5, 0, 42, True, ""], "CHANGE for federate 42, not a member"),
])
def test_a_bad_membership_message_from_the_rti_is_refused_with_a_reason(
        msg: list[Any], why: str, caplog: pytest.LogCaptureFixture) -> None:
    coord, sched = _learner()
    with caplog.at_level(logging.WARNING, logger="reactorfed.federate"):
        coord._rx.on_rti(sched, [memoryview(msgpack.packb(msg, use_bin_type=True))])
    assert coord.rejected_messages == 1
    assert any(r.getMessage().startswith("ignoring a bad message from the RTI") for r in caplog.records)
    assert any(re.search(why, r.getMessage()) for r in caplog.records), caplog.text
    assert coord._links.clients == {} and coord.core.membership.failed_peers == set(), "nothing was acted on"


def test_a_good_lost_from_the_rti_stops_the_wait_for_that_member() -> None:
    """The same entry point with a LOST that holds: the core no longer waits for it."""
    coord, sched = _learner()
    assert coord._members is not None
    coord._members.begin(sched, 1_000, (3,), False)
    coord.core.begin(1_000)
    core = coord.core
    core.promises.on_promise(1, (5_000, 0))
    assert core.promises.bound() == (1_000, 0), "samplers[1] (2) holds the bound at the start"
    coord._rx.on_rti(sched, [memoryview(P.Lost(2).pack())])
    assert coord.rejected_messages == 0 and core.membership.failed_peers == {2}
    assert core.promises.bound() == (5_000, 0), "no longer"
