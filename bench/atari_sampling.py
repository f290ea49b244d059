"""Workload 2: sample generation from ALE Atari (v5) games, reactorfed vs Ray vs raw.

    python -m bench.atari_sampling [--quick] [--runs 3] [--samplers 2]

Cases per environment (Pong, MsPacman, SpaceInvaders; 210x160x3 frames): per-step rounds
(``step`` open loop, ``step-sync`` closed loop) against Ray's per-step remote calls,
and rollout fragments of 100 and 1000 steps against Ray and against the raw ceiling
(the same environments in independent processes). Metric: env steps per second.
"""

from __future__ import annotations

from bench.common import Results
from bench.sampling import run_suite
from reactorfed.rl.envs import ATARI_GAMES

# total steps for full runs (fragment-1000 runs MIN_FRAG_1000 steps: 20 fragments per
# sampler with 2 samplers, so that set-up and the first fragment weigh little). Per-step
# rounds: 5000, for the same reason: a federation's first ~100 rounds pay for setting up
# the shared memory its 100 KB frames go through (1000-round runs measured 5-7% below
# 5000-round ones, 3 pairs on 22 Nov; Ray's rate is the same either way: 1,498 / 1,515
# steps/s at 1000 rounds, 1,493 / 1,523 at 5000).
STEP_ROUNDS = {"Pong": 5000, "MsPacman": 5000, "SpaceInvaders": 5000}
FRAG_STEPS = {"Pong": 10_000, "MsPacman": 10_000, "SpaceInvaders": 10_000}
MIN_FRAG_1000 = 40_000
QUICK = 10  # --quick divides the step counts by this


def main(argv: list[str] | None = None) -> Results:
    return run_suite("atari_sampling", __doc__ or "", ATARI_GAMES, STEP_ROUNDS, FRAG_STEPS,
                     "Atari sample generation: env steps/s (ratio > 1: reactorfed ahead)", argv, min_frag_1000=MIN_FRAG_1000, quick_divisor=QUICK)


if __name__ == "__main__":
    main()
