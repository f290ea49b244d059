"""Ape-X DQN's pieces on hand-computed cases (issue 20): the n-step returns a sampler
builds (across fragments, at terminations and truncations), the double-Q target, the
importance-weighted loss and the new priorities, Ape-X's per-actor epsilons, and the numpy
actor that computes what the learner's torch network computes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from reactorfed.rl.algos.apex.config import ApexDQNConfig
from reactorfed.rl.algos.apex.learner import ApexDQNLearner, double_q_target, weighted_td_loss
from reactorfed.rl.algos.apex.q_actor import QActor, apex_epsilons
from reactorfed.rl.contracts import SpaceInfo
from reactorfed.rl.replay.contracts import ReplayBatch
from reactorfed.rl.replay.nstep import NStepBuilder, transition_dtype
from reactorfed.rl.rollout import PolicyRunner, Rollout


def rollout(rewards: list[float], obs0: float = 0.0, terminated: int | None = None, truncated: int | None = None,
            resets: tuple[int, ...] = ()) -> Rollout:
    """One copy, ``len(rewards)`` rows; observation ``t`` is ``[obs0 + t]``; the episode
    ends at row ``terminated`` or ``truncated``."""
    T = len(rewards)
    flag = np.zeros((T, 1), dtype=np.bool_)
    term, trunc, rst = flag.copy(), flag.copy(), flag.copy()
    if terminated is not None:
        term[terminated] = True
    if truncated is not None:
        trunc[truncated] = True
    for i in resets:
        rst[i] = True
    obs = (obs0 + np.arange(T + 1, dtype=np.float32)).reshape(T + 1, 1, 1)
    return Rollout(obs, np.arange(T, dtype=np.int64).reshape(T, 1) % 2, np.zeros((T, 1), np.float32),
                   np.array(rewards, dtype=np.float32).reshape(T, 1), term, trunc, rst)


def test_n_step_returns_and_their_discounts() -> None:
    b = NStepBuilder(1, n=3, gamma=0.5)
    t = b.add(rollout([1, 2, 3, 4, 5]))
    # R_t = r_t + 0.5 r_{t+1} + 0.25 r_{t+2}; bootstrap from s_{t+3} with 0.5^3
    assert list(t["ret"]) == [2.75, 4.5, 6.25]
    assert list(t["discount"]) == [0.125] * 3
    assert list(t["obs"][:, 0]) == [0, 1, 2] and list(t["next_obs"][:, 0]) == [3, 4, 5]
    assert list(t["action"]) == [0, 1, 0]
    assert len(b.pending[0]) == 2  # steps 3 and 4 wait for the next fragment


def test_a_fragments_last_steps_complete_in_the_next() -> None:
    whole = NStepBuilder(1, n=3, gamma=0.9).add(rollout([1, 2, 3, 4, 5, 6, 7]))
    b = NStepBuilder(1, n=3, gamma=0.9)
    split = np.concatenate([b.add(rollout([1, 2, 3])), b.add(rollout([4, 5, 6, 7], obs0=3.0))])
    for name in ("obs", "next_obs", "ret", "discount"):
        assert np.array_equal(whole[name], split[name]), name


def test_a_termination_ends_every_pending_return_without_bootstrap() -> None:
    # rewards 1, 2, 3 and the episode terminates at row 2; row 3 is the automatic reset
    t = NStepBuilder(1, n=3, gamma=0.5).add(rollout([1, 2, 3, 0, 10], terminated=2, resets=(3,)))
    assert list(t["ret"][:3]) == [1 + 1 + 0.75, 2 + 1.5, 3]
    assert list(t["discount"][:3]) == [0, 0, 0]
    assert len(t) == 3  # the reset row is no step; row 4 (reward 10) waits


def test_a_truncation_bootstraps_from_the_final_observation() -> None:
    t = NStepBuilder(1, n=3, gamma=0.5).add(rollout([1, 2, 3, 0], truncated=2, resets=(3,)))
    assert list(t["ret"]) == [2.75, 3.5, 3]
    assert list(t["discount"]) == [0.125, 0.25, 0.5]
    assert list(t["next_obs"][:, 0]) == [3, 3, 3]  # the observation the step of row 2 ended in


def test_one_step_is_plain_q_learning() -> None:
    t = NStepBuilder(1, n=1, gamma=0.99).add(rollout([1, 2]))
    assert list(t["ret"]) == [1, 2] and list(t["discount"]) == pytest.approx([0.99, 0.99])
    assert list(t["next_obs"][:, 0]) == [1, 2]


def test_every_step_of_real_environments_becomes_one_transition() -> None:
    runner = PolicyRunner("CartPole-v1", 3, seed=4)
    actor = QActor(4, 2, (8,), seed=1, epsilons=1.0)  # uniform random actions
    b = NStepBuilder(3, n=3, gamma=0.99)
    steps = emitted = 0
    for _ in range(6):
        r = runner.rollout(20, actor)
        steps += r.transitions
        t = b.add(r)
        emitted += len(t)
        assert t.dtype == transition_dtype((4,), np.float32)
        assert np.all((t["discount"] == 0) | np.isclose(t["discount"], 0.99**3) | (t["discount"] > 0.99**3))
    assert emitted + sum(len(p) for p in b.pending) == steps
    assert all(len(p) < 3 for p in b.pending)


def test_the_double_q_target_takes_the_online_action_and_the_target_value() -> None:
    online = torch.tensor([[1.0, 2.0], [3.0, 0.0]])  # picks actions 1, 0
    target = torch.tensor([[10.0, 20.0], [30.0, 40.0]])  # values them 20, 30
    y = double_q_target(torch.tensor([1.0, 1.0]), torch.tensor([0.5, 0.0]), online, target)
    assert y.tolist() == [11.0, 1.0]  # 1 + 0.5 * 20; terminated: no bootstrap


def test_the_loss_weighs_each_transition_by_its_importance_weight() -> None:
    q, y, w = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]), torch.tensor([1.0, 0.5])
    mse, td = weighted_td_loss(q, y, w, None)
    assert mse.item() == pytest.approx((1 * 1 + 0.5 * 9) / 2) and td.tolist() == [1.0, 3.0]
    huber, _ = weighted_td_loss(q, y, w, 1.0)  # 0.5 * 1^2 and 3 - 0.5
    assert huber.item() == pytest.approx((0.5 + 0.5 * 2.5) / 2)


def _batch(n: int, seed: int) -> ReplayBatch:
    rng = np.random.default_rng(seed)
    return ReplayBatch(rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, 2, n),
                       rng.normal(size=n).astype(np.float32), rng.normal(size=(n, 4)).astype(np.float32),
                       np.where(rng.random(n) < 0.2, 0.0, 0.99**3).astype(np.float32),
                       rng.random(n).astype(np.float32))


def test_the_learners_priorities_are_its_td_errors_before_the_step() -> None:
    cfg = ApexDQNConfig(hidden=(16,), target_update_interval=2, learning_rate=1e-2)
    learner = ApexDQNLearner(SpaceInfo((4,), 2), cfg, seed=3)
    b = _batch(32, 0)
    with torch.no_grad():
        obs, nxt = torch.from_numpy(b.obs), torch.from_numpy(b.next_obs)
        y = double_q_target(torch.from_numpy(b.returns), torch.from_numpy(b.discounts), learner.q(nxt),
                            learner.target(nxt))
        q = learner.q(obs).gather(1, torch.from_numpy(b.actions).unsqueeze(1)).squeeze(1)
        expected_loss = (torch.from_numpy(b.weights) * torch.nn.functional.huber_loss(q, y, reduction="none")).mean()
    stats, prio = learner.learn(b)
    assert prio == pytest.approx((q - y).abs().numpy(), rel=1e-5, abs=1e-6)
    assert stats["loss"] == pytest.approx(expected_loss.item(), rel=1e-5)
    # the target network follows the online one every target_update_interval updates only
    assert not torch.equal(learner.q.net[0].weight, learner.target.net[0].weight)
    learner.learn(b)
    assert torch.equal(learner.q.net[0].weight, learner.target.net[0].weight)


def test_a_seed_and_the_same_batches_give_the_same_weights() -> None:
    a, b = (ApexDQNLearner(SpaceInfo((4,), 2), ApexDQNConfig(hidden=(16,)), seed=5) for _ in range(2))
    for i in range(5):
        a.learn(_batch(16, i))
        b.learn(_batch(16, i))
    assert a.digest() == b.digest()
    c = ApexDQNLearner(SpaceInfo((4,), 2), ApexDQNConfig(hidden=(16,)), seed=6)
    assert c.digest() != a.digest()


def test_ape_x_epsilons() -> None:
    assert apex_epsilons([0, 1], 2) == pytest.approx([0.4, 0.4**8])
    assert apex_epsilons(range(8), 8) == pytest.approx([0.4 ** (1 + i) for i in range(8)])  # alpha 7: 1 + i
    assert apex_epsilons([0], 1) == pytest.approx([0.4])
    with pytest.raises(ValueError):
        apex_epsilons([2], 2)
    actor = ApexDQNConfig().make_actor(SpaceInfo((4,), 2), seed=0, actors=range(4, 8), num_actors=8)
    assert actor.epsilons == pytest.approx([0.4 ** (1 + i) for i in range(4, 8)])


def test_the_numpy_actor_computes_the_learners_q_values_and_its_priorities() -> None:
    learner = ApexDQNLearner(SpaceInfo((4,), 2), ApexDQNConfig(hidden=(32, 16)), seed=2)
    actor = QActor(4, 2, (32, 16), seed=0, epsilons=0.0)
    actor.load(learner.payload())
    obs = np.random.default_rng(1).normal(size=(10, 4)).astype(np.float32)
    with torch.no_grad():
        expected = learner.q(torch.from_numpy(obs)).numpy()
    assert actor.q_values(obs) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    actions, logp = actor.act(obs)  # epsilon 0: greedy, probability 1
    assert list(actions) == list(expected.argmax(axis=1)) and np.all(logp == 0)
    # a linear Q (no hidden layer): Q(s) = W s + b with W = [[1, 0], [0, 2]], b = [0, 1]
    lin = QActor(2, 2, (), seed=0, epsilons=0.0)
    lin.load(np.array([1, 0, 0, 2, 0, 1], dtype=np.float32))
    t = np.zeros(2, dtype=transition_dtype((2,), np.float32))
    t["obs"] = [[1.0, 1.0], [2.0, 0.0]]  # Q = [1, 3], [2, 1]
    t["action"] = [0, 1]
    t["next_obs"] = [[0.0, 1.0], [5.0, 5.0]]  # max Q = 3, 11
    t["ret"] = [0.5, 1.0]
    t["discount"] = [0.5, 0.0]
    assert list(lin.priorities(t)) == [abs(0.5 + 0.5 * 3 - 1), abs(1.0 - 1)]


def test_exploring_copies_draw_uniform_actions_with_their_log_probabilities() -> None:
    actor = QActor(4, 2, (), seed=0, epsilons=np.array([1.0, 0.0]))
    actor.load(np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1], dtype=np.float32))  # Q = [0, 1]: greedy 1
    obs = np.zeros((2, 4), np.float32)
    draws = np.array([actor.act(obs)[0] for _ in range(400)])
    assert np.all(draws[:, 1] == 1)  # epsilon 0
    assert 0.4 < draws[:, 0].mean() < 0.6  # epsilon 1: uniform
    _, logp = actor.act(obs)
    assert logp[0] == pytest.approx(math.log(0.5)) and logp[1] == 0
