"""What a tuner's controller and its trials say to each other, and what a scheduler is.

A *trial* is one training run of a plan with one configuration; a *slot* is the member of
the trials' bank that runs it (a slot runs one trial after another under ASHA and the
plain searches, the same trial throughout under PBT). A trial *reports* at the iterations
the controller asks for (:class:`Report`) and waits; the controller answers each slot with
a :class:`Directive` (start a trial, continue to an iteration with perhaps another
configuration and another trial's weights, or stop). Both cross federates as plain data
(:meth:`Report.wire`, :meth:`Directive.wire`: numbers, strings, bytes), so a run's messages
are the same in one process and federated.

A :class:`Scheduler` is the decision rule (PBT, ASHA, random or grid search): a pure
function of the reports it is given, in slot order, at a tag; whichever trial runs slower,
the reports a tag holds are the same, so its decisions are too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .record import Decision
from .space import Value

__all__ = ["TRIAL_METRICS", "Directive", "Report", "Scheduler", "TunableLearner", "best_figures", "trial_seed"]

#: what a trial reports (the metrics a scheduler may rank by): the mean return of the last
#: 100 training episodes (the benchmarks' rule; NaN before the first episode ends), the
#: episodes finished, the env steps learned from
TRIAL_METRICS = ("mean_return_100", "episodes", "env_steps")


def best_figures(metric: str, value: float | None) -> dict[str, float]:
    """A search's best metric as progress figures (NaN or unknown: none)."""
    if value is None or math.isnan(value):
        return {}
    out = {f"best_{metric}": value}
    if metric == "mean_return_100":
        out["mean_return"] = value  # (the Return column of `kubectl get rfed`)
    return out


def trial_seed(seed: int, trial: int) -> int:
    """Trial ``trial``'s learner seed in a tuner seeded ``seed``."""
    return seed * 10_000 + 31 * trial + 3


@dataclass(frozen=True)
class Report:
    """Slot ``slot``'s trial ``trial`` at ``iteration``: its metrics, its configuration,
    and, when the scheduler exploits, its learner's state (:mod:`.exchange`). ``key``
    counts the slot's reports: the slot's checkpoint of this report is named by it."""

    slot: int
    trial: int
    iteration: int
    key: int
    metrics: dict[str, float]
    hparams: dict[str, Value]
    state: bytes | None = None

    def wire(self) -> dict[str, Any]:
        return {"slot": self.slot, "trial": self.trial, "iteration": self.iteration, "key": self.key,
                "metrics": dict(self.metrics), "hparams": dict(self.hparams), "state": self.state}

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Report:
        return cls(int(d["slot"]), int(d["trial"]), int(d["iteration"]), int(d["key"]),
                   {k: float(v) for k, v in d["metrics"].items()}, dict(d["hparams"]), d.get("state"))


@dataclass(frozen=True)
class Directive:
    """What a slot does next. ``start``: a fresh trial ``trial`` with ``hparams`` and
    ``seed``, to ``until``. ``continue``: on to ``until``, with ``hparams`` (the trial's,
    perhaps perturbed) and, when ``state`` is given, another trial's learner state in
    place of its own (``donor`` names that trial). ``stop``: the slot is done.
    ``resume`` (only from a controller resuming): the slot loads its checkpoint ``key``,
    then follows ``then``."""

    kind: Literal["start", "continue", "stop", "resume"]
    trial: int = -1
    until: int = 0
    hparams: dict[str, Value] = field(default_factory=dict)
    seed: int = 0
    state: bytes | None = None
    donor: int = -1
    key: int = -1
    then: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "trial": self.trial, "until": self.until, "hparams": dict(self.hparams),
                "seed": self.seed, "state": self.state, "donor": self.donor, "key": self.key, "then": self.then}

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Directive:
        return cls(d["kind"], int(d["trial"]), int(d["until"]), dict(d["hparams"]), int(d["seed"]), d.get("state"),
                   int(d["donor"]), int(d["key"]), d.get("then"))


class Scheduler(Protocol):
    """A tuner's decision rule. :meth:`begin` gives every slot its first directive;
    :meth:`decide` takes the reports of one tag (slot order) and returns the directives
    (slot, directive) and the decisions to record. :meth:`state` / :meth:`restore` carry
    it across a checkpoint (plain data)."""

    #: the reports carry the trials' learner state (PBT's exploit needs it)
    wants_state: bool
    #: a trial's hyperparameters change while it runs (PBT's explore)
    explores: bool

    @property
    def slots(self) -> int:
        """The trials trained at once: the width of the trials' bank."""
        ...

    @property
    def iterations(self) -> int:
        """A trial's budget, in learner iterations."""
        ...

    def check(self, max_trials: int) -> None:
        """Refuse settings that cannot run (a ValidationError naming the field), ``max_trials``
        the most slots the bank may have."""

    def begin(self, slots: int) -> tuple[list[tuple[int, Directive]], list[Decision]]: ...

    def decide(self, reports: Sequence[Report]) -> tuple[list[tuple[int, Directive]], list[Decision]]: ...

    def summary(self) -> dict[str, Any]:
        """What the controller's result says of the search (best trial, its metric, ...)."""
        ...

    def progress(self) -> tuple[int, int, dict[str, float]]:
        """The search's progress for a person (:meth:`~reactorfed.Reactor.report_progress`):
        done of total and figures (the best trial's metric; as ``mean_return`` too when
        the metric is the training return)."""
        ...

    def state(self) -> dict[str, Any]: ...

    def restore(self, state: Mapping[str, Any]) -> None: ...


class TunableLearner(Protocol):
    """What a trial needs of a learner beyond :class:`~reactorfed.rl.contracts.Learner`:
    its config (a dataclass, replaced to change hyperparameters between iterations: a
    learner reads its config at each update), its state as a dict (:meth:`state`, the
    checkpoint's) and a way to take part of one back (:meth:`load_state`: the network and
    optimizer of another trial). PPO's learners (MLP and CNN, and APPO's, a subclass)
    are, :class:`~reactorfed.rl.SyncDQNConfig`'s, and the Ape-X slot's
    (:class:`~reactorfed.rl.algos.apex.replay_learner.ApexReplayLearner`).

    Its config may say what a trial cannot change: ``ACTOR_FIELDS`` (read only by the
    samplers' actors, built once per slot) and ``BUILT_FIELDS`` (fixed once the learner is
    built: what its replay already holds); a search space naming the first, or under a
    scheduler that explores the second, is refused."""

    config: Any
    env_steps: int

    def state(self) -> dict[str, Any]: ...

    def load_state(self, state: Mapping[str, Any]) -> None: ...
