"""DQN on CartPole-v1, trained by reactors: copy this to start your own.

Two samplers collect 128 steps each per iteration with the learner's latest
weights (epsilon-greedy); the learner adds them to its replay buffer, takes 128
gradient steps and broadcasts the new weights. Training stops when the last 100
training episodes average ``target_return`` (or after ``iterations``) and the greedy
policy, evaluated over ``eval_episodes`` episodes, agrees; the learner prints the
verdict and saves a checkpoint (``checkpoint``, loadable with ``DQNLearner.load``).

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/dqn_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/dqn_cartpole.py:Main --fast
    python examples/rl/dqn_cartpole.py

Every field of :class:`Args` is a parameter: ``--param num_samplers=4``; DQN's settings
are its ``dqn`` field, a :class:`~reactorfed.rl.DQNConfig`, set by dotted names:
``--param dqn.learning_rate=1e-3``. The run is deterministic: the same ``seed`` gives the
same weights, either way.

With ``--param max_samplers=8`` the samplers are an elastic bank (``num_samplers`` at the
start, 1 to 8 while it trains: samplers may join and leave, as in examples/rl/qlearning.py);
the same membership at the same tags gives the same weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed import Bank, Elastic, Reactor, bank, each, elastic_bank, ms
from reactorfed.rl import (
    DQNConfig,
    DQNTrainer,
    ElasticDQNTrainer,
    EnvRunner,
    QSampler,
    TrainConfig,
)


@dataclass(frozen=True)
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    max_samplers: int = 0  # > 0: an elastic bank of 1 to max_samplers samplers (num_samplers at the start)
    round_ms: int = 0  # elastic: logical ms between rounds (0: the next microstep; see qlearning.py)
    iterations: int = 400
    fragment_len: int = 128
    updates_per_iteration: int = 128
    target_return: float = 195.0
    eval_episodes: int = 100
    seed: int = 1
    checkpoint: str = "runs/dqn_cartpole.pt"
    resume: bool = False  # carry on from the checkpoint when it exists (the run that would have happened)
    pause_after: int = 0  # end after that many iterations, with a checkpoint, for a later resume=true
    progress: bool = True
    # DQN (rl-zoo's CartPole settings, close enough)
    dqn: DQNConfig = field(default_factory=lambda: DQNConfig(
        learning_rate=2.3e-3, buffer_size=100_000, target_update_interval=10, hidden=(256, 256), end_e=0.04,
        exploration_steps=8_000))


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        probe = EnvRunner(args.env)  # the environment says what the network sees and does
        obs_dim, num_actions = probe.obs_size, probe.num_actions
        probe.close()
        dqn = args.dqn
        train = TrainConfig(
            iterations=args.iterations,
            updates_per_iteration=args.updates_per_iteration,
            target_return=args.target_return,
            eval_env=args.env,
            eval_episodes=args.eval_episodes,
            checkpoint=args.checkpoint,
            checkpoint_every=10,
            resume=args.resume, pause_after=args.pause_after,
            progress=args.progress,
            progress_every=5,
        )
        seeds = each(lambda i: args.seed * 1000 + 100 + i)
        if args.max_samplers > 0:
            width = Elastic(min=1, max=args.max_samplers, initial=args.num_samplers)
            self.samplers: Bank[QSampler] = elastic_bank(QSampler, width, env=args.env, seed=seeds,
                                                         fragment_len=args.fragment_len, hidden=dqn.hidden)
            period = ms(args.round_ms)
            self.learner: DQNTrainer = ElasticDQNTrainer(
                "samplers", args.max_samplers, obs_dim, num_actions, dqn=dqn, train=train, seed=args.seed, period=period)
            self.connect(self.samplers.fragment, self.learner.fragments)
            self.connect(self.learner.weights, self.samplers.weights, after=period, broadcast=True)
            return
        self.samplers = bank(
            QSampler,
            args.num_samplers,
            env=args.env,
            seed=seeds,
            fragment_len=args.fragment_len,
            hidden=dqn.hidden,
            snapshots=bool(args.checkpoint),
        )
        self.learner = DQNTrainer(args.num_samplers, obs_dim, num_actions, dqn=dqn, train=train,
                                         seed=args.seed)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
        if args.checkpoint:  # each sampler's state goes into the checkpoint, and back on a resume
            self.learner.connect_samplers(self, self.samplers)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
