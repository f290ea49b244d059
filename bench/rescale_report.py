"""The result lines and the plot of ``bench/rescale.py``, from the figures of its runs
(dicts made by ``live_run`` and ``restart_run``; ``a.b`` paths name nested figures)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench.common import Results, pyplot, save_figure
from bench.rescale_timeline import Row


def _get(run: dict[str, Any], path: str) -> float:
    v: Any = run
    for k in path.split("."):
        v = v[k]
    return float(v)


def _each(runs: list[dict[str, Any]], path: str) -> list[float]:
    return [round(_get(r, path), 3) for r in runs]


def _med(runs: list[dict[str, Any]], path: str) -> float:
    return statistics.median(_get(r, path) for r in runs)


WHY_1 = ("live rescaling against the restart path kubectl scale took before: the same program, machine and "
         "processes (a fresh interpreter per member), no pods on either side")
WHY_2 = ("issue 19's target: no pause longer than one iteration, so no gap between the learner's iterations "
         "longer than two")
WHY_3 = "the same run's phases: the throughput at the learner before, during and after the change"


def report(res: Results, live: list[dict[str, Any]], restart: list[dict[str, Any]], window: int, before: int,
           wide: int, failed: dict[str, list[str]]) -> None:
    """The result lines of the three benchmarks, medians of the complete runs of each path
    (``failed``: the errors of the others, by path, kept in every line)."""
    n = len(live)
    lost = {"failed_runs": {k: v for k, v in failed.items() if v}} if any(failed.values()) else {}
    res.add(f"join {before}->{wide}: request to the new members' first samples", "first_sample_s",
            _med(live, "first_sample_s"), "restart", _med(restart, "first_sample_s"), "lower", n, judged=False,
            why=WHY_1, samples=_each(live, "first_sample_s"), peer_samples=_each(restart, "first_sample_s"),
            first_of_new_s=round(_med(live, "first_of_new_s"), 3), connected_s=round(_med(live, "connected_s"), 3),
            admitted_s=round(_med(live, "admitted_s"), 3),
            restart_learner_exited_s=round(_med(restart, "learner_exited_s"), 3),
            restart_stopped_s=round(_med(restart, "stopped_s"), 3),
            restart_running_s=round(_med(restart, "running_s"), 3), peer_runs=len(restart), **lost)
    for change, label in (("join", f"join {before}->{wide}"),
                          ("joined", f"join {before}->{wide}, once connected"),
                          ("leave", f"leave {wide}->{before}")):
        iteration = _med(live, f"{change}.iteration_ms")
        pauses = [round(max(0.0, r[change]["gap_ms"] - r[change]["iteration_ms"]), 1) for r in live]
        extra: dict[str, Any] = {
            "join": {"restart_pause_ms": round(_med(restart, "pause_ms"), 1)},
            "joined": {"connected_s": round(_med(live, "connected_s"), 3)},
            "leave": {"left_s": round(_med(live, "left_s"), 3), "exited_s": round(_med(live, "exited_s"), 3)},
        }[change]
        res.add(f"{label}: longest gap within {window} iterations", "longest_gap_ms", _med(live, f"{change}.gap_ms"),
                "target: two iterations", 2 * iteration, "lower", n, judged=False, why=WHY_2,
                samples=_each(live, f"{change}.gap_ms"), pause_ms=statistics.median(pauses), pause_samples=pauses,
                longest_gap_rounds=_each(live, f"{change}.rounds"), iteration_ms=round(iteration, 1),
                meets_bar=all(r[change]["gap_ms"] <= 2 * r[change]["iteration_ms"] for r in live),
                learner_change_gaps_ms=[r["change_gaps_ms"] for r in live], **extra, **lost)
    ref = _med(live, "samples_per_s.before")
    for phase, label in (("after", f"{before} samplers after {before}->{wide}->{before}"),
                         ("during", f"{wide} samplers (during)")):
        res.add(label, "samples_per_s", _med(live, f"samples_per_s.{phase}"), f"{before} samplers before",
                ref, "higher", n, judged=False, why=WHY_3, samples=_each(live, f"samples_per_s.{phase}"),
                peer_samples=_each(live, "samples_per_s.before"), phase_s=_each(live, f"phase_s.{phase}"),
                iteration_ms=round(_med(live, f"iteration_ms.{phase}"), 1),
                rti_grants_per_iteration=_each(live, f"rti_grants_per_iteration.{phase}"),
                peer_rti_grants_per_iteration=_each(live, "rti_grants_per_iteration.before"), **lost)


#: the bar for a plan's pause around a change: at most one iteration plus this
BAR_MS = 50.0
WHY_BAR = ("the bar for every plan: the learner's pause around a change (its longest gap less one iteration) "
           f"at most one iteration plus {BAR_MS:.0f} ms")


def report_live(res: Results, plan: str, live: list[dict[str, Any]], window: int, before: int, wide: int,
                failed: dict[str, list[str]]) -> None:
    """The result lines of a plan's live path alone (no restart peer): the pauses around the
    join and the leave against the bar, the first samples, the throughput by phase."""
    n = len(live)
    lost = {"failed_runs": {k: v for k, v in failed.items() if v}} if any(failed.values()) else {}
    res.add(f"{plan}: join {before}->{wide}: request to the new members' first samples", "first_sample_s",
            _med(live, "first_sample_s"), "none", 0.0, "lower", n, judged=False, why=WHY_1,
            samples=_each(live, "first_sample_s"), connected_s=round(_med(live, "connected_s"), 3),
            admitted_s=round(_med(live, "admitted_s"), 3), **lost)
    for change, label in (("join", f"join {before}->{wide}"),
                          ("joined", f"join {before}->{wide}, once connected"),
                          ("leave", f"leave {wide}->{before}")):
        iteration = _med(live, f"{change}.iteration_ms")
        pauses = [round(max(0.0, r[change]["gap_ms"] - r[change]["iteration_ms"]), 1) for r in live]
        res.add(f"{plan}: {label}: the learner's longest pause within {window} iterations", "pause_ms",
                statistics.median(pauses), f"target: one iteration + {BAR_MS:.0f} ms", iteration + BAR_MS, "lower",
                n, judged=False, why=WHY_BAR, samples=pauses, longest_gap_ms=_each(live, f"{change}.gap_ms"),
                longest_gap_rounds=_each(live, f"{change}.rounds"), iteration_ms=round(iteration, 1),
                meets_bar=all(p <= r[change]["iteration_ms"] + BAR_MS for p, r in zip(pauses, live, strict=True)),
                learner_change_gaps_ms=[r["change_gaps_ms"] for r in live], **lost)
    ref = _med(live, "samples_per_s.before")
    for phase, label in (("after", f"{before} samplers after {before}->{wide}->{before}"),
                         ("during", f"{wide} samplers (during)")):
        res.add(f"{plan}: {label}", "samples_per_s", _med(live, f"samples_per_s.{phase}"), f"{before} samplers before",
                ref, "higher", n, judged=False, why=WHY_3, samples=_each(live, f"samples_per_s.{phase}"),
                iteration_ms=round(_med(live, f"iteration_ms.{phase}"), 1), **lost)


def _rate(rows: list[Row], t0: int, bin_s: float = 0.5) -> tuple[list[float], list[float]]:
    """Env steps per second at the learner in bins of ``bin_s``, from ``t0``."""
    bins: dict[int, int] = {}
    for r in rows:
        k = int((r.wall_ns - t0) / 1e9 / bin_s)
        bins[k] = bins.get(k, 0) + r.steps
    ks = range(min(bins), max(bins) + 1) if bins else range(0)
    return [k * bin_s for k in ks], [bins.get(k, 0) / bin_s for k in ks]


def plot(res: Results, live: dict[str, Any], restart: dict[str, Any], out: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    bars = [(r["case"].split(":")[0], r["reactorfed"], r["peer"], r["peer_value"], r["metric"]) for r in res.rows]
    for ax, metric, unit in ((axes[0][0], "first_sample_s", "s"), (axes[0][1], "longest_gap_ms", "ms"),
                             (axes[1][0], "samples_per_s", "env steps / s")):
        part = [b for b in bars if b[4] == metric]
        xs = range(len(part))
        ax.bar([x - 0.2 for x in xs], [b[1] for b in part], 0.4, label="live (reactorfed)")
        ax.bar([x + 0.2 for x in xs], [b[3] for b in part], 0.4, label="peer")
        ax.set_xticks(list(xs), [f"{b[0]}\nvs {b[2]}" for b in part], fontsize=8)
        ax.set_ylabel(unit)
        ax.set_title(metric, fontsize=10)
        ax.legend(fontsize=8)
    ax = axes[1][1]
    x, y = _rate(live["rows"], live["t_join"])
    ax.plot(x, y, label="live: 4 -> 8 -> 4")
    ax.axvline((live["t_leave"] - live["t_join"]) / 1e9, color="gray", linestyle=":", linewidth=0.8)
    x, y = _rate(restart["rows"], restart["t_req"])
    ax.plot(x, y, label="restart: 4 -> 8")
    ax.axvline(0, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xlabel("seconds after the scale request (dotted: the leave's)")
    ax.set_ylabel("env steps / s at the learner (0.5 s bins)")
    ax.set_title("one run of each path", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle("live rescaling of federated Q-learning against the restart path")
    return save_figure(plt, fig, out, "rescale.png")
