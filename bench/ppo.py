"""PPO on CartPole-v1: wall time and env steps until the last 100 finished training
episodes average 475, reactorfed's synchronous plan against Stable-Baselines3's PPO.

    python -m bench.ppo [--quick] [--seeds 1,2,3] [--sb3-threads 1]

Both sides run rl-baselines3-zoo's CartPole-v1 hyperparameters (8 environments x 32
steps a batch, minibatch 256, 20 epochs, gamma 0.98, lambda 0.8, no entropy bonus,
learning rate 1e-3 and clip range 0.2 both annealed linearly to 0 over 100k steps, SB3's
defaults otherwise). reactorfed runs ``examples/rl/ppo_cartpole.py`` (2 samplers x 4
environments and a learner) in one process and federated; SB3 runs in a process of its
own per seed (``--sb3-worker``), timed from its ``on_training_start`` callback as
reactorfed is from its learner's startup reaction: neither counts imports or process
start-up. Each run stops at the threshold, or at 100k steps (then it did not reach it).

The threshold is judged the same way on both sides: the mean return of the last 100
finished training episodes (SB3: its Monitor's episode returns; reactorfed: the
learner's record of the samplers' episodes), checked after every step by SB3 and after
every update by reactorfed (so reactorfed's figure includes the update it was reached in).
Steps differ in one detail: gymnasium's vector CartPole resets a finished copy on the
next step (that step is no transition, and reactorfed counts transitions only), SB3's
DummyVecEnv in the same step.
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
from collections import deque
from typing import Any

from bench.common import Results, base_parser, progress, pyplot, wait_quiet
from bench.rf_runner import ROOT, ProgramFailed, run_program

PROGRAM = "examples/rl/ppo_cartpole.py:Main"
ENV = "CartPole-v1"
TOTAL = 100_000
#: the step count at which the returns are compared (sample efficiency)
AT_STEPS = 30_000


def reactorfed_run(seed: int, mode: str, threshold: float, total: int) -> dict[str, Any]:
    params = {"seed": seed, "total_timesteps": total, "target_return": threshold, "curve": True,
              "progress": False, "checkpoint": ""}
    t0 = time.perf_counter()
    r = run_program(PROGRAM, params, mode=mode, timeout=600)
    return {"reached": bool(r["reached"]), "seconds": r.get("reached_seconds"), "env_steps": r.get("reached_env_steps"),
            "train_seconds": r["seconds"], "wall_seconds": time.perf_counter() - t0, "curve": r["curve"],
            "load_avg_1min_after": round(os.getloadavg()[0], 2)}


def sb3_worker(seed: int, threshold: float, total: int, threads: int) -> dict[str, Any]:
    """One SB3 PPO run with rl-zoo's CartPole-v1 settings (inside its own process)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(threads)

    def linear(start: float) -> Any:
        return lambda progress_remaining: progress_remaining * start

    class Threshold(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.recent: deque[float] = deque(maxlen=100)
            self.t0 = 0.0
            self.reached: tuple[float, int] | None = None
            self.curve: list[tuple[float, int, float]] = []

        def _on_training_start(self) -> None:
            self.t0 = time.perf_counter()

        def _mean(self) -> float:
            return sum(self.recent) / len(self.recent) if self.recent else math.nan

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.recent.append(float(info["episode"]["r"]))
            if len(self.recent) == 100 and self._mean() >= threshold:
                self.reached = (time.perf_counter() - self.t0, int(self.num_timesteps))
                return False
            return True

        def _on_rollout_end(self) -> None:
            self.curve.append((round(time.perf_counter() - self.t0, 4), int(self.num_timesteps), self._mean()))

    env = make_vec_env(ENV, n_envs=8, seed=seed)
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
                ent_coef=0.0, learning_rate=linear(1e-3), clip_range=linear(0.2), seed=seed, device="cpu", verbose=0)
    cb = Threshold()
    model.learn(total, callback=cb)
    end = time.perf_counter() - cb.t0
    return {"reached": cb.reached is not None, "seconds": cb.reached[0] if cb.reached else None,
            "env_steps": cb.reached[1] if cb.reached else None, "train_seconds": end, "curve": cb.curve}


def sb3_run(seed: int, threshold: float, total: int, threads: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.ppo", "--sb3-worker", "--seeds", str(seed), "--threshold", str(threshold),
           "--total", str(total), "--sb3-threads", str(threads)]
    wait_quiet()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    if proc.returncode != 0:
        raise ProgramFailed(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_seconds"] = time.perf_counter() - t0
    out["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    return out


def return_at(run: dict[str, Any], steps: int) -> float | None:
    """The mean return of the last 100 episodes at the first point of the run's curve at or
    past ``steps``; a run that stopped at the threshold before counts as at the threshold
    (a lower bound); None for a run that ended earlier without reaching it."""
    for _, s, ret in run["curve"]:
        if s >= steps:
            return None if math.isnan(ret) else float(ret)
    return float(run["threshold"]) if run["reached"] else None


def _median(xs: list[float | None]) -> float:
    """The median, a run that never reached the threshold counting as infinitely slow."""
    return statistics.median([math.inf if x is None else x for x in xs])


def _finite(x: float) -> float:
    return x if math.isfinite(x) else -1.0  # (JSON has no infinity: -1 marks "not reached")


def report(res: Results, case: str, ours: list[dict[str, Any]], peer: list[dict[str, Any]], seeds: list[int],
           threshold: float, load: tuple[float, float]) -> None:
    why = ("same rl-zoo hyperparameters on both sides, same threshold rule (last 100 finished training "
           "episodes); SB3 in one process, the strongest practical single-machine reference")
    common = {"seeds": seeds, "threshold": threshold, "judged": True, "why": why,
              "load_avg_1min_before_after": [round(x, 2) for x in load]}
    for metric, key in (("seconds_to_threshold", "seconds"), ("env_steps_to_threshold", "env_steps")):
        mine, theirs = [r[key] for r in ours], [r[key] for r in peer]
        res.add(case, metric, _finite(_median(mine)), "sb3", _finite(_median(theirs)), "lower", len(seeds),
                per_seed=mine, peer_per_seed=theirs, load_per_seed=[r["load_avg_1min_after"] for r in ours],
                peer_load_per_seed=[r["load_avg_1min_after"] for r in peer], reached=sum(r["reached"] for r in ours),
                peer_reached=sum(r["reached"] for r in peer), **common)
    mine_r = [return_at({**r, "threshold": threshold}, AT_STEPS) for r in ours]
    theirs_r = [return_at({**r, "threshold": threshold}, AT_STEPS) for r in peer]
    ok = [x for x in theirs_r if x is not None]
    med = statistics.median([x for x in mine_r if x is not None] or [math.nan])
    res.add(case, f"return_100_at_{AT_STEPS // 1000}k_steps", med, "sb3", statistics.median(ok or [math.nan]), "higher",
            len(seeds), per_seed=mine_r, peer_per_seed=theirs_r,
            within_peer_spread=bool(ok) and min(ok) <= med <= max(ok) if not math.isnan(med) else None,
            note="a run that stopped at the threshold before this step count counts as at the threshold", **common)


def plot_curves(runs: dict[str, list[dict[str, Any]]], threshold: float, out: str, name: str) -> str | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    colours = dict(zip(runs, ("tab:blue", "tab:green", "tab:orange", "tab:red"), strict=False))
    for system, rs in runs.items():
        for i, r in enumerate(rs):
            pts = [p for p in r["curve"] if not math.isnan(p[2])]
            label = system if i == 0 else None
            axes[0].plot([p[0] for p in pts], [p[2] for p in pts], color=colours[system], alpha=0.8, label=label)
            axes[1].plot([p[1] for p in pts], [p[2] for p in pts], color=colours[system], alpha=0.8, label=label)
    for ax, xlabel in zip(axes, ("wall seconds (from training start)", "env steps"), strict=True):
        ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean return, last 100 training episodes")
        ax.legend(fontsize=8)
    fig.suptitle(f"PPO on {ENV}, rl-zoo hyperparameters, one line per seed")
    fig.tight_layout()
    path = os.path.join(out, f"{name}_curves.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> Results:
    p: argparse.ArgumentParser = base_parser(__doc__.splitlines()[0])
    p.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (default 1..5)")
    p.add_argument("--threshold", type=float, default=475.0)
    p.add_argument("--total", type=int, default=TOTAL, help="step budget and annealing horizon (rl-zoo: 100k)")
    p.add_argument("--sb3-threads", type=int, default=1, help="torch threads of the SB3 process (default 1)")
    p.add_argument("--modes", default="federated,single", help="reactorfed's modes to run")
    p.add_argument("--sb3-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.sb3_worker:
        print(json.dumps(sb3_worker(seeds[0], args.threshold, args.total, args.sb3_threads)))
        return Results("ppo")
    if args.quick:
        seeds, args.threshold = seeds[:1], 150.0
    res = Results("ppo" if not args.quick else "ppo_quick", args.out)
    load0 = os.getloadavg()[0]
    runs: dict[str, list[dict[str, Any]]] = {"sb3": []}
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        runs[f"reactorfed {m}"] = []
    for seed in seeds:
        progress(f"seed {seed}: SB3")
        runs["sb3"].append(sb3_run(seed, args.threshold, args.total, args.sb3_threads))
        for m in modes:
            progress(f"seed {seed}: reactorfed {m}")
            runs[f"reactorfed {m}"].append(reactorfed_run(seed, m, args.threshold, args.total))
        for name, rs in runs.items():
            r = rs[-1]
            progress(f"  {name}: reached {r['reached']} in {r['seconds']} s, {r['env_steps']} steps "
                     f"(wall {r['wall_seconds']:.1f} s, load average {r['load_avg_1min_after']})")
    load = (load0, os.getloadavg()[0])
    cases = {"federated": "CartPole-v1 to {t:g}, federated (RTI + 2 samplers x 4 envs + learner)",
             "single": "CartPole-v1 to {t:g}, one process (2 samplers x 4 envs + learner)"}
    for m in modes:
        report(res, cases[m].format(t=args.threshold), runs[f"reactorfed {m}"], runs["sb3"], seeds, args.threshold, load)
    res.write()
    res.plot("PPO on CartPole-v1 vs SB3 (ratio > 1: reactorfed wins)")
    with open(os.path.join(args.out, f"{res.bench}_runs.json"), "w") as f:
        json.dump(runs, f)
    plot_curves(runs, args.threshold, str(args.out), res.bench)
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
