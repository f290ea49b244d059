"""Workload 2: sample generation from ALE Atari (v5) games, reactorfed vs Ray vs raw.

    python bench/atari_sampling.py [--quick] [--runs 3] [--samplers 2]

Cases per environment (Pong, MsPacman, SpaceInvaders; 210x160x3 frames): per-step rounds
(``step`` open loop, ``step-sync`` closed loop) against Ray's per-step remote calls,
and rollout fragments of 100 and 1000 steps against Ray and against the raw ceiling
(the same environments in independent processes). Metric: env steps per second.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Results, base_parser, progress, summarize
from reactorfed.rl import ATARI_GAMES
from rf_runner import MODES, federated_available
from sampling import bench_env

# total steps for full runs; --quick divides them by QUICK
STEP_ROUNDS = {"Pong": 1000, "MsPacman": 1000, "SpaceInvaders": 1000}
FRAG_STEPS = {"Pong": 10_000, "MsPacman": 10_000, "SpaceInvaders": 10_000}
QUICK = 10


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--samplers", type=int, default=2)
    p.add_argument("--envs", default=",".join(ATARI_GAMES))
    args = p.parse_args(argv)
    runs = 1 if args.quick else args.runs
    div = QUICK if args.quick else 1
    modes = MODES if federated_available() else ("single",)
    if "federated" not in modes:
        progress("reactorfed launch not available: single-process mode only")
    res = Results("atari_sampling", args.out)
    for env in args.envs.split(","):
        frag = FRAG_STEPS[env] // div
        bench_env(env, args.samplers, STEP_ROUNDS[env] // div, {100: frag, 1000: max(frag, 2000)}, FRAG_STEPS[env], runs, res, modes)
    res.write()
    res.plot("Atari sample generation: env steps/s (ratio > 1: reactorfed ahead)")
    progress("\n" + summarize(res.rows))
    return res


if __name__ == "__main__":
    main()
