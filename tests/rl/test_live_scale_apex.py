"""Ape-X (the asynchronous-replay plan) whose samplers join and leave while it trains: the
Ape-X example with ``max_samplers`` (an elastic bank of samplers; the shards and the
learner's ticks do not change with the width), in one process with a schedule, and as real
processes (``reactorfed rti`` and one ``reactorfed federate`` per member; ``OnePod``, the
shards in the learner's process, as the operator runs it) scaled 2 -> 4 -> 1 -> 3 while the
learner runs (joins by starting a process, leaves on SIGTERM). The learner counts the env
steps each member incarnation reports (against each sampler's own count), sends its
weights again to members that joined since its last broadcast, and the RTI's record
(``--membership-out``) replayed gives bit-identical weights."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reactorfed import ms
from reactorfed.model.elastic import MemberChange, elastic_banks

from . import live_scale
from .conftest import EXAMPLES, load_example, make_args

#: a short run: 2 samplers of 2 copies x 8 rows every period, a learner update every
#: learn_period from 16-transition batches once the shards hold 64
BASE = {"num_samplers": 2, "num_shards": 2, "num_envs": 2, "num_steps": 8, "period_ms": 8, "learn_period_ms": 1,
        "weights_delay_ms": 8, "weights_every": 3, "dqn.hidden": (32, 32), "dqn.target_update_interval": 10,
        "replay.capacity": 1000, "replay.batch_size": 16, "replay.learning_starts": 64, "replay.beta_steps": 50,
        "checkpoint": "", "progress": False, "target_return": 1e9}


ROWS = 16  # a fragment: 2 copies x 8 rows


def _params(iterations: int, **kw: Any) -> dict[str, Any]:
    """``iterations`` learner updates (the example counts them from total_timesteps)."""
    b = {**BASE, **kw}
    per_update = b["num_samplers"] * b["num_envs"] * b["num_steps"] * b["learn_period_ms"] // b["period_ms"]
    return {**b, "total_timesteps": b["replay.learning_starts"] + iterations * per_update}


def _one_process(params: dict[str, Any], changes: list[MemberChange] | None, cls: str = "Main"
                 ) -> tuple[Any, Mapping[str, Any]]:
    main, results = live_scale.one_process("apex_dqn_cartpole", params, changes, cls)
    return main, results["Main.learner" if cls == "Main" else f"{cls}.learner.learner"]


def test_the_learner_counts_each_member_incarnation_and_weights_reach_joiners() -> None:
    """One process: 2 -> 4 -> 1 -> 3, then every member leaves as a fresh one joins. The
    colocated plan (the shards in the learner's reactor) gives the same weights."""
    params = _params(600, max_samplers=4, seed=2)
    changes = live_scale.schedule((ms(100), 0), (ms(250), 0), (ms(400), 0), (ms(500), 0))
    main, r = _one_process(params, changes)
    assert r["iterations"] == 600
    assert [w for _, _, w in r["membership"]] == [2, 4, 1, 3, 1], r["membership"]
    by_member = r["samples_by_member"]
    assert {i: len(c) for i, c in by_member.items()} == {"0": 1, "1": 2, "2": 2, "3": 2}, by_member
    assert all(n > 0 for c in by_member.values() for n in c), by_member
    # (the reports under way when the learner asked to stop are counted apart)
    assert sum(map(sum, by_member.values())) == r["env_steps"]
    late = r["samples_after_stop"]
    assert [main.samplers[i].transitions for i in range(4)] == [
        by_member[str(i)][-1] + late.get(str(i), 0) for i in range(4)], (by_member, late)
    assert r["weights_resent"] >= 1, r
    _, again = _one_process(params, changes)
    assert live_scale.timeless(again) == live_scale.timeless(r)
    _, colocated = _one_process(params, changes, "OnePod")
    assert colocated["weights_sha256"] == r["weights_sha256"] and colocated["samples_by_member"] == by_member


def test_an_elastic_bank_that_never_changes_trains_as_the_fixed_one() -> None:
    p = load_example("apex_dqn_cartpole")
    assert not elastic_banks(p.Main(make_args(p.Args, _params(1))))
    assert list(elastic_banks(p.OnePod(make_args(p.Args, _params(1, max_samplers=3))))) == ["samplers"]
    _, fixed = _one_process(_params(100, seed=5), None)
    # (max_samplers = num_samplers: the same offsets, the same shards' inputs)
    _, elastic = _one_process(_params(100, seed=5, max_samplers=2), [])
    assert elastic["weights_sha256"] == fixed["weights_sha256"] and elastic["env_steps"] == fixed["env_steps"]
    assert elastic["membership"] == [[0, 0, 2]] and elastic["weights_resent"] == 0


# -- real processes ---------------------------------------------------------------------
#: the learner updates every LEARN_MS of logical time, in real time: ITERATIONS updates take
#: ~ITERATIONS * LEARN_MS of training (long enough for the processes that join to start).
#: An update must take less than LEARN_MS of wall time, on a loaded machine too: else
#: logical time falls behind physical time, and a join, at its request's physical time,
#: lands after the training
LEARN_MS = 20
ITERATIONS = 2_500
LIVE = _params(ITERATIONS, max_samplers=4, learn_period_ms=LEARN_MS, period_ms=80, weights_delay_ms=20, seed=4)
PROGRAM = f"{EXAMPLES / 'apex_dqn_cartpole.py'}:OnePod"


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_apex_scaled_2_4_1_3_while_it_runs_and_replayed(tmp_path: Path) -> None:
    cli = {**LIVE, "dqn.hidden": ",".join(map(str, LIVE["dqn.hidden"]))}  # (a tuple on the command line)
    run = live_scale.scale_2_4_1_3(tmp_path, PROGRAM, cli, "apex", learner_fqn="OnePod.learner.learner",
                                   iterations=ITERATIONS, settle_ns=ms(400), settle_what="fragments of four",
                                   wait_s=300)
    # The learner counted every report once.
    r = run.result
    seen = [w for _, _, w in r["membership"]]
    assert seen[-1] == 3, f"rejoined too late to take part (a slow machine): {seen}, {run.record}"
    sent = live_scale.counts(run.fed.procs, "OnePod")
    for i, n in r["samples_after_stop"].items():  # (reported after the learner asked to stop)
        sent[i][-1] -= n
    by_member = r["samples_by_member"]
    assert {i: len(c) for i, c in by_member.items()} == {i: len(c) for i, c in sent.items()}, (by_member, sent)
    for i, counts in by_member.items():
        # every incarnation's but the last's entirely (a leaver's reports arrive after its
        # leave, and count); the last ones' but a report sent less than the reports' delay
        # (prefetch learner ticks, < a sampler's period) before the last tag: it arrives after
        assert counts[:-1] == sent[i][:-1], (i, counts, sent[i])
        assert 0 <= sent[i][-1] - counts[-1] <= ROWS, (i, counts, sent[i])
    live_scale.assert_every_process_took_part(r)
    print(f"\nApe-X: learner's ticks at the changes {r['change_gaps_ms']} ms apart (a tick every {LEARN_MS} ms); "
          f"weights sent again {r['weights_resent']} times; record {run.record}")

    # The record replayed in one process: the same weights, the same counts.
    # (but for what arrived after the learner asked to stop: federated, the stop's tag is
    # agreed with samplers ahead of it; in one process it is the next microstep)
    _, single = _one_process(LIVE, live_scale.replayed(run.record), "OnePod")
    late = "samples_after_stop"
    assert live_scale.timeless(single, late) == live_scale.timeless(r, late)
