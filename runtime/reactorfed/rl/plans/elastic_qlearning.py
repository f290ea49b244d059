"""The DQN learner of synchronized Q-learning fed by an elastic bank of samplers (members
join and leave while it trains).

Its rounds are :class:`~reactorfed.rl.plans.elastic_round.ElasticRound`'s: the fragments at
a round's end are exactly those of the members present when its weights went out and when
they arrived; the learner's own action at the round's end makes it run there even when
every member asked has left (then it asks those present), so training never waits for
fragments nobody will send. Its result adds the round's part: env steps by member
incarnation (``samples_by_member``), the widths it saw (``membership``),
``rounds_asked_again`` and ``change_gaps_ms``. Given the same membership at the same tags
(the RTI's record, replayed) the weights, and all of the result but the times, are the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reactorfed import STARTUP, ActionHandle, LogicalAction, MultiReader, PortWriter, reaction

from ..algos.dqn.learner import DQNConfig
from ..envs.runner import Fragment
from .elastic_round import ElasticRound
from .learner_wait import LearnerWait, late_by
from .qlearning import DQNTrainer, TrainConfig

__all__ = ["ElasticDQNTrainer"]


class ElasticDQNTrainer(DQNTrainer):
    """A :class:`DQNTrainer` whose samplers are the members of the main reactor's
    elastic bank ``bank`` (of ``n`` slots, its maximum width). Connect its ``weights`` to
    the samplers with a delay of ``period`` (``after=period``; 0: the next microstep), the
    delay its rounds are timed with (see the module)."""

    round_end: LogicalAction[object] = LogicalAction(object)

    def __init__(
        self,
        bank: str,
        n: int,
        obs_dim: int,
        num_actions: int,
        *,
        dqn: DQNConfig | None = None,
        train: TrainConfig | None = None,
        seed: int = 0,
        period: int = 0,
    ) -> None:
        super().__init__(n, obs_dim, num_actions, dqn=dqn, train=train or TrainConfig(), seed=seed)
        self.bank = bank
        self.period = period
        self.rounds = ElasticRound(bank, period)
        self.wait = LearnerWait(self.physical_time)  # (measured for autoscaling; training never reads it)

    def _ask(self, now: tuple[int, ...], weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        weights.set(self.learner.payload())
        self.rounds.ask(now, round_end)

    @reaction(triggers=[STARTUP], effects=[DQNTrainer.weights, round_end])
    def start(self, weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        now = self.rounds.look(self)
        self.begin_training()
        if self.iteration < self.iterations:
            self._ask(now, weights, round_end)

    @reaction(triggers=[DQNTrainer.fragments, round_end], effects=[DQNTrainer.weights, round_end])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray],
              round_end: ActionHandle) -> None:
        present = fragments.present()
        if present:  # (rounds timed by ``period``: waiting for the clock is not waiting for samples)
            self.wait.working(late_by(self) if self.period else None)
        now, complete = self.rounds.end(self, present, round_end, lambda: weights.set(self.learner.payload()))
        if not complete:
            self.incomplete_iterations += 1  # (a fragment missing, or one not asked for)
        if not present:  # every member asked left before the weights arrived: asked again
            return
        if self.train_iteration(present):
            self._ask(now, weights, round_end)

    def progress_figures(self) -> dict[str, float]:
        return {**super().progress_figures(), **self.wait.figures()}

    def _took(self, index: int, frag: Fragment) -> None:
        self.rounds.took(index, len(frag))

    def _extra_result(self) -> dict[str, Any]:
        return self.rounds.result()
