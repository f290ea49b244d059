"""On-policy rollouts of vector environments: next-step autoreset rows, episode returns,
the packed wire format, and the numpy actor against its torch twin."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reactorfed.rl import PolicyRunner
from reactorfed.rl.algos import MLPActor
from reactorfed.rl.algos.ppo.actor_critic import ActorCritic
from reactorfed.rl.rollout import pack_rollout, unpack_rollout


class Always:
    """Pushes every cart to the right: CartPole episodes end fast (about 10 steps)."""

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(len(obs), dtype=np.int64), np.zeros(len(obs), dtype=np.float32)


def test_rollout_rows_resets_and_returns() -> None:
    runner = PolicyRunner("CartPole-v1", num_envs=3, seed=4)
    ro = runner.rollout(40, Always())
    assert ro.obs.shape == (41, 3, 4) and ro.actions.shape == (40, 3) and len(ro) == 40
    ends = ro.terminated | ro.truncated
    assert ro.terminated.any() and not ro.truncated.any()
    # the row after an episode's end is its reset: no transition, reward 0, and its
    # observation is the final observation the ending step produced
    np.testing.assert_array_equal(ro.resets[1:], ends[:-1])
    assert not ro.resets[0].any() and (ro.rewards[ro.resets] == 0).all()
    assert ro.transitions == 40 * 3 - int(ro.resets.sum())
    # each copy's episode returns: its rewards summed between ends (every episode here started in it)
    for j in range(3):
        cut = np.flatnonzero(ends[:, j])
        sums = [float(ro.rewards[a + 1 if i else 0 : b + 1, j].sum()) for i, (a, b) in enumerate(zip([-1, *cut[:-1]], cut, strict=True))]
        got = [ro.episode_returns[i] for i, (_, c) in enumerate(zip(*np.nonzero(ends), strict=True)) if c == j]
        assert got == sums and all(s >= 8 for s in sums)
    # the next fragment starts where this one ended
    nxt = runner.rollout(5, Always())
    np.testing.assert_array_equal(nxt.obs[0], ro.obs[40])
    np.testing.assert_array_equal(nxt.resets[0], ends[39])


def test_pack_unpack_round_trip() -> None:
    ro = PolicyRunner("CartPole-v1", num_envs=2, seed=1).rollout(30, Always())
    rec = pack_rollout(ro)
    assert rec.shape == (31, 2) and rec["reset"][30].all()
    back = unpack_rollout(np.frombuffer(rec.tobytes(), dtype=rec.dtype).reshape(rec.shape))  # as received
    for name in ("obs", "actions", "logp", "rewards", "terminated", "truncated", "resets"):
        np.testing.assert_array_equal(getattr(back, name), getattr(ro, name))
        assert getattr(back, name).flags.writeable
    assert back.episode_returns == ro.episode_returns and len(ro.episode_returns) > 0


def test_numpy_actor_computes_the_torch_actor() -> None:
    model = ActorCritic(4, 2, (64, 64), seed=3)
    with torch.no_grad():  # away from the near-uniform initial output layer
        model.actor[-1].weight.mul_(100.0)
    actor = MLPActor(4, 2, (64, 64), seed=0)
    payload = model.actor_payload()
    unaligned = np.frombuffer(b"\0" + payload.tobytes(), dtype=np.float32, offset=1)  # as a frame may hold it
    actor.load(unaligned)
    obs = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    with torch.no_grad():
        expected = model.actor(torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(actor.logits(obs), expected, rtol=1e-5, atol=1e-5)
    _, logp = actor.act(obs)
    assert (logp <= 0).all()
    with pytest.raises(ValueError, match="expected"):
        actor.load(payload[:-1])


def test_numpy_actor_samples_by_its_probabilities_and_its_seed() -> None:
    actor = MLPActor(1, 3, (), seed=5)
    # one linear layer: logits = W x + b with W = 0, b = log(0.2, 0.3, 0.5)
    actor.load(np.concatenate([np.zeros(3), np.log([0.2, 0.3, 0.5])]).astype(np.float32))
    obs = np.zeros((20_000, 1), dtype=np.float32)
    actions, logp = actor.act(obs)
    freq = np.bincount(actions, minlength=3) / len(actions)
    np.testing.assert_allclose(freq, [0.2, 0.3, 0.5], atol=0.015)
    np.testing.assert_allclose(logp, np.log([0.2, 0.3, 0.5])[actions], rtol=1e-5)
    again = MLPActor(1, 3, (), seed=5)
    again.load(np.concatenate([np.zeros(3), np.log([0.2, 0.3, 0.5])]).astype(np.float32))
    np.testing.assert_array_equal(again.act(obs)[0], actions)


class Alternate:
    """Left, right, left...: a fixed policy whose episodes depend only on the environments."""

    def __init__(self) -> None:
        self.t = 0

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.t += 1
        return np.full(len(obs), self.t % 2, dtype=np.int64), np.zeros(len(obs), dtype=np.float32)


@pytest.mark.parametrize("env", ["CartPole-v1", "Acrobot-v1", "MinAtar/Breakout-v1"])
def test_a_runner_restored_from_its_state_carries_on_alike(env: str) -> None:
    """A sampler's state (:meth:`PolicyRunner.state`, pickled as a checkpoint carries it)
    restored into a fresh runner gives the fragments the first one goes on to give: the
    environments, the episodes under way, the copies about to reset (Acrobot's and MinAtar's
    vector environments pickle too)."""
    import pickle

    first = PolicyRunner(env, num_envs=2, seed=4)
    first.rollout(30, Alternate())
    state = pickle.loads(pickle.dumps(first.state()))
    second = PolicyRunner(env, num_envs=2, seed=99)  # (other environments, replaced)
    second.restore(state)
    a, b = first.rollout(60, Alternate()), second.rollout(60, Alternate())
    for field in ("obs", "rewards", "terminated", "truncated", "resets"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.episode_returns == b.episode_returns and first.steps == second.steps
