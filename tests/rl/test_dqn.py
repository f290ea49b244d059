"""The DQN learner: determinism, learning signal, weights transport, checkpoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from reactorfed.rl import (
    DQNConfig,
    DQNLearner,
    EnvRunner,
    EpsilonGreedy,
    flat_weights,
    linear_schedule,
    load_flat_weights,
    make_qnetwork,
)
from reactorfed.rl.learner import weights_digest

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
    from reactorfed.rl.dqn import td_loss, td_target

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
    from reactorfed.rl.dqn import td_loss, td_target

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
