"""Policy lag, exactly: each fragment carries the tag its weights reached its sampler at;
the learner tells from it which of its weights acted, and how many updates and how much
logical time ago it sent them; the lags in the process's Prometheus histograms as they
are observed (read from a federated APPO learner's ``/metrics``)."""

from __future__ import annotations

import bisect
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from reactorfed import Environment
from reactorfed.rl import PPOConfig, RunConfig, SyncPlan
from reactorfed.rl.rollout import Rollout, pack_rollout, unpack_rollout
from reactorfed.rl.training import LAG_ITERATION_BOUNDS, LAG_NS_BOUNDS, PolicyLag

from .async_programs import SlowAPPO


def _rollout(tag: tuple[int, int] | None) -> Rollout:
    T, k = 3, 2
    z = np.zeros((T, k), dtype=np.bool_)
    return Rollout(obs=np.ones((T + 1, k, 4), np.float32), actions=np.ones((T, k), np.int64),
                   logp=np.zeros((T, k), np.float32), rewards=np.ones((T, k), np.float32), terminated=z,
                   truncated=z, resets=z, policy_tag=tag)


def test_the_policy_tag_travels_in_the_fragment_at_no_extra_byte() -> None:
    for tag in [(0, 0), (5_000_000, 3), (2**62, 2**32 - 1), None]:
        packed = pack_rollout(_rollout(tag))
        assert packed.nbytes == pack_rollout(_rollout(None)).nbytes
        back = unpack_rollout(packed)
        assert back.policy_tag == tag
        assert back.rewards.sum() == 6 and back.actions.sum() == 6  # the transitions untouched


def test_the_lag_counts_the_updates_since_the_weights_that_acted() -> None:
    lag = PolicyLag()
    lag.sent((0, 0), 0)
    lag.sent((0, 5), 1)
    lag.sent((10, 0), 2)
    assert lag.observe((0, 1), (0, 6), 2) == 2  # the weights of iteration 0 reached it at (0, 1)
    assert lag.observe((0, 5), (12, 0), 3) == 2  # sent at (0, 5), zero delay: iteration 1's
    assert lag.observe(None, (12, 0), 3) is None
    assert lag.result() == {"policy_lag_iterations": {"2": 2}, "policy_lag_ns": {"min": 0, "median": 12, "max": 12,
                                                                              "fragments": 2}}


def test_the_synchronous_plan_trains_on_the_newest_weights_only() -> None:
    plan = SyncPlan(PPOConfig(minibatch_size=32, update_epochs=1, total_timesteps=2_000), "CartPole-v1",
                    num_samplers=2, num_envs=2, fragment_len=16, run=RunConfig(iterations=4), seed=1)
    r = Environment(fast=True).run(plan).results[f"{plan.fqn}.learner"]
    assert r["policy_lag_iterations"] == {"0": 8} and r["policy_lag_ns"]["max"] == 0


def test_asynchronous_samplers_are_behind_by_the_weights_delay() -> None:
    plan = SlowAPPO(iterations=12)
    r = Environment(fast=True).run(plan).results[f"{plan.fqn}.learner"]
    assert sum(r["policy_lag_iterations"].values()) == r["policy_lag_ns"]["fragments"] >= 12
    assert r["policy_lag_ns"]["min"] >= 6_000_000  # never fresher than the weights' 6 ms delay


def _buckets(values: dict[int, int], bounds: tuple[int, ...]) -> list[int]:
    counts = [0] * (len(bounds) + 1)
    for v, n in values.items():
        counts[bisect.bisect_left(bounds, v)] += n
    return counts


def test_every_lag_goes_to_the_runs_histograms_as_it_is_observed() -> None:
    main = SlowAPPO(iterations=10)
    env = Environment(fast=True)
    env.run(main)
    result = main.learner.result
    assert env.scheduler is not None
    hs = {name: (labels, h.snapshot()) for name, labels, h in env.scheduler.histograms.items()}
    labels, it = hs["reactorfed_policy_lag_iterations"]
    assert labels == {"reactor": "SlowAPPO.learner"}
    lags = {int(k): n for k, n in result["policy_lag_iterations"].items()}
    assert list(it.counts) == _buckets(lags, LAG_ITERATION_BOUNDS)
    assert it.sum == sum(k * n for k, n in lags.items())
    labels, ns = hs["reactorfed_policy_lag_seconds"]
    assert labels == {"reactor": "SlowAPPO.learner"} and ns.bounds == LAG_NS_BOUNDS
    assert ns.count == it.count == result["policy_lag_ns"]["fragments"] > 0
    first, last = (i for i in (next(i for i, n in enumerate(ns.counts) if n), max(i for i, n in enumerate(ns.counts) if n)))
    assert first == bisect.bisect_left(LAG_NS_BOUNDS, result["policy_lag_ns"]["min"])
    assert last == bisect.bisect_left(LAG_NS_BOUNDS, result["policy_lag_ns"]["max"])


def test_apexs_lag_of_every_transition_goes_to_the_histograms_once_a_batch() -> None:
    from .apex_programs import SlowApex

    main = SlowApex(iterations=12)
    env = Environment(fast=True)
    result = env.run(main).results["SlowApex.learner"]
    assert env.scheduler is not None
    hs = {name: h.snapshot() for name, labels, h in env.scheduler.histograms.items()
          if labels == {"reactor": "SlowApex.learner"}}
    lags = {int(k): n for k, n in result["policy_lag_iterations"].items()}
    assert list(hs["reactorfed_policy_lag_iterations"].counts) == _buckets(lags, LAG_ITERATION_BOUNDS)
    assert hs["reactorfed_policy_lag_seconds"].count == result["policy_lag_ns"]["fragments"] == sum(lags.values()) > 0


def _samples(text: str, name: str) -> dict[str, float]:
    """``le`` (or "" for _sum and _count) -> value, of one metric's lines."""
    out = {}
    for m in re.finditer(rf'^{name}(_bucket|_sum|_count)\{{([^}}]*)\}} (\S+)$', text, re.M):
        le = re.search(r'le="([^"]+)"', m.group(2))
        out[le.group(1) if le else m.group(1)] = float(m.group(3))
    return out


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_federated_learners_metrics_have_the_lag_histograms(tmp_path: Path) -> None:
    """APPO in processes (the RTI, two samplers, the learner with ``--metrics-port``), one
    sampler slowed so that the run lasts: the learner's ``/metrics`` while it trains, then
    its result."""
    from bench.ports import free_port

    root = Path(__file__).resolve().parents[2]
    program = "tests/rl/async_programs.py:SlowAPPO"
    env = {**os.environ, "REACTORFED_SECRET": "lag-metrics-secret", "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
           "REACTORFED_LOGDIR": ""}  # (no curves: nothing left in the repository)
    common = ["--federation-id", "lag-metrics", "--fast", "-p", "iterations=40", "-p", "slow_ms=40"]
    ready = tmp_path / "rti.json"
    procs: dict[str, subprocess.Popen[str]] = {}

    def start(name: str, *args: str) -> None:
        procs[name] = subprocess.Popen([sys.executable, "-m", "reactorfed", *args], env=env, cwd=root, text=True,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    port = free_port()
    seen: list[dict[str, float]] = []
    try:
        start("rti", "rti", program, *common, "--port", "0", "--ready-file", str(ready))
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert procs["rti"].poll() is None and time.monotonic() < deadline, "the RTI did not start"
            time.sleep(0.02)
        endpoint = json.loads(ready.read_text())["endpoint"]
        start("learner", "federate", program, *common, "--federate", "learner", "--rti", endpoint,
              "--metrics-port", str(port))
        for s in ("samplers[0]", "samplers[1]"):
            start(s, "federate", program, *common, "--federate", s, "--rti", endpoint)
        deadline = time.monotonic() + 120
        while procs["learner"].poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                time.sleep(0.05)
                continue
            it = _samples(text, "reactorfed_policy_lag_iterations")
            if it and (not seen or it["_count"] > seen[-1]["_count"]):
                assert "# TYPE reactorfed_policy_lag_iterations histogram" in text
                assert "# TYPE reactorfed_policy_lag_seconds histogram" in text
                assert 'reactor="SlowAPPO.learner"' in text and 'federate="learner"' in text
                sec = _samples(text, "reactorfed_policy_lag_seconds")
                assert list(sec)[:-2] == [repr(b / 1e9) for b in LAG_NS_BOUNDS] + ["+Inf"]
                assert sec["+Inf"] == sec["_count"] == it["_count"] == it["+Inf"]
                seen.append(it)
            time.sleep(0.1)
        outs = {n: p.communicate(timeout=60)[0] for n, p in procs.items()}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs.values()), {n: o[-2000:] for n, o in outs.items()}
    assert len(seen) >= 2, "the learner's /metrics never showed the lag growing"
    for it in seen:  # cumulative buckets
        counts = [it[repr(float(b))] for b in LAG_ITERATION_BOUNDS] + [it["+Inf"]]
        assert counts == sorted(counts)
    found = re.findall(r"^reactorfed: result of SlowAPPO\.learner: (\{.*\})$", outs["learner"], re.M)
    result = json.loads(found[0])
    lags = {int(k): n for k, n in result["policy_lag_iterations"].items()}
    final = _buckets(lags, LAG_ITERATION_BOUNDS)
    last = seen[-1]
    shown = [last[repr(float(b))] for b in LAG_ITERATION_BOUNDS] + [last["+Inf"]]
    # what /metrics showed last is the result's histogram so far: no bucket above it
    cumulative = [sum(final[: i + 1]) for i in range(len(final))]
    assert all(s <= c for s, c in zip(shown, cumulative, strict=True)), (shown, cumulative)
    assert last["_count"] <= result["policy_lag_ns"]["fragments"]
