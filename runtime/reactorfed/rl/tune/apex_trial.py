"""A slot of a tuner's trials' bank on Ape-X's plan: asynchronous samplers that explore
with Ape-X's ladder of epsilons over the slot's environment copies, build n-step
transitions and give them their initial priorities with their copy of the network; the
learner holds the prioritized replay (:class:`~reactorfed.rl.algos.apex.replay_learner.ApexReplayLearner`)
and is driven by the controller's directives as :class:`~reactorfed.rl.tune.trial.TrialTrainer` is.

::

    controller.directives[s] --(after 0)--> trials[s].directive --> learner.directive
    learner.report --> trials[s].report ---------------------------> controller.reports[s]
    learner.weights --(after weights_delay, broadcast)--> samplers[i].weights
    samplers[i].fragment --> learner.fragments[i];  samplers[i].episodes --> learner.episodes[i]

The asynchronous slot's schedule (:mod:`~reactorfed.rl.tune.async_trial`): sampler ``i``
ticks every ``period`` from ``weights_delay + i * period / num_samplers``, so a slot's
``k``-th iteration falls at the same tag in every slot and PBT's rounds gather at one tag.
An iteration adds the transitions of a tag's fragments to the replay, then takes
``updates_per_iteration`` gradient steps (none before the replay holds
``replay.learning_starts``), then broadcasts the weights. Transitions acted with weights
the learner sent before its current trial began are dropped (a fragment holding no other
is counted in ``stale_fragments``, and its episodes are not the trial's); a refilled
slot's replay starts empty, an exploited one keeps its own (:mod:`~reactorfed.rl.tune.exchange`).
The samplers' n-step builders go on across trials: their open returns are of the slot's
episodes, whichever weights act.

The samplers' clocks run on, so the run ends when the controller has stopped every slot.
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np

from reactorfed import Input, MultiReader, Output, PortWriter, Reactor, bank, each, reaction

from ..algos.apex.config import ApexDQNConfig
from ..contracts import Algorithm, Learner, SpaceInfo
from ..plans.apex import ApexSampler
from ..plans.sampler import sampler_seed
from ..plans.trainer import PlanTrainer
from ..replay.contracts import ReplayConfig
from ..training import RunConfig
from .async_trial import AsyncTrialTrainer
from .trial import TrialTrainer

__all__ = ["ApexTrial", "ApexTrialTrainer"]


class ApexTrialTrainer(AsyncTrialTrainer):
    """The learner of an Ape-X slot: each tag's prioritized transitions into its replay,
    then its gradient steps (see the module). ``replay``: the replay's settings, the slot's
    (not a trial's: a running trial's replay holds what it made)."""

    episodes: Input[np.ndarray] = Input(np.ndarray, width="n")

    def __init__(self, slot: int, n: int, algo: ApexDQNConfig, space: SpaceInfo, run: RunConfig, *,
                 replay: ReplayConfig, updates_per_iteration: int, weights_delay: int, wants_state: bool = False,
                 checkpoint_dir: str = "", slow_ns: int = 0) -> None:
        super().__init__(slot, n, cast(Algorithm, algo), space, run, weights_delay=weights_delay,
                         wants_state=wants_state, checkpoint_dir=checkpoint_dir, slow_ns=slow_ns)
        self.replay, self.updates_per_iteration = replay, updates_per_iteration

    def build_learner(self, algo: Algorithm, seed: int) -> Learner:
        from ..algos.apex.replay_learner import ApexReplayLearner

        learner = ApexReplayLearner(self.space, cast(ApexDQNConfig, algo), self.replay, self.updates_per_iteration,
                                    seed=seed)
        return cast(Learner, learner)

    @reaction(triggers=[PlanTrainer.fragments, episodes], effects=[PlanTrainer.weights, TrialTrainer.report])
    def learn(self, fragments: MultiReader[np.ndarray], episodes: MultiReader[np.ndarray],
              weights: PortWriter[np.ndarray], report: PortWriter[object]) -> None:
        if self.trial < 0 or self.iteration >= self.until:
            return  # between trials, or waiting for the controller's answer
        records = dict(episodes.present())
        rows: list[np.ndarray] = []
        steps, returns = 0, []
        for i, t in fragments.present():
            mine = self.of_this_trial(t["policy_time"])
            if not mine.any():
                self.stale += len(t) > 0
                continue
            rows.append(t[mine])
            rec = records[i]  # [env steps, the returns of the episodes that ended]
            steps += int(rec[0])
            returns += [float(r) for r in rec[1:]]
        if not rows:
            return
        if self.slow_ns > 0:
            time.sleep(self.slow_ns / 1e9)
        self._update(np.concatenate(rows), steps, returns)
        if self.iteration >= self.until:
            self.send_report(report)
        else:
            self.send(weights)

    def _update(self, rows: np.ndarray, steps: int, returns: list[float]) -> None:
        from ..algos.apex.replay_learner import ApexReplayLearner

        learner = self.learner
        assert isinstance(learner, ApexReplayLearner)
        now = self.elapsed_tag()
        self.lag.observe_rows(rows["policy_time"], rows["policy_microstep"], (now.time, now.microstep), self.iteration)
        self.stats = learner.learn_transitions(rows, steps)
        self.record_update(returns)


class ApexTrial(Reactor):
    """Slot ``slot``: ``num_samplers`` Ape-X samplers of ``num_envs`` copies of ``env``
    (``fragment_len`` rows every ``period``; the slot's ``num_samplers * num_envs`` copies
    on Ape-X's ladder of epsilons; their seeds the slot's: ``seed`` and ``slot``), and an
    :class:`ApexTrialTrainer` whose weights reach them ``weights_delay`` later."""

    directive: Input[object] = Input(object)
    report: Output[object] = Output(object)

    def __init__(self, slot: int, algo: ApexDQNConfig, env: str, space: SpaceInfo, run: RunConfig, *,
                 replay: ReplayConfig, updates_per_iteration: int = 1, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 16, period: int, weights_delay: int, seed: int = 0,
                 backend: str = "gymnasium", wants_state: bool = False, checkpoint_dir: str = "",
                 slow_ns: int = 0) -> None:
        self.samplers = bank(ApexSampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, 100 * (slot + 1) + i)),
                             offset=each(lambda i: weights_delay + i * period // num_samplers), period=period,
                             first_actor=each(lambda i: i * num_envs), num_actors=num_samplers * num_envs,
                             backend=backend)
        self.learner = ApexTrialTrainer(slot, num_samplers, algo, space, run, replay=replay,
                                        updates_per_iteration=updates_per_iteration, weights_delay=weights_delay,
                                        wants_state=wants_state, checkpoint_dir=checkpoint_dir, slow_ns=slow_ns)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.samplers.episodes, self.learner.episodes)
        self.connect(self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True)
        self.connect(self.directive, self.learner.directive)
        self.connect(self.learner.report, self.report)
