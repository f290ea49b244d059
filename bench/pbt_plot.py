"""bench/pbt.py's figure: the population's best return against wall time, one line per
run and side, and the median seconds to the target per side."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from bench.common import pyplot, save_figure

__all__ = ["best_curve", "plot"]

COLOURS = {"federated": "tab:blue", "single": "tab:cyan", "tuned": "tab:red"}


def best_curve(run: dict[str, Any]) -> list[tuple[float, float]]:
    """(seconds, the best trial's metric) over a run: reactorfed's rounds as they are
    (``[t, iteration, best]``), Ray's results (``[t, trial, iteration, metric]``) as the best
    of each trial's latest figure."""
    out: list[tuple[float, float]] = []
    latest: dict[int, float] = {}
    for point in run.get("curve", []):
        if len(point) == 3:
            t, _, m = point
            if m is not None:
                out.append((t, m))
            continue
        t, trial, _, m = point
        if m is None:
            continue
        latest[trial] = m
        out.append((t, max(latest.values())))
    return out


def plot(runs: dict[str, list[dict[str, Any]]], target: float, path: Path, peer: str) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [2, 1]})
    for system, rs in runs.items():
        colour = COLOURS.get(system, "tab:orange")
        for i, r in enumerate(rs):
            pts = best_curve(r)
            if pts:
                left.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=colour, alpha=0.8,
                          label=system if i == 0 else None, linestyle="--" if system == "single" else "-")
    left.axhline(target, color="grey", linestyle=":", linewidth=1)
    left.set_xlabel("seconds since every trial is training")
    left.set_ylabel("best trial: mean return, last 100 episodes")
    left.set_title("PBT, PPO on CartPole-v1, population 4: one line per run", fontsize=10)
    left.legend(fontsize=8)
    names = list(runs)
    medians = [statistics.median([math.inf if r["seconds"] is None else r["seconds"] for r in runs[n]]) for n in names]
    right.bar(range(len(names)), [m if math.isfinite(m) else 0 for m in medians],
              color=[COLOURS.get(n, "tab:orange") for n in names])
    for x, (n, m) in enumerate(zip(names, medians, strict=True)):
        reached = sum(r["reached"] for r in runs[n])
        right.annotate(f"{m:.0f} s" if math.isfinite(m) else "not reached", (x, m if math.isfinite(m) else 0),
                       ha="center", va="bottom", fontsize=8)
        right.annotate(f"{reached}/{len(runs[n])} reached", (x, 0), ha="center", va="bottom", fontsize=7,
                       xytext=(0, 12), textcoords="offset points", color="white" if math.isfinite(m) else "black")
    right.set_xticks(range(len(names)), [n if n != peer else "Ray Tune" for n in names], rotation=15, fontsize=8)
    right.set_ylabel(f"median seconds to {target:g}")
    right.set_title("lower is better", fontsize=10)
    return save_figure(plt, fig, path.parent, path.name)
