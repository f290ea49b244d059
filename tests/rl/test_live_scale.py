"""Synchronized Q-learning whose samplers join and leave while it trains (issue 19): the
Q-learning example with ``max_samplers`` (an elastic bank), in one process with a schedule,
and as real processes (``reactorfed rti`` and one ``reactorfed federate`` per member) scaled
2 -> 4 -> 1 -> 3 while the learner runs: members join by starting, leave on SIGTERM. The
learner takes every sample once (its counts per member against each sampler's own), and
the RTI's record (``--membership-out``) replayed gives bit-identical weights."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from bench.processes import Federation

from reactorfed import ms
from reactorfed.model.elastic import MemberChange

from . import live_scale
from .conftest import EXAMPLES, load_example

PROGRAM = f"{EXAMPLES / 'qlearning.py'}:Main"
FRAGMENT = 8


def _one_process(params: dict[str, Any], changes: list[MemberChange]) -> tuple[Any, Mapping[str, Any]]:
    return live_scale.one_process("qlearning", params, changes)


def test_each_round_takes_exactly_the_fragments_of_the_members_present() -> None:
    """One process, one round per microstep: a member present when the weights go out (at
    ``k - 1``) and when they arrive (``k``) sends a fragment in round ``k``; the learner
    counts them per incarnation. At microstep 25 every member asked leaves as another
    joins: nobody answers that round, and the learner asks again instead of waiting."""
    params = {"num_samplers": 2, "max_samplers": 4, "iterations": 40, "fragment_len": FRAGMENT,
              "updates_per_iteration": 1, "seed": 2}
    changes = live_scale.schedule((0, 5), (0, 12), (0, 20), (0, 25))
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


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_q_learning_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    # the learner took every sample once; the record replayed in one process: the same
    # weights, the same counts
    run = live_scale.scale_a_plan_with_rounds(tmp_path, PROGRAM, LIVE, "live", round_ms=ROUND_MS, iterations=ITERATIONS,
                                              replay=lambda changes: _one_process(LIVE, changes)[1]["Main.learner"])
    r = run.result
    print(f"\njoin: {run.join_s:.2f} s from starting two processes to both admitted; SIGTERM to three: all left "
          f"(in the record) after {run.leave_s:.2f} s, their processes ended after {run.exit_s:.2f} s; learner's "
          f"rounds at the changes {r['change_gaps_ms']} ms apart (rounds every {ROUND_MS} ms); record {run.record}")


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
    fed = Federation(tmp_path, PROGRAM, params, ["--membership", str(schedule), "--membership-out", str(recorded)],
                     "replay", run_args=("--fast",))
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
    assert r["samples_by_member"] == live_scale.counts(fed.procs)
    assert [w for _, _, w in r["membership"]] == [2, 3, 4, 1, 3], r["membership"]
    _, single = _one_process(params, changes)
    assert live_scale.timeless(single["Main.learner"]) == live_scale.timeless(r)
    assert [(c["tag"], c["member"], c["joined"]) for c in json.loads(recorded.read_text())["membership"]] == [
        ([c.time, c.microstep], f"{s}[{c.index}]", c.joined) for c in changes]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_sigkilled_sampler_leaves_its_slot_to_a_new_process_and_the_record_replays(tmp_path: Path) -> None:
    """SIGKILL to a sampler (no resignation): its leave is agreed after the tags the others
    ran with it present and silent, and the record says from which tag it did nothing
    (``quiet``): replayed in one process, the same result, its incomplete round included."""
    params = {**LIVE, "max_samplers": 3, "iterations": 600, "seed": 6}
    run = live_scale.kill_a_sampler_and_replace_it(tmp_path, PROGRAM, params, "qkill", round_ms=ROUND_MS)
    learner, record = run.learner, run.record
    r = learner.result("Main.learner")
    assert r is not None, learner.tail()
    assert "quiet" in record[0] or r["incomplete_iterations"] == 0, record
    # the rounds it was asked in while silent (how many depends on how soon its death was
    # seen against the rounds' pace)
    assert r["iterations"] == 600 and r["incomplete_iterations"] == live_scale.silent_rounds(record[0], ROUND_MS), (
        r, record)
    _, single = _one_process(params, live_scale.replayed(record))
    assert live_scale.timeless(single["Main.learner"]) == live_scale.timeless(r)
