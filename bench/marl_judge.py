"""bench/marl_training.py's judge, the same code for every side's curve: the first point at
which the mean return per agent of the last :data:`WINDOW` finished episodes reaches the
threshold, the return at a number of env steps, and the curves' median for the plot."""

from __future__ import annotations

import math
import statistics
from typing import Any

from bench.marl_settings import SETTINGS, TASK

__all__ = ["WINDOW", "Curve", "first_crossing", "judged", "median_curve", "ours_curve", "return_at",
           "warmup_steps"]

WINDOW = 100  # episodes the judge averages

Curve = list[tuple[float, int, float]]  # (seconds of training, env steps, the judge's return)


def warmup_steps() -> int:
    """Env steps before which fewer than :data:`WINDOW` episodes can have ended (on the
    benchmark's layout; a side sampling fewer copies at once can have ended more by then)."""
    return (WINDOW + int(SETTINGS["envs"]) * int(SETTINGS["samplers"])) * int(TASK["max_cycles"])


def ours_curve(curve: list[Any], agents_per_row: int) -> Curve:
    """A shared-policy learner's curve on the task's env steps (it counts agent rows)."""
    return [(float(t), int(s) // agents_per_row, float("nan") if m is None else float(m)) for t, s, m in curve]


def first_crossing(curve: Curve, threshold: float, min_steps: int) -> tuple[float, int] | None:
    """(seconds, env steps) at the first point at or past ``min_steps`` whose return
    reaches ``threshold``; None if none does."""
    for t, s, m in curve:
        if s >= min_steps and not math.isnan(m) and m >= threshold:
            return t, s
    return None


def return_at(curve: Curve, steps: int) -> float | None:
    """The return at the first point at or past ``steps``; None for a run that ended earlier."""
    for _, s, m in curve:
        if s >= steps:
            return None if math.isnan(m) else m
    return None


def judged(curve: Curve, threshold: float, at_steps: int, time_limit: float) -> dict[str, Any]:
    """What the report reads of one run's curve, up to ``time_limit`` seconds of training
    (reactorfed's run has no clock limit of its own: it goes on to its step budget, and
    what it did past the limit is not counted; RLlib's stops at its first iteration past it)."""
    curve = [p for p in curve if p[0] <= time_limit]
    hit = first_crossing(curve, threshold, warmup_steps())
    return {"reached": hit is not None, "seconds": hit[0] if hit else None, "env_steps": hit[1] if hit else None,
            "return_at": return_at(curve, at_steps), "final_env_steps": curve[-1][1] if curve else 0}


def median_curve(curves: list[Curve], axis: int, points: int = 200) -> tuple[list[float], list[float]]:
    """The median over runs of the judge's return against ``axis`` (0: seconds, 1: env
    steps), each run's curve read as a step function, up to where the shortest run ends."""
    curves = [[p for p in c if not math.isnan(p[2])] for c in curves]
    if not curves or any(not c for c in curves):
        return [], []
    lo, hi = max(c[0][axis] for c in curves), min(c[-1][axis] for c in curves)
    if hi <= lo:
        return [], []
    xs = [lo + (hi - lo) * i / (points - 1) for i in range(points)]
    ys = []
    for x in xs:
        at = [next(p[2] for p in reversed(c) if p[axis] <= x) for c in curves]
        ys.append(statistics.median(at))
    return xs, ys
