"""Population-based training of PPO on CartPole-v1: reactorfed's PBT
(``examples/rl/pbt_cartpole.py``) against Ray Tune's ``PopulationBasedTraining`` over
RLlib's PPO, both a population of 4, to a return of 475.

    python -m bench.pbt [--quick] [--seeds 1,2,3] [--out bench/results/pbt.jsonl]
                        [--cases federated,single] [--time-limit 300] [--tuned auto|always|never]

**Equal on both sides.** The search space (``PPOSpace``'s defaults: learning rate
log-uniform in [1e-4, 3e-3], clip range uniform in [0.1, 0.3], GAE lambda uniform in [0.8,
0.99]; RLlib's ``lr``, ``clip_param``, ``lambda``); the rule (``PBTConfig``'s defaults:
quantile 1/4, so with 4 trials the worst takes one of the best's weights and optimizer
state; each value times 0.8 or 1.2, or drawn afresh with probability 1/4); the
perturbation interval, 20 iterations of 256 env steps (8 environment copies x 32 steps:
reactorfed 2 samplers of 4 copies, RLlib 8 copies in the trial's own env runner); the PPO
settings every trial starts from (``bench/training.py``'s ppo-cartpole case, rl-zoo's: 20
epochs of one 256-row minibatch, gamma 0.98, lr 1e-3, clip 0.2, lambda 0.8, value
coefficient 0.5, gradient clip 0.5, two 64-unit tanh layers per head), with no annealing
on either side (the recipe anneals the learning rate and clip range over its budget;
RLlib cannot anneal a value PBT mutates); the budget (400 iterations per trial); the
judge: the mean return of a trial's last 100 finished training episodes, checked at its
perturbation iterations, the population stopping when one trial's reaches 475 there; an
exploit hands the donor's recent returns on.

**Layouts** (2 cores, one torch thread per process). reactorfed federated (``reactorfed
launch ... --fast``): the RTI, the controller and one process per trial (its 2 samplers
and its learner). Ray (``num_cpus=2``): the driver (Tune's controller) and one actor per
trial asking for half a CPU (RLlib's ``Algorithm`` with ``num_env_runners=0``: it samples
and learns in one process), so the 4 trials run at once on both sides. reactorfed in one
process (``reactorfed run``) is context: no process boundary at all.

**What differs, by design.** reactorfed's PBT is synchronous in logical time: a round is
every trial's report for one iteration, decided at once, its draws seeded by the seed and
the round, so one seed gives the same decisions and weights in every run. Tune's PBT
decides as each trial reports, against the others' latest results, drawing from Python's
``random`` (seeded here with ``random.seed(seed)``), so who exploits whom depends on which
trial ran faster; an exploit restarts the trial's actor from the donor's checkpoint on
disk (reactorfed sends the state in the directive). Tune's explore does not clip a value
to its range (reactorfed's does).

**Clocks.** Each side's clock starts when every trial is training: reactorfed at the
controller's first directives (its progress line, read as it comes from the launcher's
output), Ray at the latest of the trials' first ``train()`` (Ray starts its trial actors one
after another; the earlier start is a context field). Neither counts imports, process or
actor start-up before that; Ray's restarts at exploits are in, and so are reactorfed's
trials building their learners (network and Adam) at those first directives, which Ray's
actors do in their setup, before its clock: a start that favours Ray. Each ends when the
population's judge sees the target (reactorfed's controller's line; Ray's driver).

Determinism: the first seed runs twice on each side: the difference of the final best
return and whether the histories of exploits (trial, donor, iteration, new values) are
equal, and where they first differ (:mod:`bench.pbt_history`). If Ray's median never
reaches 475 within the time limit, RLlib's own tuned CartPole PPO settings run once as its
tuned variant (``--tuned``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, Results, progress, wait_quiet
from bench.pbt_history import compare, progress_round, reactorfed_history, read_lines
from bench.pbt_plot import plot
from bench.rf_runner import ROOT, ProgramFailed, program_command, results_by_reactor
from bench.training import CASES

PROGRAM = "examples/rl/pbt_cartpole.py:Main"
PEER = "ray-tune"


@dataclasses.dataclass(frozen=True)
class Settings:
    target: float = 475.0
    interval: int = 20
    iterations: int = 400
    time_limit_s: float = 300.0
    population: int = 4


def quick_settings(time_limit_s: float) -> Settings:
    """--quick: a low bar, short rounds and budgets: every line in a few minutes."""
    return Settings(target=40.0, interval=5, iterations=60, time_limit_s=min(time_limit_s, 120.0))


def pbt_rule() -> dict[str, Any]:
    from reactorfed.rl.tune import PBTConfig, PPOSpace

    c, s = PBTConfig(), PPOSpace()
    return {"quantile": c.quantile_fraction, "resample": c.resample_probability,
            "factors": list(c.perturbation_factors),
            "space": {"lr": list(s.learning_rate), "clip_param": list(s.clip_coef), "lambda": list(s.gae_lambda)}}


def ray_hp() -> dict[str, Any]:
    """bench/training.py's ppo-cartpole settings for RLlib, sampling in the trial's own
    process (8 copies x 32 steps), the learning rate a constant (PBT mutates it)."""
    hp = dict(CASES["ppo-cartpole"].rllib)
    hp.update(num_env_runners=0, num_envs_per_env_runner=hp["num_env_runners"] * hp["num_envs_per_env_runner"],
              lr=float(hp["lr"][0][1]) if isinstance(hp["lr"], list) else hp["lr"])
    return hp


def per_iteration() -> int:
    """Env steps in one iteration of a trial, the same on both sides (8 copies x 32 steps)."""
    return int(ray_hp()["train_batch_size_per_learner"])


# -- reactorfed ---------------------------------------------------------------------------
Round = tuple[float, int, float | None, bool, str]  # (time read, iteration, best, stopped, the line)


def _pump(stream: Any, rounds: list[Round], kept: list[str], keep_all: bool) -> None:
    """Read a stream of the program's output as it comes, timing the controller's lines."""
    for line in stream:
        now = time.time()
        parsed = progress_round(line)
        if parsed is not None:
            rounds.append((now, *parsed, line.rstrip("\n")))
        kept.append(line)
        if not keep_all:
            del kept[:-60]


def run_reactorfed(mode: str, seed: int, s: Settings, folder: Path) -> dict[str, Any]:
    params = {"seed": seed, "pbt.population": s.population, "pbt.perturbation_interval": s.interval,
              "pbt.iterations": s.iterations, "pbt.target": s.target, "ppo.anneal_lr": False,
              "ppo.anneal_clip": False, "checkpoint": str(folder), "progress": True}
    cmd, env = program_command(PROGRAM, params, mode)
    wait_quiet()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            start_new_session=True)
    rounds: list[Round] = []
    err_tail: list[str] = []
    out_lines: list[str] = []
    readers = [threading.Thread(target=_pump, args=(proc.stdout, rounds, out_lines, True), daemon=True),
               threading.Thread(target=_pump, args=(proc.stderr, rounds, err_tail, False), daemon=True)]
    for r in readers:
        r.start()
    timed_out = False
    launched = time.time()
    while proc.poll() is None:
        time.sleep(0.2)
        now = time.time()
        # the same limit as Ray's, from the first directives (or from the launch, when they never come)
        if now - (rounds[0][0] if rounds else launched) > s.time_limit_s + (5 if rounds else 300):
            os.killpg(proc.pid, signal.SIGTERM)
            timed_out = True
            proc.wait(60)
            break
    for r in readers:
        r.join(10)
    stdout = "".join(out_lines)
    reported = results_by_reactor(stdout)
    controller = next((v for k, v in reported.items() if k.endswith(".controller")), None)
    if controller is None and not timed_out:
        tail = "".join((err_tail or out_lines)[-25:])
        raise ProgramFailed(f"{' '.join(cmd)} exited {proc.returncode} without the controller's result:\n{tail}")
    rounds.sort(key=lambda r: r[0])
    start = rounds[0][0] if rounds else math.nan
    end = next((r[0] for r in rounds if r[3]), None)
    solved_at = (controller or {}).get("solved_at_iteration")
    seconds = None if solved_at is None or end is None else end - start
    if seconds is not None and seconds > s.time_limit_s:
        seconds, solved_at = None, None
    trials = sorted((v for v in reported.values() if "slot" in v and "weights_sha256" in v), key=lambda v: v["slot"])
    record = read_lines(folder / "decisions.jsonl")
    return {"reached": solved_at is not None, "timed_out": timed_out, "seconds": seconds,
            "env_steps": None if solved_at is None else s.population * solved_at * per_iteration(),
            "best_final": (controller or {}).get("best_metric", rounds[-1][2] if rounds else None),
            "reached_iteration": solved_at,
            "history": reactorfed_history(json.loads(x) for x in record), "record": record,
            "record_sha256": (controller or {}).get("decisions_sha256"),
            "weights_sha256": [t["weights_sha256"] for t in trials],
            "curve": [[round(r[0] - start, 3), r[1], r[2]] for r in rounds], "progress": [r[4] for r in rounds]}


# -- Ray ----------------------------------------------------------------------------------
def run_ray(seed: int, s: Settings, folder: Path, tuned: bool = False) -> dict[str, Any]:
    spec = {"seed": seed, "env": "CartPole-v1", "population": s.population, "interval": s.interval,
            "target": s.target, "iterations": s.iterations, "time_limit_s": s.time_limit_s, "num_cpus": 2,
            "cpus_per_trial": 2 / s.population, "storage": str(folder), "hp": ray_hp(), "tuned": tuned, **pbt_rule()}
    cmd = [sys.executable, "-m", "bench.pbt_ray", "--spec", json.dumps(spec)]
    wait_quiet()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=s.time_limit_s + 300,
                              env={**os.environ, "OMP_NUM_THREADS": "1", "RAY_DEDUP_LOGS": "0"})
    except subprocess.TimeoutExpired as e:
        raise ProgramFailed(f"bench.pbt_ray did not finish within {s.time_limit_s + 300:.0f} s") from e
    if proc.returncode != 0:
        raise ProgramFailed(f"bench.pbt_ray exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


# -- the report ---------------------------------------------------------------------------
def median(xs: list[float | None]) -> float:
    """The median, a run that never reached the target counting as infinitely slow."""
    return statistics.median([math.inf if x is None else x for x in xs])


def finite(x: float) -> float:
    return x if math.isfinite(x) else -1.0  # (JSON has no infinity: -1 marks "not reached")


def repeat_figures(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two runs of one seed: the difference of their final best returns, whether their
    exploit histories are equal and where they first differ."""
    equal, at = compare(a["history"], b["history"])
    fa, fb = a.get("best_final"), b.get("best_final")
    diff = abs(fa - fb) if fa is not None and fb is not None else math.nan
    out = {"return_diff": diff, "decisions_equal": equal, "first_divergence": at,
           "exploits": [len(a["history"]), len(b["history"])]}
    if "record" in a:
        out["record_equal"] = compare(a["record"], b["record"])[0]
        out["weights_equal"] = a["weights_sha256"] == b["weights_sha256"] and bool(a["weights_sha256"])
    return out


def report(res: Results, runs: dict[str, list[dict[str, Any]]], repeats: dict[str, dict[str, Any]],
           seeds: list[int], s: Settings) -> None:
    theirs = runs[PEER]
    why = ("same search space, rule, interval (iterations of 256 env steps), PPO settings and network, the same "
           "judge (last 100 training episodes at the perturbation iterations); a process per trial on both sides")
    for case in ("federated", "single"):
        if case not in runs:
            continue
        ours = runs[case]
        label = f"pbt-ppo-cartpole {case}"
        judged = {"judged": case == "federated",
                  "why": why if case == "federated" else "one process against Ray's actor per trial (context)"}
        for metric, key in ((f"seconds_to_{s.target:g}", "seconds"), (f"env_steps_to_{s.target:g}", "env_steps")):
            mine, peer_v = [r[key] for r in ours], [r[key] for r in theirs]
            m, p = median(mine), median(peer_v)
            extra = {} if math.isfinite(m) and math.isfinite(p) else {"ratio": None}
            res.add(label, metric, finite(m), PEER, finite(p), "lower", len(seeds), per_seed=mine,
                    peer_per_seed=peer_v, reached=sum(r["reached"] for r in ours),
                    peer_reached=sum(r["reached"] for r in theirs), seeds=seeds, target=s.target,
                    **({"peer_seconds_from_first_trial": [r.get("seconds_from_first_trial") for r in theirs],
                        "peer_startup_spread_s": [r.get("startup_spread_s") for r in theirs]}
                       if key == "seconds" else {}), **extra, **judged)
        if case in repeats:
            a, b = repeats[case], repeats[PEER]
            common = {"seed": seeds[0], "runs": 2, "judged": case == "federated", "why": "one seed run twice per side"}
            res.add(label, "same_seed_return_diff", finite(a["return_diff"]), PEER, finite(b["return_diff"]), "lower",
                    2, **{k: v for k, v in common.items() if k != "runs"},
                    **({"ratio": None} if not a["return_diff"] else {}))
            res.add(label, "same_seed_decisions_equal", float(a["decisions_equal"]), PEER,
                    float(b["decisions_equal"]), "higher", 2, first_divergence=a["first_divergence"],
                    peer_first_divergence=b["first_divergence"], exploits=a["exploits"], peer_exploits=b["exploits"],
                    record_equal=a.get("record_equal"), weights_equal=a.get("weights_equal"),
                    **({"ratio": None} if not b["decisions_equal"] else {}),
                    **{k: v for k, v in common.items() if k != "runs"})
    if "single" in runs and "federated" in runs:
        eq, at = compare(runs["single"][0]["record"], runs["federated"][0]["record"])
        res.add("pbt-ppo-cartpole single vs federated", "same_seed_decisions_equal", float(eq), "reactorfed federated",
                1.0, "higher", 1, ratio=None, first_divergence=at, seed=seeds[0], judged=False,
                why="reactorfed's promise: one seed, the same record in one process and federated")
    if "tuned" in runs:
        t = runs["tuned"][0]
        own = runs["federated"][0]["seconds"] if "federated" in runs else None
        res.add("pbt-ppo-cartpole federated vs RLlib-tuned", f"seconds_to_{s.target:g}", finite(median([own])),
                f"{PEER} (RLlib's tuned CartPole PPO)", finite(median([t["seconds"]])), "lower", 1, seed=seeds[0],
                peer_reached=t["reached"], judged=False,
                why="the peer with RLlib's own tuned CartPole PPO settings (network and loss), one run",
                **({} if own is not None and t["seconds"] is not None else {"ratio": None}))


def main(argv: list[str] | None = None) -> Results:
    p = argparse.ArgumentParser(description=" ".join((__doc__ or "").split("\n\n")[0].split()))
    p.add_argument("--quick", action="store_true", help="short run that still prints every result line")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3); the first runs twice")
    p.add_argument("--out", type=Path, default=None, help="the JSONL file (default bench/results/pbt.jsonl; "
                                                         "--quick: pbt_quick.jsonl); the plot beside it")
    p.add_argument("--cases", default="federated,single", help="reactorfed's modes: federated, single")
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds of training per run before it gives up")
    p.add_argument("--tuned", choices=("auto", "always", "never"), default="auto",
                   help="run Ray once with RLlib's tuned CartPole PPO: when its median did not reach (auto)")
    p.add_argument("--keep", action="store_true", help="keep the runs' folders (checkpoints, decision records, "
                                                      "Tune's experiment folders; default: removed at the end)")
    p.add_argument("--runs", type=int, default=None, help=argparse.SUPPRESS)  # (bench/run_all passes it)
    args = p.parse_args(argv)
    seeds = [int(x) for x in args.seeds.split(",") if x]
    modes = [c for c in args.cases.split(",") if c]
    if bad := [c for c in modes if c not in ("federated", "single")]:
        p.error(f"unknown case(s) {bad}; known: federated, single")
    s = quick_settings(args.time_limit) if args.quick else Settings(time_limit_s=args.time_limit)
    if args.quick:
        seeds = seeds[:1]
    out = args.out or RESULTS_DIR / ("pbt_quick.jsonl" if args.quick else "pbt.jsonl")
    out = out / ("pbt_quick.jsonl" if args.quick else "pbt.jsonl") if out.suffix != ".jsonl" else out
    res = Results(out.stem, out.parent)
    work = Path(tempfile.mkdtemp(prefix="bench_pbt_"))
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    runs[PEER] = []
    t0 = time.time()

    def one(system: str, seed: int, tag: str, tuned: bool = False) -> dict[str, Any]:
        progress(f"seed {seed}: {system}{' (again)' if tag == 'b' else ''}")
        for attempt in (1, 2):
            folder = work / f"{system}_{seed}_{tag}{attempt}"
            try:
                r = (run_ray(seed, s, folder, tuned) if system in (PEER, "tuned")
                     else run_reactorfed(system, seed, s, folder))
                break
            except ProgramFailed as e:  # (a federation that could not start on a busy machine: once more)
                if attempt == 2:
                    raise
                progress(f"  failed, once more: {str(e)[-400:]}")
        r["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
        progress(f"  reached {r['reached']} in {r['seconds']} s, {r['env_steps']} steps, best {r['best_final']}, "
                 f"{len(r['history'])} exploits")
        return r

    for seed in seeds:  # interleaved: each seed on every side before the next
        for system in [*[m for m in modes if m == "federated"], PEER, *[m for m in modes if m == "single"]]:
            runs[system].append(one(system, seed, "a"))
    repeats: dict[str, dict[str, Any]] = {}
    for system in [m for m in modes if m == "federated"] + [PEER]:
        again = one(system, seeds[0], "b")
        repeats[system] = repeat_figures(runs[system][0], again)
        progress(f"  {system} repeat: {repeats[system]}")
    tuned = "always" if args.quick and args.tuned == "auto" else args.tuned  # (--quick: every code path)
    if tuned == "always" or (tuned == "auto" and not math.isfinite(median([r["seconds"] for r in runs[PEER]]))):
        runs["tuned"] = [one("tuned", seeds[0], "a", tuned=True)]
    report(res, runs, repeats, seeds, s)
    res.write()
    with open(out.parent / f"{out.stem}_runs.json", "w") as f:
        json.dump({k: [{x: y for x, y in r.items() if x != "record"} for r in v] for k, v in runs.items()}, f,
                  separators=(",", ":"))
    plot(runs, s.target, out.parent / f"{out.stem}.png", PEER)
    if args.keep:
        progress(f"the runs' folders: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    progress(f"done in {time.time() - t0:.0f} s; results in {out}")
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
