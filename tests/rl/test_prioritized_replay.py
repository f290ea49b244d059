"""Prioritized replay against Schaul et al. 2016 on hand-computed cases: the sum tree's
sums after updates and overwrites, its prefix-sum search, the sampling probabilities
P(i) = p_i^alpha / sum_k p_k^alpha, stratified sampling, the importance-sampling weights
w_i = (N P(i))^-beta / max_j w_j and beta's annealing; and the sharded replay's split of
a batch and the probabilities its draws had (issue 20)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reactorfed.rl.plans.apex_trainer import draw_probabilities, split_batch
from reactorfed.rl.replay.prioritized import PrioritizedReplay, annealed_beta, importance_weights
from reactorfed.rl.replay.shard import ShardReply, pack_reply, unpack_reply
from reactorfed.rl.replay.sum_tree import SumTree

ROW = np.dtype([("x", np.float32), ("a", np.int64)])


def rows(*xs: float) -> np.ndarray:
    out = np.zeros(len(xs), dtype=ROW)
    out["x"] = xs
    out["a"] = np.arange(len(xs))
    return out


def test_the_sum_tree_holds_the_sums_of_its_leaves_after_updates() -> None:
    t = SumTree(5)  # padded to 8 leaves
    assert t.size == 8 and t.depth == 3
    t.update(np.arange(5), [1.0, 2.0, 3.0, 4.0, 5.0])
    n = t.nodes
    assert list(n[8:16]) == [1, 2, 3, 4, 5, 0, 0, 0]
    assert (n[4], n[5], n[6], n[7]) == (3, 7, 5, 0)
    assert (n[2], n[3], n[1]) == (10, 5, 15) and t.total == 15
    t.update(np.array([1]), [10.0])  # 2 -> 10
    assert (n[4], n[2], n[1]) == (11, 18, 23)
    t.update(np.array([4, 0, 4]), [0.5, 0.0, 2.5])  # a repeated index: its last value wins
    assert list(t.leaves()) == [0, 10, 3, 4, 2.5] and t.total == 19.5 and n[6] == 2.5


def test_the_sum_tree_refuses_bad_updates() -> None:
    t = SumTree(3)
    with pytest.raises(IndexError):
        t.update(np.array([3]), [1.0])
    with pytest.raises(ValueError, match=">= 0"):
        t.update(np.array([0]), [-1.0])
    with pytest.raises(ValueError, match="total mass is 0"):
        t.find(np.array([0.0]))


def test_the_sum_tree_finds_the_leaf_of_a_prefix_sum_and_never_an_empty_one() -> None:
    t = SumTree(5)
    t.update(np.arange(5), [1.0, 2.0, 3.0, 4.0, 5.0])
    # leaf j covers [sum(leaves[:j]), sum(leaves[:j + 1])): [0,1) [1,3) [3,6) [6,10) [10,15)
    found = t.find(np.array([0.0, 0.999, 1.0, 2.999, 3.0, 9.999, 10.0, 14.999]))
    assert list(found) == [0, 0, 1, 1, 2, 3, 4, 4]
    assert list(t.find(np.array([15.0, 99.0]))) == [4, 4]  # past the total: the last leaf with mass
    z = SumTree(4)
    z.update(np.arange(4), [1.0, 0.0, 2.0, 0.0])
    assert list(z.find(np.array([0.5, 1.0, 2.9, 3.0, 5.0]))) == [0, 2, 2, 2, 2]


def test_sampling_probabilities_are_priorities_to_the_alpha_over_their_sum() -> None:
    r = PrioritizedReplay(8, alpha=0.5, eps=1e-9)
    r.add(rows(0, 1, 2), np.array([1.0, 3.0, 0.0]))
    masses = r.tree.leaves(np.arange(3))
    assert masses == pytest.approx([1.0, math.sqrt(3.0), math.sqrt(1e-9)])
    probs = masses / r.total
    assert probs[:2] == pytest.approx([1 / (1 + math.sqrt(3)), math.sqrt(3) / (1 + math.sqrt(3))], abs=1e-4)
    # drawn in those proportions (a seeded generator: the same draws every run)
    ids, drawn_masses = r.sample(20_000, np.random.default_rng(0))
    freq = np.bincount(ids, minlength=3) / 20_000
    assert freq == pytest.approx(probs, abs=0.01)
    assert np.array_equal(drawn_masses, r.tree.leaves(ids))
    again, _ = r.sample(20_000, np.random.default_rng(0))
    assert np.array_equal(ids, again)


def test_stratified_sampling_takes_one_draw_in_each_segment() -> None:
    r = PrioritizedReplay(4, alpha=1.0, eps=1e-12)
    r.add(rows(0, 1, 2, 3), np.ones(4))
    for seed in range(5):  # segments [0,1) [1,2) [2,3) [3,4): one transition each
        assert list(r.sample(4, np.random.default_rng(seed))[0]) == [0, 1, 2, 3]
    r.update(np.arange(4), np.array([1.0, 3.0, 0.0, 0.0]))  # masses 1, 3, ~0, ~0
    for seed in range(5):  # segments of 1 over [0, 4): the first lies in 0's mass, the rest in 1's
        assert list(r.sample(4, np.random.default_rng(seed))[0]) == [0, 1, 1, 1]


def test_importance_weights_are_normalised_by_the_largest() -> None:
    p = np.array([0.1, 0.2, 0.3, 0.4])
    # beta 1: 1 / (N P(i)) = 2.5, 1.25, 0.833, 0.625, over 2.5
    assert importance_weights(p, 4, 1.0) == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    # beta 0.5: (0.4 P(i))^-0.5 over the largest = sqrt(0.1 / P(i))
    assert importance_weights(p, 4, 0.5) == pytest.approx([1.0, math.sqrt(0.5), math.sqrt(1 / 3), 0.5])
    assert importance_weights(p, 4, 0.0) == pytest.approx([1.0] * 4)  # no correction
    with pytest.raises(ValueError):
        importance_weights(np.array([0.5, 0.0]), 2, 1.0)


def test_beta_is_annealed_linearly_to_one() -> None:
    assert [annealed_beta(0.4, 100, t) for t in (0, 50, 100, 200)] == pytest.approx([0.4, 0.7, 1.0, 1.0])
    assert annealed_beta(0.4, 0, 0) == 1.0


def test_the_ring_overwrites_the_oldest_and_ignores_updates_for_what_it_overwrote() -> None:
    r = PrioritizedReplay(3, alpha=1.0, eps=1e-12)
    assert list(r.add(rows(0, 1), np.array([1.0, 2.0]))) == [0, 1]
    assert list(r.add(rows(2, 3, 4), np.array([3.0, 4.0, 5.0]))) == [2, 3, 4]
    # ids 3, 4 overwrote slots 0, 1: held are 2, 3, 4 in slots 2, 0, 1
    assert len(r) == 3 and r.added == 5
    assert r.tree.leaves() == pytest.approx([4.0, 5.0, 3.0]) and r.total == pytest.approx(12.0)
    assert list(r.get(np.array([2, 3, 4]))["x"]) == [2, 3, 4]
    assert list(r.held(np.array([0, 1, 2, 4, 5]))) == [False, False, True, True, False]
    r.update(np.array([0, 3, 1]), np.array([100.0, 7.0, 100.0]))  # 0 and 1 are gone: ignored
    assert r.stale_updates == 2
    assert r.tree.leaves() == pytest.approx([7.0, 5.0, 3.0]) and r.total == pytest.approx(15.0)
    # sampled ids are the transitions now in the slots
    ids, _ = r.sample(300, np.random.default_rng(1))
    assert set(ids.tolist()) == {2, 3, 4}
    # more rows than the capacity at once: the last ones stay
    assert list(r.add(rows(5, 6, 7, 8), np.ones(4))) == [6, 7, 8]
    assert sorted(r.get(np.array([6, 7, 8]))["x"].tolist()) == [6, 7, 8] and r.added == 9


def test_one_buffer_gives_weighted_batches() -> None:
    r = PrioritizedReplay(4, alpha=1.0, eps=1e-12)
    r.add(rows(0, 1, 2, 3), np.array([1.0, 2.0, 3.0, 4.0]))
    batch, ids, w = r.sample_weighted(4, np.random.default_rng(0), beta=1.0)
    # one value in each quarter of [0, 10), from the generator's first 4 uniforms; the
    # transition whose prefix-sum interval holds it ([0,1) [1,3) [3,6) [6,10))
    values = (np.arange(4) + np.random.default_rng(0).random(4)) * 2.5
    assert list(ids) == list(np.searchsorted([1.0, 3.0, 6.0, 10.0], values, side="right"))
    assert list(batch["x"]) == list(ids)
    p = np.array([1.0, 2.0, 3.0, 4.0])[ids] / 10
    assert w == pytest.approx((4 * p) ** -1.0 / ((4 * p) ** -1.0).max())


def test_a_batch_is_split_over_the_shards_by_their_priority_mass() -> None:
    assert list(split_batch(64, np.array([1.0, 1.0]))) == [32, 32]
    assert list(split_batch(64, np.array([1.0, 2.0]))) == [21, 43]  # 21.33, 42.67: the larger remainder
    assert list(split_batch(64, np.array([1.0, 1.0, 1.0]))) == [22, 21, 21]  # a tie: the lower shard
    assert list(split_batch(64, np.array([0.0, 5.0]))) == [0, 64]
    assert list(split_batch(64, np.zeros(2))) == [0, 0]


def test_each_draw_is_weighed_by_the_probability_it_was_drawn_with() -> None:
    # shard 0 drew 1 of the 4 (mass 1 of its 4), shard 1 drew 3 (masses 1, 1, 0.5 of its 2)
    row = np.zeros(0, dtype=ROW)
    replies = [ShardReply(10, 4.0, np.array([7]), np.array([1.0]), row),
               ShardReply(5, 2.0, np.array([1, 1, 3]), np.array([1.0, 1.0, 0.5]), row)]
    assert draw_probabilities(replies) == pytest.approx([1 / 4 * 1 / 4, 3 / 4 * 1 / 2, 3 / 4 * 1 / 2, 3 / 4 * 1 / 4])
    assert len(draw_probabilities([ShardReply(0, 0.0, np.zeros(0, np.int64), np.zeros(0), row)])) == 0


def test_a_shards_reply_carries_its_count_and_mass_and_its_draws() -> None:
    data = rows(5, 6)
    rec = pack_reply(12, 3.5, np.array([40, 41]), np.array([0.25, 0.5]), data)
    back = unpack_reply(rec)
    assert (back.held, back.total) == (12, 3.5)
    assert list(back.ids) == [40, 41] and list(back.masses) == [0.25, 0.5]
    assert list(back.rows["x"]) == [5, 6] and list(back.rows["a"]) == [0, 1]
    empty = unpack_reply(pack_reply(0, 0.0, np.zeros(0, np.int64), np.zeros(0), None))
    assert (empty.held, empty.total, len(empty.ids)) == (0, 0.0, 0)
