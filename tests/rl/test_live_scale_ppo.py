"""Synchronous PPO whose samplers join and leave while it trains: the PPO example with
``max_samplers`` (an elastic bank; the rounds of :mod:`reactorfed.rl.plans.elastic_round`,
as Q-learning's), in one process with a schedule, and as real processes (``reactorfed rti``
and one ``reactorfed federate`` per member) scaled 2 -> 4 -> 1 -> 3 while the learner runs:
members join by starting, leave on SIGTERM, and a SIGKILLed one is replaced by a new
process for its slot. The learner takes every sample once (its counts per member against
each sampler's own), a round's batch is as wide as the round, and the RTI's record
(``--membership-out``) replayed gives bit-identical weights."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reactorfed.model.elastic import MemberChange, elastic_banks

from . import live_scale
from .conftest import EXAMPLES, load_example, make_args

PROGRAM = f"{EXAMPLES / 'ppo_cartpole.py'}:Main"
NUM_ENVS, STEPS = 2, 8  # a fragment: 16 rows
ROWS = NUM_ENVS * STEPS
#: the example's settings for a short run: 2 samplers at the start, so a round of 32 rows;
#: minibatches of 24 rows: a round of 1 sampler is one minibatch of 16, of 3 two of 24 and
#: 0 (48 = 24 + 24), of 4 three (64 = 24 + 24 + 16)
BASE = {"num_samplers": 2, "num_envs": NUM_ENVS, "num_steps": STEPS, "ppo.update_epochs": 2, "ppo.minibatch_size": 24,
        "checkpoint": "", "progress": False, "target_return": 1e9}


def _params(iterations: int, **kw: Any) -> dict[str, Any]:
    return {**BASE, "ppo.total_timesteps": iterations * 2 * ROWS, **kw}


def _one_process(params: dict[str, Any], changes: list[MemberChange] | None) -> tuple[Any, Mapping[str, Any]]:
    return live_scale.one_process("ppo_cartpole", params, changes)


def test_each_round_learns_from_exactly_the_fragments_of_the_members_present() -> None:
    """One process, one round per microstep, the schedule of the Q-learning test: a member
    present when the weights go out (``k - 1``) and when they arrive (``k``) sends a
    fragment in round ``k``. At microstep 25 every member asked leaves as another joins:
    nobody answers that round, and the learner asks again instead of waiting."""
    params = _params(40, max_samplers=4, seed=2)
    changes = live_scale.schedule((0, 5), (0, 12), (0, 20), (0, 25))
    main, results = _one_process(params, changes)
    r = results["Main.learner"]
    assert r["iterations"] == 40 and r["incomplete_iterations"] == 0
    assert r["rounds_asked_again"] == 1
    assert r["membership"] == [[0, 0, 2], [0, 5, 4], [0, 12, 1], [0, 20, 3], [0, 25, 1]]
    # the rounds each incarnation answered (as Q-learning's); a fragment's transitions are
    # its rows less the automatic resets' (CartPole's episodes are longer than a fragment)
    rounds = {"0": [24], "1": [11, 16], "2": [6, 4], "3": [6, 4]}
    by_member = r["samples_by_member"]
    assert sorted(by_member) == sorted(rounds)
    for i, ks in rounds.items():
        assert len(by_member[i]) == len(ks)
        for n, k in zip(by_member[i], ks, strict=True):
            assert k * ROWS - k * NUM_ENVS <= n <= k * ROWS, (i, by_member[i], ks)
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    # each sampler's own count, its last incarnation's (a rejoined slot starts afresh)
    assert [main.samplers[i].transitions for i in range(4)] == [c[-1] for _, c in sorted(by_member.items())]
    # the same schedule again: the same weights (and all but the times)
    _, again = _one_process(params, changes)
    assert live_scale.timeless(again["Main.learner"]) == live_scale.timeless(r)


def test_an_elastic_bank_that_never_changes_trains_as_the_fixed_one() -> None:
    """Without changes the elastic plan's rounds are the fixed plan's (same tags, same
    fragments in the same order): the same weights; and the default bank is not elastic."""
    p = load_example("ppo_cartpole")
    assert not elastic_banks(p.Main(make_args(p.Args, _params(1))))
    assert list(elastic_banks(p.Main(make_args(p.Args, _params(1, max_samplers=3))))) == ["samplers"]
    _, fixed = _one_process(_params(6, seed=5), None)
    _, elastic = _one_process(_params(6, seed=5, max_samplers=4), [])
    f, e = fixed["Main.learner"], elastic["Main.learner"]
    assert e["weights_sha256"] == f["weights_sha256"] and e["env_steps"] == f["env_steps"]
    assert e["samples_by_member"] == {"0": [e["samples_by_member"]["0"][0]], "1": [e["samples_by_member"]["1"][0]]}
    assert e["membership"] == [[0, 0, 2]] and e["incomplete_iterations"] == 0


# -- real processes ---------------------------------------------------------------------
#: a round every ROUND_MS of logical time, in real time: ~ITERATIONS * ROUND_MS of training
#: (long enough for the processes that join to start: an interpreter and torch each)
ROUND_MS = 40
ITERATIONS = 1250
LIVE = _params(ITERATIONS, max_samplers=4, round_ms=ROUND_MS, seed=4)


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_ppo_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    # the learner took every sample once; the record replayed in one process: the same
    # weights, the same counts
    run = live_scale.scale_a_plan_with_rounds(tmp_path, PROGRAM, LIVE, "ppo", round_ms=ROUND_MS, iterations=ITERATIONS,
                                              replay=lambda changes: _one_process(LIVE, changes)[1]["Main.learner"])
    print(f"\nPPO: learner's rounds at the changes {run.result['change_gaps_ms']} ms apart (rounds every {ROUND_MS} "
          f"ms); record {run.record}")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_sigkilled_ppo_sampler_leaves_and_a_new_process_takes_its_slot(tmp_path: Path) -> None:
    """SIGKILL to a sampler (no resignation): the RTI's liveness notices, the member leaves
    at an agreed tag (in the record), the rounds go on with the other, a new process for
    the slot joins and takes part, and training runs to its end.

    The RTI stops waiting on the dead member at once, so the learner ends the round under
    way without its fragment, while the leave is agreed at a tag after that round (the
    federates' answers): that round counts as incomplete, and so does any other that ends
    before the leave's tag (on a busy machine the learner may end one more before it
    answers). The record's leave says from
    which tag the member did nothing (``quiet``: the one after the last it completed), so a
    replay in one process has it present and silent there too: the same incomplete round,
    the same weights."""
    params = _params(600, max_samplers=3, round_ms=ROUND_MS, seed=6)
    run = live_scale.kill_a_sampler_and_replace_it(tmp_path, PROGRAM, params, "ppokill", round_ms=ROUND_MS)
    learner, again, record = run.learner, run.again, run.record
    r = learner.result("Main.learner")
    assert r is not None, learner.tail()
    assert r["iterations"] == 600, r
    assert [w for _, _, w in r["membership"]] == [2, 1, 2], r["membership"]
    killed, new = r["samples_by_member"]["1"]
    assert killed > 0 and new > 0, r["samples_by_member"]
    assert new == (again.result("Main.samplers[1]") or {}).get("samples"), again.tail()
    assert sum(map(sum, r["samples_by_member"].values())) == r["env_steps"]
    # the rounds it was asked in while silent miss its fragment (see above): the round under
    # way when it died, and any that ended before the leave's tag was agreed
    assert r["incomplete_iterations"] == live_scale.silent_rounds(record[0], ROUND_MS) >= 1, (r, record)
    _, single = _one_process(params, live_scale.replayed(record))
    print(f"\nSIGKILL: record {record}; learner's incomplete rounds {r['incomplete_iterations']}")
    assert "quiet" in record[0] or r["incomplete_iterations"] == 0, record  # (quiet: when it left a round unanswered)
    assert live_scale.timeless(single["Main.learner"]) == live_scale.timeless(r)
