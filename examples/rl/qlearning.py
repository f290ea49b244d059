"""Synchronized parallel Q-learning as a reactorfed program (the paper's Q-learning).

Each iteration ``num_samplers`` samplers collect ``fragment_len`` steps with the
learner's latest weights, the learner adds them to its replay buffer, takes
``updates_per_iteration`` DQN steps and broadcasts the new weights (after 0).
With one ``seed`` the learner's final weights are bit-identical in every run, in one
process or federated; the learner reports them (``weights_sha256``) at the end.

    reactorfed run examples/rl/qlearning.py:Main --fast --param iterations=1000
    reactorfed launch examples/rl/qlearning.py:Main --fast --param num_samplers=8
"""

from __future__ import annotations

from dataclasses import dataclass

from reactorfed import Reactor, bank, each
from reactorfed.rl import DQNLearnerReactor, EnvRunner, QSampler, TrainConfig


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 4
    iterations: int = 1000
    fragment_len: int = 100
    updates_per_iteration: int = 4
    seed: int = 0
    checkpoint: str = ""
    resume: bool = False  # start from the checkpoint when it exists (examples/k8s/qlearning.yaml)
    progress: bool = False


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        probe = EnvRunner(args.env)
        obs_dim, num_actions = probe.obs_size, probe.num_actions
        probe.close()
        self.samplers = bank(QSampler, args.num_samplers, env=args.env,
                             seed=each(lambda i: args.seed * 1000 + 100 + i), fragment_len=args.fragment_len)
        train = TrainConfig(iterations=args.iterations, updates_per_iteration=args.updates_per_iteration,
                            checkpoint=args.checkpoint, resume=args.resume, progress=args.progress)
        self.learner = DQNLearnerReactor(args.num_samplers, obs_dim, num_actions, train=train, seed=args.seed)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
