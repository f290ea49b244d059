"""Vectorised sampling: seeding, reset rows, accounting, and samplers of several copies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from reactorfed import Environment
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import EnvRunner, VectorEnvRunner
from reactorfed.rl.plans.sampling import EnvSampler

from .conftest import load_example
from .test_envpool_env import needs_envpool


@pytest.mark.parametrize(
    ("name", "mode", "obs_shape"),
    [("CartPole-v1", "vector_entry_point", (4,)), ("Pendulum-v1", "sync", (3,)), ("Blackjack-v1", "sync", (3,))],
)
def test_rollout_shapes_and_determinism(name: str, mode: str, obs_shape: tuple[int, ...]) -> None:
    a, b = VectorEnvRunner(name, 4, seed=3), VectorEnvRunner(name, 4, seed=3)
    assert a.mode == mode
    fa, fb = a.rollout(120), b.rollout(120)
    assert fa.obs.shape == (120, 4, *obs_shape) and fa.rewards.shape == (120, 4) and len(fa) == 120
    assert fa.env_steps == 480 and a.steps == 480
    for x, y in [(fa.obs, fb.obs), (fa.actions, fb.actions), (fa.rewards, fb.rewards), (fa.resets, fb.resets)]:
        np.testing.assert_array_equal(x, y)
    assert fa.episode_returns == fb.episode_returns
    other = VectorEnvRunner(name, 4, seed=4).rollout(120)
    assert not np.array_equal(other.obs, fa.obs)


@pytest.mark.parametrize("name", ["Pendulum-v1", "Blackjack-v1"])
def test_copy_k_is_seeded_like_a_runner_with_first_copy_seed_plus_k(name: str) -> None:
    v = VectorEnvRunner(name, 3, seed=10)
    for k in range(3):
        np.testing.assert_array_equal(v.obs[k], EnvRunner(name, seed=30 + k).obs)


@pytest.mark.parametrize("backend", ["gymnasium", pytest.param("envpool", marks=needs_envpool)])
def test_samplers_seeded_one_apart_share_no_copy(backend: str) -> None:
    """Samplers are seeded ``s + i``: their copies' episode starts must all differ (copy
    ``k`` seeded ``s + k`` would make sampler 1's copy 0 replay sampler 0's copy 1)."""
    name = "Acrobot-v1" if backend == "gymnasium" else "CartPole-v1"
    starts = [VectorEnvRunner(name, 4, seed=100 + i, backend=backend).obs for i in range(2)]
    rows = np.concatenate(starts).reshape(8, -1)
    assert len({r.tobytes() for r in rows}) == 8


def test_reset_rows_follow_episode_ends_and_rewards_add_up() -> None:
    v = VectorEnvRunner("CartPole-v1", 8, seed=0)
    frags = [v.rollout(150) for _ in range(3)]
    ends = np.concatenate([f.terminated | f.truncated for f in frags])
    resets = np.concatenate([f.resets for f in frags])
    rewards = np.concatenate([f.rewards for f in frags])
    assert ends.sum() > 20  # random CartPole episodes are short: plenty of ends
    assert not resets[0].any()
    # A copy's episode ending at row i is reset at row i + 1 (also across fragments), with
    # reward 0 and nothing ending there.
    np.testing.assert_array_equal(resets[1:], ends[:-1])
    assert (rewards[resets] == 0).all() and not ends[resets].any()
    returns = [r for f in frags for r in f.episode_returns]
    assert len(returns) == ends.sum() == v.episodes
    assert np.isclose(rewards.sum(), sum(returns) + v.episode_return.sum())


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="num_envs must be"):
        VectorEnvRunner("CartPole-v1", 0)
    with pytest.raises(ValueError, match="emits fragments"):
        EnvSampler("CartPole-v1", num_envs=4)
    sampling = load_example("sampling")
    with pytest.raises(ValueError, match="needs pattern=fragment"):
        sampling.Main(sampling.Args(pattern="step", num_envs=4))


def test_sampling_program_with_vectorised_samplers() -> None:
    """2 samplers x 4 copies x fragments of 25 rows: every environment step is counted, in
    one process and federated."""
    sampling = load_example("sampling")
    main = sampling.Main(sampling.Args(num_samplers=2, env="CartPole-v1", pattern="fragment", fragment=25, steps=800, num_envs=4))
    Environment(fast=True).run(main)
    assert main.collector.result["steps"] == 800
    assert main.collector.result["rounds"] == 4  # 100 rows per sampler, 25 per fragment
    holder: list[Any] = []

    def factory() -> Any:
        m = sampling.Main(sampling.Args(num_samplers=2, env="CartPole-v1", pattern="fragment", fragment=25, steps=800, num_envs=4))
        holder.append(m)
        return m

    run = run_threads(factory)
    run.raise_errors()
    assert any(m.collector.result.get("steps") == 800 for m in holder)


def test_the_collector_times_from_when_every_sampler_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Samplers build their environments at startup (in their own process) and say so on
    ``ready``: the collector's clock starts then, so a slow build is not timed, whatever
    the order the program declares them in (here the collector first: its startup
    reaction runs first), in one process and federated (in threads)."""
    import time

    from reactorfed import Reactor, bank, each
    from reactorfed.rl.plans import sampling as samplers
    from reactorfed.rl.plans.sampling import Collector

    real = samplers.make_runner

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(samplers, "make_runner", slow)

    class CollectorFirst(Reactor):
        def __init__(self) -> None:
            self.collector = Collector(2)
            self.samplers = bank(EnvSampler, 2, env="CartPole-v1", seed=each(lambda i: 100 + i), steps=200,
                                 fragment=25, num_envs=4)
            self.connect(self.samplers.fragment, self.collector.fragments)
            self.connect(self.samplers.ready, self.collector.ready)

    holder: list[CollectorFirst] = []

    def factory() -> CollectorFirst:
        holder.append(CollectorFirst())
        return holder[-1]

    assert all(s.runner is None for s in factory().samplers)  # not built with the program
    t0 = time.perf_counter()
    Environment(fast=True).run(holder[0])
    assert time.perf_counter() - t0 > 1.0  # both builds happened in the run
    run_threads(factory).raise_errors()
    results = [holder[0].collector.result, next(m.collector.result for m in holder[1:] if m.collector.result)]
    for result in results:
        assert result["steps"] == 2 * 200 * 4 and result["seconds"] < 0.4, result
