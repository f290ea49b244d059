"""Policy lag of APPO and Ape-X at two (and three) sampler speeds: how many learner updates
old the weights were that acted in each fragment (APPO) or transition (Ape-X) a learner
trained on, and how much logical time passed from their send to the update.

Logical time fixes every interleaving, so these figures are the same in one process,
federated and on any machine, loaded or not (``tests/rl/test_async_plan.py`` checks it for
a slowed sampler): one run of each, in one process, is the result. The sampler speed is
the logical period between two fragments of one sampler (``period_ms``); everything else
is the example's default.

    .venv/bin/python -m bench.policy_lag            # APPO at 2, 10, 40 ms; Ape-X at 4, 16 ms
    .venv/bin/python -m bench.policy_lag --quick    # shorter budgets

One JSON line per case (``bench/results/policy_lag.jsonl``): the lag's quantiles in
updates, its mean, and the logical time's min, median and max; a plot of each case's
cumulative distribution (``policy_lag.png``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, base_parser, progress, pyplot, save_figure
from reactorfed import Environment

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "rl"
#: (plan, sampler period in ms): APPO's default is 10 ms, Ape-X's 16 ms
CASES = [("appo", 2), ("appo", 10), ("appo", 40), ("apex", 4), ("apex", 16)]


def _example(name: str) -> Any:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its dataclasses look themselves up there)
    spec.loader.exec_module(module)
    return module


def run_case(plan: str, period_ms: int, quick: bool) -> dict[str, Any]:
    """The learner's result of one run (one process, fast mode)."""
    if plan == "appo":
        m = _example("appo_cartpole")
        args = m.Args(period_ms=period_ms, total_timesteps=20_000 if quick else 60_000, checkpoint="",
                      progress=False, target_return=1e9)
    else:
        m = _example("apex_dqn_cartpole")
        args = m.Args(period_ms=period_ms, total_timesteps=10_000 if quick else 30_000, checkpoint="",
                      progress=False, target_return=1e9)
    main = m.Main(args)
    Environment(fast=True).run(main)
    return dict(main.learner.result)


def summarize(plan: str, period_ms: int, result: dict[str, Any]) -> dict[str, Any]:
    hist = {int(k): v for k, v in result["policy_lag_iterations"].items()}
    n = sum(hist.values())
    lags = sorted(hist)

    def quantile(q: float) -> int:
        seen = 0
        for lag in lags:
            seen += hist[lag]
            if seen >= q * n:
                return lag
        return lags[-1]

    ns = result["policy_lag_ns"]
    return {"bench": "policy_lag", "case": f"{plan} period {period_ms} ms", "plan": plan, "period_ms": period_ms,
            "updates": result.get("iterations"), "trained_on": n,
            "lag_updates": {"min": lags[0], "p50": quantile(0.5), "p90": quantile(0.9), "p99": quantile(0.99),
                            "max": lags[-1], "mean": round(sum(k * v for k, v in hist.items()) / n, 2)},
            "lag_ms": {"min": ns["min"] / 1e6, "median": ns["median"] / 1e6, "max": ns["max"] / 1e6},
            "histogram": {str(k): hist[k] for k in lags}}


def plot(rows: list[dict[str, Any]], out: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, plan, title in ((axes[0], "appo", "APPO (lag of each fragment)"),
                            (axes[1], "apex", "Ape-X (lag of each replayed transition)")):
        for row in (r for r in rows if r["plan"] == plan):
            hist = {int(k): v for k, v in row["histogram"].items()}
            xs, total, ys = sorted(hist), sum(hist.values()), []
            for x in xs:
                ys.append((ys[-1] if ys else 0) + hist[x] / total)
            ax.step(xs, ys, where="post", label=f"sampler period {row['period_ms']} ms")
        ax.set_title(title)
        ax.set_xlabel("policy lag (learner updates)")
        ax.set_ylabel("share trained on, at most this lag")
        ax.legend()
    return save_figure(plt, fig, out, "policy_lag")


def main() -> None:
    args = base_parser(__doc__.splitlines()[0]).parse_args()
    rows = []
    for plan, period in CASES:
        progress(f"policy_lag: {plan} at a sampler period of {period} ms")
        row = summarize(plan, period, run_case(plan, period, args.quick))
        print(json.dumps({k: v for k, v in row.items() if k != "histogram"}), flush=True)
        rows.append(row)
    out: Path = args.out or RESULTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    with (out / "policy_lag.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    plot(rows, out)


if __name__ == "__main__":
    main()
