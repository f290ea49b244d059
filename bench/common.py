"""Shared benchmark plumbing: the JSON-lines result convention, medians, plots.

Every benchmark prints one JSON object per line on stdout (progress goes to
stderr) and appends the same lines to ``bench/results/NAME.jsonl``.  ``ratio``
is always oriented so that a value above 1 means reactorfed wins. Every line says
whether it is judged (``"judged": true``: like for like) or context, and why
(``"why"``): see :func:`classify`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

RESULTS_DIR = Path(__file__).resolve().parent / "results"

Better = Literal["higher", "lower"]


def progress(msg: str) -> None:
    """Progress for a human: always on stderr, never mixed into results."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _busy_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat (clock ticks)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # (guest time is counted in user time already)
    return total - idle, total


def wait_quiet(max_s: float = 30.0, busy_below: float = 0.1, window_s: float = 0.5) -> float:
    """Wait until the machine is quiet: two windows in a row in which less than
    ``busy_below`` of its CPU time was busy (processes just started, such as Ray's
    daemons after ``ray.init``, settle first). Gives up after ``max_s``; returns the
    seconds waited. Called right before a measurement's timed part."""
    t0 = time.monotonic()
    calm = 0
    while calm < 2 and time.monotonic() - t0 < max_s:
        b0, a0 = _busy_jiffies()
        time.sleep(window_s)
        b1, a1 = _busy_jiffies()
        calm = calm + 1 if a1 > a0 and (b1 - b0) / (a1 - a0) < busy_below else 0
    waited = time.monotonic() - t0
    if calm < 2:
        progress(f"the machine did not quiet down within {max_s:.0f} s; measuring anyway")
    return waited


def median_of(runs: int, fn: Callable[[], float]) -> tuple[float, list[float]]:
    """Run ``fn`` ``runs`` times; return the median and every sample."""
    samples = [fn() for _ in range(runs)]
    return statistics.median(samples), samples


def ratio(ours: float, peer: float, better: Better) -> float | None:
    """ours against the peer (> 1: reactorfed wins); None where there is no ratio (a
    figure of 0: no peer, or nothing measured), which JSON writes as null."""
    if better == "higher":
        return ours / peer if peer else None
    return peer / ours if ours else None


def classify(bench: str, case: str, peer: str) -> tuple[bool, str]:
    """Whether a result row is judged (like for like) or context, and why.

    Judged: reactorfed against Ray with the same synchronisation pattern, the same
    process layout and the same data on both sides. Everything else gives context:
    one process against Ray's actors, an open loop against Ray's closed loop, the raw
    ceilings (no framework), other peers (xronos, raw ZeroMQ, the RTI's own figures).
    """
    if bench.split("_x")[0] not in ("gym_sampling", "atari_sampling", "qlearning", "marl"):  # (gym_sampling_x16 too)
        return False, f"{bench}: the runtime's own costs against {peer}, not the RL comparison with Ray"
    if peer.startswith("raw"):
        return False, "the raw ceiling: the same work with no framework, the best any framework can do"
    if "raw" in case and "no framework" in case:
        return False, "the raw ceiling against Ray: no framework on our side"
    if "single" in case:
        return False, "one process (reactions on one thread) against Ray's actor per sampler or agent"
    if peer not in ("ray", "ray-grouped"):
        return False, f"peer {peer} is not Ray"
    if " step " in f" {case} ":
        return False, "open loop (each sampler steps on its own) against Ray's closed per-step rounds"
    if "in 1 federate" in case:
        if peer == "ray-grouped":
            return True, "every agent in one process on both sides (one federate, one actor), same steps, same data"
        return False, "every agent in one federate against Ray's actor per agent: a different process layout"
    if "federated" not in case:
        return False, "not a federated run"
    if bench.startswith(("gym_sampling", "atari_sampling")):
        pattern = "closed-loop per-step rounds" if "step-sync" in case else "rollout fragments consumed as they arrive"
        return True, f"{pattern}, a process per sampler, every step sent whole (the same record), on both sides"
    if bench == "qlearning":
        return True, "a process per sampler on both sides, the same packed fragments and weights each iteration"
    return True, "a process per agent on both sides, per-step scatter of observations and gather of actions"


def pyplot() -> Any | None:
    """matplotlib's pyplot on a file backend, or None (said once) when it is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        progress("matplotlib missing: no plot (pip install 'reactorfed[bench]')")
        return None
    return plt


def paired_bars(ax: Any, rows: list[dict[str, Any]], peer_label: str, ours_label: str) -> None:
    """One case a pair: the peer's bar (``peer_value``) beside ours (``reactorfed``), the
    ratio above, cases along x (log y)."""
    xs = range(len(rows))
    w = 0.4
    ax.bar([x - w / 2 for x in xs], [r["peer_value"] for r in rows], w, label=peer_label)
    ax.bar([x + w / 2 for x in xs], [r["reactorfed"] for r in rows], w, label=ours_label)
    for x, r in zip(xs, rows, strict=True):
        ax.annotate(f"{r['ratio']:.2f}x", (x, max(r["reactorfed"], r["peer_value"])), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(xs), [r["case"] for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")


def save_figure(plt: Any, fig: Any, out: Path, name: str) -> Path:
    """Lay ``fig`` out, write it to ``out/name`` and close it."""
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def federates_axis(ax: Any) -> None:
    """An x axis of federate counts (powers of two)."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel("federates (N)")


class Results:
    """Collects result lines, echoes them to stdout, writes JSONL and plots."""

    def __init__(self, bench: str, out_dir: Path | None = None) -> None:
        self.bench = bench
        self.out_dir = out_dir or RESULTS_DIR
        self.rows: list[dict[str, Any]] = []

    def add(
        self,
        case: str,
        metric: str,
        ours: float,
        peer: str,
        peer_value: float,
        better: Better,
        runs: int,
        **extra: Any,
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "bench": self.bench,
            "case": case,
            "metric": metric,
            "reactorfed": round(ours, 3),
            "peer": peer,
            "peer_value": round(peer_value, 3),
            "ratio": None if (r := ratio(ours, peer_value, better)) is None else round(r, 3),
            "runs": runs,
            "better": better,
        }
        row.update(extra)
        if "judged" not in row:
            row["judged"], row["why"] = classify(self.bench, case, peer)
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        return row

    def write(self) -> Path:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / f"{self.bench}.jsonl"
        with path.open("w") as f:
            for row in self.rows:
                f.write(json.dumps(row) + "\n")
        return path

    def plot(self, title: str | None = None) -> Path | None:
        """Grouped bars per case: reactorfed beside the peer, one panel per metric."""
        plt = pyplot()
        if plt is None:
            return None
        metrics = list(dict.fromkeys(r["metric"] for r in self.rows))
        ncols = min(3, len(metrics))
        nrows = -(-len(metrics) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(6 * ncols, 4.2 * nrows), squeeze=False)
        for ax in axes.flat[len(metrics):]:
            ax.set_visible(False)
        for ax, metric in zip(axes.flat, metrics, strict=False):
            rows = [r for r in self.rows if r["metric"] == metric]
            xs = range(len(rows))
            width = 0.4
            # (a negative value marks "never reached": no bar, said in the label)
            ax.bar([x - width / 2 for x in xs], [max(0, r["reactorfed"]) for r in rows], width, label="reactorfed")
            ax.bar([x + width / 2 for x in xs], [max(0, r["peer_value"]) for r in rows], width, label="peer")
            # The peer can differ per case: name it under the case.
            ax.set_xticks(list(xs), [f"{r.get('short', r['case'])}\nvs {r['peer']}" for r in rows], rotation=20,
                          ha="right", fontsize=8)
            ax.set_ylabel(metric)
            values = [v for r in rows for v in (r["reactorfed"], r["peer_value"]) if v > 0]
            if values and max(values) / min(values) > 30:
                ax.set_yscale("log")
            for x, r in zip(xs, rows, strict=True):
                mark = "" if r.get("meets_bar") is None else (" ok" if r["meets_bar"] else " MISS")
                if r["ratio"] is not None:
                    label = f"{r['ratio']:.2f}x"
                elif "difference" in r:  # (returns that may be negative: their difference)
                    label = f"{r['difference']:+.3g}"
                else:  # (-1: that side's median never reached the threshold)
                    label = f"{r['peer'] if r['peer_value'] < 0 else 'reactorfed'} never"
                ax.annotate(f"{label}{mark}", (x, max(r["reactorfed"], r["peer_value"], 0)),
                            ha="center", va="bottom", fontsize=8)
            ax.set_title(f"{metric} ({rows[0]['better']} is better)", fontsize=10)
            ax.legend(fontsize=8)
        fig.suptitle(title or self.bench)
        return save_figure(plt, fig, self.out_dir, f"{self.bench}.png")


def base_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="short run that still prints every result line")
    p.add_argument("--runs", type=int, default=3, help="repetitions; the median is reported (default 3)")
    p.add_argument("--out", type=Path, default=RESULTS_DIR, help="directory for JSONL results and PNG plots")
    return p


def summarize(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| bench | case | metric | reactorfed | peer | peer value | ratio |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['bench']} | {r['case']} | {r['metric']} | {r['reactorfed']} | {r['peer']} | {r['peer_value']} | {r['ratio']} |"
        )
    return "\n".join(lines)


def load(path: Path) -> Results:
    """The results of an earlier run, from its JSONL file."""
    res = Results(path.stem, path.parent)
    res.rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return res


if __name__ == "__main__":
    # python -m bench.common bench/results/*.jsonl: redraw the plots of earlier runs.
    for arg in sys.argv[1:]:
        res = load(Path(arg))
        print(res.plot(f"{res.bench} (ratio > 1: reactorfed wins)"))
