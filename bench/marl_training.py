"""Multi-agent PPO on MPE ``simple_spread``: reactorfed's IPPO and MAPPO (one policy shared
by the three agents) against RLlib 2.60's multi-agent PPO with one shared policy, the same
settings on both sides, in one run.

    python -m bench.marl_training [--quick] [--seeds 1,2,3] [--time-limit 100]
                                  [--tuned auto|always|never] [--out bench/results/marl_training.jsonl]

**The sides.** reactorfed runs ``examples/rl/ippo_spread.py`` and ``mappo_spread.py`` as a
user runs them, federated (``reactorfed launch ... --fast``: the RTI, one process for the
sampler, one for the shared policy's learner), with the settings of
:data:`~bench.marl_settings.SETTINGS` (``--param``). RLlib runs PPO with
``multi_agent(policies={"shared"})`` on the same task through ``ParallelPettingZooEnv``
(``bench/rllib_marl_runner.py``), its learner in the driver and one env runner actor: one
env runner per reactorfed sampler, the same process layout, the same data across the same
boundaries (a round's rollouts to the learner, its weights back). The task on both sides:
``mpe2``'s ``simple_spread_v3``, N=3, max_cycles=25, discrete actions, local_ratio=0.5
(mpe2's default; reactorfed builds it with the default).

**What is equal** (:data:`~bench.marl_settings.SETTINGS`, checked by
:func:`~bench.marl_settings.settings_differ` before any run): the 64-64 tanh networks (a
separate actor and critic), learning rate 7e-4 (no annealing), gamma 0.99, GAE lambda
0.95, clip 0.2, 10 epochs, minibatches of 200 agent rows, 8 env copies x 25 steps a round
(200 env steps, 600 agent rows: 3 minibatches an epoch on both sides; RLlib requires a
minibatch no larger than the batch it counts in env steps, so the MAPPO paper's one
minibatch of 600 rows is not expressible there), entropy coefficient 0.01, value loss
coefficient 0.5 on the squared error, no value clipping, gradient norm clipped at 0.5,
advantages normalized; the MAPPO paper's MPE settings except its minibatch count.

**What cannot be made equal.** MAPPO's centralized critic (the global state, agent-specific)
has no built-in RLlib counterpart: MAPPO is compared with RLlib's PPO as the peer (the same
RLlib runs serve both cases), and so is its value normalization and Huber value loss
(RLlib has neither). RLlib normalizes advantages over the whole batch, reactorfed per
minibatch; Adam's epsilon is 1e-5 in reactorfed, RLlib's 1e-8; RLlib's minibatches are
cut cyclically from the batch, reactorfed's from a fresh permutation each epoch.

**The return** (the judge, the same on both sides): the mean, over the last 100 finished
training episodes, of each episode's return *per agent*: the team's return (every agent's
rewards summed over the episode) divided by the agents. simple_spread's reward is mostly
shared (half the team's coverage term, half each agent's own collisions), so the per-agent
figure is what one agent earns. reactorfed's shared-policy learner logs exactly that
(:class:`reactorfed.rl.plans.multi_agent.PolicyTrainer`: each episode once, the mean of its
agents' returns); RLlib's callback logs ``MultiAgentEpisode.get_return() / N``. Both curves
go through one judge here (:mod:`bench.marl_judge`): a point counts once 100 episodes can
have ended (``(100 + copies) x max_cycles`` env steps), on the env steps of the task
(every agent acting once is one step; reactorfed's learner counts agent rows, divided by
N here). The clock starts at the start of training on both sides (reactorfed's learner's
startup reaction, RLlib's first ``train()``): no imports, process or actor start-up.

**The threshold** (-22 per agent, a team return of -66; ``--quick``: -26). Chosen from one
run of each side on a shared machine (load 5 to 20: the curves against env steps hold, the
times do not), seed 1, these settings: a random policy scores about -27 per agent (-80.7
for the team over 200 episodes). reactorfed's IPPO: -25.7 at 4k env steps, -22.4 at 19k,
-21.5 at 27k, -20.7 at 35k. reactorfed's MAPPO: -29.5 at 5.8k, down to -36.5 at 11.5k, then
-21.3 at 23k and -19.5 to -20.8 from 29k to 48k. RLlib's PPO over its first 15k steps (all
it sampled in 200 s there): from -26.3 down to -33, not yet recovering (MAPPO's dip above
recovered after 12k steps). -22 is where both reactorfed cases arrive at about 20k-25k env
steps, well clear of the random policy's noise: RLlib samples 22k steps in 100 s at the
pace seen there (220 steps/s at load 5; more on a quiet machine), so it can reach it within
its time limit if it learns about as fast per sample.
``return_at_20k_steps``: the judge's figure at 20,000 env steps, a point both sides reach
within the time limit. The lead's quiet run may move the threshold (one constant,
:data:`THRESHOLD`).

**Budgets.** Each run stops at 100,000 env steps or, on RLlib's side, at its first
iteration past ``--time-limit`` seconds of training (100 by default); reactorfed's run has
no clock limit of its own (its rounds are counted, not timed) and goes on to its step
budget, and nothing it did past the limit is judged: both curves are cut at the limit.
A side that has not reached the threshold by then counts as never reaching it (no ratio).
The full run is 3 seeds x (IPPO, MAPPO, RLlib) = 9 runs: reactorfed's of 50-125 s of
training each (100k steps at 800-2000 steps/s) plus about 10 s of start-up, RLlib's of
100 s plus 20-30 s of Ray's start-up: about 15-20 minutes on a quiet 2-core machine; and
when RLlib's median does not reach the threshold, 3 more RLlib runs with its own tuned
settings (below), about 7 minutes more.

**RLlib's own tuned settings** (``--tuned``; ``auto``, the default: only when RLlib's median
on the shared settings never reached the threshold; ``--quick`` runs them always, to cover
every line). RLlib ships nothing tuned for MPE; its tuned multi-agent PPO example,
``multi_agent_cartpole_ppo.py``, is the variant (:mod:`bench.marl_rllib` says what it sets
and why it was chosen), one run per seed after the interleaved ones, on the same task,
layout, budget, time limit and judge, as the peer ``rllib-tuned``.

**Published MAPPO.** Yu et al., "The Surprising Effectiveness of PPO in Cooperative
Multi-Agent Games" (NeurIPS 2022 Datasets and Benchmarks, arXiv 2103.01955) train MAPPO on
MPE Spread with their own MPE (``marlbenchmark/on-policy``, ``train_mpe_spread.sh``: 128
rollout threads, 20M env steps, ReLU, 10 epochs, 1 minibatch, lr 7e-4). Their reward is
not mpe2's: every agent receives the sum over agents of [minus the landmarks' minimum
distances, minus 1 per collision, an agent counted as colliding with itself], and
``average_episode_rewards`` is the mean reward per agent and step times 25. No local_ratio
weighting, a constant self-collision term and the agents' sum: the scale differs from this
benchmark's, so no published figure is compared here (the exact table value could not be
retrieved with its definition, and none is quoted).

Lines: per case (IPPO, MAPPO) against the peer ``rllib``, and against ``rllib-tuned`` when
it ran (the case's label names the settings: ``vs RLlib PPO, RLlib's tuned settings
(multi_agent_cartpole_ppo)``): ``seconds_to_threshold``, ``env_steps_to_threshold`` (lower
is better; medians over seeds, a run that never reached it infinitely slow) and
``return_at_20k_steps`` (higher is better: returns are negative, so the line carries their
difference and no ratio). ``marl_training.png``: the judge's return against env steps and
against seconds of training, median over seeds per side.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import Results, base_parser, progress, pyplot, save_figure
from bench.marl_judge import judged, median_curve, ours_curve, warmup_steps
from bench.marl_rllib import PEER, TUNED_PEER, TUNED_SOURCE, run_rllib, tuned_hp
from bench.marl_settings import (
    CASES,
    TASK,
    Case,
    example_settings,
    reactorfed_params,
    rllib_hp,
    settings_differ,
)
from bench.rf_runner import run_program

__all__ = ["PEERS", "Plan", "case_label", "main", "parse_args", "report", "wants_tuned"]

THRESHOLD, QUICK_THRESHOLD = -22.0, -26.0
TOTAL, QUICK_TOTAL = 100_000, 6_000  # env steps a run
AT_STEPS, QUICK_AT_STEPS = 20_000, 3_000
QUICK_TIME_LIMIT = 40.0

#: the peer's sides, as the case's label names them
PEERS = {PEER: "RLlib PPO (shared policy)",
         TUNED_PEER: f"RLlib PPO (shared policy), RLlib's tuned settings ({TUNED_SOURCE})"}
WHY = {PEER: "same settings, same task, same judge on both sides; one sampler process against one env runner "
             "actor, the learner in its own process (reactorfed) or the driver (RLlib)",
       TUNED_PEER: f"RLlib with its own tuned settings (its {TUNED_SOURCE} example: network, loss, batch), "
                   "reactorfed with the benchmark's; the same task, layout, budget, time limit and judge"}


@dataclass(frozen=True)
class Plan:
    """What a run of the benchmark does, from its arguments."""

    seeds: list[int]
    cases: list[str]
    threshold: float
    total: int
    at_steps: int
    time_limit: float
    tuned: str  # auto, always, never
    out_dir: Path
    bench: str


def parse_args(argv: list[str] | None = None) -> Plan:
    p = base_parser(" ".join((__doc__ or "").split("\n\n")[0].split()))
    p.add_argument("--seeds", default="", help="comma-separated seeds (default: 1..--runs)")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--time-limit", type=float, default=100.0, help="seconds of training per run before it stops")
    p.add_argument("--tuned", choices=("auto", "always", "never"), default="auto",
                   help=f"also run RLlib with its own tuned settings ({TUNED_SOURCE}), a run per seed: when "
                        "its median on the shared settings did not reach the threshold (auto; --quick: always)")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s] or list(range(1, args.runs + 1))
    names = [c for c in args.cases.split(",") if c]
    if unknown := [c for c in names if c not in CASES]:
        p.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    out: Path = args.out
    out_dir, bench = (out.parent, out.stem) if out.suffix == ".jsonl" else (out, "marl_training")
    if args.quick:  # one seed, small budgets, a low bar, every side: every line and the plot in minutes
        return Plan(seeds[:1], names, QUICK_THRESHOLD, QUICK_TOTAL, QUICK_AT_STEPS, QUICK_TIME_LIMIT,
                    "always" if args.tuned == "auto" else args.tuned, out_dir,
                    f"{bench}_quick" if bench == "marl_training" else bench)
    return Plan(seeds, names, THRESHOLD, TOTAL, AT_STEPS, args.time_limit, args.tuned, out_dir, bench)


def wants_tuned(mode: str, peer_runs: list[dict[str, Any]]) -> bool:
    """Whether RLlib's tuned settings run: always, never, or (auto) when the median of its
    runs on the shared settings never reached the threshold."""
    return mode == "always" or (mode == "auto" and not math.isfinite(_median([r["seconds"] for r in peer_runs])))


def case_label(name: str, peer: str) -> str:
    """A result line's case: reactorfed's case against the peer's side, with its settings."""
    return f"{name} federated: {CASES[name].title} vs {PEERS[peer]}, simple_spread N=3"


def _median(xs: list[float | None]) -> float:
    """The median, a run that never reached the threshold counting as infinitely slow."""
    return statistics.median([math.inf if x is None else x for x in xs])


def report(res: Results, name: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], seeds: list[int],
           threshold: float, at_steps: int, peer: str = PEER) -> None:
    common: dict[str, Any] = {
        "seeds": seeds, "threshold": threshold, "judged": True, "short": f"{name} to {threshold:g}",
        "return": "per agent: the team's episode return / 3, mean of the last 100 finished episodes",
        "why": WHY[peer]}
    if peer == TUNED_PEER:
        common["peer_settings"] = {"source": f"RLlib's examples/algorithms/ppo/{TUNED_SOURCE}.py", **tuned_hp()}
    label = case_label(name, peer)
    for metric, key in (("seconds_to_threshold", "seconds"), ("env_steps_to_threshold", "env_steps")):
        mine, other = [r[key] for r in ours], [r[key] for r in theirs]
        m, p = _median(mine), _median(other)
        extra: dict[str, Any] = {} if math.isfinite(m) and math.isfinite(p) else {"ratio": None}
        res.add(label, metric, m if math.isfinite(m) else -1.0, peer, p if math.isfinite(p) else -1.0, "lower",
                len(seeds), per_seed=mine, peer_per_seed=other, reached=sum(r["reached"] for r in ours),
                peer_reached=sum(r["reached"] for r in theirs), **extra, **common)
    mine_r, peer_r = [r["return_at"] for r in ours], [r["return_at"] for r in theirs]
    med = statistics.median([x for x in mine_r if x is not None] or [math.nan])
    peer_med = statistics.median([x for x in peer_r if x is not None] or [math.nan])
    res.add(label, f"return_at_{at_steps // 1000}k_steps", med, peer, peer_med, "higher", len(seeds),
            per_seed=mine_r, peer_per_seed=peer_r, ratio=None, difference=round(med - peer_med, 3),
            note="returns are negative: compared by their difference (> 0: reactorfed's is higher)", **common)


def run_ours(case: Case, seed: int, total: int, time_limit: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    r = run_program(case.program, reactorfed_params(case, seed, total), mode="federated",
                    timeout=3 * time_limit + 300, result_of=".policies[0]")
    return {"curve": ours_curve(r.get("curve", []), int(TASK["num_agents"])), "train_seconds": r["seconds"],
            "wall_seconds": time.perf_counter() - t0}


def plot_curves(runs: dict[str, list[dict[str, Any]]], threshold: float, at_steps: int, time_limit: float,
                res: Results) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    colours = {"ippo": "tab:blue", "mappo": "tab:green", PEER: "tab:orange", TUNED_PEER: "tab:red"}
    names = {"ippo": "reactorfed IPPO", "mappo": "reactorfed MAPPO", PEER: "RLlib PPO, the same settings",
             TUNED_PEER: f"RLlib PPO, its tuned settings ({TUNED_SOURCE})"}
    for side, rs in runs.items():
        curves = [r["curve"] for r in rs]
        for ax, axis in zip(axes, (1, 0), strict=True):
            for c in curves:  # (each seed, faint)
                pts = [p for p in c if not math.isnan(p[2])]
                ax.plot([p[axis] for p in pts], [p[2] for p in pts], color=colours[side], alpha=0.2, linewidth=0.8)
            xs, ys = median_curve(curves, axis)
            ax.plot(xs, ys, color=colours[side], linewidth=2, label=f"{names[side]} (median of {len(curves)})")
    for ax, xlabel in zip(axes, ("env steps (all agents acting once)", "seconds of training"), strict=True):
        ax.axhline(threshold, color="grey", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("return per agent, mean of last 100 episodes")
        ax.legend(fontsize=8)
    axes[0].axvline(warmup_steps(), color="lightgrey", linestyle=":", linewidth=1)  # (the judge reads from here)
    axes[0].axvline(at_steps, color="grey", linestyle=":", linewidth=1)
    axes[1].axvline(time_limit, color="grey", linestyle=":", linewidth=1)  # (nothing past it is judged)
    fig.suptitle("MPE simple_spread (N=3), shared policy: reactorfed federated vs RLlib")
    return save_figure(plt, fig, res.out_dir, f"{res.bench}.png")


def main(argv: list[str] | None = None) -> Results:
    plan = parse_args(argv)
    for name in plan.cases:  # (the settings handed to each side, compared before any run)
        if differ := settings_differ(example_settings(CASES[name]), CASES[name].algo, rllib_hp()):
            raise SystemExit(f"{name}: the sides' settings differ (ours, RLlib's): {differ}")
    res = Results(plan.bench, plan.out_dir)
    runs: dict[str, list[dict[str, Any]]] = {**{n: [] for n in plan.cases}, PEER: []}

    def one(side: str, seed: int) -> None:
        progress(f"seed {seed}: {side}")
        limit = plan.time_limit
        r = (run_rllib(seed, plan.total, limit, tuned=side == TUNED_PEER) if side in PEERS
             else run_ours(CASES[side], seed, plan.total, limit))
        r.update(judged(r["curve"], plan.threshold, plan.at_steps, limit), seed=seed,
                 load_avg_1min_after=round(os.getloadavg()[0], 2))
        runs.setdefault(side, []).append(r)
        progress(f"  reached {r['reached']} at {r['seconds']} s, {r['env_steps']} steps; return at {plan.at_steps} "
                 f"steps {r['return_at']}; {r['final_env_steps']} steps in {r['train_seconds']:.1f} s of training "
                 f"(wall {r['wall_seconds']:.1f} s)")

    for seed in plan.seeds:  # (interleaved: each seed runs every side before the next seed)
        for side in [*plan.cases, PEER]:
            one(side, seed)
    if wants_tuned(plan.tuned, runs[PEER]):
        for seed in plan.seeds:
            one(TUNED_PEER, seed)
    for peer in (p for p in PEERS if p in runs):
        for name in plan.cases:
            report(res, name, runs[name], runs[peer], plan.seeds, plan.threshold, plan.at_steps, peer)
    res.write()
    with open(plan.out_dir / f"{plan.bench}_runs.json", "w") as f:
        json.dump({side: [{**r, "curve": [[round(t, 2), s, None if math.isnan(m) else round(m, 3)]
                                          for t, s, m in r["curve"]]} for r in rs] for side, rs in runs.items()},
                  f, separators=(",", ":"))
    plot_curves(runs, plan.threshold, plan.at_steps, plan.time_limit, res)
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
