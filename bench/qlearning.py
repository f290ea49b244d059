"""Workload 3: synchronized parallel Q-learning, wall time for a fixed number of iterations.

    python -m bench.qlearning [--quick] [--runs 3] [--iterations 1000] [--samplers 4]

Each iteration: ``samplers`` samplers collect 100 CartPole steps each with the
learner's current weights (epsilon-greedy, torch inference per step), the learner
adds them to its replay buffer, takes 4 DQN updates and broadcasts the weights.

Ray, idiomatically: the learner lives in the driver; weights go out with
``ray.put`` once per iteration and the fragments come back with ``ray.get``.
Both sides run the same sampler and learner code, so with one seed they end
with the same weights: the result line records whether the digests matched.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from bench.common import Results, base_parser, progress, summarize, wait_quiet
from bench.ray_util import init_ray, shutdown_ray
from bench.rf_runner import MODES, ProgramFailed, federated_available, run_program
from reactorfed.rl import DQNConfig, DQNLearner, EnvRunner
from reactorfed.rl.algos.dqn import EpsilonGreedy
from reactorfed.rl.envs import pack_fragment, unpack_fragment
from reactorfed.rl.plans import weights_digest

PROGRAM = "examples/rl/qlearning.py:Main"
ENV = "CartPole-v1"
FRAGMENT = 100
UPDATES = 4


class QSamplerWorker:
    """The Ray actor: the same code as reactorfed's QSampler."""

    def __init__(self, env: str, seed: int, fragment_len: int) -> None:
        torch.set_num_threads(1)
        self.runner = EnvRunner(env, seed=seed, keep_next_obs=True)
        obs_dim = int(np.prod(self.runner.obs_shape))
        self.policy = EpsilonGreedy(obs_dim, self.runner.num_actions, seed=seed + 7919, hidden=DQNConfig.hidden)
        self.fragment_len = fragment_len

    def ready(self) -> bool:
        return True

    def collect(self, payload: np.ndarray) -> np.ndarray:
        self.policy.load_payload(payload)
        return pack_fragment(self.runner.rollout(self.fragment_len, self.policy))


def ray_qlearning(num_samplers: int, iterations: int, seed: int = 0) -> dict[str, Any]:
    ray = init_ray(num_samplers)
    torch.set_num_threads(1)
    actor = ray.remote(num_cpus=1)(QSamplerWorker)
    samplers = [actor.remote(ENV, seed * 1000 + 100 + i, FRAGMENT) for i in range(num_samplers)]
    ray.get([s.ready.remote() for s in samplers])
    probe = EnvRunner(ENV)
    learner = DQNLearner(int(np.prod(probe.obs_shape)), probe.num_actions, seed=seed, device=torch.device("cpu"))
    wait_quiet()
    t0 = time.perf_counter()
    payload = learner.payload()
    for _ in range(iterations):
        ref = ray.put(payload)
        for packed in ray.get([s.collect.remote(ref) for s in samplers]):
            learner.observe(unpack_fragment(packed))
        learner.update(UPDATES)
        payload = learner.payload()
    seconds = time.perf_counter() - t0
    for s in samplers:
        ray.kill(s)
    shutdown_ray()
    return {"seconds": seconds, "weights_sha256": weights_digest(learner)}


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--samplers", type=int, default=4)
    p.add_argument("--iterations", type=int, default=1000)
    args = p.parse_args(argv)
    runs = 1 if args.quick else args.runs
    iterations = 100 if args.quick else args.iterations
    modes = MODES if federated_available() else ("single",)
    res = Results("qlearning", args.out)
    ray_t: list[float] = []
    ours: dict[str, list[float]] = {m: [] for m in modes}
    digests: dict[str, set[str]] = {"ray": set(), **{m: set() for m in modes}}
    params = {"num_samplers": args.samplers, "iterations": iterations, "fragment_len": FRAGMENT,
              "updates_per_iteration": UPDATES}
    for run in range(runs):
        progress(f"qlearning: run {run + 1}/{runs} ({iterations} iterations, {args.samplers} samplers)")
        r = ray_qlearning(args.samplers, iterations)
        ray_t.append(r["seconds"])
        digests["ray"].add(r["weights_sha256"])
        for mode in modes:
            try:
                o = run_program(PROGRAM, params, mode, expect={"iterations": iterations}, result_of=".learner")
            except ProgramFailed as e:
                progress(f"reactorfed {mode} failed: {e}")
                continue
            ours[mode].append(o["seconds"])
            digests[mode].add(o["weights_sha256"])
        progress(f"  ray {ray_t[-1]:.2f} s; " + "; ".join(f"{m} {v[-1]:.2f} s" for m, v in ours.items() if v))
    for mode, ts in ours.items():
        if ts:
            res.add(f"{args.samplers}x{FRAGMENT} steps, {iterations} iterations, {mode}", "wall_s",
                    float(np.median(ts)), "ray", float(np.median(ray_t)), "lower", len(ts),
                    same_weights_as_ray=digests[mode] == digests["ray"] and len(digests["ray"]) == 1)
    res.write()
    res.plot("Synchronized parallel Q-learning: wall time (ratio > 1: reactorfed faster)")
    progress("\n" + summarize(res.rows))
    return res


if __name__ == "__main__":
    main()
