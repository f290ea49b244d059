"""DQN on CartPole-v1, trained by reactors: copy this to start your own.

Two samplers collect 128 steps each per iteration with the learner's latest
weights (epsilon-greedy); the learner adds them to its replay buffer, takes 128
gradient steps and broadcasts the new weights. Training stops when the last 100
training episodes average ``target_return`` (or after ``iterations``); the learner
then evaluates the greedy policy over 100 episodes, prints the result and saves
a checkpoint (``checkpoint``, loadable with ``DQNLearner.load``).

Federated (the RTI, one process per sampler, one for the learner)::

    reactorfed launch examples/rl/dqn_cartpole.py:Main --fast

In one process::

    reactorfed run examples/rl/dqn_cartpole.py:Main --fast
    python examples/rl/dqn_cartpole.py

The run is deterministic: the same ``seed`` gives the same weights, either way.
"""

from __future__ import annotations

from reactorfed import Reactor, bank, each
from reactorfed.rl import DQNConfig
from reactorfed.rl.learner import DQNLearnerReactor, QSampler

HIDDEN = (256, 256)
CONFIG = DQNConfig(
    learning_rate=2.3e-3,
    gamma=0.99,
    batch_size=64,
    buffer_size=100_000,
    learning_starts=1_000,
    target_update_interval=10,
    hidden=HIDDEN,
    start_e=1.0,
    end_e=0.04,
    exploration_steps=8_000,
)


class Main(Reactor):
    def __init__(
        self,
        num_samplers: int = 2,
        iterations: int = 400,
        fragment_len: int = 128,
        updates_per_iteration: int = 128,
        target_return: float = 195.0,
        eval_episodes: int = 100,
        seed: int = 1,
        checkpoint: str = "runs/dqn_cartpole.pt",
        progress: bool = True,
        result_path: str = "",
    ) -> None:
        self.samplers = bank(
            QSampler,
            num_samplers,
            env="CartPole-v1",
            seed=each(lambda i: seed * 1000 + 100 + i),
            fragment_len=fragment_len,
            hidden=HIDDEN,
        )
        self.learner = DQNLearnerReactor(
            num_samplers,
            obs_dim=4,
            num_actions=2,
            iterations=iterations,
            updates_per_iteration=updates_per_iteration,
            seed=seed,
            config=CONFIG,
            target_return=target_return,
            checkpoint=checkpoint,
            checkpoint_every=10,
            progress=progress,
            progress_every=5,
            result_path=result_path,
            eval_env="CartPole-v1",
            eval_episodes=eval_episodes,
        )
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)


if __name__ == "__main__":
    from reactorfed import Environment

    main = Main()
    Environment(fast=True).run(main)
    score = main.learner.result.get("eval_return", float("nan"))
    print(f"greedy return over 100 episodes: {score:.1f} ({'solved' if score >= 195 else 'not solved'})")
