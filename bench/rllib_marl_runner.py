"""RLlib 2.60's multi-agent PPO on PettingZoo MPE's ``simple_spread`` (the ``mpe2`` package,
through ``ParallelPettingZooEnv``), one policy shared by every agent, trained until a
threshold and judged as reactorfed's multi-agent learner is: the mean, over the last 100
finished episodes, of each episode's return per agent (the team's return, every agent's
rewards summed, divided by the agents).

One run per process (``python -m bench.rllib_marl_runner --spec JSON``), timed as
:mod:`bench.rllib_runner` times its runs (:func:`~bench.rllib_runner.train_algorithm`):
the clock starts at the first ``train()``, after Ray, the env runners and the learner are
up; the last line on stdout is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.rllib_runner import RETURNS_KEY, train_algorithm

__all__ = ["ENV_NAME", "build_marl_config", "per_agent_return", "train_marl"]

ENV_NAME = "bench_mpe_simple_spread"
POLICY = "shared"


def per_agent_return(team_return: float, num_agents: int) -> float:
    """The judged figure of one episode: its team return (every agent's rewards summed,
    RLlib's ``MultiAgentEpisode.get_return()``) per agent."""
    if num_agents < 1:
        raise ValueError(f"num_agents must be >= 1, got {num_agents}")
    return team_return / num_agents


def _callbacks(num_agents: int) -> Any:
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class EpisodeReturns(RLlibCallback):
        """Every finished training episode's return per agent, none averaged away."""

        def on_episode_end(self, *, episode: Any, prev_episode_chunks: Any = None, metrics_logger: Any = None,
                           **_: Any) -> None:
            # an episode longer than a fragment arrives in chunks: its return is their sum
            team = float(episode.get_return()) + sum(float(c.get_return()) for c in prev_episode_chunks or ())
            metrics_logger.log_value(RETURNS_KEY, per_agent_return(team, num_agents), reduce="item_series")

    return EpisodeReturns


def _make_spread(config: Any) -> Any:
    from mpe2 import simple_spread_v3
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    return ParallelPettingZooEnv(simple_spread_v3.parallel_env(
        N=config["num_agents"], max_cycles=config["max_cycles"], local_ratio=config["local_ratio"],
        continuous_actions=False))


def build_marl_config(task: dict[str, Any], seed: int, hp: dict[str, Any]) -> Any:
    """RLlib's PPO config: ``task`` (``num_agents``, ``max_cycles``, ``local_ratio``) as
    a multi-agent env, one module ``shared`` every agent maps to, ``hp`` as RLlib names
    them (:func:`bench.marl_settings.rllib_hp`, :func:`bench.marl_rllib.tuned_hp`); the value
    function has its own network unless ``hp`` says ``vf_share_layers``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.tune.registry import register_env

    register_env(ENV_NAME, _make_spread)
    hp = dict(hp)
    model = DefaultModelConfig(fcnet_hiddens=list(hp.pop("hidden")), fcnet_activation=hp.pop("activation"),
                               vf_share_layers=bool(hp.pop("vf_share_layers", False)), head_fcnet_hiddens=[])
    runners = hp.pop("num_env_runners")
    envs = hp.pop("num_envs_per_env_runner")
    fragment = hp.pop("rollout_fragment_length")
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=dict(task))
        .framework("torch")
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kw: POLICY,
                     count_steps_by="env_steps")
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=envs, rollout_fragment_length=fragment,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .rl_module(model_config=model)
        .training(**hp)
        .callbacks(_callbacks(int(task["num_agents"])))
        .debugging(seed=seed, log_level="ERROR")
        .reporting(min_sample_timesteps_per_iteration=0, min_time_s_per_iteration=0)
    )


def train_marl(task: dict[str, Any], seed: int, hp: dict[str, Any], threshold: float, total: int,
               time_limit_s: float) -> dict[str, Any]:
    """One run; the result has the fields of :func:`bench.rllib_runner.train`'s."""
    from bench.ray_util import init_ray

    init_ray(num_cpus=hp["num_env_runners"] + 1)
    return train_algorithm(build_marl_config(task, seed, hp), threshold, total, time_limit_s)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="One RLlib multi-agent PPO run (bench/marl_training.py runs it).")
    p.add_argument("--spec", required=True, help="JSON: task, seed, hp, threshold, total, time_limit_s")
    spec = json.loads(p.parse_args(argv).spec)
    out = train_marl(spec["task"], int(spec["seed"]), spec["hp"], float(spec["threshold"]), int(spec["total"]),
                     float(spec["time_limit_s"]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
    sys.exit(0)
