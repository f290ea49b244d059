"""Training throughput of SEED RL's plan (central batched inference) against the synchronous
plan, with the same samplers, environments and PPO updates, in one process and federated.

    python -m bench.seed [--quick] [--runs 3] [--widths 2x4,4x8] [--epochs 20,1]

Both sides run PPO on CartPole-v1 from its example, ``examples/rl/seed_ppo_cartpole.py``
(ours in the JSON lines) and ``examples/rl/ppo_cartpole.py`` (the peer), with the same
parameters: ``num_samplers`` x ``num_envs`` copies, 32 steps a fragment, one update per
fragment of every copy, ``update_epochs`` epochs of minibatches of 256, a fixed number of
updates (no target return). They differ only in who acts: under the synchronous plan
each sampler acts for its own copies with a numpy copy of the policy and sends a fragment
every 32 steps, and the weights go back to every sampler after each update; under SEED's
the learner acts for every copy in one torch forward pass each step, and a step is a
round trip between each sampler and the learner. The figure is the learner's: env steps
learned from (reset rows excluded) per second from its startup reaction to its last
update, learning included; the median of ``--runs``, the plans' order alternating per
run. ``--epochs 1`` makes learning cheap, so that the acting and the messages show.
Results: ``bench/results/seed.jsonl`` and ``.png``.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from bench.common import Results, base_parser, paired_bars, progress, pyplot, save_figure, summarize
from bench.rf_runner import MODES, ProgramFailed, federated_available, run_program

PROGRAMS = {"seed": "examples/rl/seed_ppo_cartpole.py:Main", "sync": "examples/rl/ppo_cartpole.py:Main"}
STEPS = 32  # rows per fragment
TOTAL = 51_200  # env steps of a full run (rows x copies x updates)
QUICK = 8  # --quick divides it by this
WHY = ("a plan comparison: two execution plans of the same PPO under reactorfed, same process layout, "
       "environments and updates, not a comparison with another framework")


def measure(plan: str, mode: str, samplers: int, envs: int, epochs: int, total: int) -> dict[str, Any]:
    """One training run; the learner's result."""
    iterations = math.ceil(total / (samplers * envs * STEPS))
    params = {"num_samplers": samplers, "num_envs": envs, "num_steps": STEPS, "ppo.total_timesteps": total,
              "target_return": 1e9, "ppo.update_epochs": epochs, "checkpoint": "", "progress": False, "seed": 1}
    if plan == "seed":
        params["device"] = "auto"
    return run_program(PROGRAMS[plan], params, mode, timeout=900, expect={"iterations": iterations})


def _width(text: str) -> tuple[int, int]:
    n, k = text.lower().split("x")
    return int(n), int(k)


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--widths", default="2x4,4x8", help="samplers x copies each, comma-separated (default 2x4,4x8)")
    p.add_argument("--epochs", default="20,1", help="PPO epochs per update, comma-separated (default 20,1)")
    args = p.parse_args(argv)
    try:
        widths = [_width(w) for w in args.widths.split(",")]
        epochs = [int(e) for e in args.epochs.split(",")]
    except ValueError:
        p.error(f"--widths takes NxK[,NxK...], --epochs integers; got {args.widths!r}, {args.epochs!r}")
    runs = 1 if args.quick else args.runs
    total = TOTAL // QUICK if args.quick else TOTAL
    modes = MODES if federated_available() else ("single",)
    samples: dict[tuple[int, int, int, str, str], list[dict[str, Any]]] = {}
    plans = ("sync", "seed")
    for run in range(runs):
        order = plans if run % 2 == 0 else plans[::-1]  # neither plan always goes first
        for n, k in widths:
            for e in epochs:
                for mode in modes:
                    for plan in order:
                        progress(f"run {run + 1}/{runs}: {n}x{k} {e} epochs {mode} {plan}")
                        try:
                            r = measure(plan, mode, n, k, e, total)
                        except ProgramFailed as err:
                            progress(f"  failed: {err}")
                            continue
                        r["steps_per_s"] = r["env_steps"] / r["seconds"]
                        samples.setdefault((n, k, e, mode, plan), []).append(r)
                        progress(f"  {r['steps_per_s']:,.0f} env steps/s ({r['env_steps']:,} in {r['seconds']:.2f} s)")
    res = Results("seed", args.out)
    for n, k in widths:
        for e in epochs:
            for mode in modes:
                ours, peer = samples.get((n, k, e, mode, "seed"), []), samples.get((n, k, e, mode, "sync"), [])
                if not ours or not peer:
                    progress(f"{n}x{k} {e} epochs {mode}: a plan has no successful run; no result line")
                    continue
                rate = [r["steps_per_s"] for r in ours]
                peer_rate = [r["steps_per_s"] for r in peer]
                res.add(f"CartPole {n}x{k} {e} epochs {mode}", "env_steps_per_s", statistics.median(rate), "sync_plan",
                        statistics.median(peer_rate), "higher", min(len(ours), len(peer)), judged=False, why=WHY,
                        samplers=n, num_envs=k, fragment=STEPS, update_epochs=e, mode=mode,
                        env_steps=ours[0]["env_steps"], iterations=ours[0]["iterations"], device=ours[0]["device"],
                        forward_passes=ours[0]["forward_passes"], quick=args.quick,
                        seed_samples=[round(x) for x in rate], sync_samples=[round(x) for x in peer_rate])
    res.write()
    plot(res)
    progress("\n" + summarize(res.rows))
    return res


def plot(res: Results) -> None:
    """Env steps/s per case, the synchronous plan's bar beside SEED's, the ratio above."""
    plt = pyplot()
    if plt is None or not res.rows:
        return
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 * len(res.rows)), 4.5))
    paired_bars(ax, res.rows, "synchronous plan (samplers act)", "SEED plan (central inference)")
    ax.set_ylabel("env steps/s learned from")
    ax.legend(fontsize=8)
    quick = " (--quick smoke run)" if any(r.get("quick") for r in res.rows) else ""
    ax.set_title(f"PPO on CartPole: SEED's plan / the synchronous plan (median of {max(r['runs'] for r in res.rows)})"
                 f"{quick}", fontsize=10)
    save_figure(plt, fig, res.out_dir, "seed.png")


if __name__ == "__main__":
    main()
