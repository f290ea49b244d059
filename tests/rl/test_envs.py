"""Environments, fragments and the replay buffer: shapes, seeding, round trips."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reactorfed.rl import EnvRunner, VectorEnvRunner, make_mpe
from reactorfed.rl.envs import env_id, pack_fragment, unpack_fragment
from reactorfed.rl.replay import ReplayBuffer


def test_env_id_maps_atari_short_names() -> None:
    assert env_id("Pong") == "ALE/Pong-v5"
    assert env_id("CartPole-v1") == "CartPole-v1"
    assert env_id("ALE/Pong-v5") == "ALE/Pong-v5"


@pytest.mark.parametrize(
    ("name", "shape", "dtype"),
    [("CartPole-v1", (4,), np.float32), ("Blackjack-v1", (3,), np.int64), ("Pendulum-v1", (3,), np.float32)],
)
def test_rollout_shapes_and_seeding(name: str, shape: tuple[int, ...], dtype: type) -> None:
    a = EnvRunner(name, seed=3, keep_next_obs=True)
    b = EnvRunner(name, seed=3, keep_next_obs=True)
    fa, fb = a.rollout(300), b.rollout(300)
    assert fa.obs.shape == (300, *shape) and fa.obs.dtype == dtype
    assert fa.next_obs is not None and fb.next_obs is not None
    for x, y in [(fa.obs, fb.obs), (fa.next_obs, fb.next_obs), (fa.actions, fb.actions), (fa.rewards, fb.rewards)]:
        np.testing.assert_array_equal(x, y)
    assert fa.episode_returns == fb.episode_returns
    c = EnvRunner(name, seed=4).rollout(300)
    assert not np.array_equal(fa.obs, c.obs) or not np.array_equal(fa.actions, c.actions)


def test_rollout_resets_and_counts_episodes() -> None:
    r = EnvRunner("CartPole-v1", seed=0, keep_next_obs=True)
    f = r.rollout(500)
    ends = np.flatnonzero(f.terminated | f.truncated)
    assert len(ends) == len(f.episode_returns) > 0
    # CartPole pays 1 per step: an episode's return is its length
    lengths = np.diff(np.concatenate([[-1], ends]))
    np.testing.assert_array_equal(lengths, np.asarray(f.episode_returns))
    # after a reset the next observation is the new episode's first, not the terminal one
    assert not np.array_equal(f.obs[ends[0] + 1], f.next_obs[ends[0]])
    np.testing.assert_array_equal(f.obs[1 : ends[0] + 1], f.next_obs[: ends[0]])


_FIELDS = [("obs", "obs"), ("actions", "action"), ("rewards", "reward"), ("terminated", "terminated"),
           ("truncated", "truncated")]


@pytest.mark.parametrize("name", ["CartPole-v1", "Blackjack-v1", "Pendulum-v1"])
def test_record_is_the_rollout_whole_in_one_array(name: str) -> None:
    """What samplers send (EnvRunner.record): the same steps as rollout, every field, in
    one structured array no bigger than the fragment's arrays with its returns."""
    a, b = EnvRunner(name, seed=3), EnvRunner(name, seed=3)
    frag, rec = a.rollout(300), b.record(300)
    assert rec.shape == (300,) and rec.dtype == b.record_dtype and rec["obs"].dtype == frag.obs.dtype
    for f, g in _FIELDS:
        np.testing.assert_array_equal(rec[g], getattr(frag, f))
    ends = np.flatnonzero(rec["terminated"] | rec["truncated"])
    assert len(ends) == len(frag.episode_returns) > 0
    np.testing.assert_array_equal(rec["episode_return"][ends], np.float32(frag.episode_returns))
    assert rec["episode_return"].sum() == pytest.approx(sum(frag.episode_returns), rel=1e-5)
    parts = sum(getattr(frag, f).nbytes for f, _ in _FIELDS) + 4 * len(frag)  # + a float32 return per step
    assert rec.nbytes == parts
    assert (a.steps, a.episodes) == (b.steps, b.episodes) and np.array_equal(a.obs, b.obs)


@pytest.mark.parametrize("name", ["CartPole-v1", "Blackjack-v1"])
def test_vector_record_is_the_vector_rollout_whole(name: str) -> None:
    a, b = VectorEnvRunner(name, 3, seed=3), VectorEnvRunner(name, 3, seed=3)
    frag, rec = a.rollout(100), b.record(100)
    assert rec.shape == (100, 3) and rec.size == frag.env_steps
    for f, g in [*_FIELDS, ("resets", "reset")]:
        np.testing.assert_array_equal(rec[g], getattr(frag, f))
    rows, cols = np.nonzero(rec["terminated"] | rec["truncated"])  # by row, then by copy
    np.testing.assert_allclose(rec["episode_return"][rows, cols], frag.episode_returns)


def test_step_pattern_matches_rollout() -> None:
    a, b = EnvRunner("CartPole-v1", seed=5), EnvRunner("CartPole-v1", seed=5)
    frag = a.rollout(50)
    stepped = []
    for _ in range(50):
        stepped.append(b.obs)
        b.step()
    np.testing.assert_array_equal(frag.obs, np.stack(stepped))


def test_pack_unpack_round_trip() -> None:
    f = EnvRunner("CartPole-v1", seed=1, keep_next_obs=True).rollout(200)
    packed = pack_fragment(f)
    assert packed.dtype == np.float32 and packed.ndim == 2
    g = unpack_fragment(packed)
    np.testing.assert_array_equal(g.obs, f.obs)
    np.testing.assert_array_equal(g.next_obs, f.next_obs)
    np.testing.assert_array_equal(g.actions, f.actions)
    np.testing.assert_array_equal(g.terminated, f.terminated)
    assert g.episode_returns == f.episode_returns


def test_replay_buffer_wraps_and_samples_deterministically() -> None:
    buf = ReplayBuffer(10, (2,))
    obs = np.arange(30, dtype=np.float32).reshape(15, 2)
    buf.add(obs[:8], np.arange(8), np.ones(8), obs[:8] + 1, np.zeros(8))
    buf.add(obs[8:], np.arange(8, 15), np.ones(7), obs[8:] + 1, np.zeros(7))
    assert len(buf) == 10
    assert set(buf.actions.tolist()) == set(range(5, 15))  # the 5 oldest were overwritten
    s1 = buf.sample(32, np.random.default_rng(0))
    s2 = buf.sample(32, np.random.default_rng(0))
    np.testing.assert_array_equal(s1.obs, s2.obs)
    np.testing.assert_array_equal(s1.next_obs, s1.obs + 1)
    with pytest.raises(ValueError):
        ReplayBuffer(4, (2,)).sample(1, np.random.default_rng(0))


def test_mpe_simple_spread() -> None:
    env = make_mpe(4)
    obs, _ = env.reset(seed=0)
    assert sorted(obs) == [f"agent_{i}" for i in range(4)]
    assert all(o.shape == obs["agent_0"].shape for o in obs.values())


@pytest.mark.atari
def test_atari_frames_and_seeding() -> None:
    a, b = EnvRunner("Pong", seed=7), EnvRunner("Pong", seed=7)
    fa, fb = a.rollout(60), b.rollout(60)
    assert fa.obs.shape == (60, 210, 160, 3) and fa.obs.dtype == np.uint8
    np.testing.assert_array_equal(fa.obs, fb.obs)
    np.testing.assert_array_equal(fa.actions, fb.actions)
    assert a.num_actions == 6


def test_a_sampler_program_loads_without_torch() -> None:
    """A process that only steps environments (a sampler federate) does not pay for torch
    (seconds and hundreds of MB at start-up); torch-based names still import on use."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from reactorfed.cli.loader import load_program\n"
        "load_program('examples/rl/sampling.py:Main', {})\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "from reactorfed.rl import DQNLearner; from reactorfed.rl.algos.dqn import greedy_action\n"
        "assert 'torch' in sys.modules and greedy_action.__module__ == 'reactorfed.rl.algos.network'\n"
        "import reactorfed.rl as rl\n"
        "try:\n"
        "    rl.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('a missing name resolved')\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
