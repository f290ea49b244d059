"""Sample generation (workloads 1 and 2): Ray, the raw ceiling, and reactorfed.

Patterns, with the same :class:`reactorfed.rl.EnvRunner` stepping code everywhere:

* ``step``: per-step rounds, one environment step per sampler per round, the
  steps gathered before the next round (the paper's pattern);
* ``fragment-N``: each sampler returns N-step rollout fragments, consumed as
  they arrive (RLlib's pattern);
* ``raw``: the same environments stepped in independent processes with no
  framework, fragments of 1000 steps kept in the process (the ceiling).

Every side moves the same data: each step whole (observation, action, reward,
terminated, truncated, the episode's return where one ends), as one structured numpy
array made by the same call, :meth:`EnvRunner.record <reactorfed.rl.EnvRunner.record>`
(a one-row record per step, an N-row record per fragment). Ray's actors return it,
reactorfed's samplers send it (:class:`reactorfed.rl.plans.sampling.EnvSampler`), and the raw
ceiling makes it and keeps it.

Every figure is environment steps per second, summed over samplers, measured
after the samplers are built (construction and framework start-up excluded).
The raw ceiling runs as many total steps as the ``fragment-1000`` case (the longest),
so that fixed costs (a shared-memory ring set up on the first payload, a first
fragment with nothing overlapping it) are amortized the same way for Ray, raw and
reactorfed.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from bench.common import wait_quiet
from bench.ray_util import init_ray, shutdown_ray
from reactorfed.rl import EnvRunner
from reactorfed.rl.envs import make_runner


class SamplerWorker:
    """What a Ray sampler actor holds: one environment runner (``num_envs`` copies)."""

    def __init__(self, env: str, seed: int, num_envs: int = 1) -> None:
        torch.set_num_threads(1)
        self.runner = make_runner(env, seed, num_envs)

    def ready(self) -> bool:
        return True

    def step(self) -> np.ndarray:
        # What a reactorfed sampler sends per step (EnvSampler: a one-row record), and
        # what a fragment carries per step: the same data on both sides.
        assert isinstance(self.runner, EnvRunner)
        return self.runner.record(1)

    def rollout(self, n: int) -> np.ndarray:
        # The whole fragment, as a reactorfed sampler sends it (EnvSampler: an n-row record).
        return self.runner.record(n)


def ray_step_rounds(env: str, num_samplers: int, rounds: int) -> float:
    """Ray, per-step rounds: ``ray.get([s.step.remote() for s in samplers])`` each round."""
    ray = init_ray(num_samplers)
    actor = ray.remote(num_cpus=1)(SamplerWorker)
    samplers = [actor.remote(env, 100 + i) for i in range(num_samplers)]
    ray.get([s.ready.remote() for s in samplers])
    ray.get([s.step.remote() for s in samplers])  # warm
    wait_quiet()
    t0 = time.perf_counter()
    for _ in range(rounds):
        ray.get([s.step.remote() for s in samplers])
    dt = time.perf_counter() - t0
    for s in samplers:
        ray.kill(s)
    shutdown_ray()
    return rounds * num_samplers / dt


def ray_fragments(env: str, num_samplers: int, fragment: int, total_steps: int, in_flight: int = 2,
                  num_envs: int = 1) -> float:
    """Ray, rollout fragments: ``in_flight`` requests per actor, ``ray.wait`` for the next ready one."""
    ray = init_ray(num_samplers)
    actor = ray.remote(num_cpus=1)(SamplerWorker)
    samplers = [actor.remote(env, 100 + i, num_envs) for i in range(num_samplers)]
    ray.get([s.ready.remote() for s in samplers])
    n_frag = max(num_samplers, total_steps // (fragment * num_envs))
    wait_quiet()
    t0 = time.perf_counter()
    pending: dict[Any, Any] = {}
    submitted = 0
    for s in samplers:
        for _ in range(in_flight):
            if submitted < n_frag:
                pending[s.rollout.remote(fragment)] = s
                submitted += 1
    done = 0
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        s = pending.pop(ref)
        record = ray.get(ref)
        done += record.size  # rows times copies: every environment step
        if submitted < n_frag:
            pending[s.rollout.remote(fragment)] = s
            submitted += 1
    dt = time.perf_counter() - t0
    for s in samplers:
        ray.kill(s)
    shutdown_ray()
    return done / dt


def _raw_worker(env: str, seed: int, steps: int, fragment: int, barrier: Any, out: Any, num_envs: int = 1) -> None:
    torch.set_num_threads(1)
    runner = make_runner(env, seed, num_envs)
    barrier.wait()
    t0 = time.perf_counter()
    left = steps // num_envs  # rows
    while left > 0:
        n = min(fragment, left)
        runner.record(n)  # the same record the samplers send, kept here
        left -= n
    out.put((t0, time.perf_counter()))


def raw_ceiling(env: str, num_samplers: int, total_steps: int, fragment: int = 1000, num_envs: int = 1) -> float:
    """Independent processes stepping the same environments; total steps / wall span."""
    ctx = mp.get_context("forkserver")
    barrier = ctx.Barrier(num_samplers)
    out = ctx.Queue()
    per = total_steps // num_samplers
    wait_quiet()
    procs = [
        ctx.Process(target=_raw_worker, args=(env, 100 + i, per, fragment, barrier, out, num_envs))
        for i in range(num_samplers)
    ]
    for p in procs:
        p.start()
    spans = [out.get() for _ in procs]
    for p in procs:
        p.join()
    start = min(s for s, _ in spans)
    end = max(e for _, e in spans)
    return per // num_envs * num_envs * num_samplers / (end - start)


# -- the benchmark driver shared by gym_sampling.py and atari_sampling.py -------------------
PROGRAM = "examples/rl/sampling.py:Main"


def _median(xs: list[float]) -> float:
    return float(np.median(xs)) if xs else float("nan")


def bench_env(
    env: str,
    num_samplers: int,
    step_rounds: int,
    frag_steps: dict[int, int],
    runs: int,
    results: Any,
    modes: tuple[str, ...],
    num_envs: int = 1,
) -> None:
    """Every pattern for one environment; runs interleaved (ray, ours per mode), medians.

    ``num_envs > 1``: every sampler (Ray's, raw, ours) steps that many copies as a batch
    (:class:`reactorfed.rl.VectorEnvRunner`); fragment patterns only.

    ``step_rounds``: rounds of the per-step pattern; ``frag_steps``: total steps per
    fragment size. The raw ceiling runs the total steps of the largest fragment size
    (``fragment-1000``), the case it is the ceiling of.
    """
    from bench.common import progress
    from bench.rf_runner import ProgramFailed, run_program

    raw_steps = frag_steps[max(frag_steps)]
    samples: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    def ours(key: str, mode: str, **params: Any) -> None:
        try:
            total = params["steps"] // num_samplers // num_envs * num_envs * num_samplers
            r = run_program(PROGRAM, {"num_samplers": num_samplers, "env": env, "num_envs": num_envs, **params},
                            mode, expect={"steps": total})
            add(f"{key}|{mode}", r["steps_per_s"])
        except ProgramFailed as e:
            progress(f"reactorfed {mode} {key} failed: {e}")

    for run in range(runs):
        progress(f"{env}: run {run + 1}/{runs}")
        add("raw", raw_ceiling(env, num_samplers, raw_steps, num_envs=num_envs))
        if num_envs == 1:
            add("step|ray", ray_step_rounds(env, num_samplers, step_rounds))
            for mode in modes:
                ours("step", mode, pattern="step", steps=step_rounds * num_samplers)
                ours("step-sync", mode, pattern="step-sync", steps=step_rounds * num_samplers)
        for frag, steps in frag_steps.items():
            add(f"fragment-{frag}|ray", ray_fragments(env, num_samplers, frag, steps, num_envs=num_envs))
            for mode in modes:
                ours(f"fragment-{frag}", mode, pattern="fragment", fragment=frag, steps=steps)
    raw = _median(samples["raw"])
    name = env if num_envs == 1 else f"{env} x{num_envs} envs"
    patterns = ("step", "step-sync") if num_envs == 1 else ()
    for pattern in (*patterns, *(f"fragment-{f}" for f in frag_steps)):
        ray_key = "step|ray" if pattern.startswith("step") else f"{pattern}|ray"
        ray_v = _median(samples[ray_key])
        for mode in modes:
            mine = samples.get(f"{pattern}|{mode}")
            if not mine:
                continue
            v = _median(mine)
            results.add(f"{name} {pattern} {mode}", "steps_per_s", v, "ray", ray_v, "higher", len(mine),
                        samplers=num_samplers, num_envs=num_envs)
            if pattern.startswith("fragment"):
                results.add(f"{name} {pattern} {mode} vs raw", "steps_per_s", v, "raw", raw, "higher",
                            len(mine), samplers=num_samplers, num_envs=num_envs)
    per_step = f"; ray per-step {_median(samples['step|ray']):,.0f}" if num_envs == 1 else ""
    progress(f"{name}: raw ceiling {raw:,.0f} steps/s{per_step}")


def run_suite(
    bench: str,
    doc: str,
    envs: Sequence[str],
    step_rounds: dict[str, int],
    frag_steps: dict[str, int],
    title: str,
    argv: list[str] | None,
    min_frag_1000: int = 0,
    quick_divisor: int = 10,
) -> Any:
    """The command line of a sampling benchmark (workloads 1 and 2): every env, every
    pattern, single-process and (where ``reactorfed launch`` works) federated."""
    from bench.common import Results, base_parser, progress, summarize
    from bench.rf_runner import MODES, federated_available

    p = base_parser(doc)
    p.add_argument("--samplers", type=int, default=2)
    p.add_argument("--envs", default=",".join(envs))
    p.add_argument("--num-envs", type=int, default=1,
                   help="environment copies per sampler, stepped as a batch (fragment patterns only; results "
                        "go to BENCH_xN.jsonl)")
    args = p.parse_args(argv)
    runs = 1 if args.quick else args.runs
    div = quick_divisor if args.quick else 1
    modes = MODES if federated_available() else ("single",)
    if "federated" not in modes:
        progress("reactorfed launch not available: single-process mode only")
    res = Results(bench if args.num_envs == 1 else f"{bench}_x{args.num_envs}", args.out)
    # fragment-1000 runs at least min_frag_1000 total steps (divided too under --quick,
    # but never fewer than 2 fragments per sampler), so fixed costs weigh little.
    floor_1000 = max(min_frag_1000 // div, 2 * 1000 * args.samplers) if min_frag_1000 else 0
    for env in args.envs.split(","):
        # With num_envs copies a fragment holds num_envs times the steps: as many fragments
        # as with one copy, so that the runs are not num_envs times shorter.
        frag = frag_steps[env] * args.num_envs // div
        bench_env(env, args.samplers, step_rounds[env] // div, {100: frag, 1000: max(frag, floor_1000)},
                  runs, res, modes, num_envs=args.num_envs)
    res.write()
    res.plot(title)
    progress("\n" + summarize(res.rows))
    return res
