"""The DQN learner of synchronized Q-learning fed by an elastic bank of samplers (issue 19:
members join and leave while it trains).

A round: the learner sends its weights at tag ``W`` (to the members present at ``W``); each
sampler that still is at the tag they arrive at, ``R`` (``W`` plus the connection's delay),
collects there and sends its fragment back at ``R``. So the fragments at ``R`` are exactly
those of the members present at both ``W`` and ``R``: a member that joins after ``W`` is
asked from the next round on, one that leaves by ``R`` got no weights (they are dropped).
The learner knows both sets (:func:`reactorfed.model.elastic.members` at ``W`` and at ``R``), so it
takes every fragment once and can tell a missing one (``incomplete_iterations``; none in a
correct run). Its own action at ``R`` makes it run there even when every member asked has
left (then it asks those present: ``rounds_asked_again``), so training never waits for
fragments nobody will send.

It counts the env steps of each member, one count per incarnation (a slot that leaves and
joins again is a new one), and notes each change of the width it sees, with its tag: both
are in its result (``samples_by_member``, ``membership``), with the wall time each change
held training up (``change_gaps_ms``: from its reaction before the change to the one at
it). Given the same membership at the same tags (the RTI's record, replayed) the weights,
and all of the result but the times, are the same.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from reactorfed import STARTUP, ActionHandle, LogicalAction, MultiReader, PortWriter, reaction

from ...model.elastic import members
from ..algos.dqn.learner import DQNConfig
from ..envs.runner import Fragment
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
        self.asked: tuple[int, ...] = ()  # the members the last weights went to
        self.seen: tuple[int, ...] = ()  # the members at this learner's last reaction
        #: bank index -> env steps taken from it, one count per incarnation
        self.samples: dict[int, list[int]] = {}
        #: (ns after the start, microstep, width): each width this learner saw, from its tag
        self.widths: list[tuple[int, int, int]] = []
        self.rounds_asked_again = 0
        #: wall ms from the learner's reaction before each change it saw to the one at it
        #: (how long the change held training up; not part of what a replay reproduces)
        self.change_gaps_ms: list[float] = []
        self._wall = 0.0

    def _note(self) -> tuple[int, ...]:
        """The members present now; a new count for each that was not at the last look."""
        now = members(self, self.bank)
        if now != self.seen:
            for i in now:
                if i not in self.seen:
                    self.samples.setdefault(i, []).append(0)
            t = self.elapsed_tag()
            self.widths.append((t.time, t.microstep, len(now)))
            if self.seen:
                self.change_gaps_ms.append(round((time.perf_counter() - self._wall) * 1000, 1))
            self.seen = now
        self._wall = time.perf_counter()
        return now

    def _ask(self, now: tuple[int, ...], weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        self.asked = now
        weights.set(self.learner.payload())
        round_end.schedule(delay=self.period)

    @reaction(triggers=[STARTUP], effects=[DQNTrainer.weights, round_end])
    def start(self, weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        now = self._note()
        self.begin_training()
        if self.iteration < self.iterations:
            self._ask(now, weights, round_end)

    @reaction(triggers=[DQNTrainer.fragments, round_end], effects=[DQNTrainer.weights, round_end])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray],
              round_end: ActionHandle) -> None:
        now = self._note()
        present = fragments.present()
        if [i for i, _ in present] != [i for i in self.asked if i in now]:
            self.incomplete_iterations += 1  # (a fragment missing, or one not asked for)
        if not present:
            # Every member asked left before the weights arrived: ask those present now.
            self.rounds_asked_again += 1
            self._ask(now, weights, round_end)
            return
        if self.train_iteration(present):
            self._ask(now, weights, round_end)

    def _took(self, index: int, frag: Fragment) -> None:
        if index in self.seen:
            self.samples[index][-1] += len(frag)
        else:  # (from a member absent here: only with a coordination bug; counted apart)
            self.samples.setdefault(-1 - index, [0])[-1] += len(frag)

    def _extra_result(self) -> dict[str, Any]:
        return {
            "samples_by_member": {str(i): list(c) for i, c in sorted(self.samples.items())},
            "membership": [list(w) for w in self.widths],
            "rounds_asked_again": self.rounds_asked_again,
            "change_gaps_ms": self.change_gaps_ms,
        }
