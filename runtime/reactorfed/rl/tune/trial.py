"""A slot of a tuner's trials' bank: the synchronous plan's samplers and learner, the
learner driven by the controller's directives (:mod:`.contracts`).

::

    controller.directives[s] --(after 0)--> trials[s].directive --> learner.directive
    learner.report --> trials[s].report ---------------------------> controller.reports[s]
    learner.weights --(after 0, broadcast)--> samplers[i].weights;  samplers[i].fragment --> learner.fragments[i]

The learner trains as :class:`~reactorfed.rl.plans.sync.SyncTrainer` does, one round of
fragments per iteration, but only from a ``start`` or ``continue`` directive to the
iteration it names (``until``); there it reports (its metrics, and with a scheduler that
exploits its learner's state) and sends no weights until the next directive: the slot's
samplers wait with it. Each slot is a federate of its own when launched; its samplers and
learner run in its process.

With a checkpoint folder the learner saves itself at each report as
``DIR/slot<s>/report<key>.pt`` (the two latest kept): a controller resuming tells it
which to load (:class:`~reactorfed.rl.tune.contracts.Directive` ``resume``). The
synchronous slot's checkpoint also holds its samplers' states after the report's last
fragments (:mod:`~reactorfed.rl.plans.sampler_state`), sent back to them on a resume
before any weights: a resumed slot goes on as the undisturbed one did.

Any algorithm whose learner is a :class:`~reactorfed.rl.tune.contracts.TunableLearner`
runs in this slot: PPO (MLP or MinAtar's CNN), APPO, DQN with its replay in the learner
(:class:`~reactorfed.rl.SyncDQNConfig`). Another plan's trial is the same reactor with its
own samplers around a :class:`TrialTrainer` (APPO's asynchronous samplers:
:mod:`~reactorfed.rl.tune.async_trial`; Ape-X's, its learner holding the replay:
:mod:`~reactorfed.rl.tune.apex_trial`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from reactorfed import (
    SHUTDOWN,
    Input,
    MultiReader,
    MultiWriter,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    bank,
    each,
    reaction,
)

from ..contracts import EPISODES_UNDER_WAY, Algorithm, Learner, SpaceInfo
from ..plans.sampler import sampler_seed
from ..plans.sync import SyncSampler
from ..plans.trainer import PlanTrainer
from ..training import RunConfig, TrainingLog, write_checkpoint
from .contracts import Directive, Report, TunableLearner
from .exchange import load_state, state_bytes

__all__ = ["SyncTrial", "TrialTrainer", "report_path"]


def report_path(folder: str | Path, slot: int, key: int) -> Path:
    """Where slot ``slot`` saves its learner at its report ``key``."""
    return Path(folder) / f"slot{slot}" / f"report{key}.pt"


class TrialTrainer(PlanTrainer):
    """The learner of slot ``slot``: builds a learner of ``algo`` with a trial's
    hyperparameters at each ``start``, trains to each directive's ``until``, reports.
    ``slow_ns`` (> 0) sleeps that long in each update: a trial slowed on purpose, to show
    that nothing decided depends on it. ``weights_delay``: the ``after`` of the connection
    from :attr:`weights` to the samplers (for the fragments' policy lag)."""

    directive: Input[object] = Input(object)
    report: Output[object] = Output(object)

    def __init__(self, slot: int, n: int, algo: Algorithm, space: SpaceInfo, run: RunConfig, *,
                 wants_state: bool = False, checkpoint_dir: str = "", slow_ns: int = 0,
                 weights_delay: int = 0, carries_samplers: bool = False) -> None:
        super().__init__(n, algo, space, run=run, seed=0, weights_delay=weights_delay,
                         carries_samplers=carries_samplers)
        self.slot, self.base = slot, algo
        self.wants_state, self.checkpoint_dir, self.slow_ns = wants_state, checkpoint_dir, slow_ns
        self.trial = -1
        self.hparams: dict[str, Any] = {}
        self.trial_seed = 0
        self.until = 0
        self.key = 0  # the slot's reports so far
        self.finished: list[dict[str, Any]] = []  # the results of the trials this slot ran to their end

    @property
    def tunable(self) -> TunableLearner:
        assert self.learner is not None, "no trial started in this slot"
        return cast(TunableLearner, self.learner)

    def take(self, present: Sequence[tuple[int, np.ndarray]]) -> bool:
        assert len(present) == self.n, f"{len(present)} of {self.n} fragments at one tag"
        return True

    # -- the reactions (replacing the plan trainer's: a trial starts at its directive) ---
    @reaction(triggers=[directive], effects=[PlanTrainer.weights, report, PlanTrainer.restore])
    def start(self, directive: PortReader[object], weights: PortWriter[np.ndarray],
              report: PortWriter[object], restore: MultiWriter[np.ndarray]) -> None:
        value = directive.get()
        assert isinstance(value, dict)
        d = Directive.of(value)
        if d.kind == "resume":
            self._resume(d.key)
            self.carried.send(restore)  # (before any weights, in each sampler)
            if d.then is None:  # its report is the controller's already: it waits for the answer
                return
            d = Directive.of(d.then)
        if d.kind == "stop":
            self._end_trial()
            return
        if d.kind == "start":
            self._end_trial()
            self._begin_trial(d)
        else:
            self._carry_on(d)
        self.until = d.until
        if self.iteration < self.until:
            self.send(weights)
        else:  # (a trial resumed at its last report: nothing to train)
            self.send_report(report)

    @reaction(triggers=[PlanTrainer.fragments], effects=[PlanTrainer.weights, report])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray],
              report: PortWriter[object]) -> None:
        present = fragments.present()
        self.take(present)
        if self.slow_ns > 0:
            time.sleep(self.slow_ns / 1e9)
        self.update(present)
        if self.iteration >= self.until:
            self.send_report(report)
        else:
            self.send(weights)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        self._end_trial()
        last = self.finished[-1] if self.finished else {}
        self.result = {"slot": self.slot, "trials": self.finished, **{
            k: last[k] for k in ("trial", "weights_sha256", "hparams", "mean_return_100") if k in last}}
        self.report_result(self.result)

    # -- a trial's life ------------------------------------------------------------------
    def _begin_trial(self, d: Directive) -> None:
        self.trial, self.hparams, self.trial_seed = d.trial, dict(d.hparams), d.seed
        algo = cast(Algorithm, dataclasses.replace(cast(Any, self.base), **d.hparams))
        self.learner = self.build_learner(algo, d.seed)
        self.iteration = self.resumed_from = 0
        self.log = TrainingLog(self.run)
        self.log.start(f"{self.fqn}.trial{d.trial}", self.physical_time)

    def build_learner(self, algo: Algorithm, seed: int) -> Learner:
        """A trial's learner: ``algo``'s (a slot whose learner needs more than the
        algorithm's config builds its own)."""
        return algo.make_learner(self.space, seed)

    def _carry_on(self, d: Directive) -> None:
        learner = self.tunable
        if d.state is not None:  # exploit: another trial's weights, optimizer and recent returns
            taken = load_state(learner, d.state)
            self.log.recent.clear()
            self.log.recent.extend(float(r) for r in taken.get("recent_returns", ()))
        if d.hparams != self.hparams:  # explore: the learner reads its config at each update
            learner.config = dataclasses.replace(learner.config, **d.hparams)
            self.hparams = dict(d.hparams)

    def _end_trial(self) -> None:
        if self.learner is None or self.trial < 0:
            return
        self.log.close()
        mean = self.log.mean_return
        self.finished.append({"trial": self.trial, "iterations": self.iteration, "env_steps": self.learner.env_steps,
                              "episodes": self.log.episodes, "mean_return_100": None if math.isnan(mean) else mean,
                              "hparams": self.hparams, "weights_sha256": self.learner.digest()})
        self.trial = -1

    def metrics(self) -> dict[str, float]:
        assert self.learner is not None
        return {"mean_return_100": self.log.mean_return, "episodes": float(self.log.episodes),
                "env_steps": float(self.learner.env_steps)}

    def send_report(self, report: PortWriter[object]) -> None:
        """The trial reached the iteration its directive named: its report to the
        controller (with its state when the scheduler exploits), checkpointed first."""
        self.key += 1
        learner = self.tunable
        state = state_bytes(learner, {"recent_returns": list(self.log.recent)}) if self.wants_state else None
        if self.checkpoint_dir:
            self._checkpoint()
        report.set(Report(self.slot, self.trial, self.iteration, self.key, self.metrics(), self.hparams,
                          state).wire())

    # -- checkpoints -----------------------------------------------------------------------
    def _checkpoint(self) -> None:
        path = report_path(self.checkpoint_dir, self.slot, self.key)
        extra = {"trial": self.trial, "trial_hparams": self.hparams, "trial_seed": self.trial_seed,
                 "iteration": self.iteration, "key": self.key, "finished": self.finished, **self.log.state()}
        write_checkpoint(path, {**self.tunable.state(), **extra, **self.carried.checkpoint_part(self.iteration)})
        report_path(self.checkpoint_dir, self.slot, self.key - 2).unlink(missing_ok=True)

    def _resume(self, key: int) -> None:
        import torch

        path = report_path(self.checkpoint_dir, self.slot, key)
        state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=False)  # (this slot's own file)
        self._begin_trial(Directive("start", trial=int(state["trial"]), hparams=dict(state["trial_hparams"]),
                                    seed=int(state["trial_seed"])))
        if self.carries_samplers:
            self.carried.from_checkpoint(state, int(state["iteration"]), str(path))
        if self.carried.latest is None:  # the samplers start new episodes
            state.pop(EPISODES_UNDER_WAY, None)
        self.tunable.load_state(state)
        self.log.restore(state)
        self.iteration = self.resumed_from = int(state["iteration"])
        self.key = key
        self.finished = list(state.get("finished", []))
        if self.run.progress:
            print(f"{self.fqn}: resumed trial {self.trial} from {path} at iteration {self.iteration}", flush=True)


class SyncTrial(Reactor):
    """Slot ``slot``: ``num_samplers`` synchronous samplers of ``num_envs`` copies of
    ``env`` (their seeds the slot's: ``seed`` and ``slot``), and a :class:`TrialTrainer`."""

    directive: Input[object] = Input(object)
    report: Output[object] = Output(object)

    def __init__(self, slot: int, algo: Algorithm, env: str, space: SpaceInfo, run: RunConfig, *,
                 num_samplers: int = 2, num_envs: int = 4, fragment_len: int = 32, seed: int = 0,
                 backend: str = "gymnasium", wants_state: bool = False, checkpoint_dir: str = "",
                 slow_ns: int = 0) -> None:
        # with checkpoints, each sampler's state goes to the learner with its fragment, and
        # back to it on a resume (at the tag of the first weights, before them)
        snapshots = bool(checkpoint_dir)
        self.samplers = bank(SyncSampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, 100 * (slot + 1) + i)), backend=backend,
                             snapshots=snapshots)
        self.learner = TrialTrainer(slot, num_samplers, algo, space, run, wants_state=wants_state,
                                    checkpoint_dir=checkpoint_dir, slow_ns=slow_ns, carries_samplers=snapshots)
        self.connect(self.samplers.fragment, self.learner.fragments)
        self.connect(self.learner.weights, self.samplers.weights, after=0, broadcast=True)
        if snapshots:
            self.connect(self.samplers.state, self.learner.sampler_states)
            self.connect(self.learner.restore, self.samplers.restore, after=0)
        self.connect(self.directive, self.learner.directive)
        self.connect(self.learner.report, self.report)
