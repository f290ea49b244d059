"""A tuner as one reactor program: a :class:`~reactorfed.rl.tune.controller.Controller`
and a bank of trial slots (:class:`~reactorfed.rl.tune.trial.SyncTrial`), each slot the
synchronous plan's samplers and learner. Launched, the controller and every slot are
federates (``reactorfed launch``: one process each); in one process, the same reactors.

::

    trials[s].report ------------------> controller.reports[s]
    controller.directives[s] --(after 0)--> trials[s].directive

Everything the user can get wrong is refused here, before anything runs, naming the field:
an empty search space or a bad range (``space.NAME``), a hyperparameter the algorithm's
config does not have, a metric the trials do not report, more slots than the bank's
maximum (the scheduler's settings check those: ``pbt.population``, ``asha.metric``, ...).
"""

from __future__ import annotations

import dataclasses

from reactorfed import Reactor, ValidationError, bank, each, ms

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..training import RunConfig
from .contracts import Scheduler
from .controller import Controller
from .space import SearchSpace
from .trial import SyncTrial

__all__ = ["TuneProgram", "check_space"]


def check_space(space: SearchSpace, algo: Algorithm) -> None:
    """Refuse hyperparameters that are not plain fields of ``algo``'s config."""
    if not dataclasses.is_dataclass(algo):
        raise ValidationError(f"algo: a tuner varies the fields of a dataclass config, got {type(algo).__name__}")
    fields = {f.name: getattr(algo, f.name) for f in dataclasses.fields(algo)}
    space.check_fields(fields, type(algo).__name__)


class TuneProgram(Reactor):
    """Trials of ``algo`` on ``env`` under ``scheduler`` (which says how many at once, its
    ``slots``, and each one's budget), over ``space``. ``max_trials``: the most slots the
    bank may have. ``slow_trial`` / ``slow_ms``: that slot sleeps so long in each
    update (a trial slowed on purpose; -1: none). ``pause_after``: end the run after that many
    decisions on reports (resume carries on). The rest as
    :class:`~reactorfed.rl.plans.sync.SyncPlan` and :class:`Controller`.

    Subclass it for a program with its own settings (``super().__init__(...)``)."""

    def __init__(self, algo: Algorithm, env: str, scheduler: Scheduler, space: SearchSpace, *,
                 max_trials: int = 16, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, seed: int = 0, backend: str = "gymnasium", decisions: str = "",
                 checkpoint_dir: str = "", resume: bool = False, progress: bool = False, pause_after: int = 0,
                 slow_trial: int = -1, slow_ms: int = 0) -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len),
                            ("max_trials", max_trials)):
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
        check_space(space, algo)
        # every federate of a tuner builds a learner (the slots) or writes checkpoints (the
        # controller): torch imported here, once in the process that builds the program (a
        # launch's fork server), not again in each federate it forks
        import torch  # noqa: F401

        info = SpaceInfo.of_env(env)
        run = RunConfig(iterations=scheduler.iterations)
        self.controller = Controller(slots, scheduler, decisions=decisions, checkpoint_dir=checkpoint_dir,
                                     resume=resume, progress=progress, pause_after=pause_after)
        slow = ms(slow_ms)
        self.trials = bank(SyncTrial, slots, slot=each(lambda i: i), algo=algo, env=env, space=info, run=run,
                           num_samplers=num_samplers, num_envs=num_envs, fragment_len=fragment_len, seed=seed,
                           backend=backend, wants_state=scheduler.wants_state, checkpoint_dir=checkpoint_dir,
                           slow_ns=each(lambda i: slow if i == slow_trial else 0))
        self.connect(self.trials.report, self.controller.reports)
        self.connect(self.controller.directives, self.trials.directive, after=0)
