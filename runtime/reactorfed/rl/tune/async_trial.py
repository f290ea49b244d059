"""A slot of a tuner's trials' bank on the asynchronous plan (APPO's): samplers that sample
on their own clocks, the learner learning from each tag's fragments as they come, driven
by the controller's directives as :class:`~reactorfed.rl.tune.trial.TrialTrainer` is.

::

    controller.directives[s] --(after 0)--> trials[s].directive --> learner.directive
    learner.report --> trials[s].report ---------------------------> controller.reports[s]
    learner.weights --(after weights_delay, broadcast)--> samplers[i].weights
    samplers[i].fragment --> learner.fragments[i]

Sampler ``i`` ticks every ``period`` from ``weights_delay + i * period / num_samplers``
(:class:`~reactorfed.rl.plans.async_.AsyncSampler`), so a slot's ``k``-th update falls at
the same tag in every slot, whatever its hyperparameters: PBT's rounds gather at one tag
and the controller answers at the next microstep. Between a report and its answer the
learner learns nothing; a fragment that arrives then is dropped. So is one sampled with
weights the learner sent before its current trial began (a slot refilled by ASHA: its
samplers act with the old trial's weights until the new ones reach them,
``weights_delay`` later). After an exploit the samplers act with the trial's own weights
until the donor's reach them; V-trace corrects for that lag as for any other.

The samplers' clocks run on, so the run ends when the controller has stopped every slot
(it asks the federation to stop).
"""

from __future__ import annotations

import time

import numpy as np

from reactorfed import Input, MultiReader, Output, PortWriter, Reactor, bank, each, reaction

from ..contracts import Algorithm, SpaceInfo
from ..plans.async_ import AsyncSampler
from ..plans.sampler import sampler_seed
from ..plans.trainer import PlanTrainer
from ..rollout import unpack_rollout
from ..training import RunConfig
from .contracts import Directive
from .trial import TrialTrainer

__all__ = ["AsyncTrial", "AsyncTrialTrainer"]


class AsyncTrialTrainer(TrialTrainer):
    """The learner of an asynchronous slot: learns from the fragments of each tag while
    its trial is short of the directive's iteration (see the module). A trial's result
    adds ``stale_fragments``: those it dropped as sampled with an earlier trial's weights."""

    def __init__(
        self,
        slot: int,
        n: int,
        algo: Algorithm,
        space: SpaceInfo,
        run: RunConfig,
        *,
        weights_delay: int,
        wants_state: bool = False,
        checkpoint_dir: str = "",
        slow_ns: int = 0,
    ) -> None:
        super().__init__(
            slot,
            n,
            algo,
            space,
            run,
            wants_state=wants_state,
            checkpoint_dir=checkpoint_dir,
            slow_ns=slow_ns,
            weights_delay=weights_delay,
        )
        self.weights_delay = weights_delay
        self.trial_began = 0  # the elapsed time (ns) the current trial began at
        self.stale = (
            0  # fragments of the current trial's tags sampled with an earlier trial's weights
        )

    def _begin_trial(self, d: Directive) -> None:
        super()._begin_trial(d)
        self.trial_began = self.elapsed_tag().time
        self.stale = 0

    def _end_trial(self) -> None:
        if self.trial >= 0:
            stale = self.stale
            super()._end_trial()
            self.finished[-1]["stale_fragments"] = stale

    def of_this_trial(self, policy_time: np.ndarray) -> np.ndarray:
        """Which of what was acted at ``policy_time`` (elapsed ns, elementwise) was acted with
        weights of the current trial: sent at or after its start, they reached the sampler
        ``weights_delay`` later."""
        return np.asarray(policy_time - self.weights_delay >= self.trial_began)

    def _ours(self, packed: np.ndarray) -> bool:
        """Whether a fragment was sampled with weights of the current trial."""
        tag = unpack_rollout(packed).policy_tag
        return tag is not None and bool(self.of_this_trial(np.asarray(tag[0])))

    @reaction(triggers=[PlanTrainer.fragments], effects=[PlanTrainer.weights, TrialTrainer.report])
    def learn(
        self,
        fragments: MultiReader[np.ndarray],
        weights: PortWriter[np.ndarray],
        report: PortWriter[object],
    ) -> None:
        if self.trial < 0 or self.iteration >= self.until:
            return  # between trials, or waiting for the controller's answer
        arrived = fragments.present()
        present = [(i, p) for i, p in arrived if self._ours(p)]
        self.stale += len(arrived) - len(present)
        if not present:
            return
        if self.slow_ns > 0:
            time.sleep(self.slow_ns / 1e9)
        self.update(present)
        if self.iteration >= self.until:
            self.send_report(report)
        else:
            self.send(weights)


class AsyncTrial(Reactor):
    """Slot ``slot``: ``num_samplers`` asynchronous samplers of ``num_envs`` copies of ``env``
    (``fragment_len`` rows every ``period``; their seeds the slot's: ``seed`` and
    ``slot``), and an :class:`AsyncTrialTrainer` whose weights reach them ``weights_delay``
    later."""

    directive: Input[object] = Input(object)
    report: Output[object] = Output(object)

    def __init__(
        self,
        slot: int,
        algo: Algorithm,
        env: str,
        space: SpaceInfo,
        run: RunConfig,
        *,
        num_samplers: int = 2,
        num_envs: int = 4,
        fragment_len: int = 32,
        period: int,
        weights_delay: int,
        seed: int = 0,
        backend: str = "gymnasium",
        wants_state: bool = False,
        checkpoint_dir: str = "",
        slow_ns: int = 0,
    ) -> None:
        self.samplers = bank(
            AsyncSampler,
            num_samplers,
            algo,
            env,
            space,
            num_envs,
            fragment_len,
            seed=each(lambda i: sampler_seed(seed, 100 * (slot + 1) + i)),
            offset=each(lambda i: weights_delay + i * period // num_samplers),
            period=period,
            backend=backend,
        )
        self.learner = AsyncTrialTrainer(
            slot,
            num_samplers,
            algo,
            space,
            run,
            weights_delay=weights_delay,
            wants_state=wants_state,
            checkpoint_dir=checkpoint_dir,
            slow_ns=slow_ns,
        )
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(
            self.learner.weights, self.samplers.weights, after=weights_delay, broadcast=True
        )
        self.connect(self.directive, self.learner.directive)
        self.connect(self.learner.report, self.report)
