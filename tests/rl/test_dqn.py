"""The DQN learner: determinism, learning signal, weights transport, checkpoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from reactorfed.rl import DQNConfig, DQNLearner, EnvRunner
from reactorfed.rl.algos.dqn import EpsilonGreedy, linear_schedule, make_qnetwork
from reactorfed.rl.algos.network import flat_weights, load_flat_weights
from reactorfed.rl.plans.qlearning import weights_digest

SMALL = DQNConfig(learning_starts=100, batch_size=32, target_update_interval=5)


def _train(seed: int, iterations: int = 6) -> DQNLearner:
    learner = DQNLearner(4, 2, SMALL, seed=seed, device=torch.device("cpu"))
    runner = EnvRunner("CartPole-v1", seed=seed, keep_next_obs=True)
    policy = EpsilonGreedy(4, 2, seed=seed + 1)
    for _ in range(iterations):
        policy.load_payload(learner.payload())
        learner.observe(runner.rollout(50, policy))
        learner.update(4)
    return learner


def test_same_seed_same_weights_different_seed_different() -> None:
    a, b, c = _train(0), _train(0), _train(1)
    assert a.updates > 0
    assert weights_digest(a) == weights_digest(b)
    assert weights_digest(a) != weights_digest(c)


def test_update_changes_weights_and_target_syncs() -> None:
    learner = _train(0, iterations=1)
    before = flat_weights(learner.q)
    learner.observe(EnvRunner("CartPole-v1", seed=9, keep_next_obs=True).rollout(200))
    learner.update(5)
    assert not np.array_equal(before, flat_weights(learner.q))
    assert learner.updates % SMALL.target_update_interval == 0
    np.testing.assert_array_equal(flat_weights(learner.q), flat_weights(learner.target))


def test_payload_round_trip_and_epsilon() -> None:
    learner = _train(0, iterations=2)
    policy = EpsilonGreedy(4, 2, seed=0)
    policy.load_payload(learner.payload())
    np.testing.assert_array_equal(flat_weights(policy.q), flat_weights(learner.q))
    assert policy.epsilon == np.float32(learner.epsilon)
    net = make_qnetwork(4, 2, SMALL.hidden, seed=123)
    load_flat_weights(net, flat_weights(learner.q))
    np.testing.assert_array_equal(flat_weights(net), flat_weights(learner.q))


def test_linear_schedule() -> None:
    assert linear_schedule(1.0, 0.1, 10, 0) == 1.0
    assert abs(linear_schedule(1.0, 0.1, 10, 5) - 0.55) < 1e-12
    assert linear_schedule(1.0, 0.1, 10, 50) == 0.1


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    learner = _train(0)
    path = learner.save(tmp_path / "ckpt" / "dqn.pt")
    restored = DQNLearner.load(path, device=torch.device("cpu"))
    assert weights_digest(restored) == weights_digest(learner)
    assert (restored.updates, restored.env_steps) == (learner.updates, learner.env_steps)
    assert restored.config == learner.config


def test_loaded_weights_do_not_alias_an_unaligned_buffer() -> None:
    """Weights received from a federate sit in a frame at any offset: loading must copy
    them into the network's own (aligned) storage, or CPU kernels may round differently."""
    learner = _train(0, iterations=2)
    vec = flat_weights(learner.q)
    raw = bytearray(vec.nbytes + 4)
    unaligned = np.frombuffer(memoryview(raw)[4:], dtype=np.float32)
    unaligned[:] = vec
    net = make_qnetwork(4, 2, SMALL.hidden, seed=9)
    load_flat_weights(net, unaligned)
    np.testing.assert_array_equal(flat_weights(net), vec)
    unaligned[:] = 0.0
    np.testing.assert_array_equal(flat_weights(net), vec)
    assert all(p.data_ptr() % 16 == 0 for p in net.parameters())


def test_td_target_and_loss_match_hand_computed_values() -> None:
    """r + gamma * max_a' Q_target(s', a'), no bootstrap past a terminal step, and the
    mean squared error of the actions taken, against numbers worked out by hand."""
    from reactorfed.rl.algos.dqn.learner import td_loss, td_target

    rewards = torch.tensor([1.0, 0.5, -1.0])
    dones = torch.tensor([0.0, 1.0, 0.0])
    next_q = torch.tensor([[0.2, 0.8], [3.0, -1.0], [-0.5, -0.25]])
    target = td_target(rewards, dones, next_q, gamma=0.9)
    # 1 + 0.9 * 0.8; 0.5 (terminal: no bootstrap); -1 + 0.9 * -0.25
    assert torch.allclose(target, torch.tensor([1.72, 0.5, -1.225]))
    q = torch.tensor([[1.5, 9.0], [7.0, 0.0], [-1.0, 4.0]])
    actions = torch.tensor([0, 1, 0])  # taken: 1.5, 0.0, -1.0
    loss = td_loss(q, actions, target)
    # errors -0.22, -0.5, 0.225: (0.0484 + 0.25 + 0.050625) / 3
    assert loss.item() == pytest.approx(0.349025 / 3, rel=1e-6)


def test_update_minimises_the_td_loss_of_its_sampled_batch() -> None:
    """One update's reported loss is td_loss of the batch the learner's own generator
    draws, computed with the networks as they were before the step."""
    from reactorfed.rl.algos.dqn.learner import td_loss, td_target

    cfg = DQNConfig(batch_size=8, learning_starts=0, buffer_size=100, hidden=(8,))
    learner = DQNLearner(4, 2, cfg, seed=3, device=torch.device("cpu"))
    learner.observe(EnvRunner("CartPole-v1", seed=1, keep_next_obs=True).rollout(20))
    replay = np.random.default_rng(3)  # the learner's generator, same seed
    b = learner.buffer.sample(8, replay)
    with torch.no_grad():
        target = td_target(torch.from_numpy(b.rewards), torch.from_numpy(b.dones), learner.target(torch.from_numpy(b.next_obs)),
                           cfg.gamma)
        expected = td_loss(learner.q(torch.from_numpy(b.obs)), torch.from_numpy(b.actions), target).item()
    assert learner.update(1) == pytest.approx(expected, rel=1e-6)


def test_one_update_of_a_fixed_linear_network_matches_the_hand_computed_td_step() -> None:
    """Through the learner's own update (replay buffer, target network, loss, Adam): a
    linear Q-network with fixed weights, three transitions worked out by hand. The
    target bootstraps from the *target* network, not past a terminal step, and past a
    truncated one (a time limit is no terminal state); the loss is the mean squared
    TD error; Adam's first step moves every weight by the learning rate against its
    gradient's sign."""
    from reactorfed.rl.envs.runner import Fragment

    cfg = DQNConfig(hidden=(), batch_size=3, learning_starts=0, buffer_size=3, gamma=0.5,
                    target_update_interval=1000, learning_rate=0.01, max_grad_norm=1e9)
    learner = DQNLearner(2, 2, cfg, seed=12, device=torch.device("cpu"))
    with torch.no_grad():
        learner.q.net[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))  # Q(s) = s
        learner.q.net[0].bias.zero_()
        learner.target.net[0].weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 2.0]]))  # Q_t(s) = (s0 + s1 + 0.5, 2 s1)
        learner.target.net[0].bias.copy_(torch.tensor([0.5, 0.0]))
    obs = np.array([[1, 2], [0, 1], [2, -1]], dtype=np.float32)
    next_obs = np.array([[1, 0], [3, 3], [0, 1]], dtype=np.float32)
    learner.observe(Fragment(
        obs=obs,
        actions=np.array([0, 1, 1]),
        rewards=np.array([1.0, 2.0, -1.0], dtype=np.float32),
        terminated=np.array([False, True, False]),
        truncated=np.array([False, False, True]),  # the third step hit a time limit
        next_obs=next_obs,
    ))
    # 1: Q(s, 0) = 1;  Q_t(s') = (1.5, 0):  y = 1 + 0.5 * 1.5 = 1.75; error 1 - 1.75 = -0.75
    # 2: Q(s, 1) = 1;  terminal:            y = 2 (Q_t(s') = (6.5, 6) is not used); error -1
    # 3: Q(s, 1) = -1; Q_t(s') = (1.5, 2):  y = -1 + 0.5 * 2 = 0; error -1
    errors = np.array([-0.75, -1.0, -1.0])
    idx = np.random.default_rng(12).integers(0, 3, size=3)  # the batch the learner's generator draws
    assert sorted(idx) == [0, 1, 2]  # (seed 12: each transition once)
    assert learner.update(1) == pytest.approx(float(np.mean(errors[idx] ** 2)), rel=1e-6)
    # d loss / d W[a] = 2/B * sum of error * s over the batch's steps that took action a
    taken = np.array([0, 1, 1])[idx]
    grad_w = np.zeros((2, 2))
    grad_b = np.zeros(2)
    for e, s, a in zip(errors[idx], obs[idx], taken, strict=True):
        grad_w[a] += 2 / 3 * e * s
        grad_b[a] += 2 / 3 * e
    w = learner.q.net[0].weight.detach().numpy()
    b = learner.q.net[0].bias.detach().numpy()
    np.testing.assert_allclose(w, np.eye(2) - 0.01 * np.sign(grad_w), atol=1e-6)
    np.testing.assert_allclose(b, -0.01 * np.sign(grad_b), atol=1e-6)
    # the target network did not move
    np.testing.assert_array_equal(learner.target.net[0].weight.detach().numpy(), [[1.0, 1.0], [0.0, 2.0]])
