"""Synchronized Q-learning whose samplers join and leave while it trains (issue 19): the
Q-learning example with ``max_samplers`` (an elastic bank), in one process with a schedule,
and as real processes (``reactorfed rti`` and one ``reactorfed federate`` per member) scaled
2 -> 4 -> 1 -> 3 while the learner runs: members join by starting, leave on SIGTERM. The
learner takes every sample once (its counts per member against each sampler's own), and
the RTI's record (``--membership-out``) replayed gives bit-identical weights."""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from bench.processes import Federation, Proc

from reactorfed import Environment, ms
from reactorfed.model.elastic import MemberChange

from .conftest import EXAMPLES, load_example

PROGRAM = f"{EXAMPLES / 'qlearning.py'}:Main"
FRAGMENT = 8


def _one_process(params: dict[str, Any], changes: list[MemberChange]) -> tuple[Any, Mapping[str, Any]]:
    q = load_example("qlearning")
    main = q.Main(q.Args(**params))
    env = Environment(fast=True)
    env.assemble(main).set_membership(changes)
    return main, env.run().results


def test_each_round_takes_exactly_the_fragments_of_the_members_present() -> None:
    """One process, one round per microstep: a member present when the weights go out (at
    ``k - 1``) and when they arrive (``k``) sends a fragment in round ``k``; the learner
    counts them per incarnation. At microstep 25 every member asked leaves as another
    joins: nobody answers that round, and the learner asks again instead of waiting."""
    params = {"num_samplers": 2, "max_samplers": 4, "iterations": 40, "fragment_len": FRAGMENT,
              "updates_per_iteration": 1, "seed": 2}
    s = "samplers"
    changes = [MemberChange(0, 5, s, 2, True), MemberChange(0, 5, s, 3, True),
               *(MemberChange(0, 12, s, i, False) for i in (1, 2, 3)),
               MemberChange(0, 20, s, 2, True), MemberChange(0, 20, s, 3, True),
               *(MemberChange(0, 25, s, i, False) for i in (0, 2, 3)), MemberChange(0, 25, s, 1, True)]
    main, results = _one_process(params, changes)
    r = results["Main.learner"]
    assert r["iterations"] == 40 and r["incomplete_iterations"] == 0
    assert r["rounds_asked_again"] == 1
    # an incarnation present over [J, L) answers the rounds J+1 .. L-1; the last one runs
    # to the end: 40 iterations plus the round nobody answered end at microstep 41
    rounds = {"0": [24], "1": [11, 41 - 26 + 1], "2": [6, 25 - 20 - 1], "3": [6, 25 - 20 - 1]}
    assert r["samples_by_member"] == {i: [k * FRAGMENT for k in ks] for i, ks in rounds.items()}
    assert sum(map(sum, r["samples_by_member"].values())) == r["env_steps"]
    assert r["membership"] == [[0, 0, 2], [0, 5, 4], [0, 12, 1], [0, 20, 3], [0, 25, 1]]
    # each sampler's own count (a rejoined slot's state is its new incarnation's)
    assert [main.samplers[i].samples for i in range(4)] == [24 * FRAGMENT, 16 * FRAGMENT, 4 * FRAGMENT, 4 * FRAGMENT]

    # without a schedule: the first num_samplers, every round
    _, still = _one_process(params, [])
    assert still["Main.learner"]["samples_by_member"] == {"0": [40 * FRAGMENT], "1": [40 * FRAGMENT]}


def test_the_default_bank_is_not_elastic() -> None:
    q = load_example("qlearning")
    from reactorfed.model.elastic import elastic_banks

    assert not elastic_banks(q.Main(q.Args(num_samplers=2, iterations=1)))
    assert list(elastic_banks(q.Main(q.Args(num_samplers=2, max_samplers=3, iterations=1)))) == ["samplers"]


# -- real processes ---------------------------------------------------------------------
#: a round every ROUND_MS of logical time, in real time: ~ITERATIONS * ROUND_MS of training
#: (long enough for the processes that join to start: an interpreter and torch each)
ROUND_MS = 40
ITERATIONS = 1250
LIVE = {"num_samplers": 2, "max_samplers": 4, "round_ms": ROUND_MS, "iterations": ITERATIONS,
        "fragment_len": FRAGMENT, "updates_per_iteration": 1, "seed": 4}


def _federation(tmp: Path, params: dict[str, Any], rti_args: list[str], tag: str,
                run_args: tuple[str, ...] = ()) -> Federation:
    """An RTI and federates of the Q-learning example, each a ``reactorfed`` process."""
    return Federation(tmp, PROGRAM, params, rti_args, tag, run_args)


def _widths(record: list[dict[str, Any]], initial: int) -> list[int]:
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


def _counts(procs: list[Proc]) -> dict[str, list[int]]:
    """Each slot's samples, one count per process (incarnation), from its result line."""
    counts: dict[str, list[int]] = {}
    for p in procs:
        m = re.fullmatch(r"samplers\[(\d+)\]", p.name)
        if m:
            res = p.result(f"Main.{p.name}")
            counts.setdefault(m.group(1), []).append(res["samples"] if res else 0)
    return counts


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_q_learning_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    record_file = tmp_path / "membership.json"
    fed = _federation(tmp_path, LIVE, ["--membership-out", str(record_file)], "live")
    try:
        learner = fed.start("learner")
        s = {i: fed.start(f"samplers[{i}]") for i in (0, 1)}
        fed.await_status(lambda st: st["phase"] == "running" and st["elapsed_ns"] > 0, "the start")

        def changes(st: dict[str, Any]) -> list[dict[str, Any]]:
            return list(st.get("membership") or [])

        t_join = time.monotonic()  # 2 -> 4: processes for slots absent at the start join
        s[2], s[3] = fed.start("samplers[2]"), fed.start("samplers[3]")
        st = fed.await_status(lambda st: len(changes(st)) == 2, "the joins")
        join_s = time.monotonic() - t_join
        assert st["phase"] == "running" and all(c["joined"] for c in changes(st)), st
        # some rounds with all four (the rounds before a member's join do not ask it)
        joined = max(c["tag"][0] for c in changes(st))
        fed.await_status(lambda st: st["elapsed_ns"] > joined + 10 * ROUND_MS * 1_000_000, "rounds of four")
        t_term = time.monotonic()
        for i in (1, 2, 3):  # 4 -> 1: SIGTERM, as Kubernetes deletes a pod
            s[i].popen.send_signal(signal.SIGTERM)
        fed.await_status(lambda st: len(changes(st)) == 5, "the leaves")
        leave_s = time.monotonic() - t_term
        for i in (1, 2, 3):
            assert s[i].popen.wait(60) == 0, s[i].tail()
        exit_s = time.monotonic() - t_term
        fed.await_status(lambda st: len(changes(st)) == 5, "the leaves")
        fed.start("samplers[2]"), fed.start("samplers[3]")  # 1 -> 3: new processes for the slots
        st = fed.await_status(lambda st: len(changes(st)) == 7, "the second joins")
        assert st["phase"] == "running", st
        rejoined = max(c["tag"][0] for c in changes(st))
        assert rejoined < (ITERATIONS - 10) * ROUND_MS * 1_000_000, "rejoined too late to take part: a slow machine"
        fed.wait()
    finally:
        fed.kill()
    record = json.loads(record_file.read_text())
    changes_ = record["membership"]
    assert sorted((c["member"], c["joined"]) for c in changes_[:2]) == [("samplers[2]", True), ("samplers[3]", True)]
    assert sorted(c["member"] for c in changes_[2:5]) == ["samplers[1]", "samplers[2]", "samplers[3]"]
    assert not any(c["joined"] for c in changes_[2:5]) and all(c["joined"] for c in changes_[5:])
    assert sorted(c["member"] for c in changes_[5:]) == ["samplers[2]", "samplers[3]"]
    widths = _widths(changes_, 2)
    assert widths[-1] == 3 and 4 in widths and 1 in widths, widths
    assert widths.index(4) < widths.index(1) < len(widths) - 1, widths

    # The learner ran once, from start to end, and took every sample once.
    assert learner.popen.returncode == 0 and sum(p.name == "learner" for p in fed.procs) == 1
    r = learner.result("Main.learner")
    assert r is not None, learner.tail()
    assert r["iterations"] == ITERATIONS and r["incomplete_iterations"] == 0, r
    assert r["samples_by_member"] == _counts(fed.procs), (r, fed.tails())
    assert all(n > 0 for counts in r["samples_by_member"].values() for n in counts), "every process took part"
    assert sum(map(sum, r["samples_by_member"].values())) == r["env_steps"]
    # the learner sees the widths at its rounds' tags (changes between two rounds at once)
    seen = [w for _, _, w in r["membership"]]
    assert seen[0] == 2 and seen[-1] == 3 and 4 in seen and seen.index(4) < seen.index(1), seen
    rest = iter(widths)
    assert all(w in rest for w in seen[1:]), (seen, widths)  # (a subsequence of the record's)
    assert [p.popen.returncode for p in fed.procs] == [0] * len(fed.procs)
    print(f"\njoin: {join_s:.2f} s from starting two processes to both admitted; SIGTERM to three: all left "
          f"(in the record) after {leave_s:.2f} s, their processes ended after {exit_s:.2f} s; learner's rounds at "
          f"the changes {r['change_gaps_ms']} ms apart (rounds every {ROUND_MS} ms); record {changes_}")

    # The record replayed in one process: the same weights, the same counts.
    q_changes = [MemberChange(c["tag"][0], c["tag"][1], c["bank"], c["index"], c["joined"]) for c in changes_]
    _, single = _one_process(LIVE, q_changes)
    timing = ("seconds", "change_gaps_ms")
    same = {k: v for k, v in r.items() if k not in timing}
    assert {k: v for k, v in single["Main.learner"].items() if k not in timing} == same


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_schedule_replayed_by_a_federation_gives_the_one_process_result(tmp_path: Path) -> None:
    """``reactorfed rti --membership FILE``, as fast as it goes, processes started at any
    time after the start (each joiner waits for its tag): 2 -> 4 -> 1 -> 3, the last two
    fresh slots. The learner's result is the one process's with the same schedule, every
    sampler process's count is the learner's for it, and the RTI's record is the schedule.
    (It failed with 10 incomplete iterations of 60: each sampler told of its leave in
    advance, a replayed one, skipped to its leave tag whenever its next weights were still
    on their way; see FederateMembership.gone.)"""
    params = {**LIVE, "max_samplers": 6, "iterations": 60}
    s = "samplers"
    changes = [MemberChange(ms(400), 0, s, 2, True), MemberChange(ms(420), 0, s, 3, True),
               *(MemberChange(ms(800), 1, s, i, False) for i in (1, 2, 3)),
               MemberChange(ms(1200), 0, s, 4, True), MemberChange(ms(1200), 0, s, 5, True)]
    schedule = tmp_path / "schedule.json"
    schedule.write_text(json.dumps([{"tag": [c.time, c.microstep], "member": f"{s}[{c.index}]", "joined": c.joined}
                                    for c in changes]))
    recorded = tmp_path / "recorded.json"
    fed = _federation(tmp_path, params, ["--membership", str(schedule), "--membership-out", str(recorded)], "replay",
                     run_args=("--fast",))
    try:
        learner = fed.start("learner")
        for i in (0, 1):
            fed.start(f"{s}[{i}]")
        fed.await_status(lambda st: st["phase"] == "running", "the start")
        for i in (5, 2, 4, 3):
            fed.start(f"{s}[{i}]")
        fed.wait()
    finally:
        fed.kill()
    r = learner.result("Main.learner")
    assert r is not None, fed.tails()
    assert r["iterations"] == 60 and r["incomplete_iterations"] == 0, r
    assert r["samples_by_member"] == _counts(fed.procs)
    assert [w for _, _, w in r["membership"]] == [2, 3, 4, 1, 3], r["membership"]
    _, single = _one_process(params, changes)
    timing = ("seconds", "change_gaps_ms")
    assert {k: v for k, v in single["Main.learner"].items() if k not in timing} == {
        k: v for k, v in r.items() if k not in timing}
    assert [(c["tag"], c["member"], c["joined"]) for c in json.loads(recorded.read_text())["membership"]] == [
        ([c.time, c.microstep], f"{s}[{c.index}]", c.joined) for c in changes]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_sigkilled_sampler_leaves_its_slot_to_a_new_process_and_the_record_replays(tmp_path: Path) -> None:
    """SIGKILL to a sampler (no resignation): its leave is agreed after the tags the others
    ran with it present and silent, and the record says from which tag it did nothing
    (``quiet``): replayed in one process, the same result, its incomplete round included."""
    record_file = tmp_path / "membership.json"
    params = {**LIVE, "max_samplers": 3, "iterations": 600, "seed": 6}
    fed = _federation(tmp_path, params, ["--membership-out", str(record_file)], "qkill")
    try:
        learner = fed.start("learner")
        first = fed.start("samplers[1]")
        fed.start("samplers[0]")
        fed.await_status(lambda st: st["phase"] == "running" and st["elapsed_ns"] > 20 * ROUND_MS * 1_000_000,
                         "some rounds")
        first.popen.kill()  # SIGKILL
        first.popen.wait(10)
        fed.procs.remove(first)  # (its exit, -9, is this test's doing, not a failure to report)
        fed.await_status(lambda st: len(st.get("membership") or []) == 1, "the killed member's leave", 60)
        fed.start("samplers[1]")
        fed.await_status(lambda st: len(st.get("membership") or []) == 2, "the new process's join", 120)
        fed.wait()
    finally:
        fed.kill()
    record = json.loads(record_file.read_text())["membership"]
    assert [(c["member"], c["joined"]) for c in record] == [("samplers[1]", False), ("samplers[1]", True)]
    r = learner.result("Main.learner")
    assert r is not None, learner.tail()
    assert r["iterations"] == 600 and r["incomplete_iterations"] <= 1, r
    assert "quiet" in record[0] or r["incomplete_iterations"] == 0, record
    changes = [MemberChange(c["tag"][0], c["tag"][1], c["bank"], c["index"], c["joined"],
                            tuple(c["quiet"]) if "quiet" in c else None) for c in record]
    _, single = _one_process(params, changes)
    timing = ("seconds", "change_gaps_ms")
    assert {k: v for k, v in single["Main.learner"].items() if k not in timing} == {
        k: v for k, v in r.items() if k not in timing}
