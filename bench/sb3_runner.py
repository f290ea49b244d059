"""Stable-Baselines3's PPO trained until a threshold, judged as reactorfed and RLlib are, by
reactorfed's own :class:`~reactorfed.rl.TrainingLog`: the mean return of the last 100
finished training episodes (SB3's Monitor's returns), checked after each update, as
reactorfed's learner checks it.

One run per process (``python -m bench.sb3_runner --spec JSON``), timed from SB3's
``on_training_start`` callback (imports and environment construction not counted); the
last line on stdout is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from reactorfed.rl import RunConfig, TrainingLog

__all__ = ["train"]


def _minatar_torso() -> Any:
    """MinAtar's reference torso for SB3: a 3x3 convolution (no padding), then fully
    connected layers, all ReLU, on channels-last frames (SB3's CnnPolicy wants 36x36 or more)."""
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn

    class MinAtarTorso(BaseFeaturesExtractor):
        def __init__(self, observation_space: Any, channels: int = 16, hidden: list[int] | None = None) -> None:
            h, w, c = observation_space.shape
            widths = list(hidden or [128])
            super().__init__(observation_space, widths[-1])
            layers: list[nn.Module] = [nn.Conv2d(c, channels, 3), nn.ReLU(), nn.Flatten()]
            width = channels * (h - 2) * (w - 2)
            for n in widths:
                layers += [nn.Linear(width, n), nn.ReLU()]
                width = n
            self.net = nn.Sequential(*layers)

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.net(obs.permute(0, 3, 1, 2).float())

    return MinAtarTorso


def train(env_id: str, seed: int, hp: dict[str, Any], threshold: float, total: int, threads: int = 1) -> dict[str, Any]:
    """One SB3 PPO run. ``hp``: SB3's PPO arguments, plus ``n_envs``, ``anneal`` (the
    learning rate and clip range fall linearly to 0 over the run, as rl-zoo's ``lin_``
    schedules) and ``hidden`` (the sizes of the separate policy and value networks)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(threads)
    hp = dict(hp)
    n_envs, anneal, hidden = hp.pop("n_envs"), hp.pop("anneal"), list(hp.pop("hidden"))
    anneal_clip = hp.pop("anneal_clip", anneal)
    if anneal:
        lr = hp.pop("learning_rate")
        hp["learning_rate"] = lambda remaining: remaining * lr
    if anneal_clip:
        clip = hp.pop("clip_range")
        hp["clip_range"] = lambda remaining: remaining * clip

    class Threshold(BaseCallback):
        """reactorfed's own judge (:class:`reactorfed.rl.TrainingLog`) fed each rollout's
        finished episodes once the update that follows the rollout is done, as reactorfed's
        learner logs a round's episodes after learning from it: judged at the same points
        (SB3 could stop within a rollout, reactorfed only between updates) and timed after
        the same work. The curve is taken at each rollout's end."""

        def __init__(self) -> None:
            super().__init__()
            self.log = TrainingLog(RunConfig(target_return=threshold))
            self.curve: list[tuple[float, int, float]] = []
            self.finished: list[float] = []  # the episodes of the rollout collected last
            self.rollouts = 0

        def _on_training_start(self) -> None:
            self.log.start("sb3", time.perf_counter_ns)

        def _on_step(self) -> bool:
            self.finished += [float(info["episode"]["r"]) for info in self.locals["infos"] if "episode" in info]
            return not self.log.solved

        def _on_rollout_end(self) -> None:
            self.rollouts += 1
            now = (time.perf_counter_ns() - self.log.t0) / 1e9
            self.curve.append((round(now, 4), int(self.num_timesteps), self.log.mean_return))

        def _judge(self) -> None:
            """The last rollout's episodes to the log (after its update: SB3 calls
            ``_on_rollout_start`` once it has trained, and ``_on_training_end`` after the last)."""
            if self.rollouts:
                self.log.add(self.finished, self.rollouts, int(self.num_timesteps))
                self.finished = []

        _on_rollout_start = _judge
        _on_training_end = _judge

    conv = hp.pop("conv_channels", None)
    if env_id.startswith("MinAtar/"):
        from minatar.gym import register_envs

        register_envs()
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    policy_kwargs: dict[str, Any] = {"net_arch": {"pi": hidden, "vf": hidden}}
    if conv is not None:  # MinAtar's network, its torso shared by the heads (as reactorfed's ConvActorCritic)
        policy_kwargs = {"net_arch": [], "features_extractor_class": _minatar_torso(),
                         "features_extractor_kwargs": {"channels": conv, "hidden": hidden}}
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, policy_kwargs=policy_kwargs, **hp)
    cb = Threshold()
    model.learn(total, callback=cb)
    end = (time.perf_counter_ns() - cb.log.t0) / 1e9
    reached = cb.log.reached
    return {"reached": reached is not None, "seconds": reached[2] if reached else None,
            "env_steps": reached[1] if reached else None, "train_seconds": end, "curve": cb.curve}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="One SB3 PPO run to a threshold (bench/training.py runs it).")
    p.add_argument("--spec", required=True, help="JSON: env, seed, hp, threshold, total, threads")
    spec = json.loads(p.parse_args(argv).spec)
    print(json.dumps(train(spec["env"], int(spec["seed"]), spec["hp"], float(spec["threshold"]), int(spec["total"]),
                           int(spec.get("threads", 1)))))


if __name__ == "__main__":
    main()
    sys.exit(0)
