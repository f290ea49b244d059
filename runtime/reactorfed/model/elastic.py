"""Elastic banks: a bank of federates whose members may join and leave a running
federation (issue 19; Lingua Franca's transient federates, for banks).

    class Main(Reactor):
        def __init__(self) -> None:
            self.learner = Learner()
            self.samplers = elastic_bank(Sampler, Elastic(min=1, max=8, initial=4), seed=each(lambda i: i))
            self.connect(self.samplers.out, self.learner.ins)

The bank is built at its maximum width: every member is a *slot* (its own federate, with a
fixed ``bank_index``) that may be absent. The federation starts with the first
``initial`` slots present; the RTI admits and removes the others at agreed tags
(:mod:`reactorfed.federation.coordination.rti_core`). The program, and so its digest, is the
same whatever the width: only ``min`` and ``max`` are part of it.

Only the main reactor's banks may be elastic (a member must be a federate).

A single federate may be transient too (LF's ``@transient``): ``self.mid =
transient(Middle())`` in the main reactor makes it the one slot of an elastic bank of its
own, named after its attribute (``Elastic(min=0, max=1, initial=1)``: present at the
start, and it may leave and join again), with everything above; its federate keeps its
name (``mid``), and a membership schedule names it as bank ``mid``, index 0.

In a run, a member that is absent runs nothing: its reactions do not run, its timers do
not fire, what is sent to it is dropped, so a reaction reading the bank's outputs sees
their channels absent (``present()``). A member that joins at ``J`` starts there: its
startup reactions run at ``J``, its timers fire first at ``J`` plus their offset, and a
slot that was present before starts from the state its reactors were constructed with (a
new incarnation, as a new process is). One that leaves at ``L`` runs the tags before
``L`` (no shutdown reactions). A reaction learns the membership at its tag with
:func:`members` (and :func:`width`, :func:`changed`): the learner's hook for a
synchronous algorithm, which needs the width of each round. One process applies a
recorded schedule of :class:`MemberChange` s (:meth:`reactorfed.execution.scheduler.Scheduler.set_membership`),
the reference a federated run with the same schedule must equal; without one, the first
``initial`` members are present throughout (see :mod:`reactorfed.execution.membership`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ValidationError
from ..time.tag import Tag
from .attachment import running_scheduler
from .bank import Bank, bank
from .reactor import Reactor

__all__ = ["Elastic", "ElasticBank", "MemberChange", "as_elastic", "changed", "elastic_bank", "elastic_banks",
           "elastic_width", "is_transient", "members", "tag_start_effective", "transient",
           "width"]

R = TypeVar("R", bound=Reactor)


@dataclass(frozen=True)
class Elastic:
    """The width of an elastic bank: between ``min`` and ``max`` members, ``initial`` at
    the start (``max`` when not given)."""

    min: int
    max: int
    initial: int | None = None

    def __post_init__(self) -> None:
        for what, v in (("min", self.min), ("max", self.max), ("initial", self.initial)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise ValidationError(f"elastic bank: {what} must be an int, got {v!r}")
        if self.initial is None:
            object.__setattr__(self, "initial", self.max)
        if not 0 <= self.min <= self.max or self.max < 1:
            raise ValidationError(f"elastic bank: needs 0 <= min <= max and max >= 1, got min={self.min}, max={self.max}")
        if not self.min <= self.start <= self.max:
            raise ValidationError(
                f"elastic bank: the initial width {self.start} is outside [min={self.min}, max={self.max}]")

    @property
    def start(self) -> int:
        """The initial width (``initial``, resolved)."""
        assert self.initial is not None
        return self.initial


class ElasticBank(Bank[R]):
    """A bank built at its maximum width, whose members may be absent
    (see :func:`elastic_bank`). Its width is :func:`elastic_width` (``bank.X`` is the
    members' ``X``, as for any bank)."""

    def __init__(self, members: list[R], width: Elastic) -> None:
        super().__init__(members)
        self._elastic = width


def elastic_bank(cls: Callable[..., R], width: Elastic, /, *args: Any, **kwargs: Any) -> ElasticBank[R]:
    """An elastic bank of ``cls``: ``width.max`` slots (bank indices 0 .. max-1), of which
    the first ``width.initial`` are present at the start. Arguments as for :func:`bank`."""
    if not isinstance(width, Elastic):
        raise ValidationError(f"elastic_bank: the width must be an Elastic(min, max, initial), got {width!r}")
    return ElasticBank(list(bank(cls, width.max, *args, **kwargs)), width)


#: transient federates (transient()): each reactor -> the one-slot elastic bank it is
_TRANSIENT: weakref.WeakKeyDictionary[Reactor, ElasticBank[Any]] = weakref.WeakKeyDictionary()


def transient(reactor: R) -> R:
    """Make ``reactor`` (a federate: a child of the main reactor, assigned to one of its
    attributes) a transient federate, LF's ``@transient``: the one slot of an elastic bank
    of its own (see the module). Returns it."""
    if not isinstance(reactor, Reactor):
        raise ValidationError(f"transient: expected a reactor, got {reactor!r}")
    _TRANSIENT[reactor] = ElasticBank([reactor], Elastic(0, 1, initial=1))
    return reactor


def is_transient(reactor: Reactor) -> bool:
    """Whether ``reactor`` was made a transient federate by :func:`transient`."""
    return reactor in _TRANSIENT


def as_elastic(v: Any) -> ElasticBank[Any] | None:
    """``v`` as an elastic bank: itself, a transient federate's own bank, or None."""
    if isinstance(v, ElasticBank):
        return v
    if isinstance(v, Reactor):
        return _TRANSIENT.get(v)
    return None


def elastic_width(b: ElasticBank[Any]) -> Elastic:
    return b._elastic


def elastic_banks(main: Reactor) -> dict[str, ElasticBank[Any]]:
    """The main reactor's elastic banks (transient federates' included), by attribute
    name, in declaration order."""
    return {attr: b for attr, v in vars(main).items() if (b := as_elastic(v)) is not None}


@dataclass(frozen=True, order=True)
class MemberChange:
    """From the tag ``(time, microstep)`` (``time`` in ns after the start) on, member
    ``index`` of elastic bank ``bank`` is present (``joined``) or absent: one entry of a
    membership schedule."""

    time: int
    microstep: int
    bank: str
    index: int
    joined: bool
    #: of a leave: the member did nothing from this tag (ns after the start, microstep) to
    #: the leave, present all the while (its process failed: the RTI's record says so)
    quiet: tuple[int, int] | None = None


def _view(reactor: Reactor, bank: str) -> Any:
    env = running_scheduler(reactor)
    mem = env.membership
    if mem is None or bank not in mem.banks:
        raise ValidationError(f"{reactor.fqn}: the program has no elastic bank {bank!r}")
    return mem


def members(reactor: Reactor, bank: str) -> tuple[int, ...]:
    """From a reaction of ``reactor``: the bank indices of elastic bank ``bank``'s members
    present at the current tag (``bank``: its attribute name in the main reactor)."""
    mem = _view(reactor, bank)
    return tuple(mem.members(bank))


def width(reactor: Reactor, bank: str) -> int:
    """From a reaction: how many members of elastic bank ``bank`` are present now."""
    return len(members(reactor, bank))


def tag_start_effective(reactor: Reactor) -> Tag:
    """From a reaction: the tag ``reactor``'s federate started at (LF's
    ``lf.tag_start_effective()``). For a member of an elastic bank (reactorfed's transient
    federates), the tag its present incarnation joined at: the RTI's effective start tag
    for a joiner (LF's rule: see :mod:`reactorfed.federation.coordination.rti_core`), the
    schedule's join tag in one process; for every other reactor, and a member present
    from the start, the start tag. Absolute, as :meth:`Reactor.tag`."""
    env = running_scheduler(reactor)
    mem = env.membership
    joined = mem.joined_at(reactor) if mem is not None else None
    return Tag(*joined) if joined is not None else Tag(env.start_time, 0)


def changed(reactor: Reactor, bank: str) -> bool:
    """From a reaction: whether elastic bank ``bank``'s membership changed at the current
    tag (a member joined or left: its width, its present channels, may differ from the
    tag before)."""
    mem = _view(reactor, bank)
    return bool(mem.changed(bank, running_scheduler(reactor).current_tag))
