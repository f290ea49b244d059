"""What the live-scaling tests of the RL plans share (``test_live_scale*.py``): an example
run in one process with a membership schedule, and the same example as real processes
(``reactorfed rti`` and one ``reactorfed federate`` per member, :mod:`bench.processes`)
scaled 2 -> 4 -> 1 -> 3 while the learner runs: members join by starting, leave on
SIGTERM. The RTI's record (``--membership-out``) is what a replay in one process takes."""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.processes import Federation, Proc

from reactorfed import Environment
from reactorfed.model.elastic import MemberChange

from .conftest import load_example, make_args

#: what differs between two runs of the same schedule: wall times, and whether a target
#: return was reached within them
TIMING = ("seconds", "change_gaps_ms", "reached")


def one_process(example: str, params: Mapping[str, Any], changes: list[MemberChange] | None,
                cls: str = "Main") -> tuple[Any, Mapping[str, Any]]:
    """``examples/rl/EXAMPLE.py``'s ``cls`` run in one process (fast), with the membership
    schedule ``changes`` (None: none set); the program and its results."""
    p = load_example(example)
    main = getattr(p, cls)(make_args(p.Args, params))
    env = Environment(fast=True)
    sched = env.assemble(main)
    if changes is not None:
        sched.set_membership(changes)
    return main, env.run().results


def schedule(*tags: tuple[int, int]) -> list[MemberChange]:
    """The one-process tests' membership schedule of the bank ``samplers`` (2 slots of 4
    present at the start), its changes at the four ``tags`` (time, microstep): 2 -> 4 -> 1
    -> 3, then every member leaves as a fresh one joins (slot 1 again)."""
    t1, t2, t3, t4 = tags
    s = "samplers"
    return [MemberChange(*t1, s, 2, True), MemberChange(*t1, s, 3, True),
            *(MemberChange(*t2, s, i, False) for i in (1, 2, 3)),
            MemberChange(*t3, s, 2, True), MemberChange(*t3, s, 3, True),
            *(MemberChange(*t4, s, i, False) for i in (0, 2, 3)), MemberChange(*t4, s, 1, True)]


def timeless(r: Mapping[str, Any], *also: str) -> dict[str, Any]:
    """A learner's result but for :data:`TIMING` (and the keys ``also``)."""
    return {k: v for k, v in r.items() if k not in TIMING and k not in also}


def replayed(record: list[dict[str, Any]]) -> list[MemberChange]:
    """The RTI's membership record as a schedule for :func:`one_process` (a failed member's
    leave with the tag from which it did nothing, ``quiet``)."""
    return [MemberChange(c["tag"][0], c["tag"][1], c["bank"], c["index"], c["joined"],
                         tuple(c["quiet"]) if "quiet" in c else None) for c in record]


def silent_rounds(leave: Mapping[str, Any], round_ms: int) -> int:
    """The rounds a failed member was asked in and answered nothing: those ending (at
    ``k * round_ms``, microstep 0) from its ``quiet`` tag up to, not including, its agreed
    leave. The RTI stops waiting on it when it sees it gone, but the leave's tag is the
    federates' answer: how many rounds end between the two depends on how soon the death was
    seen against the rounds' pace, and a replay of the record has the same ones."""
    if "quiet" not in leave:
        return 0
    quiet, tag, period = tuple(leave["quiet"]), tuple(leave["tag"]), round_ms * 1_000_000
    return sum(1 for k in range(quiet[0] // period, tag[0] // period + 1) if quiet <= (k * period, 0) < tag)


def changes(st: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The membership changes of an RTI's ``/status``."""
    return list(st.get("membership") or [])


def widths(record: list[dict[str, Any]], initial: int) -> list[int]:
    """The bank's width after each tag of the record."""
    width, last = initial, None
    out: list[int] = []
    for r in record:
        width += 1 if r["joined"] else -1
        if r["tag"] == last:
            out[-1] = width
        else:
            out.append(width)
        last = r["tag"]
    return out


def counts(procs: list[Proc], top: str = "Main") -> dict[str, list[int]]:
    """Each slot's samples, one count per process (incarnation), from its result line
    (the reactor ``TOP.samplers[i]``)."""
    out: dict[str, list[int]] = {}
    for p in procs:
        m = re.fullmatch(r"samplers\[(\d+)\]", p.name)
        if m:
            res = p.result(f"{top}.{p.name}")
            out.setdefault(m.group(1), []).append(res["samples"] if res else 0)
    return out


@dataclass
class Scaled:
    """A federation scaled 2 -> 4 -> 1 -> 3 to its end: its processes, the learner's
    process and result, the RTI's record and the widths after its tags, and how long the
    changes took (wall seconds)."""

    fed: Federation
    learner: Proc
    result: dict[str, Any]
    record: list[dict[str, Any]]
    widths: list[int]
    join_s: float  # from starting two processes to both admitted
    leave_s: float  # from SIGTERM to three to their leaves in the record
    exit_s: float  # from SIGTERM to three to their processes' ends


def scale_2_4_1_3(tmp: Path, program: str, params: dict[str, Any], tag: str, *, learner_fqn: str,
                  iterations: int, settle_ns: int, settle_what: str, rejoin_before_ns: int | None = None,
                  wait_s: float = 180.0, learners: Sequence[str] = ("learner",)) -> Scaled:
    """Run ``program`` (``path/file.py:Main``, its samplers an elastic bank of up to 4, 2 at
    the start) as processes: two samplers join, once the learner has run ``settle_ns`` of
    logical time with four three leave (SIGTERM, as Kubernetes deletes a pod), and two new
    processes take the free slots; then every process ends. ``rejoin_before_ns``: the
    second joins must land before it (else the machine was too slow for them to take part).

    Checked here, for every plan: the record's joins and leaves in that order, the widths
    it gives (2, 4, 1, 3), that the learner ran once, start to end, with ``iterations``,
    and that every process ended with 0. The learner's result (``learner_fqn``) is
    returned for the plan's own checks. ``learners``: the federates that are not samplers,
    started first (the first one's result is returned; the data-parallel plan has several)."""
    record_file = tmp / "membership.json"
    fed = Federation(tmp, program, params, ["--membership-out", str(record_file)], tag)
    try:
        learner, *_ = (fed.start(name) for name in learners)  # (every one started)
        s = {i: fed.start(f"samplers[{i}]") for i in (0, 1)}
        fed.await_status(lambda st: st["phase"] == "running" and st["elapsed_ns"] > 0, "the start")
        t_join = time.monotonic()  # 2 -> 4: processes for slots absent at the start join
        s[2], s[3] = fed.start("samplers[2]"), fed.start("samplers[3]")
        st = fed.await_status(lambda st: len(changes(st)) == 2, "the joins")
        join_s = time.monotonic() - t_join
        assert st["phase"] == "running" and all(c["joined"] for c in changes(st)), st
        # some rounds (fragments, ticks) with all four (those before a member's join do not ask it)
        joined = max(c["tag"][0] for c in changes(st))
        fed.await_status(lambda st: st["elapsed_ns"] > joined + settle_ns, settle_what)
        t_term = time.monotonic()
        for i in (1, 2, 3):  # 4 -> 1: SIGTERM, as Kubernetes deletes a pod
            s[i].popen.send_signal(signal.SIGTERM)
        fed.await_status(lambda st: len(changes(st)) == 5, "the leaves")
        leave_s = time.monotonic() - t_term
        for i in (1, 2, 3):
            assert s[i].popen.wait(60) == 0, s[i].tail()
        exit_s = time.monotonic() - t_term
        fed.start("samplers[2]"), fed.start("samplers[3]")  # 1 -> 3: new processes for the slots
        st = fed.await_status(lambda st: len(changes(st)) == 7, "the second joins")
        assert st["phase"] == "running", st
        if rejoin_before_ns is not None:
            rejoined = max(c["tag"][0] for c in changes(st))
            assert rejoined < rejoin_before_ns, "rejoined too late to take part: a slow machine"
        fed.wait(wait_s)
    finally:
        fed.kill()
    record = json.loads(record_file.read_text())["membership"]
    assert sorted((c["member"], c["joined"]) for c in record[:2]) == [("samplers[2]", True), ("samplers[3]", True)]
    assert sorted(c["member"] for c in record[2:5]) == ["samplers[1]", "samplers[2]", "samplers[3]"]
    assert not any(c["joined"] for c in record[2:5]) and all(c["joined"] for c in record[5:])
    assert sorted(c["member"] for c in record[5:]) == ["samplers[2]", "samplers[3]"]
    ws = widths(record, 2)
    assert ws[-1] == 3 and 4 in ws and 1 in ws, ws
    assert ws.index(4) < ws.index(1) < len(ws) - 1, ws

    # The learner ran once, from start to end.
    assert learner.popen.returncode == 0 and all(sum(p.name == n for p in fed.procs) == 1 for n in learners)
    r = learner.result(learner_fqn)
    assert r is not None, learner.tail()
    assert r["iterations"] == iterations, r
    assert [p.popen.returncode for p in fed.procs] == [0] * len(fed.procs)
    return Scaled(fed, learner, r, record, ws, join_s, leave_s, exit_s)


def assert_every_process_took_part(r: Mapping[str, Any], record_widths: list[int] | None = None) -> None:
    """The learner's result ``r`` of :func:`scale_2_4_1_3`: every incarnation sent samples,
    the counts per member add up to the env steps, and the learner saw the widths 2, 4, 1
    and 3 in that order (with ``record_widths``: a subsequence of the record's, as a learner
    that sees the width at its rounds' tags does)."""
    by_member = r["samples_by_member"]
    assert all(n > 0 for c in by_member.values() for n in c), "every process took part"
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    seen = [w for _, _, w in r["membership"]]
    assert seen[0] == 2 and seen[-1] == 3 and 4 in seen and seen.index(4) < seen.index(1), seen
    if record_widths is not None:
        rest = iter(record_widths)
        assert all(w in rest for w in seen[1:]), (seen, record_widths)


def scale_a_plan_with_rounds(tmp: Path, program: str, params: dict[str, Any], tag: str, *, round_ms: int,
                             iterations: int, replay: Callable[[list[MemberChange]], Mapping[str, Any]]) -> Scaled:
    """:func:`scale_2_4_1_3` for a plan whose learner runs in rounds every ``round_ms``
    (Q-learning's, synchronous PPO's; its result ``Main.learner``): some rounds with four
    before the leaves, the second joins before the last ten rounds. Every round complete,
    every sample taken once (the learner's counts per incarnation are the samplers' own),
    the widths the learner saw a subsequence of the record's (it sees the width at its
    rounds' tags: changes between two rounds at once), and the record replayed in one
    process (``replay``: the learner's result) gives the same result but for the times."""
    run = scale_2_4_1_3(tmp, program, params, tag, learner_fqn="Main.learner", iterations=iterations,
                        settle_ns=10 * round_ms * 1_000_000, settle_what="rounds of four",
                        rejoin_before_ns=(iterations - 10) * round_ms * 1_000_000)
    r = run.result
    assert r["incomplete_iterations"] == 0, r
    assert r["samples_by_member"] == counts(run.fed.procs), (r, run.fed.tails())
    assert_every_process_took_part(r, run.widths)
    assert timeless(replay(replayed(run.record))) == timeless(r)
    return run


@dataclass
class KilledAndReplaced:
    """What :func:`kill_a_sampler_and_replace_it` leaves to a plan's own checks."""

    learner: Proc
    again: Proc  # the new process for the killed sampler's slot
    record: list[dict[str, Any]]  # the RTI's membership record
    fed: Federation  # its processes (every learner's, with ``learners``)


def kill_a_sampler_and_replace_it(tmp: Path, program: str, params: dict[str, Any], tag: str, *,
                                  round_ms: int, learners: Sequence[str] = ("learner",)) -> KilledAndReplaced:  # fmt: skip
    """The learner and samplers 0 and 1 started; after 20 rounds samplers[1] SIGKILLed (no
    resignation), its leave awaited, a new process started for its slot and its join
    awaited; the run to its end. The record holds exactly that leave and that join.
    ``learners``: as for :func:`scale_2_4_1_3`."""
    record_file = tmp / "membership.json"
    fed = Federation(tmp, program, params, ["--membership-out", str(record_file)], tag)
    try:
        learner, *_ = (fed.start(name) for name in learners)  # (every one started)
        first = fed.start("samplers[1]")
        fed.start("samplers[0]")
        fed.await_status(lambda st: st["phase"] == "running" and st["elapsed_ns"] > 20 * round_ms * 1_000_000,
                         "some rounds")  # fmt: skip
        first.popen.kill()  # SIGKILL
        first.popen.wait(10)
        fed.procs.remove(first)  # (its exit, -9, is this test's doing, not a failure to report)
        st = fed.await_status(lambda st: len(changes(st)) == 1, "the killed member's leave", 60)
        assert not changes(st)[0]["joined"] and changes(st)[0]["member"] == "samplers[1]", st
        again = fed.start("samplers[1]")
        st = fed.await_status(lambda st: len(changes(st)) == 2, "the new process's join", 120)
        assert changes(st)[1]["joined"], st
        fed.wait()
    finally:
        fed.kill()
    record = json.loads(record_file.read_text())["membership"]
    assert [(c["member"], c["joined"]) for c in record] == [("samplers[1]", False), ("samplers[1]", True)]
    return KilledAndReplaced(learner, again, record, fed)
