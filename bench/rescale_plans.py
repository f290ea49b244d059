"""The programs ``bench/rescale.py`` scales (``--plan``) and their parameters: which example,
which learner's result, which federates are not samplers, and the settings of the live path
(every run until the bench stops it)."""

from __future__ import annotations

from typing import Any

from bench.processes import ROOT

__all__ = ["FRAGMENT", "ITERATIONS", "LEARNERS", "PLANS", "PROGRAM", "ROUNDS", "UPDATES", "plan_params",
           "qlearning_params", "widths"]

PROGRAM = f"{ROOT / 'examples' / 'rl' / 'qlearning.py'}:Main"
FRAGMENT, UPDATES = 100, 4
#: the training runs until the bench stops it (SIGTERM to the learner)
ITERATIONS = 10**7
#: --plan: the program and its learner's result (the live path's)
PLANS = {
    "qlearning": (PROGRAM, "Main.learner"),
    "ppo": (f"{ROOT / 'examples' / 'rl' / 'ppo_cartpole.py'}:Main", "Main.learner"),
    "appo": (f"{ROOT / 'examples' / 'rl' / 'appo_cartpole.py'}:Main", "Main.learner"),
    "apex": (f"{ROOT / 'examples' / 'rl' / 'apex_dqn_cartpole.py'}:OnePod", "OnePod.learner.learner"),
    "seed": (f"{ROOT / 'examples' / 'rl' / 'seed_ppo_cartpole.py'}:Main", "Main.learner"),
    "data-parallel": (f"{ROOT / 'examples' / 'rl' / 'ppo_data_parallel_cartpole.py'}:Main", "Main.learners[0]"),
}
#: --plan: the federates that are not samplers, when not one "learner"
LEARNERS = {"data-parallel": ("learners[0]", "learners[1]")}
#: the plans whose learner updates in rounds (a pause is also told in rounds)
ROUNDS = ("qlearning", "ppo", "seed", "data-parallel")


def qlearning_params(seed: int) -> dict[str, Any]:
    return {"iterations": ITERATIONS, "fragment_len": FRAGMENT, "updates_per_iteration": UPDATES, "seed": seed,
            "timeline": True}


def plan_params(plan: str, seed: int, round_ms: int) -> dict[str, Any]:
    """The live path's parameters of ``plan`` (besides the widths)."""
    if plan == "qlearning":
        return {**qlearning_params(seed), "round_ms": round_ms}
    common = {"seed": seed, "timeline": True, "checkpoint": "", "progress": False, "target_return": 1e9}
    forever = 10**12  # env steps: until the bench stops it (PPO's budget is its config's)
    if plan in ("ppo", "seed", "data-parallel"):
        return {**common, "ppo.total_timesteps": forever, "round_ms": round_ms}
    if plan == "appo":
        return {**common, "total_timesteps": forever, "period_ms": round_ms, "weights_delay_ms": round_ms}
    return {**common, "total_timesteps": forever, "period_ms": round_ms, "weights_delay_ms": round_ms,
            "learn_period_ms": max(1, round_ms // 16)}


def widths(plan: str, before: int, wide: int) -> dict[str, Any]:
    """The live path's widths: ``before`` samplers at the start, at most ``wide``."""
    if plan == "data-parallel":  # (2 learners, sampler i feeding learner i mod 2)
        return {"num_learners": 2, "num_samplers": before, "max_samplers": wide}
    return {"num_samplers": before, "max_samplers": wide}
