"""Ray Tune's ``PopulationBasedTraining`` over RLlib's PPO, one experiment per process
(``python -m bench.pbt_ray --spec JSON``; bench/pbt.py runs it), judged as reactorfed's
PBT judges itself.

Layout: Ray with ``num_cpus=2``; each trial is one actor (RLlib's ``Algorithm``: its
learner and, with ``num_env_runners=0``, its sampling of ``num_envs_per_env_runner`` copies
in the same process) asking for half a CPU, so the 4 trials run at once, as reactorfed's
4 trial federates do; Tune's controller runs in the driver, as reactorfed's controller
federate. One torch thread in every process (``OMP_NUM_THREADS=1``, Ray's default too).

The metric PBT ranks by is the mean return of the trial's last 100 finished training
episodes (:class:`Judge`, in the driver, from every episode's return that
:func:`bench.rllib_runner.episode_returns_callback` logs), as reactorfed's trials report it;
an exploit hands the donor's recent returns to the trial, as reactorfed's does. The whole
experiment stops when a trial's figure reaches the target at one of its perturbation
iterations (a multiple of the interval: where reactorfed's controller checks it), or at
the time limit.

Seeds: RLlib's ``debugging(seed=...)`` per trial (drawn, with the initial hyperparameters,
by Tune's ``BasicVariantGenerator(random_state=seed)``), and Python's ``random`` (which
Tune's PBT draws its donors and perturbations from) seeded with ``random.seed(seed)`` in the
driver before ``Tuner.fit``. Tune's PBT decides when a trial reports, against the others'
latest results, so which trial ran faster still shapes the decisions.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

from bench.pbt_history import ray_history, read_lines, tag_index

__all__ = ["METRIC", "Judge", "run"]

METRIC = "mean_return_100"
WALL = "bench_wall_s"  # the trial's clock (time.time()) at the end of its iteration


class Judge:
    """Each trial's last 100 episode returns, the population's best, and when the target
    was reached: pure bookkeeping, fed by the scheduler with every result."""

    def __init__(self, target: float, interval: int, time_limit_s: float, window: int = 100) -> None:
        self.target, self.interval, self.time_limit_s, self.window = target, interval, time_limit_s, window
        self.recent: dict[int, deque[float]] = {}
        self.first_start: dict[int, float] = {}  # trial -> its first train()'s start (its clock)
        self.env_steps = 0  # sampled by every trial so far (exploited trials' work included)
        self.results = 0
        self.reached: dict[str, Any] | None = None
        self.timed_out = False
        self.curve: list[tuple[float, int, int, float | None]] = []  # (driver time, trial, iteration, mean)
        self.experiment_dir = ""

    def mean(self, trial: int) -> float:
        r = self.recent.get(trial)
        return sum(r) / len(r) if r else math.nan

    @property
    def start(self) -> float | None:
        """Every trial training: the latest first train()'s start (Ray starts its trials'
        actors one after another; reactorfed's trials start at one directive)."""
        return max(self.first_start.values()) if self.first_start else None

    @property
    def done(self) -> bool:
        return self.reached is not None or self.timed_out

    def add(self, trial: int, iteration: int, returns: list[float], steps: int, wall: float, iter_s: float,
            now: float, population: int) -> float:
        """A result of ``trial``: its returns, the steps it sampled, its clock at the end of
        the iteration (``wall``) and the iteration's seconds; ``now`` the driver's clock.
        Returns the trial's metric."""
        self.first_start.setdefault(trial, wall - iter_s)
        window = self.recent.setdefault(trial, deque(maxlen=self.window))
        window.extend(float(r) for r in returns)
        self.env_steps += steps
        self.results += 1
        m = self.mean(trial)
        self.curve.append((now, trial, iteration, None if math.isnan(m) else m))
        if (self.reached is None and iteration % self.interval == 0 and not math.isnan(m) and m >= self.target
                and len(self.first_start) == population):
            self.reached = {"time": now, "env_steps": self.env_steps, "trial": trial, "iteration": iteration,
                            "metric": m}
        begun = min(self.first_start.values())
        if now - begun > self.time_limit_s:
            self.timed_out = True
        return m

    def exploit(self, trial: int, donor: int) -> None:
        """``trial`` takes ``donor``'s weights: its recent returns too (as in reactorfed)."""
        self.recent[trial] = deque(self.recent.get(donor, ()), maxlen=self.window)

    def best(self) -> float | None:
        ms = [m for t in self.recent if not math.isnan(m := self.mean(t))]
        return max(ms) if ms else None


def _config(spec: dict[str, Any]) -> Any:
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from bench.rllib_runner import build_config, episode_returns_callback

    class Stamped(episode_returns_callback()):  # type: ignore[misc]
        """The trial's clock at the end of each iteration, and the metric's key (the
        driver's judge fills it: Tune checks results name the scheduler's metric)."""

        def on_train_result(self, *, result: dict[str, Any], **_: Any) -> None:
            result[WALL] = time.time()
            result[METRIC] = math.nan

    hp = dict(spec["hp"])
    cfg = build_config("ppo", spec["env"], 0, hp).callbacks(Stamped).resources(
        num_cpus_for_main_process=spec["cpus_per_trial"])
    # (with num_learners=0 the trial's bundle is max(main process, local learner): both a share)
    cfg = cfg.learners(num_learners=0, num_cpus_per_learner=spec["cpus_per_trial"])
    if spec.get("tuned"):
        # RLlib's examples/algorithms/ppo/cartpole_ppo.py: its network and loss settings
        cfg = cfg.rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                            vf_share_layers=True))
        cfg = cfg.training(num_epochs=6, vf_loss_coeff=0.01)
    return cfg


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from ray import tune
    from ray.tune.schedulers import PopulationBasedTraining
    from ray.tune.search.basic_variant import BasicVariantGenerator
    from ray.tune.stopper import Stopper

    from bench.ray_util import init_ray, shutdown_ray
    from bench.rllib_runner import RETURNS_KEY

    seed, population, interval = int(spec["seed"]), int(spec["population"]), int(spec["interval"])
    judge = Judge(float(spec["target"]), interval, float(spec["time_limit_s"]))
    space = {"lr": tune.loguniform(*spec["space"]["lr"]), "clip_param": tune.uniform(*spec["space"]["clip_param"]),
             "lambda": tune.uniform(*spec["space"]["lambda"])}

    class JudgedPBT(PopulationBasedTraining):
        """Tune's PBT ranking by the judge's figure; an exploit hands the judge's window on."""

        def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
            idx = tag_index(trial.experiment_tag)
            judge.experiment_dir = judge.experiment_dir or str(trial.local_experiment_path)
            returns = result.get(f"env_runners/{RETURNS_KEY}")
            # (an iteration in which no episode ended reports NaN, not a list)
            returns = list(returns) if isinstance(returns, list | tuple) else []
            result[METRIC] = judge.add(idx, int(result["training_iteration"]), returns,
                                       int(result.get("env_runners/num_env_steps_sampled", 0)), float(result[WALL]),
                                       float(result["time_this_iter_s"]), time.time(), population)
            out: str = super().on_trial_result(tune_controller, trial, result)
            return out

        def _exploit(self, tune_controller: Any, trial: Any, trial_to_clone: Any) -> None:
            # (Tune's hook where the trial takes the donor's checkpoint)
            super()._exploit(tune_controller, trial, trial_to_clone)
            judge.exploit(tag_index(trial.experiment_tag), tag_index(trial_to_clone.experiment_tag))

    class Stop(Stopper):
        def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
            return False

        def stop_all(self) -> bool:
            return judge.done

    scheduler = JudgedPBT(time_attr="training_iteration", metric=METRIC, mode="max", perturbation_interval=interval,
                          hyperparam_mutations=space, quantile_fraction=spec["quantile"],
                          resample_probability=spec["resample"], perturbation_factors=tuple(spec["factors"]),
                          synch=bool(spec.get("synch", False)))
    param_space = _config(spec).to_dict()
    param_space.update(space)
    param_space["seed"] = tune.randint(0, 2**31 - 1)
    storage = Path(spec.get("storage") or tempfile.mkdtemp(prefix="pbt_ray_"))
    init_ray(num_cpus=int(spec["num_cpus"]))
    random.seed(seed)  # Tune's PBT draws from Python's random in this process
    tuner = tune.Tuner(
        "PPO", param_space=param_space,
        tune_config=tune.TuneConfig(scheduler=scheduler, num_samples=population,
                                    search_alg=BasicVariantGenerator(random_state=seed)),
        run_config=tune.RunConfig(name=f"pbt_seed{seed}", storage_path=str(storage), verbose=0,
                                  stop=tune.stopper.CombinedStopper(
                                      Stop(), tune.stopper.MaximumIterationStopper(int(spec["iterations"]))),
                                  checkpoint_config=tune.CheckpointConfig(num_to_keep=None)))
    t0 = time.time()
    try:
        tuner.fit()
    finally:
        shutdown_ray()
    start = judge.start
    r = judge.reached
    names = list(space)
    gl = Path(judge.experiment_dir) / "pbt_global.txt" if judge.experiment_dir else None
    if gl is None or not gl.exists():
        found = sorted(storage.rglob("pbt_global.txt"))
        gl = found[0] if found else None
    history = ray_history(read_lines(gl), names) if gl else []
    first = min(judge.first_start.values()) if judge.first_start else t0
    return {
        "reached": r is not None, "timed_out": judge.timed_out,
        "seconds": None if r is None or start is None else r["time"] - start,
        "seconds_from_first_trial": None if r is None else r["time"] - first,
        "startup_spread_s": (start - first) if start is not None else None,
        "env_steps": r["env_steps"] if r else None, "final_env_steps": judge.env_steps,
        "best_final": judge.best(), "reached_trial": r["trial"] if r else None,
        "reached_iteration": r["iteration"] if r else None, "results": judge.results,
        "history": history, "pbt_global": str(gl) if gl else "",
        "curve": [[round(t - (start or first), 3), trial, it, m] for t, trial, it, m in judge.curve],
        "fit_seconds": time.time() - t0,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="One Ray Tune PBT experiment over RLlib's PPO (bench/pbt.py runs it).")
    p.add_argument("--spec", required=True, help="JSON: seed, env, hp, space, population, interval, quantile, "
                                                 "resample, factors, target, iterations, time_limit_s, num_cpus, "
                                                 "cpus_per_trial, storage, tuned, synch")
    spec = json.loads(p.parse_args(argv).spec)
    print(json.dumps(run(spec)))


if __name__ == "__main__":
    main()
    sys.exit(0)
