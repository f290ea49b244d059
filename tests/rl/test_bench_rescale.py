"""bench/rescale.py: the learner's timeline it reads (the Q-learning example in one process),
and what it reads off it (pure functions, on timelines made here). The benchmark itself
(``python -m bench.rescale --quick --no-write``) starts 16 interpreters: minutes on 2 cores,
too long for a test."""

from __future__ import annotations

import itertools

import pytest
from bench.rescale_timeline import (
    Row,
    between,
    first_with,
    longest_pause,
    median_gap_ms,
    rows_of,
    rows_of_all,
    throughput,
    transition,
)

from reactorfed import Environment
from reactorfed.model.elastic import MemberChange

from .conftest import load_example, make_args

MS = 1_000_000
ROUND = 100 * MS


def _timeline(spec: list[tuple[int, int, list[int]]]) -> list[Row]:
    """Rows from (wall ms, round, members), 10 env steps per member."""
    return rows_of({"timeline": [[w * MS, r * ROUND, 0, 10 * len(m), m] for w, r, m in spec]})


# 4 members every 10 ms; a join shows at 50 ms (members 4 and 5) after a 35 ms wait, then
# 6 members every 20 ms; round 7 was asked again (nobody answered it)
JOIN = _timeline([(0, 1, [0, 1, 2, 3]), (10, 2, [0, 1, 2, 3]), (20, 3, [0, 1, 2, 3]),
                  (30, 4, [0, 1, 2, 3]), (65, 5, [0, 1, 2, 3, 4]), (85, 6, [0, 1, 2, 3, 4, 5]),
                  (105, 8, [0, 1, 2, 3, 4, 5]), (125, 9, [0, 1, 2, 3, 4, 5])])


def test_the_learner_keeps_a_row_per_iteration_with_its_members() -> None:
    """The Q-learning example with ``timeline=true``, one process, a member joining at
    round 3 (asked from the round after) and one leaving at round 6."""
    q = load_example("qlearning")
    params = {"num_samplers": 2, "max_samplers": 3, "round_ms": 100, "iterations": 8, "fragment_len": 5,
              "updates_per_iteration": 1, "timeline": True}
    main = q.Main(q.Args(**params))
    env = Environment(fast=True)
    env.assemble(main).set_membership([MemberChange(300 * MS, 0, "samplers", 2, True),
                                       MemberChange(600 * MS, 0, "samplers", 0, False)])
    res = env.run().results["Main.learner"]
    rows = rows_of(dict(res))
    assert len(rows) == res["iterations"] == 8
    assert [r.tag_ns // ROUND for r in rows] == list(range(1, 9)) and all(r.microstep == 0 for r in rows)
    assert [sorted(r.members) for r in rows] == [[0, 1]] * 3 + [[0, 1, 2]] * 2 + [[1, 2]] * 3
    assert [r.steps for r in rows] == [5 * len(r.members) for r in rows]
    assert sum(r.steps for r in rows) == res["env_steps"]
    assert all(a.wall_ns <= b.wall_ns for a, b in itertools.pairwise(rows))
    # without it, no timeline (the result a replay compares stays as it was)
    plain = Environment(fast=True)
    plain.assemble(q.Main(q.Args(**{**params, "timeline": False})))
    assert set(plain.run().results["Main.learner"]) == set(res) - {"timeline"}


@pytest.mark.parametrize(("example", "params"), [
    ("ppo_cartpole", {"ppo.total_timesteps": 12 * 32, "round_ms": 100}),
    ("appo_cartpole", {"total_timesteps": 30 * 16, "period_ms": 100, "weights_delay_ms": 100}),
    ("apex_dqn_cartpole", {"total_timesteps": 64 + 40 * 4, "replay.learning_starts": 64, "period_ms": 40,
                           "weights_delay_ms": 40, "learn_period_ms": 10, "dqn.hidden": (32, 32)}),
    ("seed_ppo_cartpole", {"ppo.total_timesteps": 12 * 32, "round_ms": 100, "device": "cpu"}),
], ids=["ppo", "appo", "apex", "seed"])
def test_the_other_plans_learners_keep_a_row_per_update(example: str, params: dict[str, object]) -> None:
    """``bench/rescale.py --plan``: each elastic plan's learner with ``timeline=true`` keeps
    a row per update (PPO: the senders of its fragments; SEED: the members its fragment acted
    for; APPO, Ape-X: the members present),
    a member joining at 300 ms; without it, none."""
    m = load_example(example)
    args = {"num_samplers": 2, "max_samplers": 3, "num_envs": 2, "num_steps": 8, "checkpoint": "", "progress": False,
            "target_return": 1e9, "timeline": True, **params}
    env = Environment(fast=True)
    env.assemble(m.Main(make_args(m.Args, args))).set_membership([MemberChange(300 * MS, 0, "samplers", 2, True)])
    res = env.run().results["Main.learner"]
    rows = rows_of(dict(res))
    assert len(rows) == res["iterations"] and all(a.wall_ns <= b.wall_ns for a, b in itertools.pairwise(rows))
    assert {r.members for r in rows} == {frozenset({0, 1}), frozenset({0, 1, 2})}
    assert rows[0].members == frozenset({0, 1}) and rows[-1].members == frozenset({0, 1, 2})
    assert sum(r.steps for r in rows) <= res["env_steps"]  # (Ape-X: not the reports before its first update)
    plain = Environment(fast=True)
    plain.assemble(m.Main(make_args(m.Args, {**args, "timeline": False})))
    assert set(plain.run().results["Main.learner"]) == set(res) - {"timeline"}


def test_the_data_parallel_learners_rows_merge_into_every_members() -> None:
    """``--plan data-parallel``: each learner keeps the rows of its own members (slot ``i``
    feeds learner ``i mod 2``); merged by update tag they hold every member's, as one
    learner's would. A member joining at 300 ms, dealt to learner 0."""
    m = load_example("ppo_data_parallel_cartpole")
    args = {"num_learners": 2, "samplers_per_learner": 1, "max_samplers": 3, "num_envs": 2, "num_steps": 8,
            "ppo.total_timesteps": 12 * 32, "ppo.minibatch_size": 16, "round_ms": 100, "checkpoint": "",
            "progress": False, "target_return": 1e9, "timeline": True}
    env = Environment(fast=True)
    env.assemble(m.Main(make_args(m.Args, args))).set_membership([MemberChange(300 * MS, 0, "samplers", 2, True)])
    res = env.run().results
    each = [dict(res[f"Main.learners[{k}]"]) for k in (0, 1)]
    assert {r.members for r in rows_of(each[1])} == {frozenset({1})}
    rows = rows_of_all(each)
    assert len(rows) == res["Main.learners[0]"]["iterations"]
    assert rows[0].members == frozenset({0, 1}) and rows[-1].members == frozenset({0, 1, 2})
    assert sum(r.steps for r in rows) == res["Main.learners[0]"]["env_steps"]


def test_rows_need_the_learners_timeline() -> None:
    with pytest.raises(ValueError, match="timeline=true"):
        rows_of({"iterations": 3})
    assert JOIN[4] == Row(65 * MS, 5 * ROUND, 0, 50, frozenset(range(5)))


def test_first_sample_of_a_member_after_a_request() -> None:
    assert first_with(JOIN, 4, 0) is JOIN[4]
    assert first_with(JOIN, 5, 0) is JOIN[5]
    assert first_with(JOIN, 0, 66 * MS) is JOIN[5]  # (not before the request)
    assert first_with(JOIN, 7, 0) is None


def test_a_change_runs_from_the_first_different_members_to_the_width_asked() -> None:
    assert transition(JOIN, 25 * MS, frozenset(range(6))) == (4, 5)
    with pytest.raises(ValueError, match="never changed"):
        transition(JOIN, 90 * MS, frozenset(range(6)))
    with pytest.raises(ValueError, match="exactly"):
        transition(JOIN, 0, frozenset(range(8)))


def test_longest_pause_in_wall_time_and_rounds_within_the_window() -> None:
    p = longest_pause(JOIN, 4, 5, 2, ROUND)
    assert p.longest_gap_ms == 35.0 and p.at == 0  # (30 -> 65 ms: the join's wait)
    assert p.longest_gap_rounds == 2.0  # (round 6 -> 8 is within 2 iterations of the end)
    narrow = longest_pause(JOIN, 4, 5, 0, ROUND)
    assert narrow.longest_gap_rounds == 1.0 and narrow.longest_gap_ms == 35.0
    # only the gaps that begin at or after a time: from the iteration at 65 ms on
    late = longest_pause(JOIN, 4, 5, 2, ROUND, since_ns=40 * MS)
    assert late.longest_gap_ms == 20.0 and late.at == 1 and late.longest_gap_rounds == 2.0
    with pytest.raises(ValueError, match="no iterations"):
        longest_pause(JOIN, 4, 5, 2, ROUND, since_ns=200 * MS)


def test_throughput_and_iteration_of_a_phase() -> None:
    before = between(JOIN, 0, 30 * MS)
    assert [r.wall_ns // MS for r in before] == [0, 10, 20, 30]
    assert throughput(before) == pytest.approx(3 * 40 / 0.030)  # (the first row's steps start the clock)
    assert median_gap_ms(before) == 10.0
    assert median_gap_ms(between(JOIN, 85 * MS, 200 * MS)) == 20.0
    with pytest.raises(ValueError, match="too few"):
        throughput(JOIN[:1])


def test_kind_rescale_reads_a_join_and_a_leave_off_the_timeline() -> None:
    """bench/kind_rescale.py's figures (its runs need the kind cluster): 2 members every
    100 ms; scaled to 4 at 1000 ms (the new ones in the rows from 1350 ms, after a 250 ms
    gap), back to 2 at 2000 ms (a 180 ms gap)."""
    from bench.kind_rescale import figures

    two, three, four = [0, 1], [0, 1, 2], [0, 1, 2, 3]
    spec = [(w, w // 100, two) for w in range(0, 1001, 100)] + [(1250, 13, two), (1350, 14, three)]
    spec += [(w, w // 100, four) for w in range(1400, 2001, 100)] + [(2180, 22, two), (2280, 23, two)]
    spec += [(w, w // 100, two) for w in range(2380, 3000, 100)]
    rows = _timeline(spec)
    t = {"t_apply": -5000 * MS, "t_tag": -1000 * MS, "t_join": 1000 * MS + 1, "t_admitted": 1300 * MS,
         "t_leave": 2000 * MS + 1, "t_left": 2100 * MS, "t_connected": 1200 * MS + 1}
    result = {"membership": [[0, 0, 2], [13, 0, 3], [14, 0, 4], [22, 0, 2]], "change_gaps_ms": [150.0, 100.0, 80.0]}
    f = figures(rows, result, window=5, settle_s=0.5, cpu={}, **t)
    assert f["joined"]["gap_ms"] == 100.0 and f["connected_s"] == pytest.approx(0.2)
    assert f["first_update_s"] == 5.0 and f["first_tag_s"] == 4.0
    assert f["new_width_s"] == pytest.approx(0.4) and f["admitted_s"] == pytest.approx(0.3)
    assert f["join"]["gap_ms"] == 250.0 and f["join"]["update_ms"] == 100.0 and f["join"]["pause_ms"] == 150.0
    assert f["leave"]["gap_ms"] == 180.0 and f["leave"]["pause_ms"] == 80.0
    assert f["change_gaps_ms"] == {"join": [150.0, 100.0], "leave": [80.0]}
