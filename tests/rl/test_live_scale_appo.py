"""APPO (the asynchronous plan) whose samplers join and leave while it trains: the APPO
example with ``max_samplers`` (an elastic bank), in one process with a schedule, and as
real processes (``reactorfed rti`` and one ``reactorfed federate`` per member) scaled
2 -> 4 -> 1 -> 3 while the learner runs (joins by starting a process, leaves on SIGTERM).
There are no rounds: the learner learns from what arrives, counts it per member
incarnation (against each sampler's own count), sends its weights again to members that
joined since its last, and the RTI's record (``--membership-out``) replayed gives
bit-identical weights."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reactorfed import ms
from reactorfed.model.elastic import MemberChange, elastic_banks

from . import live_scale
from .conftest import EXAMPLES, load_example, make_args

PROGRAM = f"{EXAMPLES / 'appo_cartpole.py'}:Main"
NUM_ENVS, STEPS = 2, 8
ROWS = NUM_ENVS * STEPS  # a fragment: 16 rows, one update each
BASE = {"num_samplers": 2, "num_envs": NUM_ENVS, "num_steps": STEPS, "appo.update_epochs": 1, "appo.minibatch_size": 16,
        "checkpoint": "", "progress": False, "target_return": 1e9}


def _params(iterations: int, **kw: Any) -> dict[str, Any]:
    return {**BASE, "total_timesteps": iterations * ROWS, **kw}


def _one_process(params: dict[str, Any], changes: list[MemberChange] | None) -> tuple[Any, Mapping[str, Any]]:
    return live_scale.one_process("appo_cartpole", params, changes)


def test_the_learner_counts_each_member_incarnation_and_weights_reach_joiners() -> None:
    """One process, a fragment every 10 ms from each member: 2 -> 4 -> 1 -> 3, then every
    member leaves as a fresh one joins (it holds no weights: the learner sends them again)."""
    params = _params(165, max_samplers=4, seed=2)
    changes = live_scale.schedule((ms(100), 0), (ms(250), 0), (ms(400), 0), (ms(500), 0))
    main, results = _one_process(params, changes)
    r = results["Main.learner"]
    assert r["iterations"] == 165
    assert [w for _, _, w in r["membership"]] == [2, 4, 1, 3, 1], r["membership"]
    by_member = r["samples_by_member"]
    assert {i: len(c) for i, c in by_member.items()} == {"0": 1, "1": 2, "2": 2, "3": 2}, by_member
    assert all(n > 0 for c in by_member.values() for n in c), by_member
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    # each sampler's own count, its last incarnation's (a rejoined slot starts afresh)
    assert [main.samplers[i].transitions for i in range(4)] == [c[-1] for _, c in sorted(by_member.items())]
    # the joiners at 100 and 400 ms got the weights of the update at their join (sampler 0's
    # fragment came at that tag); the one at 500 ms, alone, only by the learner's look
    assert r["weights_resent"] == 1, r
    _, again = _one_process(params, changes)
    assert live_scale.timeless(again["Main.learner"]) == live_scale.timeless(r)


def test_an_elastic_bank_that_never_changes_trains_as_the_fixed_one() -> None:
    p = load_example("appo_cartpole")
    assert not elastic_banks(p.Main(make_args(p.Args, _params(1))))
    assert list(elastic_banks(p.Main(make_args(p.Args, _params(1, max_samplers=3))))) == ["samplers"]
    _, fixed = _one_process(_params(20, seed=5), None)
    # (max_samplers = num_samplers: the same offsets)
    _, elastic = _one_process(_params(20, seed=5, max_samplers=2), [])
    f, e = fixed["Main.learner"], elastic["Main.learner"]
    assert e["weights_sha256"] == f["weights_sha256"] and e["env_steps"] == f["env_steps"]
    assert e["membership"] == [[0, 0, 2]] and e["weights_resent"] == 0


# -- real processes ---------------------------------------------------------------------
#: each member sends a fragment every PERIOD_MS of logical time, in real time; the learner
#: updates once for each: ITERATIONS updates take ~ITERATIONS * PERIOD_MS / width of
#: training (long enough for the processes that join to start: an interpreter and torch each)
PERIOD_MS = 40
ITERATIONS = 3000
LIVE = _params(ITERATIONS, max_samplers=4, period_ms=PERIOD_MS, weights_delay_ms=PERIOD_MS, seed=4)


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_appo_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    run = live_scale.scale_2_4_1_3(tmp_path, PROGRAM, LIVE, "appo", learner_fqn="Main.learner", iterations=ITERATIONS,
                                   settle_ns=10 * PERIOD_MS * 1_000_000, settle_what="fragments of four")
    # The learner took every sample once
    # (but what the last incarnations sent while the learner stopped it did not learn from).
    r = run.result
    sent = live_scale.counts(run.fed.procs)
    for i, n in r["samples_after_stop"].items():
        sent[i][-1] -= n
    assert r["samples_by_member"] == sent, (r, run.fed.tails())
    live_scale.assert_every_process_took_part(r)
    print(f"\nAPPO: learner's reactions at the changes {r['change_gaps_ms']} ms apart (a fragment every "
          f"{PERIOD_MS} ms from each member); weights sent again {r['weights_resent']} times; record {run.record}")

    # The record replayed in one process: the same weights, the same counts.
    # (but for what arrived after the learner asked to stop, not learned from: federated, the
    # stop's tag is agreed with samplers up to weights_delay ahead; in one process it is
    # the next microstep)
    _, single = _one_process(LIVE, live_scale.replayed(run.record))
    late = "samples_after_stop"
    assert live_scale.timeless(single["Main.learner"], late) == live_scale.timeless(r, late)
