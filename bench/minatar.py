"""PPO with a CNN on MinAtar Breakout: the learning curve of ``examples/rl/ppo_minatar.py``
(the mean return of the last 100 training episodes against env steps and seconds of
training), beside what a uniformly random policy gets.

    python -m bench.minatar [--quick] [--mode federated] [--total-timesteps 5000000] [--max-minutes 35]

The program runs as the example does (2 samplers x 8 copies x 128 rows a round, the
learner's 4 epochs of 8 minibatches; ``--mode federated``: ``reactorfed launch``, the RTI
and a process per sampler and for the learner), timed from the learner's startup reaction
(imports and process start-up not counted); the learner's progress lines are read as they
come, so a run stopped at ``--max-minutes`` keeps its curve. The random policy's figure is the mean return
of ``--random-episodes`` episodes of the same game, seeded. Writes
``bench/results/minatar_ppo.jsonl`` (a row for the random policy, one for the run, one per
point of the curve) and ``minatar_ppo.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS_DIR, progress, pyplot, wait_quiet
from bench.rf_runner import ROOT, results_by_reactor

PROGRAM = "examples/rl/ppo_minatar.py:Main"
ENV = "MinAtar/Breakout-v1"
BENCH = "minatar_ppo"


def random_policy(episodes: int, seed: int, num_envs: int = 8) -> dict[str, Any]:
    """The returns of ``episodes`` episodes of uniformly random actions (an actor with no
    weights yet acts uniformly), ``num_envs`` copies stepped as the samplers step them."""
    from reactorfed.rl import PolicyRunner, SpaceInfo
    from reactorfed.rl.algos.ppo import ConvActor

    space = SpaceInfo.of_env(ENV)
    runner = PolicyRunner(ENV, num_envs, seed=seed)
    actor = ConvActor(space.obs_shape, space.num_actions, 16, (128,), seed=seed)
    returns: list[float] = []
    while len(returns) < episodes:
        returns += runner.rollout(256, actor).episode_returns
    runner.close()
    r = np.asarray(returns[:episodes])
    return {"episodes": episodes, "mean_return": round(float(r.mean()), 3), "std": round(float(r.std()), 3),
            "max": float(r.max())}


#: the learner's progress line (reactorfed.rl.training.TrainingLog.show)
_PROGRESS = re.compile(r"iter\s+(\d+)/\d+\s+steps\s+(\d+)\s+episodes\s+\d+\s+return\(100\)\s+(\S+).*?(\d+) steps/s")


def run_streamed(mode: str, params: dict[str, Any], max_seconds: float) -> dict[str, Any]:
    """Run the program, reading the learner's progress lines as they come: a run cut short
    at ``max_seconds`` (SIGTERM: the federation stops at its next tag) still leaves its
    curve. The curve of the learner's result when it reports one (every iteration), else
    the progress lines' (seconds = env steps / the line's mean steps/s)."""
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch" if mode == "federated" else "run",
           PROGRAM, "--fast", *(x for k, v in params.items() for x in ("--param", f"{k}={v}"))]
    if mode == "federated":
        # a long heartbeat timeout: on 2 shared cores a busy neighbour (hundreds of processes)
        # can starve a federate's I/O thread past the default 3 s, which ends the federation
        cmd += ["--heartbeat-timeout", "120s"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    wait_quiet()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    points: list[tuple[float, int, float]] = []
    result: dict[str, Any] | None = None
    stopped = False
    tail: list[str] = []
    for line in proc.stdout:
        tail = [*tail[-30:], line.rstrip()]
        if (m := _PROGRESS.search(line)) is not None:
            steps, ret, rate = int(m.group(2)), float(m.group(3)), float(m.group(4))
            points.append((round(steps / max(rate, 1e-9), 2), steps, ret))
            if int(m.group(1)) % 50 == 0:
                progress(f"{steps:,} steps, return(100) {ret}, {rate:.0f} steps/s")
        elif learner := [r for name, r in results_by_reactor(line).items() if name.endswith("learner")]:
            result = learner[0]
        if not stopped and time.perf_counter() - t0 > max_seconds:
            progress(f"{max_seconds:.0f} s: stopping the run (SIGTERM)")
            os.killpg(proc.pid, signal.SIGTERM)
            stopped = True
    proc.wait()
    if result is None:
        if not points:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode} with no progress:\n" + "\n".join(tail))
        s, n, ret = points[-1]
        result = {"env_steps": n, "iterations": None, "episodes": None, "seconds": s, "mean_return_100": ret,
                  "weights_sha256": None, "curve": points}
    result["wall_seconds"] = round(time.perf_counter() - t0, 2)
    result["stopped_early"] = stopped
    result["returncode"] = proc.returncode
    return result


def plot(path: Path, curve: list[tuple[float, int, float]], rand: float, title: str) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    pts = [p for p in curve if not math.isnan(p[2])]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, x, label in ((axes[0], [p[1] / 1e6 for p in pts], "env steps (millions)"),
                         (axes[1], [p[0] / 60 for p in pts], "minutes of training")):
        ax.plot(x, [p[2] for p in pts], label="PPO + CNN (reactorfed)")
        ax.axhline(rand, color="grey", linestyle="--", label=f"random policy ({rand:.2f})")
        ax.set_xlabel(label)
        ax.set_ylabel("mean return, last 100 episodes")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a short smoke run (10 rounds), results not written")
    p.add_argument("--mode", choices=("single", "federated"), default="federated")
    p.add_argument("--total-timesteps", type=int, default=2_000_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--random-episodes", type=int, default=1000)
    p.add_argument("--max-minutes", type=float, default=60.0, help="stop the run after this long (its curve is kept)")
    p.add_argument("--out", type=Path, default=RESULTS_DIR)
    a = p.parse_args(argv)
    total = 10 * 2048 if a.quick else a.total_timesteps
    progress(f"random policy on {ENV}: {a.random_episodes} episodes")
    rand = random_policy(100 if a.quick else a.random_episodes, a.seed)
    progress(f"random policy: {rand}")
    progress(f"{PROGRAM} {a.mode}, {total:,} env steps, seed {a.seed}")
    params = {"seed": a.seed, "ppo.total_timesteps": total, "curve": True, "progress": True, "progress_every": 5,
              "checkpoint": ""}
    load_before = round(os.getloadavg()[0], 2)
    r = run_streamed(a.mode, params, a.max_minutes * 60)
    wall = r["wall_seconds"]
    curve = [(float(s), int(n), float(m)) for s, n, m in r["curve"]]
    run = {"bench": BENCH, "case": "ppo", "env": ENV, "mode": a.mode, "seed": a.seed, "total_timesteps": total,
           "env_steps": r["env_steps"], "iterations": r["iterations"], "episodes": r["episodes"],
           "train_seconds": round(r["seconds"], 2), "wall_seconds": wall,
           "steps_per_second": round(r["env_steps"] / max(r["seconds"], 1e-9), 1),
           "mean_return_100": round(r["mean_return_100"], 3), "best_mean_return_100":
           round(max((m for _, _, m in curve if not math.isnan(m)), default=math.nan), 3),
           "weights_sha256": r["weights_sha256"], "load_avg_1min_before": load_before,
           "load_avg_1min_after": round(os.getloadavg()[0], 2),
           "stopped_early": r["stopped_early"], "returncode": r["returncode"],
           "settings": "ConvPPOConfig defaults: 2 samplers x 8 envs x 128 steps, 4 epochs x 8 minibatches, "
                       "lr 5e-4 annealed, gamma 0.99, lambda 0.95, clip 0.2, ent 0.01, vf 0.5, CNN 16x3x3-128"}
    rows = [{"bench": BENCH, "case": "random", "env": ENV, "seed": a.seed, **rand}, run]
    rows += [{"bench": BENCH, "case": "curve", "seconds": s, "env_steps": n, "mean_return_100": round(m, 3)}
             for s, n, m in curve]
    for row in rows[:2]:
        print(json.dumps(row), flush=True)
    if a.quick:
        progress("--quick: results not written")
        return
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / f"{BENCH}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    title = (f"PPO + CNN on {ENV}, {a.mode}, 2 cores: {r['env_steps']:,} steps in {r['seconds'] / 60:.1f} min")
    png = plot(a.out / f"{BENCH}.png", curve, rand["mean_return"], title)
    progress(f"wrote {path}" + (f" and {png}" if png else ""))


if __name__ == "__main__":
    main()
