"""RLlib 2.60's own PPO, APPO and DQN, trained until a threshold, judged as reactorfed and
SB3 are judged: the mean return of the last 100 finished training episodes.

RLlib's ``env_runners/episode_return_mean`` is not that figure (in Ray 2.60 it averages
the episodes that finished in the latest iteration only, so it crosses a threshold
early). A callback on the env runners logs every finished episode's return as an
``item_series`` (every item kept, cleared at each reduction); the driver hands each
iteration's returns to reactorfed's own judge (:class:`reactorfed.rl.TrainingLog`).

One run per process (``python -m bench.rllib_runner --spec JSON``): Ray starts, the
algorithm is built (its env runner actors start), the machine settles, then the clock starts at the first
``train()``, as reactorfed's clock starts at its learner's startup reaction and SB3's at
``on_training_start``: neither side counts imports, process or actor start-up. The run
ends at the threshold, at the step budget or at the time limit, whichever comes first;
the last line on stdout is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from reactorfed.rl import RunConfig, TrainingLog

__all__ = ["RETURNS_KEY", "build_config", "episode_returns_callback", "train", "train_algorithm"]

RETURNS_KEY = "bench_episode_returns"


def episode_returns_callback() -> Any:
    """The callback class that logs every finished training episode's return under
    :data:`RETURNS_KEY` (one per process: its class is made where it is used)."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class EpisodeReturns(RLlibCallback):
        """Every finished training episode's return, none averaged away."""

        def on_episode_end(self, *, episode: Any, prev_episode_chunks: Any = None, metrics_logger: Any = None,
                           **_: Any) -> None:
            # an episode longer than a fragment arrives in chunks: its return is their sum
            total = float(episode.get_return()) + sum(float(c.get_return()) for c in prev_episode_chunks or ())
            metrics_logger.log_value(RETURNS_KEY, total, reduce="item_series")

    return EpisodeReturns


def _make_minatar(config: Any) -> Any:
    """A MinAtar game for RLlib's env runners (each registers MinAtar's ids in its own
    process), frames as float32: RLlib's CNN takes no boolean input."""
    import gymnasium as gym
    import numpy as np
    from minatar.gym import register_envs

    register_envs()
    game = gym.make(config["game"])
    space = gym.spaces.Box(0.0, 1.0, game.observation_space.shape, np.float32)
    return gym.wrappers.TransformObservation(game, lambda o: o.astype(np.float32), space)


def build_config(algo: str, env: str, seed: int, hp: dict[str, Any]) -> Any:
    """RLlib's config for ``algo`` with the benchmark's hyperparameters ``hp`` (the keys
    of :data:`bench.training.CASES`' ``rllib`` entries, named as RLlib names them)."""
    from ray.rllib.algorithms.appo import APPOConfig
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    cls = {"ppo": PPOConfig, "appo": APPOConfig, "dqn": DQNConfig}[algo]
    hp = dict(hp)
    hidden = list(hp.pop("hidden"))
    activation = hp.pop("activation", "tanh")
    conv = hp.pop("conv_filters", None)
    if conv is not None:
        # RLlib's CNN encoder (shared by the heads), then each head's hidden layers
        model = DefaultModelConfig(conv_filters=conv, conv_activation="relu", head_fcnet_hiddens=hidden,
                                   head_fcnet_activation="relu", vf_share_layers=True)
    elif algo == "dqn":
        model = DefaultModelConfig(fcnet_hiddens=hidden, fcnet_activation=activation, head_fcnet_hiddens=[])
    else:
        model = DefaultModelConfig(fcnet_hiddens=hidden, fcnet_activation=activation, vf_share_layers=False,
                                   head_fcnet_hiddens=[])
    if env.startswith("MinAtar/"):
        from ray.tune.registry import register_env

        register_env(env, _make_minatar)
    runners = hp.pop("num_env_runners")
    envs = hp.pop("num_envs_per_env_runner")
    fragment = hp.pop("rollout_fragment_length")
    cfg = (
        cls()
        .environment(env, env_config={"game": env} if env.startswith("MinAtar/") else {})
        .framework("torch")
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=envs, rollout_fragment_length=fragment,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .rl_module(model_config=model)
        .training(**hp)
        .callbacks(episode_returns_callback())
        .debugging(seed=seed, log_level="ERROR")
        .reporting(min_sample_timesteps_per_iteration=0, min_time_s_per_iteration=0)
    )
    return cfg


def train(algo: str, env: str, seed: int, hp: dict[str, Any], threshold: float, total: int,
          time_limit_s: float) -> dict[str, Any]:
    """One run; the result has the same fields as reactorfed's and SB3's."""
    from bench.ray_util import init_ray

    init_ray(num_cpus=hp["num_env_runners"] + 1)
    return train_algorithm(build_config(algo, env, seed, hp), threshold, total, time_limit_s)


def train_algorithm(config: Any, threshold: float, total: int, time_limit_s: float) -> dict[str, Any]:
    """Build ``config``'s algorithm (Ray started) and train it until ``threshold`` (judged
    by reactorfed's :class:`TrainingLog` on the returns its callback logs under
    :data:`RETURNS_KEY`), ``total`` env steps or ``time_limit_s`` seconds of training."""
    from bench.common import wait_quiet
    from bench.ray_util import shutdown_ray

    algorithm = config.build_algo()
    wait_quiet()  # Ray's daemons and actors settle after their start, before the clock starts
    log = TrainingLog(RunConfig(target_return=threshold, curve=True))  # reactorfed's own judge
    steps, iterations = 0, 0
    log.start("rllib", time.perf_counter_ns)
    try:
        while steps < total and log.seconds < time_limit_s:
            result = algorithm.train()
            iterations += 1
            runners = result.get("env_runners", {})
            finished = runners.get(RETURNS_KEY, [])
            steps = int(result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0)))
            # (an iteration in which no episode ended reports NaN)
            log.add(finished if isinstance(finished, list | tuple) else (), iterations, steps)
            if log.solved:
                break
    finally:
        end = log.seconds
        algorithm.stop()
        shutdown_ray()
    reached = log.reached
    return {"reached": reached is not None, "seconds": reached[2] if reached else None,
            "env_steps": reached[1] if reached else None, "train_seconds": end, "iterations": iterations,
            "final_env_steps": steps, "curve": log.curve}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="One RLlib training run to a threshold (bench/training.py runs it).")
    p.add_argument("--spec", required=True, help="JSON: algo, env, seed, hp, threshold, total, time_limit_s")
    spec = json.loads(p.parse_args(argv).spec)
    out = train(spec["algo"], spec["env"], int(spec["seed"]), spec["hp"], float(spec["threshold"]),
                int(spec["total"]), float(spec["time_limit_s"]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
    sys.exit(0)
