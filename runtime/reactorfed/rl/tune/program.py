"""A tuner as one reactor program: a :class:`~reactorfed.rl.tune.controller.Controller`
and a bank of trial slots, each slot a plan's samplers and learner: the synchronous plan's
(:class:`~reactorfed.rl.tune.trial.SyncTrial`: PPO, APPO, DQN with its replay in the
learner), the asynchronous plan's (:class:`~reactorfed.rl.tune.async_trial.AsyncTrial`:
APPO as it is meant to run) or Ape-X's (:class:`~reactorfed.rl.tune.apex_trial.ApexTrial`:
Ape-X DQN's samplers and a learner with the prioritized replay). Launched, the controller and every slot are federates
(``reactorfed launch``: one process each); in one process, the same reactors.

::

    trials[s].report ------------------> controller.reports[s]
    controller.directives[s] --(after 0)--> trials[s].directive

Everything the user can get wrong is refused here, before anything runs, naming the field:
an empty search space or a bad range (``space.NAME``), a hyperparameter the algorithm's
config does not have or that a trial cannot change (its samplers read it, or under PBT its
replay already holds it), a metric the trials do not report, more slots than the bank's
maximum (the scheduler's settings check those: ``pbt.population``, ``asha.metric``, ...).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from reactorfed import Bank, Reactor, ValidationError, bank, each, ms

from ..algos.apex.config import ApexDQNConfig
from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..replay.contracts import ReplayAlgorithm, ReplayConfig
from ..training import RunConfig
from .apex_trial import ApexTrial
from .async_trial import AsyncTrial
from .contracts import Scheduler
from .controller import Controller
from .space import SearchSpace
from .trial import SyncTrial

__all__ = ["TuneProgram", "check_space"]


def check_space(space: SearchSpace, algo: Algorithm | ReplayAlgorithm, explores: bool = False) -> None:
    """Refuse hyperparameters that are not plain fields of ``algo``'s config, or that a
    trial cannot change: fields only its samplers read (``ACTOR_FIELDS``: their actors are
    built once per slot, so a new value would reach the learner alone, silently), and, when
    the scheduler ``explores`` (changes a running trial's values), fields its learner has
    built something with (``BUILT_FIELDS``: a replay holding n-step returns of the old
    discount)."""
    if not dataclasses.is_dataclass(algo):
        raise ValidationError(f"algo: a tuner varies the fields of a dataclass config, got {type(algo).__name__}")
    owner = type(algo).__name__
    fields = {f.name: getattr(algo, f.name) for f in dataclasses.fields(algo)}
    space.check_fields(fields, owner)
    actor: frozenset[str] = getattr(algo, "ACTOR_FIELDS", frozenset())
    built: frozenset[str] = getattr(algo, "BUILT_FIELDS", frozenset())
    for name in space.names:
        if name in actor:
            raise ValidationError(f"{space.field}.{name}: {owner}.{name} is read by the samplers' actors, built "
                                  "once per trial slot: a trial cannot vary it")
        if explores and name in built:
            raise ValidationError(f"{space.field}.{name}: {owner}.{name} is fixed once a trial's learner is built "
                                  "(its replay holds what it made): PBT cannot perturb it; a search (random, grid, "
                                  "ASHA) can vary it")


class TuneProgram(Reactor):
    """Trials of ``algo`` on ``env`` under ``scheduler`` (which says how many at once, its
    ``slots``, and each one's budget), over ``space``. ``max_trials``: the most slots the
    bank may have. ``plan``: each slot's plan, ``"sync"`` (:class:`SyncTrial`), ``"async"``
    (:class:`AsyncTrial`: a fragment every ``period`` per sampler, weights reaching them
    ``weights_delay`` later) or ``"apex"`` (:class:`ApexTrial`, on the same clocks: ``algo``
    an :class:`~reactorfed.rl.ApexDQNConfig`, each slot's replay ``replay``, each iteration
    ``updates_per_iteration`` gradient steps). ``slow_trial`` / ``slow_ms``: that slot sleeps so long in each
    update (a trial slowed on purpose; -1: none). ``pause_after``: end the run after that many
    decisions on reports (resume carries on). The rest as
    :class:`~reactorfed.rl.plans.sync.SyncPlan`, :class:`~reactorfed.rl.plans.async_.AsyncPlan`
    and :class:`Controller`.

    Subclass it for a program with its own settings (``super().__init__(...)``)."""

    def __init__(self, algo: Algorithm | ReplayAlgorithm, env: str, scheduler: Scheduler, space: SearchSpace, *,
                 max_trials: int = 16, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, seed: int = 0, backend: str = "gymnasium", decisions: str = "",
                 checkpoint_dir: str = "", resume: bool = False, progress: bool = False, pause_after: int = 0,
                 slow_trial: int = -1, slow_ms: int = 0, plan: Literal["sync", "async", "apex"] = "sync",
                 period: int = ms(10), weights_delay: int = ms(10), replay: ReplayConfig | None = None,
                 updates_per_iteration: int = 1) -> None:
        if plan not in ("sync", "async", "apex"):
            raise ValidationError(f"plan: must be sync, async or apex, got {plan!r}")
        if plan == "apex" and not isinstance(algo, ApexDQNConfig):
            raise ValidationError(f"algo: the apex plan trains Ape-X DQN (an ApexDQNConfig), got {type(algo).__name__}")
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len),
                            ("max_trials", max_trials), ("period", period), ("weights_delay", weights_delay),
                            ("updates_per_iteration", updates_per_iteration)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{name}: must be an int >= 1, got {value!r}")
        scheduler.check(max_trials)
        slots = scheduler.slots
        if backend not in BACKENDS:
            raise ValidationError(f"backend: must be one of {BACKENDS}, got {backend!r}")
        for name, value in (("slow_ms", slow_ms), ("pause_after", pause_after)):
            if not isinstance(value, int) or value < 0:
                raise ValidationError(f"{name}: must be an int >= 0, got {value!r}")
        if pause_after and not checkpoint_dir:
            raise ValidationError("pause_after: a paused run carries on from its checkpoint; give a checkpoint folder")
        check_space(space, algo, scheduler.explores)
        # every federate of a tuner builds a learner (the slots) or writes checkpoints (the
        # controller): torch imported here, once in the process that builds the program (a
        # launch's fork server), not again in each federate it forks
        import torch  # noqa: F401

        info = SpaceInfo.of_env(env)
        run = RunConfig(iterations=scheduler.iterations)
        # (the asynchronous samplers' clocks run on: the controller ends the run)
        self.controller = Controller(slots, scheduler, decisions=decisions, checkpoint_dir=checkpoint_dir,
                                     resume=resume, progress=progress, pause_after=pause_after,
                                     stop_when_done=plan != "sync")
        slow = ms(slow_ms)
        common: dict[str, Any] = dict(
            slot=each(lambda i: i), algo=algo, env=env, space=info, run=run, num_samplers=num_samplers,
            num_envs=num_envs, fragment_len=fragment_len, seed=seed, backend=backend,
            wants_state=scheduler.wants_state, checkpoint_dir=checkpoint_dir,
            slow_ns=each(lambda i: slow if i == slow_trial else 0))
        self.trials: Bank[SyncTrial] | Bank[AsyncTrial] | Bank[ApexTrial]
        if plan == "async":
            self.trials = bank(AsyncTrial, slots, period=period, weights_delay=weights_delay, **common)
        elif plan == "apex":
            self.trials = bank(ApexTrial, slots, period=period, weights_delay=weights_delay,
                               replay=replay or ReplayConfig(), updates_per_iteration=updates_per_iteration, **common)
        else:
            self.trials = bank(SyncTrial, slots, **common)
        self.connect(self.trials.report, self.controller.reports)
        self.connect(self.controller.directives, self.trials.directive, after=0)
