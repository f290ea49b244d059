"""Synchronized parallel Q-learning as a reactorfed program (the paper's Q-learning).

Each iteration ``num_samplers`` samplers collect ``fragment_len`` steps with the
learner's latest weights, the learner adds them to its replay buffer, takes
``updates_per_iteration`` DQN steps and broadcasts the new weights (after 0).
With one ``seed`` the learner's final weights are bit-identical in every run, in one
process or federated; the learner reports them (``weights_sha256``) at the end.

With ``max_samplers`` the samplers are an elastic bank: ``num_samplers`` at the start,
then between 1 and ``max_samplers`` as members join (a ``reactorfed federate`` process for
a free slot) and leave (SIGTERM to one, or Ctrl-C) while it trains. Each round takes
exactly the fragments of the members present (see :mod:`reactorfed.rl.plans.elastic_qlearning`);
the learner reports the env steps it took from each member and the widths it saw. The
RTI's record (``--membership-out``) replayed (``--membership``) gives the same weights.

    reactorfed run examples/rl/qlearning.py:Main --fast --param iterations=1000
    reactorfed launch examples/rl/qlearning.py:Main --fast --param num_samplers=8
    reactorfed rti examples/rl/qlearning.py:Main --param max_samplers=8 --param round_ms=20 --membership-out run.json
"""

from __future__ import annotations

from dataclasses import dataclass

from reactorfed import Bank, Elastic, Reactor, bank, each, elastic_bank, ms
from reactorfed.rl import (
    DQNTrainer,
    ElasticDQNTrainer,
    EnvRunner,
    QSampler,
    TrainConfig,
)


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 4
    # > 0: the samplers are an elastic bank of 1 to max_samplers (num_samplers at the start)
    max_samplers: int = 0
    # elastic: the weights go back this many ms of logical time later (0: the next microstep).
    # A join's tag is at least its request's physical time (Lingua Franca's rule): without
    # --fast, rounds a few ms apart keep logical time near it, and a join lands at the next
    # round instead of after the training
    round_ms: int = 0
    iterations: int = 1000
    fragment_len: int = 100
    updates_per_iteration: int = 4
    seed: int = 0
    checkpoint: str = ""
    resume: bool = False  # start from the checkpoint when it exists (examples/k8s/qlearning.yaml)
    pause_after: int = 0  # end after that many iterations, with a checkpoint, for a later resume=true
    progress: bool = False
    # the learner's result keeps a row per iteration: when it took the fragments, and from
    # whom (bench/rescale.py times rescaling with it)
    timeline: bool = False


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        probe = EnvRunner(args.env)
        obs_dim, num_actions = probe.obs_size, probe.num_actions
        probe.close()
        train = TrainConfig(iterations=args.iterations, updates_per_iteration=args.updates_per_iteration,
                            checkpoint=args.checkpoint, resume=args.resume, pause_after=args.pause_after, progress=args.progress,
                            timeline=args.timeline)
        seeds = each(lambda i: args.seed * 1000 + 100 + i)
        if args.max_samplers > 0:
            width = Elastic(min=1, max=args.max_samplers, initial=args.num_samplers)
            self.samplers: Bank[QSampler] = elastic_bank(QSampler, width, env=args.env, seed=seeds,
                                                         fragment_len=args.fragment_len)
            period = ms(args.round_ms)
            self.learner: DQNTrainer = ElasticDQNTrainer(
                "samplers", args.max_samplers, obs_dim, num_actions, train=train, seed=args.seed, period=period)
            self.connect(self.samplers.fragment, self.learner.fragments)
            self.connect(self.learner.weights, self.samplers.weights, after=period, broadcast=True)
            return
        self.samplers = bank(QSampler, args.num_samplers, env=args.env, seed=seeds, fragment_len=args.fragment_len,
                             snapshots=bool(args.checkpoint))
        self.learner = DQNTrainer(args.num_samplers, obs_dim, num_actions, train=train, seed=args.seed)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
        if args.checkpoint:  # each sampler's state goes into the checkpoint, and back on a resume
            self.learner.connect_samplers(self, self.samplers)
