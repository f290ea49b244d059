"""Synchronized parallel Q-learning (the paper's workload 3) as a reactorfed program.

Each iteration ``num_samplers`` samplers collect ``fragment_len`` CartPole steps with
the learner's latest weights, the learner adds them to its replay buffer, takes
``updates_per_iteration`` DQN steps and broadcasts the new weights (after 0).
With one ``seed`` the learner's final weights are bit-identical in every run.

    reactorfed run examples/rl/qlearning.py:Main --fast --param iterations=1000
"""

from __future__ import annotations

import numpy as np

from reactorfed import Reactor, bank, each
from reactorfed.rl import EnvRunner
from reactorfed.rl.learner import DQNLearnerReactor, QSampler


class Main(Reactor):
    def __init__(
        self,
        num_samplers: int = 4,
        iterations: int = 1000,
        fragment_len: int = 100,
        updates_per_iteration: int = 4,
        env: str = "CartPole-v1",
        seed: int = 0,
        result_path: str = "",
        checkpoint: str = "",
        progress: bool = False,
    ) -> None:
        probe = EnvRunner(env)
        obs_dim, num_actions = int(np.prod(probe.obs_shape)), probe.num_actions
        probe.close()
        self.samplers = bank(
            QSampler, num_samplers, env=env, seed=each(lambda i: seed * 1000 + 100 + i), fragment_len=fragment_len
        )
        self.learner = DQNLearnerReactor(
            num_samplers,
            obs_dim,
            num_actions,
            iterations=iterations,
            updates_per_iteration=updates_per_iteration,
            seed=seed,
            result_path=result_path,
            checkpoint=checkpoint,
            progress=progress,
        )
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
