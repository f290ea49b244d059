"""Data-parallel learners and a parameter server against one learner: updates/s and env
steps/s of PPO on CartPole-v1, federated.

    python -m bench.data_parallel [--quick] [--runs 3] [--rounds 100] [--modes federated,single]

Three plans, rl-zoo's CartPole-v1 settings and the same round (2 x 4 copies x 32 steps,
256 rows; 20 epochs of one 256-transition step each):

* ``sync``: ``examples/rl/ppo_cartpole.py`` (2 samplers, one learner; minibatch 256 of the
  round's ~250 transitions);
* ``data_parallel``: ``examples/rl/ppo_data_parallel_cartpole.py:Main``, 2 learners with a
  sampler each, each step the average of both learners' 128-row minibatches (the same
  256 transitions a step), gradients exchanged all-to-all;
* ``param_server``: ``...:ParamServer``, 2 optimizer-less workers with a sampler each and
  one server (the same steps: its weights equal the data-parallel plan's, which each run
  checks).

Each runs ``--rounds`` rounds (no target return: the same work on every side), timed by
its learner (the data-parallel lead, the server) from its startup reaction to its last
round: process and federation start-up are not counted. Updates are gradient steps; env
steps are transitions. Ratios are against the synchronous plan (> 1: faster). On one
small machine the two extra learners' work competes for the same cores, so what this
shows is the plans' coordination cost (one hop a step for data parallelism, two for the
server), not a speed-up from more hardware.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any

from bench.common import Results, base_parser, progress
from bench.rf_runner import run_program

EXAMPLE = "examples/rl/ppo_data_parallel_cartpole.py"
PLANS = {
    # name: (program, the reactor whose result is read, extra parameters)
    "sync": ("examples/rl/ppo_cartpole.py:Main", ".learner", {"num_samplers": 2}),
    "data_parallel": (f"{EXAMPLE}:Main", ".learners[0]", {"num_learners": 2, "samplers_per_learner": 1}),
    "param_server": (f"{EXAMPLE}:ParamServer", ".server", {"num_learners": 2, "samplers_per_learner": 1}),
}
ROUND = 2 * 4 * 32  # rows a round, every plan


def run_plan(plan: str, rounds: int, mode: str, seed: int) -> dict[str, Any]:
    program, result_of, extra = PLANS[plan]
    params = {**extra, "num_envs": 4, "num_steps": 32, "ppo.total_timesteps": rounds * ROUND, "target_return": 1e9,
              "seed": seed, "progress": False, "checkpoint": ""}
    r = run_program(program, params, mode=mode, timeout=1800, result_of=result_of, expect={"iterations": rounds})
    s = r["seconds"]
    return {"updates_per_s": r["updates"] / s, "env_steps_per_s": r["env_steps"] / s, "seconds": s,
            "updates": r["updates"], "env_steps": r["env_steps"], "weights": r["weights_sha256"],
            "cpu_s": round(sum(r["cpu_s"].values()), 2), "load_avg_1min_after": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> Results:
    p: argparse.ArgumentParser = base_parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=100, help="rounds (updates of 20 steps) per run (default 100)")
    p.add_argument("--modes", default="federated", help="comma-separated: federated, single")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.runs = 10, 1
    res = Results("data_parallel" if not args.quick else "data_parallel_quick", args.out)
    for mode in [m for m in args.modes.split(",") if m]:
        runs: dict[str, list[dict[str, Any]]] = {plan: [] for plan in PLANS}
        for i in range(args.runs):
            for plan in PLANS:
                progress(f"{mode} run {i + 1}/{args.runs}: {plan}, {args.rounds} rounds")
                r = run_plan(plan, args.rounds, mode, args.seed)
                progress(f"  {r['updates_per_s']:.1f} updates/s, {r['env_steps_per_s']:.0f} env steps/s "
                         f"({r['seconds']:.1f} s, load average {r['load_avg_1min_after']})")
                runs[plan].append(r)
        same = all(a["weights"] == b["weights"] for a, b in zip(runs["data_parallel"], runs["param_server"], strict=True))
        layout = {"federated": "RTI + a process per sampler, learner, worker and the server",
                  "single": "one process"}[mode]
        for plan in ("data_parallel", "param_server"):
            for metric in ("updates_per_s", "env_steps_per_s"):
                ours = statistics.median(r[metric] for r in runs[plan])
                peer = statistics.median(r[metric] for r in runs["sync"])
                res.add(f"{plan} K=2, {mode}", metric, ours, "sync (1 learner)", peer, "higher", args.runs,
                        layout=layout, rounds=args.rounds, samples=[round(r[metric], 2) for r in runs[plan]],
                        peer_samples=[round(r[metric], 2) for r in runs["sync"]],
                        cpu_s=statistics.median(r["cpu_s"] for r in runs[plan]),
                        peer_cpu_s=statistics.median(r["cpu_s"] for r in runs["sync"]),
                        same_weights_data_parallel_and_param_server=same,
                        load_avg_1min=[r["load_avg_1min_after"] for r in runs[plan]],
                        judged=False, why="the plans' own costs against the synchronous plan, on one machine")
    res.write()
    res.plot("PPO on CartPole-v1: data parallel and parameter server vs one learner (ratio > 1: faster)")
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
