"""Logical and physical actions.

A logical action is scheduled by a reaction for a later tag: ``min_delay + delay`` after
the current tag (``(t, m+1)`` when that is 0). A physical action is scheduled from any
thread and takes ``(physical now + min_delay + delay, 0)``. ``min_spacing`` bounds how
close two events of one action may be; ``policy`` says what happens when they would be
closer: ``defer`` (move it to last + spacing), ``drop`` (discard it) or ``replace``
(replace the pending event's value; defer when that event has already happened).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .duration import check_duration
from .errors import UndeclaredAccessError, ValidationError
from .trigger import OwnedSlot, undeclared

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["ActionHandle", "ActionReader", "LogicalAction", "PhysicalAction", "Policy"]

T = TypeVar("T")


class Policy(StrEnum):
    DEFER = "defer"
    DROP = "drop"
    REPLACE = "replace"


class ActionDecl(Generic[T]):
    physical = False

    def __init__(
        self,
        type: type[T] | Any = object,
        *,
        min_delay: int = 0,
        min_spacing: int = 0,
        policy: Policy | str = Policy.DEFER,
    ) -> None:
        self.type = type
        self.min_delay = min_delay
        self.min_spacing = min_spacing
        self.name = "?"
        try:
            self.policy = Policy(policy)
        except ValueError:
            raise ValidationError(f"action policy must be one of defer, drop, replace; got {policy!r}") from None
        check_duration(min_delay, "action min_delay")
        check_duration(min_spacing, "action min_spacing")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self.type, '__name__', self.type)}, name={self.name!r})"

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        a = Action(obj, self)
        obj.__dict__[self.name] = a
        return a


class LogicalAction(ActionDecl[T]):
    """An action scheduled by reactions, in logical time."""


class PhysicalAction(ActionDecl[T]):
    """An action scheduled from outside (any thread), timestamped with physical time."""

    physical = True


class Action(OwnedSlot):
    """The runtime action of one reactor instance."""

    __slots__ = ("_reader", "decl", "last_tag", "scheduled_by")

    def __init__(self, reactor: Reactor, decl: ActionDecl[Any]) -> None:
        super().__init__(reactor, decl.name)
        self.decl = decl
        #: tag of the last event scheduled (for min_spacing), None before the first
        self.last_tag: tuple[int, int] | None = None
        self.scheduled_by: list[Any] = []
        self._reader: ActionReader | None = None

    @property
    def physical(self) -> bool:
        return self.decl.physical

    def schedule(self, value: Any = None, delay: int = 0) -> None:
        """Physical actions may be scheduled from any thread; logical ones only by the
        reactions that declare them as effects (through their handle)."""
        env = self.reactor._env
        if not self.decl.physical:
            raise UndeclaredAccessError(undeclared(self.reactor, f"schedules {self.fqn} without declaring it as an effect"))
        if env is None:
            raise ValidationError(f"{self.fqn} is scheduled before the program runs")
        env.schedule_physical(self, value, delay)

    def __repr__(self) -> str:
        return f"<{'physical' if self.decl.physical else 'logical'} action {self.fqn}>"


class ActionReader:
    """What a reaction triggered by (or reading) an action gets."""

    __slots__ = ("_slot",)

    def __init__(self, action: Action) -> None:
        self._slot = action

    def get(self) -> Any:
        return self._slot.value

    @property
    def is_present(self) -> bool:
        return self._slot.present

    @property
    def value(self) -> Any:
        return self._slot.value


class ActionHandle(ActionReader):
    """What a reaction that declares an action as an effect gets: it may schedule it."""

    __slots__ = ("_schedule",)

    def __init__(self, action: Action, schedule: Any) -> None:
        super().__init__(action)
        self._schedule = schedule

    def schedule(self, value: Any = None, delay: int = 0) -> None:
        """Schedule the action ``min_delay + delay`` ns after the current tag."""
        self._schedule(self._slot, value, delay)
