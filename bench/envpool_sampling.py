"""Sampling throughput of the two vector-environment backends: EnvPool's C++ engine against
gymnasium's vector environments, 2 samplers, in one process and federated.

    python -m bench.envpool_sampling [--quick] [--runs 3] [--samplers 2] [--cases cartpole-x4,pong-x8]

Both sides run the same program, ``examples/rl/sampling.py:Main`` (``pattern=fragment``):
each sampler steps ``num_envs`` copies with seeded random actions and sends every step
whole (a record of ``fragment`` rows x ``num_envs`` copies) to a collector, which times
itself from its startup reaction to the last record (building the environments, EnvPool's
import and the federation's start-up are not timed). Only ``backend`` differs:
``envpool`` (ours in the JSON lines) against ``gymnasium`` (the peer): CartPole's numpy
``CartPoleVectorEnv``, ALE's C++ ``AtariVectorEnv`` for Atari (84x84 grayscale, 4 stacked,
the same preprocessing as EnvPool's ``Pong-v5`` here; both on their own threads).

Cases (environment, copies per sampler, rows per fragment, total env steps):
``cartpole-x4`` (the PPO example's layout), ``cartpole-x32`` (a wide vector: per-call
costs amortized) and ``pong-x8``. Each run measures every case in each mode under both
backends, the backends' order alternating from run to run; the figure is the median of
``--runs``. Metric: environment steps per second summed over the samplers (reset rows
included: each is a step call). Results: ``bench/results/envpool_sampling.jsonl`` and ``.png``.
(Not ``bench/envpool.py``: run as a script, that file would shadow the ``envpool`` package.)
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from bench.common import Results, base_parser, paired_bars, progress, pyplot, save_figure, summarize
from bench.rf_runner import MODES, ProgramFailed, federated_available, run_program

PROGRAM = "examples/rl/sampling.py:Main"
BACKENDS = ("gymnasium", "envpool")  # the peer first
WHY = ("a backend comparison: EnvPool against gymnasium's vector environment under the same "
       "reactorfed program, process layout and work, not a comparison with another framework")


@dataclass(frozen=True)
class Case:
    name: str
    env: str
    num_envs: int
    fragment: int  # rows per fragment
    steps: int  # env steps of a full run, over every sampler and copy


CASES = {
    c.name: c
    for c in (
        Case("cartpole-x4", "CartPole-v1", 4, 100, 400_000),
        Case("cartpole-x32", "CartPole-v1", 32, 100, 3_200_000),
        Case("pong-x8", "Pong", 8, 32, 40_000),
    )
}
QUICK = 10  # --quick divides the step counts by this


def measure(case: Case, backend: str, mode: str, samplers: int, steps: int) -> dict[str, Any]:
    """One run of the sampling program; its collector's result (steps, seconds, steps_per_s)."""
    rows = steps // samplers // case.num_envs  # per sampler
    params = {"env": case.env, "num_samplers": samplers, "pattern": "fragment", "fragment": case.fragment,
              "steps": steps, "num_envs": case.num_envs, "backend": backend}
    return run_program(PROGRAM, params, mode, timeout=600, expect={"steps": rows * case.num_envs * samplers})


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--samplers", type=int, default=2)
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    args = p.parse_args(argv)
    unknown = [c for c in args.cases.split(",") if c not in CASES]
    if unknown:
        p.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    cases = [CASES[c] for c in args.cases.split(",")]
    runs = 1 if args.quick else args.runs
    div = QUICK if args.quick else 1
    modes = MODES if federated_available() else ("single",)
    if "federated" not in modes:
        progress("reactorfed launch not available: single-process mode only")
    samples: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for run in range(runs):
        order = BACKENDS if run % 2 == 0 else BACKENDS[::-1]  # neither backend always goes first
        for case in cases:
            for mode in modes:
                for backend in order:
                    progress(f"run {run + 1}/{runs}: {case.name} {mode} {backend}")
                    try:
                        r = measure(case, backend, mode, args.samplers, case.steps // div)
                    except ProgramFailed as e:
                        progress(f"{case.name} {mode} {backend} failed: {e}")
                        continue
                    samples.setdefault((case.name, mode, backend), []).append(r)
                    progress(f"  {r['steps_per_s']:,.0f} env steps/s ({r['steps']:,} steps in {r['seconds']:.2f} s)")
    res = Results("envpool_sampling", args.out)
    for case in cases:
        for mode in modes:
            ours, peer = samples.get((case.name, mode, "envpool"), []), samples.get((case.name, mode, "gymnasium"), [])
            if not ours or not peer:
                progress(f"{case.name} {mode}: a backend has no successful run; no result line")
                continue
            rate = [r["steps_per_s"] for r in ours]
            peer_rate = [r["steps_per_s"] for r in peer]
            res.add(f"{case.env} x{case.num_envs} fragment-{case.fragment} {mode}", "steps_per_s",
                    statistics.median(rate), "gymnasium", statistics.median(peer_rate), "higher", min(len(ours), len(peer)),
                    judged=False, why=WHY, samplers=args.samplers, num_envs=case.num_envs, fragment=case.fragment,
                    steps=ours[0]["steps"], mode=mode, envpool_samples=[round(x) for x in rate],
                    gymnasium_samples=[round(x) for x in peer_rate],
                    cpu_s_envpool=_median_cpu(ours), cpu_s_gymnasium=_median_cpu(peer))
    res.write()
    plot(res)
    progress("\n" + summarize(res.rows))
    return res


def _median_cpu(rs: list[dict[str, Any]]) -> float:
    """The median over runs of the CPU seconds of every process of a run (summed)."""
    return round(statistics.median(sum(r["cpu_s"].values()) for r in rs), 2)


def plot(res: Results) -> None:
    """Env steps/s per case, gymnasium's bar beside EnvPool's, the ratio above."""
    plt = pyplot()
    if plt is None or not res.rows:
        return
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(res.rows)), 4.5))
    paired_bars(ax, res.rows, "gymnasium vector env", "EnvPool")
    ax.set_ylabel("env steps/s (2 samplers, summed)")
    ax.legend(fontsize=8)
    ax.set_title(f"Sampling throughput by backend (median of {max(r['runs'] for r in res.rows)} runs; ratio: EnvPool / gymnasium)",
                 fontsize=10)
    save_figure(plt, fig, res.out_dir, "envpool_sampling.png")


if __name__ == "__main__":
    main()
