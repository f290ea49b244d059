"""Time to threshold: reactorfed's plans against RLlib 2.60's own algorithms and
Stable-Baselines3's single-process PPO, the same hyperparameters on every side, in one run.

    python -m bench.training [--cases ppo-cartpole,ppo-acrobot,appo-cartpole,dqn-cartpole,ppo-minatar]
                             [--seeds 1,2,3] [--time-limit 300] [--quick]

The threshold is judged the same way everywhere: the mean return of the last 100
finished training episodes (never RLlib's ``episode_return_mean``, which in Ray 2.60
averages the latest iteration's episodes only; ``bench/rllib_runner.py`` collects every
episode's return). Each run stops at the threshold, at the case's step budget or at the
time limit; a run that stops without reaching it counts as infinitely slow. Every run
is a fresh process, timed from the start of training (no imports, process or actor
start-up on any side), on a quiet machine (``wait_quiet`` before each), every process
with one torch thread. Reactorfed runs federated (``reactorfed launch``: the RTI, a
process per sampler and the learner); RLlib runs its learner in the driver beside its
env runner actors (``num_learners=0``), the same process layout.

Cases (hyperparameters in :data:`CASES`, taken once and handed to each side):

* ``ppo-cartpole``: PPO on CartPole-v1 to 475 with rl-baselines3-zoo's settings (8 envs x
  32 steps, minibatch 256, 20 epochs, gamma 0.98, lambda 0.8, lr 1e-3 annealed to 0 over
  100k steps). RLlib cannot anneal the clip range (fixed 0.2; reactorfed and SB3 anneal it).
* ``ppo-acrobot``: PPO on Acrobot-v1 to -100 with rl-zoo's settings (16 envs x 256 steps,
  minibatch 64, 4 epochs, gamma 0.99, lambda 0.94, lr 3e-4) except its ``normalize: true``
  (VecNormalize), which neither reactorfed nor RLlib's default connectors do: off on every
  side, so every side learns from the raw observations and rewards.
* ``appo-cartpole``: APPO (V-trace, clipped surrogate) on CartPole-v1 to 475 with
  ``examples/rl/appo_cartpole.py``'s settings; RLlib's APPO gets the same learning rate,
  clip, coefficients, network and layout, and the same gradient steps per sample (its
  batches of 64 rows each trained twice from its circular buffer, as reactorfed trains
  each 128-row fragment for 2 epochs of 64-row minibatches). RLlib's target network and
  circular buffer have no counterpart in reactorfed's APPO; they keep RLlib's defaults.
* ``dqn-cartpole``: reactorfed's Ape-X DQN (``examples/rl/apex_dqn_cartpole.py``:
  prioritized replay in 2 shards, 3-step returns, per-actor epsilons) against RLlib's
  DQN with the same network, learning rate, batch, n-step, prioritized replay, target
  period (500 updates: RLlib counts it in env steps, 4,000) and replay ratio (one 64-row
  update per 8 env steps), to 195 on CartPole-v1.
  RLlib 2.60's new API stack has no Ape-X; its DQN samples on its env runners and
  replays in the driver, with an epsilon schedule instead of per-actor epsilons.

* ``ppo-minatar``: PPO with MinAtar's reference CNN on MinAtar Breakout to 5 (a random
  policy averages 0.39) with ``examples/rl/ppo_minatar.py``'s settings (purejaxrl's and
  gymnax-blines': 16 envs x 128 steps, 4 epochs of 8 minibatches, lr 5e-4 annealed over
  the 1M-step budget); SB3 gets the same torso as a features extractor, RLlib its CNN
  encoder with the same filters.

For each case: seconds and env steps to the threshold (medians over seeds) against each
peer, and the return at a fixed step count against the peer's seed spread (sample
efficiency). The bars: at most 0.5x RLlib's time, no slower than SB3. Learning curves
against wall time and env steps are plotted per case.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bench.common import Results, base_parser, progress, pyplot, save_figure, wait_quiet
from bench.rf_runner import ROOT, ProgramFailed, run_program


@dataclass(frozen=True)
class Case:
    env: str
    threshold: float
    total: int  # env-step budget (and the annealing horizon where the settings anneal)
    budget_param: str  # the example's parameter that takes the budget
    at_steps: int  # where the returns are compared
    program: str
    ours: dict[str, Any]
    rllib_algo: str
    rllib: dict[str, Any]
    sb3: dict[str, Any] | None = None
    title: str = ""
    quick_threshold: float = 100.0  # --quick's low bar
    notes: list[str] = field(default_factory=list)


_PPO_CARTPOLE = {"gamma": 0.98, "lambda": 0.8, "lr": 1e-3, "epochs": 20, "minibatch": 256, "clip": 0.2}
_PPO_ACROBOT = {"gamma": 0.99, "lambda": 0.94, "lr": 3e-4, "epochs": 4, "minibatch": 64, "clip": 0.2}

CASES: dict[str, Case] = {
    "ppo-cartpole": Case(
        "CartPole-v1", 475.0, 100_000, "ppo.total_timesteps", 30_000, "examples/rl/ppo_cartpole.py:Main",
        ours={"num_samplers": 2, "num_envs": 4, "num_steps": 32},  # the example's defaults are rl-zoo's
        rllib_algo="ppo",
        rllib={"hidden": [64, 64], "num_env_runners": 2, "num_envs_per_env_runner": 4, "rollout_fragment_length": 32,
               "train_batch_size_per_learner": 256, "minibatch_size": 256, "num_epochs": 20, "gamma": 0.98,
               "lambda_": 0.8, "lr": [[0, 1e-3], [100_000, 0.0]], "clip_param": 0.2, "entropy_coeff": 0.0,
               "vf_loss_coeff": 0.5, "grad_clip": 0.5, "use_kl_loss": False, "vf_clip_param": 1e9},
        sb3={"n_envs": 8, "n_steps": 32, "batch_size": 256, "n_epochs": 20, "gamma": 0.98, "gae_lambda": 0.8,
             "ent_coef": 0.0, "learning_rate": 1e-3, "clip_range": 0.2, "anneal": True, "hidden": [64, 64]},
        title="PPO, CartPole-v1 (rl-zoo settings)",
        notes=["RLlib's clip range stays 0.2 (no schedule for it); the others anneal it with the learning rate"]),
    "ppo-acrobot": Case(
        "Acrobot-v1", -100.0, 300_000, "ppo.total_timesteps", 50_000, "examples/rl/ppo_cartpole.py:Main",
        ours={"env": "Acrobot-v1", "num_samplers": 2, "num_envs": 8, "num_steps": 256, "ppo.learning_rate": 3e-4,
              "ppo.anneal_lr": False, "ppo.anneal_clip": False, "ppo.gamma": 0.99, "ppo.gae_lambda": 0.94,
              "ppo.update_epochs": 4, "ppo.minibatch_size": 64},
        rllib_algo="ppo",
        rllib={"hidden": [64, 64], "num_env_runners": 2, "num_envs_per_env_runner": 8, "rollout_fragment_length": 256,
               "train_batch_size_per_learner": 4096, "minibatch_size": 64, "num_epochs": 4, "gamma": 0.99,
               "lambda_": 0.94, "lr": 3e-4, "clip_param": 0.2, "entropy_coeff": 0.0, "vf_loss_coeff": 0.5,
               "grad_clip": 0.5, "use_kl_loss": False, "vf_clip_param": 1e9},
        sb3={"n_envs": 16, "n_steps": 256, "batch_size": 64, "n_epochs": 4, "gamma": 0.99, "gae_lambda": 0.94,
             "ent_coef": 0.0, "learning_rate": 3e-4, "clip_range": 0.2, "anneal": False, "hidden": [64, 64]},
        title="PPO, Acrobot-v1 (rl-zoo settings, no VecNormalize)", quick_threshold=-400.0,
        notes=["rl-zoo's normalize: true (VecNormalize) is off on every side"]),
    "appo-cartpole": Case(
        "CartPole-v1", 475.0, 200_000, "total_timesteps", 50_000, "examples/rl/appo_cartpole.py:Main",
        ours={"num_samplers": 2, "num_envs": 4, "num_steps": 32},
        rllib_algo="appo",
        rllib={"hidden": [64, 64], "num_env_runners": 2, "num_envs_per_env_runner": 4, "rollout_fragment_length": 32,
               "train_batch_size_per_learner": 64, "circular_buffer_iterations_per_batch": 2, "lr": 5e-4,
               "gamma": 0.99, "lambda_": 1.0, "clip_param": 0.4, "entropy_coeff": 0.01, "vf_loss_coeff": 0.5,
               "grad_clip": 0.5, "use_kl_loss": False},
        title="APPO, CartPole-v1",
        notes=["RLlib's target network and circular buffer keep its defaults (reactorfed's APPO has neither)"]),
    "dqn-cartpole": Case(
        "CartPole-v1", 195.0, 100_000, "total_timesteps", 20_000, "examples/rl/apex_dqn_cartpole.py:Main",
        ours={"num_samplers": 2, "num_shards": 2},
        rllib_algo="dqn",
        rllib={"hidden": [128, 128], "activation": "relu", "num_env_runners": 2, "num_envs_per_env_runner": 4,
               "rollout_fragment_length": 16, "lr": 5e-4, "gamma": 0.99, "n_step": 3, "train_batch_size_per_learner": 64,
               "target_network_update_freq": 4000, "num_steps_sampled_before_learning_starts": 1000,
               "training_intensity": 8, "grad_clip": 10.0, "double_q": True, "dueling": False,
               "replay_buffer_config": {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50_000,
                                        "alpha": 0.6, "beta": 0.4},
               "epsilon": [[0, 1.0], [10_000, 0.02]]},
        title="Ape-X DQN (reactorfed) vs DQN (RLlib), CartPole-v1",
        notes=["RLlib 2.60 has no Ape-X on its new stack: its DQN with the same settings, an epsilon schedule"]),
    "ppo-minatar": Case(
        "MinAtar/Breakout-v1", 5.0, 1_000_000, "ppo.total_timesteps", 200_000, "examples/rl/ppo_minatar.py:Main",
        ours={"ppo.total_timesteps": 1_000_000},  # the example's defaults otherwise (purejaxrl's / gymnax-blines')
        rllib_algo="ppo",
        rllib={"hidden": [128], "conv_filters": [[16, 3, 1, "valid"]], "num_env_runners": 2,
               "num_envs_per_env_runner": 8, "rollout_fragment_length": 128, "train_batch_size_per_learner": 2048,
               "minibatch_size": 256, "num_epochs": 4, "gamma": 0.99, "lambda_": 0.95,
               "lr": [[0, 5e-4], [1_000_000, 0.0]], "clip_param": 0.2, "entropy_coeff": 0.01, "vf_loss_coeff": 0.5,
               "grad_clip": 0.5, "use_kl_loss": False, "vf_clip_param": 1e9},
        sb3={"n_envs": 16, "n_steps": 128, "batch_size": 256, "n_epochs": 4, "gamma": 0.99, "gae_lambda": 0.95,
             "ent_coef": 0.01, "learning_rate": 5e-4, "clip_range": 0.2, "anneal": True, "anneal_clip": False,
             "hidden": [128], "conv_channels": 16},
        title="PPO with MinAtar's CNN, MinAtar Breakout", quick_threshold=1.0,
        notes=["MinAtar's reference network (16 3x3 filters, 128 units) on every side; RLlib's heads each have "
               "their own 128-unit layer after its shared convolution (the others share the 128 units)",
               "the learning rate anneals to 0 over 1M steps on every side; the clip range stays 0.2"]),
}


def _median(xs: list[float | None]) -> float:
    """The median, a run that never reached the threshold counting as infinitely slow."""
    return statistics.median([math.inf if x is None else x for x in xs])


def _finite(x: float) -> float:
    return x if math.isfinite(x) else -1.0  # (JSON has no infinity: -1 marks "not reached")


def return_at(run: dict[str, Any], steps: int, threshold: float) -> float | None:
    """The mean return of the last 100 episodes at the first point of the curve at or
    past ``steps``; a run that stopped at the threshold before counts as at the threshold
    (a lower bound); None for a run that ended earlier without reaching it."""
    for _, s, ret in run["curve"]:
        if s >= steps:
            return None if ret is None or math.isnan(ret) else float(ret)
    return threshold if run["reached"] else None


def _worker(module: str, spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", module, "--spec", json.dumps(spec)]
    wait_quiet()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "RAY_DEDUP_LOGS": "0"})
    if proc.returncode != 0:
        raise ProgramFailed(f"{module} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_seconds"] = time.perf_counter() - t0
    return out


def run_ours(case: Case, seed: int, threshold: float, total: int, time_limit: float) -> dict[str, Any]:
    params = {**case.ours, "seed": seed, case.budget_param: total, "target_return": threshold, "curve": True,
              "progress": False, "checkpoint": ""}
    t0 = time.perf_counter()
    r = run_program(case.program, params, mode="federated", timeout=time_limit + 120, result_of=".learner")
    return {"reached": bool(r.get("reached")), "seconds": r.get("reached_seconds"), "env_steps": r.get("reached_env_steps"),
            "train_seconds": r["seconds"], "wall_seconds": time.perf_counter() - t0, "curve": r.get("curve", [])}


def run_rllib(case: Case, seed: int, threshold: float, total: int, time_limit: float) -> dict[str, Any]:
    spec = {"algo": case.rllib_algo, "env": case.env, "seed": seed, "hp": case.rllib, "threshold": threshold,
            "total": total, "time_limit_s": time_limit}
    return _worker("bench.rllib_runner", spec, time_limit + 180)


def run_sb3(case: Case, seed: int, threshold: float, total: int, time_limit: float) -> dict[str, Any]:
    spec = {"env": case.env, "seed": seed, "hp": case.sb3, "threshold": threshold, "total": total, "threads": 1}
    return _worker("bench.sb3_runner", spec, time_limit + 180)


def report(res: Results, name: str, case: Case, runs: dict[str, list[dict[str, Any]]], seeds: list[int],
           threshold: float) -> None:
    ours = runs["reactorfed"]
    for peer in (p for p in runs if p != "reactorfed"):
        theirs = runs[peer]
        bar = 2.0 if peer == "rllib" else 1.0
        common = {"seeds": seeds, "threshold": threshold, "judged": True, "notes": case.notes,
                  "short": f"{name} to {threshold:g}",
                  "why": "same hyperparameters on both sides, same threshold rule (last 100 finished training "
                         "episodes), same process layout against RLlib; SB3 in one process"}
        label = f"{name}: {case.title} to {threshold:g}"
        for metric, key in (("seconds_to_threshold", "seconds"), ("env_steps_to_threshold", "env_steps")):
            mine, peer_v = [r[key] for r in ours], [r[key] for r in theirs]
            m, p = _median(mine), _median(peer_v)
            extra: dict[str, Any] = {}
            if metric == "seconds_to_threshold":
                extra = {"bar": f"ratio >= {bar:g}", "meets_bar": math.isfinite(m) and (not math.isfinite(p) or p / m >= bar)}
            if not (math.isfinite(m) and math.isfinite(p)):
                extra["ratio"] = None  # one side's median never reached the threshold: no ratio
            res.add(label, metric, _finite(m), peer, _finite(p), "lower", len(seeds), per_seed=mine,
                    peer_per_seed=peer_v, reached=sum(r["reached"] for r in ours),
                    peer_reached=sum(r["reached"] for r in theirs), **extra, **common)
        mine_r = [return_at(r, case.at_steps, threshold) for r in ours]
        theirs_r = [return_at(r, case.at_steps, threshold) for r in theirs]
        ok = [x for x in theirs_r if x is not None]
        med = statistics.median([x for x in mine_r if x is not None] or [math.nan])
        peer_med = statistics.median(ok or [math.nan])
        # returns may be negative (Acrobot): their ratio means nothing there, their difference does
        signed = {"ratio": None} if not (med > 0 and peer_med > 0) else {}
        res.add(label, f"return_100_at_{case.at_steps // 1000}k_steps", med, peer, peer_med, "higher", len(seeds),
                per_seed=mine_r, peer_per_seed=theirs_r, difference=round(med - peer_med, 3), **signed,
                within_or_above_peer_spread=bool(ok) and not math.isnan(med) and med >= min(ok),
                note="a run that stopped at the threshold before this step count counts as at the threshold",
                **common)


def thin(curve: list[Any], most: int = 400) -> list[Any]:
    """At most about ``most`` points of a curve, evenly spaced, the last one kept (RLlib's APPO
    returns from ``train()`` every few steps: 30,000 points a run), values rounded."""
    step = max(1, math.ceil(len(curve) / most))
    kept = curve[::step] + ([curve[-1]] if (len(curve) - 1) % step else [])
    return [[round(t, 2), s, None if m is None or math.isnan(m) else round(m, 2)] for t, s, m in kept]


def plot_curves(all_runs: dict[str, dict[str, list[dict[str, Any]]]], thresholds: dict[str, float],
                res: Results) -> None:
    plt = pyplot()
    if plt is None or not all_runs:
        return
    fig, axes = plt.subplots(len(all_runs), 2, figsize=(12, 4 * len(all_runs)), squeeze=False)
    colours = {"reactorfed": "tab:blue", "sb3": "tab:green", "rllib": "tab:orange"}
    for row, (name, runs) in zip(axes, all_runs.items(), strict=True):
        for system, rs in runs.items():
            for i, r in enumerate(rs):
                pts = [p for p in r["curve"] if p[2] is not None and not math.isnan(p[2])]
                label = system if i == 0 else None
                row[0].plot([p[0] for p in pts], [p[2] for p in pts], color=colours[system], alpha=0.8, label=label)
                row[1].plot([p[1] for p in pts], [p[2] for p in pts], color=colours[system], alpha=0.8, label=label)
        for ax, xlabel in zip(row, ("wall seconds from the start of training", "env steps"), strict=True):
            ax.axhline(thresholds[name], color="grey", linestyle="--", linewidth=1)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("mean return, last 100 episodes")
            ax.set_title(CASES[name].title, fontsize=10)
            ax.legend(fontsize=8)
    fig.suptitle("Learning curves, one line per seed")
    save_figure(plt, fig, res.out_dir, f"{res.bench}_curves.png")


def main(argv: list[str] | None = None) -> Results:
    p: argparse.ArgumentParser = base_parser(__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3)")
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds of training per run before it gives up")
    p.add_argument("--peers", default="rllib,sb3", help="which peers to run (sb3 only where a case has it)")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = [c for c in args.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    peers = [x for x in args.peers.split(",") if x]
    res = Results("training_quick" if args.quick else "training", args.out)
    all_runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    thresholds: dict[str, float] = {}
    for name in names:
        case = CASES[name]
        # --quick: one seed, a low bar, a short budget: every line printed in a few minutes
        threshold = case.threshold if not args.quick else case.quick_threshold
        total, limit = (case.total, args.time_limit) if not args.quick else (min(case.total, 30_000), 60.0)
        runs: dict[str, list[dict[str, Any]]] = {"reactorfed": []}
        runs.update({x: [] for x in peers if x == "rllib" or (x == "sb3" and case.sb3 is not None)})
        for seed in seeds[:1] if args.quick else seeds:
            for system, fn in (("reactorfed", run_ours), ("sb3", run_sb3), ("rllib", run_rllib)):
                if system not in runs:
                    continue
                progress(f"{name} seed {seed}: {system}")
                r = fn(case, seed, threshold, total, limit)
                r["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
                runs[system].append(r)
                progress(f"  reached {r['reached']} in {r['seconds']} s, {r['env_steps']} steps "
                         f"(training {r['train_seconds']:.1f} s, wall {r['wall_seconds']:.1f} s)")
        report(res, name, case, runs, seeds[:1] if args.quick else seeds, threshold)
        all_runs[name], thresholds[name] = runs, threshold
    res.write()
    res.plot("Time to threshold (ratio > 1: reactorfed wins; bars: 2x against RLlib, 1x against SB3)")
    with open(os.path.join(res.out_dir, f"{res.bench}_runs.json"), "w") as f:
        json.dump({c: {s: [{**r, "curve": thin(r["curve"])} for r in rs] for s, rs in runs.items()}
                   for c, runs in all_runs.items()}, f, separators=(",", ":"))
    plot_curves(all_runs, thresholds, res)
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
