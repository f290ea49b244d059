"""SEED (central batched inference) whose samplers join and leave while it trains: the SEED
example with ``max_samplers`` (an elastic bank; fragments ``round_ms`` apart, each acting
for the members present when it starts), in one process with a schedule, and as real
processes (``reactorfed rti`` and one ``reactorfed federate`` per member) scaled
2 -> 4 -> 1 -> 3 while the learner runs: members join by starting, leave on SIGTERM, and a
SIGKILLed one is replaced by a new process for its slot. The learner accounts for every
step each member incarnation took (learned from, or dropped with a fragment it left), and
the RTI's record (``--membership-out``) replayed gives bit-identical weights."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reactorfed import ms
from reactorfed.model.elastic import MemberChange, elastic_banks

from . import live_scale
from .conftest import EXAMPLES, load_example, make_args

PROGRAM = f"{EXAMPLES / 'seed_ppo_cartpole.py'}:Main"
NUM_ENVS, STEPS = 2, 8  # a fragment: 16 rows of each member
ROWS = NUM_ENVS * STEPS
BASE = {"num_samplers": 2, "num_envs": NUM_ENVS, "num_steps": STEPS, "ppo.update_epochs": 2, "ppo.minibatch_size": 24,
        "device": "cpu", "checkpoint": "", "progress": False, "target_return": 1e9}


def _params(iterations: int, **kw: Any) -> dict[str, Any]:
    return {**BASE, "ppo.total_timesteps": iterations * 2 * ROWS, **kw}


def _one_process(params: dict[str, Any], changes: list[MemberChange] | None) -> tuple[Any, Mapping[str, Any]]:
    return live_scale.one_process("seed_ppo_cartpole", params, changes)


def _sent(r: Mapping[str, Any]) -> dict[str, list[int]]:
    """What each member incarnation stepped, by the learner's account: learned or dropped."""
    dropped = r["steps_dropped"]
    return {i: [n + d for n, d in zip(c, dropped.get(i, [0] * len(c)), strict=True)]
            for i, c in r["samples_by_member"].items()}


def test_each_fragment_acts_for_the_members_present_when_it_starts() -> None:
    """One process, fragments of 8 steps back to back in microsteps: 2 -> 4 -> 1 -> 3, then
    every member leaves as a fresh one joins. A joiner waits for the next fragment; a
    member that leaves during one is dropped from it (its steps there counted apart); the
    fragment whose members all left is abandoned, and the next starts with the joiner."""
    params = _params(30, max_samplers=4, seed=2)
    changes = live_scale.schedule((0, 20), (0, 50), (0, 90), (0, 130))
    main, results = _one_process(params, changes)
    r = results["Main.learner"]
    assert r["iterations"] == 30
    assert r["membership"] == [[0, 0, 2], [0, 20, 4], [0, 50, 1], [0, 90, 3], [0, 130, 1]]
    assert r["fragments_abandoned"] == 1, r
    by_member = r["samples_by_member"]
    assert {i: len(c) for i, c in by_member.items()} == {"0": 1, "1": 2, "2": 2, "3": 2}, by_member
    assert all(n > 0 for c in by_member.values() for n in c), by_member
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    # each sampler's own count, its last incarnation's (a rejoined slot starts afresh)
    assert [main.samplers[i].transitions for i in range(4)] == [c[-1] for _, c in sorted(_sent(r).items())]
    # one forward pass a step, whatever the width
    assert r["forward_passes"] > r["iterations"] * STEPS
    _, again = _one_process(params, changes)
    assert live_scale.timeless(again["Main.learner"]) == live_scale.timeless(r)


def test_an_elastic_bank_that_never_changes_trains_as_the_fixed_one() -> None:
    """The same draws and updates, fragments a round apart or not (only their tags differ);
    and the default bank is not elastic."""
    p = load_example("seed_ppo_cartpole")
    assert not elastic_banks(p.Main(make_args(p.Args, _params(1))))
    assert list(elastic_banks(p.Main(make_args(p.Args, _params(1, max_samplers=3))))) == ["samplers"]
    _, fixed = _one_process(_params(6, seed=5), None)
    f = fixed["Main.learner"]
    for round_ms in (0, 5):
        _, elastic = _one_process(_params(6, seed=5, max_samplers=4, round_ms=round_ms), [])
        e = elastic["Main.learner"]
        assert e["weights_sha256"] == f["weights_sha256"] and e["env_steps"] == f["env_steps"]
        assert e["forward_passes"] == f["forward_passes"] and e["membership"] == [[0, 0, 2]]
        assert e["steps_dropped"] == {} and e["fragments_abandoned"] == 0


def test_elastic_layout_mistakes_are_named() -> None:
    from reactorfed import ValidationError
    from reactorfed.rl import PPOConfig, SeedPlan

    with pytest.raises(ValidationError, match="max_samplers must be an int >= num_samplers"):
        SeedPlan(PPOConfig(), "CartPole-v1", num_samplers=3, max_samplers=2)
    with pytest.raises(ValidationError, match="period must be an int >= 0"):
        SeedPlan(PPOConfig(), "CartPole-v1", max_samplers=4, period=-1)


# -- real processes ---------------------------------------------------------------------
#: a fragment (2 steps, each a round trip between every member and the learner) every
#: ROUND_MS of logical time, in real time: ~ITERATIONS * ROUND_MS of training (long enough
#: for the processes that join to start). A fragment must take less than ROUND_MS of wall
#: time, on a loaded machine too: else logical time falls behind physical time, and a
#: join, at its request's physical time, lands late. (Measured here, federated: a step at a
#: tag after the start costs far more than one at the start's time, tens of ms on a loaded
#: 2-core machine: hence short fragments far apart.)
ROUND_MS = 500
ITERATIONS = 200
LIVE = _params(ITERATIONS, max_samplers=4, round_ms=ROUND_MS, seed=4, num_steps=2,
               **{"ppo.total_timesteps": ITERATIONS * 2 * NUM_ENVS * 2})


@pytest.mark.slow
@pytest.mark.plans  # paced in real time, about 80-100 s each: beyond CI's budget (see pyproject)
@pytest.mark.timeout(420)
def test_seed_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    run = live_scale.scale_2_4_1_3(tmp_path, PROGRAM, LIVE, "seed", learner_fqn="Main.learner", iterations=ITERATIONS,
                                   settle_ns=10 * ms(ROUND_MS), settle_what="fragments of four",
                                   rejoin_before_ns=(ITERATIONS - 10) * ms(ROUND_MS))
    # The learner accounts for every step of every process: learned from, or dropped with a
    # fragment the process left
    r = run.result
    assert _sent(r) == live_scale.counts(run.fed.procs), (r, run.fed.tails())
    live_scale.assert_every_process_took_part(r, run.widths)
    print(f"\nSEED: learner's reactions at the changes {r['change_gaps_ms']} ms apart (a fragment every {ROUND_MS} "
          f"ms); steps dropped {r['steps_dropped']}; record {run.record}")
    # The record replayed in one process: the same weights, the same counts.
    _, single = _one_process(LIVE, live_scale.replayed(run.record))
    assert live_scale.timeless(single["Main.learner"]) == live_scale.timeless(r)

#: the SIGKILL test's training: long enough in logical time for the new process to join
#: while it runs, when the start (the learner builds torch) left logical time behind
KILL_ITERATIONS = 300
KILL_ROUND_MS = 250


@pytest.mark.slow
@pytest.mark.plans  # paced in real time, about 80-100 s each: beyond CI's budget (see pyproject)
@pytest.mark.timeout(400)
def test_a_sigkilled_seed_sampler_leaves_and_a_new_process_takes_its_slot(tmp_path: Path) -> None:
    """SIGKILL to a sampler (no resignation): the RTI's liveness notices, the member leaves
    at an agreed tag, the fragment under way goes on without it (its rows there dropped),
    a new process for the slot joins at a later fragment, and training runs to its end.
    The record's leave says from which tag the member did nothing (``quiet``), so a replay
    in one process has it silent there too: the same fragments, the same weights."""
    params = _params(KILL_ITERATIONS, max_samplers=3, round_ms=KILL_ROUND_MS, seed=6, num_steps=4,
                     **{"ppo.total_timesteps": KILL_ITERATIONS * 2 * NUM_ENVS * 4})
    run = live_scale.kill_a_sampler_and_replace_it(tmp_path, PROGRAM, params, "seedkill", round_ms=KILL_ROUND_MS)
    r = run.learner.result("Main.learner")
    assert r is not None, run.learner.tail()
    assert r["iterations"] == KILL_ITERATIONS, r
    assert [w for _, _, w in r["membership"]] == [2, 1, 2], r["membership"]
    killed, new = r["samples_by_member"]["1"]
    assert killed > 0 and new > 0, r["samples_by_member"]
    assert _sent(r)["1"][1] == (run.again.result("Main.samplers[1]") or {}).get("samples"), run.again.tail()
    assert sum(map(sum, r["samples_by_member"].values())) == r["env_steps"]
    _, single = _one_process(params, live_scale.replayed(run.record))
    print(f"\nSIGKILL: record {run.record}; steps dropped {r['steps_dropped']}")
    assert live_scale.timeless(single["Main.learner"]) == live_scale.timeless(r)
