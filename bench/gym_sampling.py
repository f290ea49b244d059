"""Workload 1: sample generation from gymnasium environments, reactorfed vs Ray vs raw.

    python -m bench.gym_sampling [--quick] [--runs 3] [--samplers 2]

Cases per environment (CartPole-v1, Blackjack-v1, Pendulum-v1): per-step rounds
(``step`` open loop, ``step-sync`` closed loop) against Ray's per-step remote calls,
and rollout fragments of 100 and 1000 steps against Ray and against the raw ceiling
(the same environments in independent processes). Metric: env steps per second.
"""

from __future__ import annotations

from bench.common import Results
from bench.sampling import run_suite
from reactorfed.rl.envs import GYM_ENVS

# total steps for full runs; a fragment run lasts about 4-10 s (at a fifth of these, about a
# second, three runs' median moved by 20% from one set of runs to the next)
STEP_ROUNDS = {"CartPole-v1": 3000, "Blackjack-v1": 2000, "Pendulum-v1": 3000}
FRAG_STEPS = {"CartPole-v1": 1_000_000, "Blackjack-v1": 200_000, "Pendulum-v1": 500_000}
QUICK = 10  # --quick divides the step counts by this


def main(argv: list[str] | None = None) -> Results:
    return run_suite("gym_sampling", __doc__ or "", GYM_ENVS, STEP_ROUNDS, FRAG_STEPS,
                     "Gym sample generation: env steps/s (ratio > 1: reactorfed ahead)", argv, min_frag_1000=0, quick_divisor=QUICK)


if __name__ == "__main__":
    main()
