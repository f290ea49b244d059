"""The asynchronous execution plan, as a reactor program: samplers sample on their own
clocks, the learner learns from each fragment as it comes, and the policy's lag is
bounded and fixed by logical time (IMPALA's and APPO's plan; RLlib's asynchronous
sampling, made reproducible).

::

    learner.weights --(after weights_delay, broadcast)--> samplers[i].weights
    samplers[i].fragment ---------------------------------> learner.fragments[i]

Sampler ``i`` samples a fragment every ``period`` of logical time, at offsets staggered
over the period (``weights_delay + i * period / num_samplers``), with the newest weights
it holds; it does not wait for the learner. The learner learns at every tag a fragment
arrives at (one update from the fragments of that tag, in sampler order) and broadcasts
its payload, which reaches the samplers ``weights_delay`` later. So a fragment sampled at
``t`` was sampled with the weights the learner sent at or before ``t - weights_delay``:
the policy lags by at most ``ceil(weights_delay / (period / num_samplers))`` updates,
whatever the processes' speeds. Federated, a sampler needs the learner's progress only
up to ``t - weights_delay``: that much logical time is how far ahead of the learner it
may run. V-trace (:class:`~reactorfed.rl.APPOConfig`) corrects for the lag.

Because logical time orders everything that varies, a seed fixes the weights after ``k``
updates in one process and federated alike, a slow sampler included: what is slow only
waits. RLlib's asynchronous algorithms cannot promise that (ray-project/ray #37029).

The learner stops after ``run.iterations`` updates, or once the last 100 training
episodes average ``run.target_return``, and asks the federation to stop (the samplers'
clocks would run on).

With ``max_samplers`` the samplers are an elastic bank of 1 to ``max_samplers`` members
(``num_samplers`` at the start) that join and leave while it trains. There are no rounds to
agree on: the learner learns from the fragments that arrive, whoever sent them, and keeps
:class:`~reactorfed.rl.plans.elastic_round.ElasticRound`'s account of the members (env
steps per incarnation, the widths it saw, the change gaps). The offsets are staggered over
the ``max_samplers`` slots; a member that joins at ``J`` ticks first at ``J`` plus its
offset. Weights sent while a member was absent are dropped, so the learner looks at the
membership every ``period`` too and sends its weights again when a member is there that
its last weights did not go to (a joiner samples nothing before it holds weights; without
that, a bank whose members had all just joined would never be sent any). The membership
at each tag is the RTI's record's, so a replay gives the same weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from reactorfed import (
    STARTUP,
    Bank,
    Elastic,
    MultiReader,
    PortReader,
    PortWriter,
    Reactor,
    Timer,
    ValidationError,
    bank,
    each,
    elastic_bank,
    ms,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..rollout import Rollout, unpack_rollout
from ..training import RunConfig
from .elastic_round import ElasticRound
from .learner_wait import LearnerWait
from .sampler import PlanSampler, sampler_seed
from .trainer import PlanTrainer

__all__ = ["AsyncPlan", "AsyncSampler", "AsyncTrainer", "ElasticAsyncSampler", "ElasticAsyncTrainer",
           "policy_lag_bound"]


def policy_lag_bound(weights_delay: int, period: int, num_samplers: int) -> int:
    """The most updates a fragment's weights can be behind the learner's when it learns
    from it: updates happen at most every ``period / num_samplers``."""
    return math.ceil(weights_delay * num_samplers / period)


class AsyncSampler(PlanSampler):
    """Every ``period`` from ``offset``: steps ``num_envs`` copies of ``env`` for
    ``fragment_len`` rows with the newest weights it holds, and sends the fragment."""

    tick = Timer(offset="offset", period="period")

    def __init__(self, algo: Algorithm, env: str, space: SpaceInfo, num_envs: int, fragment_len: int,
                 seed: int, offset: int, period: int, backend: str = "gymnasium") -> None:
        super().__init__(algo, env, space, num_envs, fragment_len, seed, backend)
        self.offset, self.period = offset, period
        self.loaded = False

    # declared before collect: weights arriving at a tick are used by that tick's fragment
    @reaction(triggers=[PlanSampler.weights])
    def receive(self, weights: PortReader[np.ndarray]) -> None:
        self.load(weights.get())
        self.loaded = True

    @reaction(triggers=[tick], effects=[PlanSampler.fragment])
    def collect(self, fragment: PortWriter[np.ndarray]) -> None:
        # the first weights arrive at the first tick (offset >= weights_delay); a resumed
        # learner that has nothing left to do sends none: then nothing is sampled
        if self.loaded:
            fragment.set(self.sample())


class AsyncTrainer(PlanTrainer):
    """Learns from the fragments of each tag as they come, then broadcasts its payload;
    once training is over it asks the federation to stop (see
    :class:`~reactorfed.rl.plans.trainer.PlanTrainer` for the rest)."""

    done = False

    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        return not self.done  # fragments still under way after the stop was asked: not learned from

    def training_over(self) -> None:
        self.done = True
        self.request_stop()


class ElasticAsyncSampler(AsyncSampler):
    """An :class:`AsyncSampler` that is a member of an elastic bank: it reports the env
    steps it sent after each fragment (a member that leaves runs no shutdown reaction)."""

    @reaction(triggers=[AsyncSampler.tick], effects=[PlanSampler.fragment])
    def collect(self, fragment: PortWriter[np.ndarray]) -> None:
        if self.loaded:
            fragment.set(self.sample())
            self.report_result({"samples": self.transitions})


class ElasticAsyncTrainer(AsyncTrainer):
    """The asynchronous plan's learner when its samplers are the members of the main
    reactor's elastic bank ``bank`` (``n`` slots): it learns as :class:`AsyncTrainer` does,
    counts what it takes by member incarnation, and every ``period`` sends its weights
    again when a member is present that its last weights did not go to (see the module).
    Its result adds ``samples_by_member``, ``membership``, ``weights_resent``,
    ``samples_after_stop`` (by member: the env steps of fragments still under way when it
    asked to stop, not learned from) and ``change_gaps_ms``."""

    welcome = Timer(offset="period", period="period")

    def __init__(self, bank: str, n: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0, weights_delay: int = 0, period: int = ms(10)) -> None:
        super().__init__(n, algo, space, run=run, seed=seed, weights_delay=weights_delay)
        self.period = period
        self.rounds = ElasticRound(bank, weights_delay, timeline=self.run.timeline)
        self.wait = LearnerWait(self.physical_time)  # (measured for autoscaling; training never reads it)
        self.sent_to: tuple[int, ...] = ()  # the members present when the weights went out last
        self.resent = 0  # weights sent again for members that had none
        #: bank index -> env steps in fragments that came after the learner asked to stop
        self.unused: dict[str, int] = {}

    def _send_to(self, now: tuple[int, ...], weights: PortWriter[np.ndarray]) -> None:
        self.send(weights)
        self.sent_to = now

    @reaction(triggers=[STARTUP], effects=[PlanTrainer.weights])
    def start(self, weights: PortWriter[np.ndarray]) -> None:
        now = self.rounds.look(self)
        if self.begin():
            self._send_to(now, weights)
        else:
            self.training_over()

    @reaction(triggers=[PlanTrainer.fragments], effects=[PlanTrainer.weights])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray]) -> None:
        self.wait.working()
        now = self.rounds.look(self)
        present = fragments.present()
        if not self.take(present):
            # under way when the learner asked to stop: not learned from, counted apart
            for i, packed in present:
                self.unused[str(i)] = self.unused.get(str(i), 0) + unpack_rollout(packed).transitions
            return
        self.rounds.row(self, now)  # (the members present: each update takes what arrived)
        if self.update(present):
            self._send_to(now, weights)
        else:
            self.training_over()

    @reaction(triggers=[welcome], effects=[PlanTrainer.weights])
    def resend(self, weights: PortWriter[np.ndarray]) -> None:
        now = self.rounds.look(self)
        if not self.done and any(i not in self.sent_to for i in now):
            self.resent += 1
            self._send_to(now, weights)

    def progress_figures(self, env_steps: int) -> dict[str, float]:
        return {**super().progress_figures(env_steps), **self.wait.figures()}

    def took(self, index: int, rollout: Rollout) -> None:
        self.rounds.took(index, rollout.transitions)

    def extra_result(self) -> dict[str, Any]:
        # (no rounds to ask again: the learner learns from what arrives)
        r = {k: v for k, v in self.rounds.result().items() if k != "rounds_asked_again"}
        return {**r, "samples_after_stop": dict(sorted(self.unused.items())), "weights_resent": self.resent}


class AsyncPlan(Reactor):
    """The asynchronous plan for ``algo`` on ``env``: ``num_samplers`` samplers of
    ``num_envs`` copies, ``fragment_len`` rows a fragment, one every ``period`` each,
    weights reaching them ``weights_delay`` after the learner sends them. A federated run
    puts each sampler and the learner in its own process. ``backend`` steps the samplers'
    copies (:mod:`~reactorfed.rl.envs.backends`).

    With ``max_samplers`` (> 0) the samplers are an elastic bank of 1 to ``max_samplers``,
    ``num_samplers`` at the start (:attr:`ElasticSampler` s; see the module).

    Subclass it for a program with its own settings (``super().__init__(...)``), and set
    :attr:`Sampler` for samplers of your own (an :class:`AsyncSampler` subclass)."""

    Sampler: type[AsyncSampler] = AsyncSampler
    ElasticSampler: type[AsyncSampler] = ElasticAsyncSampler

    def __init__(self, algo: Algorithm, env: str, *, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, period: int = ms(10), weights_delay: int = ms(10),
                 run: RunConfig | None = None, seed: int = 0, backend: str = "gymnasium",
                 max_samplers: int = 0) -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len),
                            ("period", period), ("weights_delay", weights_delay)):
            if not isinstance(value, int) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        space = SpaceInfo.of_env(env)
        if max_samplers:
            if not isinstance(max_samplers, int) or max_samplers < num_samplers:
                raise ValidationError(
                    f"{self.fqn}: max_samplers must be an int >= num_samplers ({num_samplers}), got {max_samplers!r}")
            width = Elastic(min=1, max=max_samplers, initial=num_samplers)
            self.samplers: Bank[AsyncSampler] = elastic_bank(
                self.ElasticSampler, width, algo, env, space, num_envs, fragment_len,
                seed=each(lambda i: sampler_seed(seed, i)),
                offset=each(lambda i: weights_delay + i * period // max_samplers), period=period, backend=backend)
            self.learner: AsyncTrainer = ElasticAsyncTrainer("samplers", max_samplers, algo, space, run=run,
                                                             seed=seed, weights_delay=weights_delay, period=period)
            self.connect(self.samplers.fragment, self.learner.fragments)
            self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)
            return
        self.samplers = bank(self.Sampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)),
                             offset=each(lambda i: weights_delay + i * period // num_samplers), period=period,
                             backend=backend)
        self.learner = AsyncTrainer(num_samplers, algo, space, run=run, seed=seed, weights_delay=weights_delay)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)
