"""EnvPool as a vector-environment backend, against real EnvPool environments: the same
fragment layout and meaning as gymnasium's vector environments (next-step reset rows,
time limits as truncation, copy ``k`` seeded ``seed + k``), determinism for a seed, the
choice of backend (``auto`` and its log line), and the plans and samplers taking it."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import PolicyRunner, PPOConfig, RunConfig, SyncPlan, VectorEnvRunner
from reactorfed.rl.envs import make_runner
from reactorfed.rl.envs.envpool_env import envpool_installed, envpool_support

from .conftest import EXAMPLES, load_example

needs_envpool = pytest.mark.skipif(
    not envpool_installed(),
    reason="envpool is not installed: pip install 'reactorfed[envpool]' (the dev extra has it on Linux)",
)
BACKENDS = ["gymnasium", pytest.param("envpool", marks=needs_envpool)]


class Balance:
    """Keeps CartPole's pole up for the whole 500-step limit (every seed tried, both backends)."""

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = obs[:, 2] + 0.5 * obs[:, 3] + 0.05 * obs[:, 0] + 0.2 * obs[:, 1] > 0
        return a.astype(np.int64), np.zeros(len(obs), dtype=np.float32)


class Always:
    """Pushes every cart to the right: episodes of about 10 steps."""

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(len(obs), dtype=np.int64), np.zeros(len(obs), dtype=np.float32)


def _fields(f: Any) -> list[np.ndarray]:
    return [f.obs, f.actions, f.rewards, f.terminated, f.truncated, f.resets]


def _assert_same(a: Any, b: Any) -> None:
    for x, y in zip(_fields(a), _fields(b), strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.episode_returns == b.episode_returns


def test_a_backend_is_one_of_three() -> None:
    with pytest.raises(ValueError, match="backend must be one of 'auto', 'gymnasium', 'envpool', got 'fast'"):
        VectorEnvRunner("CartPole-v1", 2, backend="fast")
    with pytest.raises(ValueError, match="backend must be one of"):
        PolicyRunner("CartPole-v1", 2, backend="EnvPool")
    with pytest.raises(ValidationError, match="backend must be one of"):
        SyncPlan(PPOConfig(), "CartPole-v1", backend="envpol")


@needs_envpool
@pytest.mark.parametrize("name", ["CartPole-v1", "Acrobot-v1", "Pendulum-v1"])
def test_same_layout_as_gymnasium_other_draws(name: str) -> None:
    """The same shapes, dtypes and record rows under both backends; one seed gives other
    episodes (each copy draws from EnvPool's C++ generator, not numpy's)."""
    g, e = VectorEnvRunner(name, 3, seed=5), VectorEnvRunner(name, 3, seed=5, backend="envpool")
    assert (g.backend, e.backend, e.mode) == ("gymnasium", "envpool", "envpool")
    assert (g.obs_shape, g.obs_dtype, g.num_actions, g.record_dtype) == (e.obs_shape, e.obs_dtype, e.num_actions, e.record_dtype)
    fg, fe = g.rollout(40), e.rollout(40)
    for x, y in zip(_fields(fg), _fields(fe), strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype
    np.testing.assert_array_equal(fg.actions, fe.actions)  # the runner's own seeded action draws
    assert not np.array_equal(fg.obs[0], fe.obs[0])  # the environments' first states are not
    assert e.record(10).dtype == g.record(10).dtype


@needs_envpool
def test_envpool_fragments_are_fixed_by_the_seed() -> None:
    a, b = VectorEnvRunner("CartPole-v1", 4, seed=3, backend="envpool"), VectorEnvRunner("CartPole-v1", 4, seed=3, backend="envpool")
    for _ in range(3):  # across fragments too (episodes run on from one to the next)
        _assert_same(a.rollout(100), b.rollout(100))
    np.testing.assert_array_equal(a.record(50), b.record(50))
    other = VectorEnvRunner("CartPole-v1", 4, seed=4, backend="envpool").rollout(100)
    assert not np.array_equal(other.obs, a.rollout(100).obs)
    pa, pb = PolicyRunner("CartPole-v1", 3, seed=9, backend="envpool"), PolicyRunner("CartPole-v1", 3, seed=9, backend="envpool")
    for _ in range(2):
        ra, rb = pa.rollout(60, Always()), pb.rollout(60, Always())
        _assert_same(ra, rb)
        np.testing.assert_array_equal(ra.obs, rb.obs)  # (T + 1 rows)


@needs_envpool
def test_copy_k_is_seeded_first_copy_seed_plus_k() -> None:
    """Copy ``k`` of a vector of 3 seeded ``s`` steps as copy 0 of one seeded ``3 s + k`` would."""
    v = PolicyRunner("CartPole-v1", 3, seed=20, backend="envpool").rollout(80, Always())
    for k in range(3):
        one = PolicyRunner("CartPole-v1", 1, seed=60 + k, backend="envpool").rollout(80, Always())
        np.testing.assert_array_equal(v.obs[:, k], one.obs[:, 0])
        np.testing.assert_array_equal(v.resets[:, k], one.resets[:, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_rows_follow_episode_ends(backend: str) -> None:
    v = VectorEnvRunner("CartPole-v1", 8, seed=0, backend=backend)
    frags = [v.rollout(150) for _ in range(3)]
    ends = np.concatenate([f.terminated | f.truncated for f in frags])
    resets = np.concatenate([f.resets for f in frags])
    rewards = np.concatenate([f.rewards for f in frags])
    assert ends.sum() > 20 and not resets[0].any()
    # a copy's episode ending at row i is reset at row i + 1 (across fragments too): reward 0, no end
    np.testing.assert_array_equal(resets[1:], ends[:-1])
    assert (rewards[resets] == 0).all() and not ends[resets].any()
    returns = [r for f in frags for r in f.episode_returns]
    assert len(returns) == ends.sum() == v.episodes
    assert np.isclose(rewards.sum(), sum(returns) + v.episode_return.sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reset_row_ignores_its_action(backend: str) -> None:
    """Flip every action taken on a reset row: nothing else changes (the row is no step)."""
    a = VectorEnvRunner("CartPole-v1", 4, seed=2, backend=backend)
    fa = a.rollout(120)
    assert fa.resets.sum() > 10
    flipped = np.where(fa.resets, 1 - fa.actions, fa.actions)
    b = VectorEnvRunner("CartPole-v1", 4, seed=2, backend=backend)
    b.random_actions = lambda n: flipped[:n].copy()  # type: ignore[method-assign]
    fb = b.rollout(120)
    assert not np.array_equal(fa.actions, fb.actions)
    for x, y in zip(_fields(fa)[2:], _fields(fb)[2:], strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(fa.obs, fb.obs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_time_limit_is_truncation_not_termination(backend: str) -> None:
    r = PolicyRunner("CartPole-v1", 2, seed=1, backend=backend).rollout(520, Balance())
    assert r.episode_returns == (500.0, 500.0)
    np.testing.assert_array_equal(np.argwhere(r.truncated), [[499, 0], [499, 1]])
    assert not r.terminated.any()
    assert r.resets[500].all() and not r.resets[:500].any()  # the row after the limit: the reset


@needs_envpool
def test_auto_takes_envpool_where_it_can_and_says_which(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="reactorfed.rl"):
        assert VectorEnvRunner("CartPole-v1", 2, seed=1, backend="auto").backend == "envpool"
        assert VectorEnvRunner("Blackjack-v1", 2, seed=1, backend="auto").backend == "gymnasium"
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("CartPole-v1 x2 (seeds 2-3): stepped by EnvPool") and "backend='auto'" in m for m in lines)
    # Blackjack-v1's observations are a Box in EnvPool, a Tuple in gymnasium: not the same meaning
    assert any(m.startswith("Blackjack-v1 x2 (seeds 2-3): stepped by gymnasium's SyncVectorEnv") and "envpool not used" in m
               and "Tuple" in m for m in lines)
    with pytest.raises(ValueError, match="backend='envpool' cannot step Blackjack-v1: EnvPool's Blackjack-v1 has spaces"):
        VectorEnvRunner("Blackjack-v1", 2, backend="envpool")
    assert envpool_support("CartPole-v1") == ("CartPole-v1", "")
    # one copy: gymnasium's single environment, unless EnvPool steps it (a vector of one)
    assert type(make_runner("CartPole-v1", 1, 1)).__name__ == "EnvRunner"
    one = make_runner("CartPole-v1", 1, 1, backend="auto")
    assert isinstance(one, VectorEnvRunner) and one.record(5).shape == (5, 1)


@needs_envpool
@pytest.mark.atari
def test_atari_envpool_as_gymnasiums_ale_vector_env() -> None:
    """Pong: EnvPool's Pong-v5 with ALE v5's settings has the frames of gymnasium's
    AtariVectorEnv (84x84 grayscale, 4 stacked), and is fixed by its seed."""
    assert envpool_support("Pong") == ("Pong-v5", "")
    g = VectorEnvRunner("Pong", 2, seed=1)
    a, b = (VectorEnvRunner("Pong", 2, seed=1, backend="envpool") for _ in range(2))
    assert (a.obs_shape, a.obs_dtype, a.num_actions) == (g.obs_shape, g.obs_dtype, g.num_actions) == ((4, 84, 84), np.uint8, 6)
    fa, fb = a.rollout(40), b.rollout(40)
    _assert_same(fa, fb)
    assert fa.obs.shape == (40, 2, 4, 84, 84) and fa.obs.any()


@needs_envpool
def test_sampling_program_with_envpool_samplers() -> None:
    """examples/rl/sampling.py with backend=envpool: every step counted, one process and federated."""
    sampling = load_example("sampling")
    args = sampling.Args(num_samplers=2, env="CartPole-v1", pattern="fragment", fragment=25, steps=800, num_envs=4,
                         backend="envpool")
    main = sampling.Main(args)
    Environment(fast=True).run(main)
    assert main.collector.result["steps"] == 800 and main.collector.result["rounds"] == 4
    assert all(s.runner.backend == "envpool" for s in main.samplers)
    holder: list[Any] = []

    def factory() -> Any:
        holder.append(sampling.Main(args))
        return holder[-1]

    run_threads(factory).raise_errors()
    assert any(m.collector.result.get("steps") == 800 for m in holder)


@needs_envpool
def test_ppo_on_envpool_one_seed_same_weights_in_one_process_and_federated() -> None:
    def plan() -> SyncPlan:
        return SyncPlan(PPOConfig(minibatch_size=32, update_epochs=2, total_timesteps=2_000), "CartPole-v1",
                        num_samplers=2, num_envs=2, fragment_len=16, run=RunConfig(iterations=3), seed=7,
                        backend="envpool")

    single = [dict(Environment(fast=True).run(plan()).results["SyncPlan.learner"]) for _ in range(2)]
    run = run_threads(plan)
    run.raise_errors()
    fed = run.summaries["learner"].results["SyncPlan.learner"]
    assert single[0]["weights_sha256"] == single[1]["weights_sha256"] == fed["weights_sha256"]
    assert fed["env_steps"] == single[0]["env_steps"]


@needs_envpool
def test_examples_take_the_backend() -> None:
    ppo, appo = load_example("ppo_cartpole"), load_example("appo_cartpole")
    for mod in (ppo, appo):
        main = mod.Main(mod.Args(backend="envpool", checkpoint=""))
        assert all(s.backend == "envpool" for s in main.samplers)
    assert ppo.Main(ppo.Args(checkpoint="")).samplers[0].backend == "gymnasium"


@needs_envpool
@pytest.mark.slow
def test_launched_samplers_build_their_envpool_in_their_own_process() -> None:
    """Under ``reactorfed launch`` the federates are forked from a process that built the
    program: an EnvPool built there would have lost its threads in the child, and the
    first step would wait for them forever. Each sampler builds its own at startup."""
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", f"{EXAMPLES / 'sampling.py'}:Main", "--fast"]
    for k, v in {"env": "CartPole-v1", "pattern": "fragment", "fragment": 50, "steps": 4000, "num_envs": 4,
                 "backend": "envpool"}.items():
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.findall(r"^\[collector\] reactorfed: result of Main\.collector: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1 and json.loads(found[0])["steps"] == 4000, proc.stdout[-3000:]
    for i in (0, 1):  # said by each sampler, in its own process
        assert re.search(rf"^\[samplers\[{i}\]\] .*CartPole-v1 x4 \(seeds {4 * (100 + i)}-{4 * (100 + i) + 3}\): stepped by EnvPool", proc.stdout + proc.stderr,
                         re.MULTILINE), proc.stderr[-3000:]
