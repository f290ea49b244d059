"""Data-parallel PPO whose samplers join and leave while it trains: the data-parallel example
with ``max_samplers`` (one elastic bank, slot ``i`` dealt to learner ``i mod 2``; each
learner's rounds :mod:`reactorfed.rl.plans.elastic_round`'s), in one process with a
schedule, and as real processes (``reactorfed rti``, one ``reactorfed federate`` per
learner and per member) scaled 2 -> 4 -> 1 -> 3 while the learners run: members join by
starting, leave on SIGTERM, and a SIGKILLed one is replaced by a new process for its slot.
A learner whose members are all absent sits the round out; the learners' weights stay
bit-identical; they take every sample once (their counts per member against each
sampler's own), and the RTI's record (``--membership-out``) replayed gives bit-identical
weights."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reactorfed import ms
from reactorfed.model.elastic import MemberChange, elastic_banks

from . import live_scale
from .conftest import EXAMPLES, load_example, make_args

PROGRAM = f"{EXAMPLES / 'ppo_data_parallel_cartpole.py'}:Main"
LEARNERS = ("learners[0]", "learners[1]")
NUM_ENVS, STEPS = 2, 8  # a fragment: 16 rows
ROWS = NUM_ENVS * STEPS
BASE = {"num_learners": 2, "samplers_per_learner": 1, "num_envs": NUM_ENVS, "num_steps": STEPS,
        "ppo.update_epochs": 2, "ppo.minibatch_size": 12, "checkpoint": "", "progress": False, "target_return": 1e9}


def _params(iterations: int, **kw: Any) -> dict[str, Any]:
    return {**BASE, "ppo.total_timesteps": iterations * 2 * ROWS, **kw}


def _one_process(params: dict[str, Any], changes: list[MemberChange] | None) -> tuple[Any, list[Mapping[str, Any]]]:
    main, results = live_scale.one_process("ppo_data_parallel_cartpole", params, changes)
    return main, [results[f"Main.{name}"] for name in LEARNERS]


def merged(rs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The learners' results as one: the lead's, with every learner's members' counts (each
    counts its own) and the rounds each sat out. The learners agree on the weights."""
    assert len({r["weights_sha256"] for r in rs}) == 1, [r["weights_sha256"] for r in rs]
    assert len({(r["iterations"], r["env_steps"], str(r["membership"])) for r in rs}) == 1, rs
    by_member = {i: c for r in rs for i, c in r["samples_by_member"].items()}
    return {**rs[0], "samples_by_member": dict(sorted(by_member.items(), key=lambda kv: int(kv[0]))),
            "rounds_sat_out": [r["rounds_sat_out"] for r in rs],
            "incomplete_iterations": sum(r["incomplete_iterations"] for r in rs)}


def test_each_learner_learns_from_its_members_present_and_sits_out_without() -> None:
    """One process, a round every 10 ms: 2 -> 4 -> 1 -> 3, then every member leaves as a
    fresh one joins. With one member, one learner holds no share: it sits the round out and
    applies the other's gradients; when every member asked left, both ask again."""
    params = _params(60, max_samplers=4, round_ms=10, seed=2)
    changes = live_scale.schedule((ms(100), 0), (ms(250), 0), (ms(400), 0), (ms(500), 0))
    main, rs = _one_process(params, changes)
    r = merged(rs)
    assert r["iterations"] == 60 and r["incomplete_iterations"] == 0
    assert [w for _, _, w in r["membership"]] == [2, 4, 1, 3, 1], r["membership"]
    assert r["rounds_asked_again"] == 1, r
    assert all(n > 0 for n in r["rounds_sat_out"]), r["rounds_sat_out"]  # (each alone once: 250-400, 500-)
    by_member = r["samples_by_member"]
    assert {i: len(c) for i, c in by_member.items()} == {"0": 1, "1": 2, "2": 2, "3": 2}, by_member
    assert all(n > 0 for c in by_member.values() for n in c), by_member
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    # learner k counts the slots dealt to it, i mod 2
    assert [sorted(x["samples_by_member"]) for x in rs] == [["0", "2"], ["1", "3"]]
    assert [main.samplers[i].transitions for i in range(4)] == [c[-1] for c in by_member.values()]
    _, again = _one_process(params, changes)
    assert live_scale.timeless(merged(again)) == live_scale.timeless(r)


def test_an_elastic_bank_that_never_changes_trains_as_the_fixed_one() -> None:
    """One sampler a learner at the start: the deal by ``i mod K`` is the fixed plan's, the
    rounds the same (a period apart or not): the same weights."""
    p = load_example("ppo_data_parallel_cartpole")
    assert not elastic_banks(p.Main(make_args(p.Args, _params(1))))
    assert list(elastic_banks(p.Main(make_args(p.Args, _params(1, max_samplers=4))))) == ["samplers"]
    _, fixed = _one_process(_params(6, seed=5), None)
    for round_ms in (0, 5):
        _, elastic = _one_process(_params(6, seed=5, max_samplers=4, round_ms=round_ms), [])
        e = merged(elastic)
        assert e["weights_sha256"] == fixed[0]["weights_sha256"] and e["env_steps"] == fixed[0]["env_steps"]
        assert e["membership"] == [[0, 0, 2]] and e["rounds_sat_out"] == [0, 0] and e["rounds_asked_again"] == 0


def test_elastic_layout_mistakes_are_named() -> None:
    from reactorfed import ValidationError
    from reactorfed.rl import DataParallelPlan, PPOConfig

    with pytest.raises(ValidationError, match=r"max_samplers must be an int >= the samplers at the start \(4\)"):
        DataParallelPlan(PPOConfig(), "CartPole-v1", num_learners=2, samplers_per_learner=2, max_samplers=3)
    with pytest.raises(ValidationError, match="initial_samplers must be an int >= 1"):
        DataParallelPlan(PPOConfig(), "CartPole-v1", max_samplers=4, initial_samplers=-1)
    with pytest.raises(ValidationError, match="period must be an int >= 0"):
        DataParallelPlan(PPOConfig(), "CartPole-v1", max_samplers=4, period=-1)


def test_fewer_samplers_than_learners_at_the_start() -> None:
    """``num_samplers`` (the width a Kubernetes group writes): one sampler for two learners
    at the start; learner 1 sits out until sampler 1 joins, and the learners agree."""
    params = _params(20, max_samplers=4, num_samplers=1, round_ms=10, seed=3)
    _, rs = _one_process(params, [MemberChange(ms(80), 0, "samplers", 1, True)])
    r = merged(rs)
    # (the rounds total_timesteps takes at the initial width: one fragment a round)
    assert r["iterations"] == 40 and r["incomplete_iterations"] == 0
    assert [w for _, _, w in r["membership"]] == [1, 2]
    assert r["rounds_sat_out"][0] == 0 and r["rounds_sat_out"][1] > 0, r["rounds_sat_out"]


# -- real processes ---------------------------------------------------------------------
#: a round every ROUND_MS of logical time, in real time (one gradient step a round: each
#: step is an exchange between the learners, a microstep of the federation's coordination):
#: ~ITERATIONS * ROUND_MS of training, long enough for the processes that join to start
ROUND_MS = 500
ITERATIONS = 200
LIVE = _params(ITERATIONS, max_samplers=4, round_ms=ROUND_MS, seed=4, **{"ppo.update_epochs": 1,
                                                                        "ppo.minibatch_size": 64})


def _learners(fed: Any) -> list[Mapping[str, Any]]:
    procs = {p.name: p for p in fed.procs}
    out = [procs[name].result(f"Main.{name}") for name in LEARNERS]
    assert all(r is not None for r in out), fed.tails()
    return out


@pytest.mark.slow
@pytest.mark.plans  # paced in real time, about 80-100 s each: beyond CI's budget (see pyproject)
@pytest.mark.timeout(420)
def test_data_parallel_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    run = live_scale.scale_2_4_1_3(tmp_path, PROGRAM, LIVE, "dp", learner_fqn="Main.learners[0]",
                                   iterations=ITERATIONS, settle_ns=10 * ms(ROUND_MS), settle_what="rounds of four",
                                   rejoin_before_ns=(ITERATIONS - 10) * ms(ROUND_MS), learners=LEARNERS)
    r = merged(_learners(run.fed))
    assert r["incomplete_iterations"] == 0, r
    assert r["samples_by_member"] == live_scale.counts(run.fed.procs), (r, run.fed.tails())
    live_scale.assert_every_process_took_part(r, run.widths)
    print(f"\ndata-parallel: lead's rounds at the changes {r['change_gaps_ms']} ms apart (rounds every {ROUND_MS} "
          f"ms); rounds sat out {r['rounds_sat_out']}; record {run.record}")
    _, single = _one_process(LIVE, live_scale.replayed(run.record))
    assert live_scale.timeless(merged(single)) == live_scale.timeless(r)

#: the SIGKILL test's training: long enough in logical time for the new process to join
#: while it runs, when the start (the learner builds torch) left logical time behind
KILL_ITERATIONS = 250
KILL_ROUND_MS = 300


@pytest.mark.slow
@pytest.mark.plans  # paced in real time, about 80-100 s each: beyond CI's budget (see pyproject)
@pytest.mark.timeout(400)
def test_a_sigkilled_data_parallel_sampler_leaves_and_a_new_process_takes_its_slot(tmp_path: Path) -> None:
    """SIGKILL to sampler 1 (learner 1's only one): the member leaves at an agreed tag, learner
    1 sits rounds out (the rounds it was asked in while silent miss its fragment), a new process for
    the slot joins and takes part, and the replay of the record gives the same weights."""
    params = _params(KILL_ITERATIONS, max_samplers=3, round_ms=KILL_ROUND_MS, seed=6, **{"ppo.update_epochs": 1,
                                                                       "ppo.minibatch_size": 64})
    run = live_scale.kill_a_sampler_and_replace_it(tmp_path, PROGRAM, params, "dpkill", round_ms=KILL_ROUND_MS,
                                                   learners=LEARNERS)
    r = merged(_learners(run.fed))
    assert r["iterations"] == KILL_ITERATIONS, r
    assert [w for _, _, w in r["membership"]] == [2, 1, 2], r["membership"]
    killed, new = r["samples_by_member"]["1"]
    assert killed > 0 and new > 0, r["samples_by_member"]
    assert new == (run.again.result("Main.samplers[1]") or {}).get("samples"), run.again.tail()
    assert sum(map(sum, r["samples_by_member"].values())) == r["env_steps"]
    # (the rounds it was asked in while silent; see test_live_scale_ppo)
    assert r["incomplete_iterations"] == live_scale.silent_rounds(run.record[0], KILL_ROUND_MS), (r, run.record)
    assert r["rounds_sat_out"][0] == 0 and r["rounds_sat_out"][1] > 0, r["rounds_sat_out"]
    _, single = _one_process(params, live_scale.replayed(run.record))
    print(f"\nSIGKILL: record {run.record}; rounds sat out {r['rounds_sat_out']}")
    assert live_scale.timeless(merged(single)) == live_scale.timeless(r)
