"""Logical and physical actions.

A logical action is scheduled by a reaction for a later tag: ``min_delay + delay`` after
the current tag (``(t, m+1)`` when that is 0). A physical action is scheduled from any
thread (through the reactor's attribute, or the handle of a reaction that declares it as an
effect, which may be handed to a thread) and takes ``(physical now + min_delay + delay, 0)``,
whoever schedules it (reactor-c's ``lf_schedule_trigger``). ``schedule`` takes its
arguments by keyword only (``a.schedule(delay=ms(5), value=x)``; see
:meth:`ActionHandle.schedule` for why).

Without a ``min_spacing`` (the default, ``None``), a second event for a tag this action
already has an event at goes to the next microstep, and the next if that is taken too:
events pile up in superdense time and none is lost (reactor-c's ``lf_schedule_trigger``).

A declared ``min_spacing`` (0 included: "declared as 0" is not "not declared") bounds how
close two successive events of the action may be: each event's tag must be at least
``min_spacing`` after the previous event's time and, at 0, after the previous event's tag
(so tags strictly grow). An event that would be closer ("early") is handled by ``policy``:

* ``defer`` (the default): moved to the earliest tag allowed: ``(previous time +
  min_spacing, 0)``, or at 0 the microstep after the previous event;
* ``drop``: discarded;
* ``replace``: the previous event, if still pending, takes the new value (no new event);
  if it has already happened, deferred as above;
* ``update``: the previous event, if still pending, is cancelled and the new one is placed
  at its own tag, early or not (reactor-c's ``update``: the latest schedule wins, at the
  time it asked for); if it has already happened, deferred as above.

"Previous" is the event placed by the most recent ``schedule`` of this action (dropped
ones do not count). Events past the stop tag are dropped. Differences from reactor-c's
code, where it has defects (its documentation says what is done here): it compares only
times, so at ``min_spacing`` 0 an event at a later microstep of the previous event's time
counts as early, and ``defer`` then puts it at microstep 0 of that time, which may be the
previous event's own tag (one value lost) or a tag already past.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import UndeclaredAccessError, ValidationError
from ..time.duration import DurationParam, check_duration, check_param, resolve_param
from .attachment import has_ended, scheduler_of
from .mode import declaring_mode
from .trigger import Element, OwnedSlot, Slot, undeclared

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["ActionHandle", "ActionReader", "LogicalAction", "PhysicalAction", "Policy"]

T = TypeVar("T")

log = logging.getLogger("reactorfed.execution.scheduler")


class Policy(StrEnum):
    DEFER = "defer"
    DROP = "drop"
    REPLACE = "replace"
    UPDATE = "update"


class ActionDecl(Generic[T]):
    physical = False

    def __init__(
        self,
        type: type[T] | Any = object,
        *,
        min_delay: DurationParam = 0,
        min_spacing: DurationParam | None = None,
        policy: Policy | str | None = None,
    ) -> None:
        """``min_spacing=None``: not declared (events pile up in superdense time); any
        int >= 0, 0 included, declares it and makes ``policy`` (default ``defer``) apply.
        A ``policy`` without a ``min_spacing`` would never apply: refused.

        ``min_delay`` and ``min_spacing`` are ns, or (as LF's ``logical action a(d)`` with
        a parameter ``d``) the name of an attribute the reactor's ``__init__`` sets, or a
        function of the reactor; resolved for each instance when the program is assembled
        (a parameter giving a min_spacing of None leaves it undeclared)."""
        self.type = type
        self.min_delay = min_delay
        self.min_spacing = min_spacing
        self.name = "?"
        #: the mode whose ``with`` block declares it (None: none; :mod:`.mode`)
        self.mode = declaring_mode()
        try:
            self.policy = Policy(policy if policy is not None else Policy.DEFER)
        except ValueError:
            raise ValidationError(f"action policy must be one of defer, drop, replace, update; got {policy!r}") from None
        self.policy_given = policy is not None
        if policy is not None and min_spacing is None:
            raise ValidationError(
                f"action policy {self.policy.value!r} applies only with a declared min_spacing (0 included); "
                "without one, events for one tag pile up in superdense time"
            )
        check_param(min_delay, "action min_delay")
        if min_spacing is not None:
            check_param(min_spacing, "action min_spacing")

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


class Action(Element):
    """The action of one reactor instance, as declared (``self.act``): what a reaction
    names, and what another thread schedules a physical action through. Its events and
    parameters, resolved, live in the :class:`ActionSlot` each assembly makes for it."""

    __slots__ = ("decl",)

    def __init__(self, reactor: Reactor, decl: ActionDecl[Any]) -> None:
        super().__init__(reactor, decl.name)
        self.decl = decl

    @property
    def physical(self) -> bool:
        return self.decl.physical

    def schedule(self, *args: Any, value: Any = None, delay: int = 0) -> None:
        """Schedule this physical action (from any thread): ``schedule(value=v,
        delay=d)``, both keyword-only (see :meth:`ActionHandle.schedule`). Logical actions
        are scheduled only by the reactions that declare them as effects (through their
        handle). Before the program runs: a ValidationError. After it ended: dropped with
        a warning, as reactor-c drops a schedule after termination (a thread racing the
        end cannot avoid it)."""
        if args:
            raise ValidationError(positional_schedule(self, args))
        env = scheduler_of(self.reactor)
        if not self.decl.physical:
            raise UndeclaredAccessError(undeclared(self.reactor, f"schedules {self.fqn} without declaring it as an effect"))
        if env is None:
            if has_ended(self.reactor):
                log.warning("%s is scheduled after the program ended: dropped (as every event past the last tag)", self.fqn)
                return
            raise ValidationError(f"{self.fqn} is scheduled before the program runs")
        env.schedule_physical(env.program.slot_of(self), value, delay)

    def __repr__(self) -> str:
        return f"<{'physical' if self.decl.physical else 'logical'} action {self.fqn}>"


class ActionSlot(OwnedSlot):
    """An action's runtime state in one program (made at assembly): its parameters,
    resolved, and the tag of its previous event."""

    __slots__ = ("decl", "last_tag", "min_delay", "min_spacing", "physical")

    def __init__(self, action: Action) -> None:
        super().__init__(action)
        decl = self.decl = action.decl
        self.physical = decl.physical
        # Take min_delay and min_spacing from the reactor's parameters where the
        # declaration names them (the parameters are set, and the full name is known
        # for errors).
        r = action.reactor
        what = f"{self.fqn}: action min_delay"
        #: this instance's min_delay and min_spacing (None: not declared), in ns
        self.min_delay = check_duration(resolve_param(decl.min_delay, r, what), what)
        what = f"{self.fqn}: action min_spacing"
        spacing = resolve_param(decl.min_spacing, r, what)
        if spacing is None and decl.policy_given:
            raise ValidationError(f"{what} is None (not declared), but the action declares the policy {decl.policy.value!r}")
        self.min_spacing: int | None = None if spacing is None else check_duration(spacing, what)
        #: with a min_spacing: the tag of the previous event placed, None before the first
        self.last_tag: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"<{'physical' if self.physical else 'logical'} action slot {self.fqn}>"


class ActionReader:
    """What a reaction triggered by (or reading) an action gets."""

    __slots__ = ("_slot",)

    def __init__(self, action: OwnedSlot) -> None:
        self._slot = action

    def get(self) -> Any:
        """The value at the current tag, None when absent."""
        s = self._slot
        return s.value if s.present else None

    @property
    def is_present(self) -> bool:
        return self._slot.present

    @property
    def value(self) -> Any:
        """As :meth:`get`: an action's value does not persist past its tag (a port's does)."""
        s = self._slot
        return s.value if s.present else None


class ActionHandle(ActionReader):
    """What a reaction that declares an action as an effect gets: it may schedule it."""

    __slots__ = ("_schedule",)

    def __init__(self, action: ActionSlot, schedule: Any) -> None:
        super().__init__(action)
        self._schedule = schedule

    def schedule(self, *args: Any, value: Any = None, delay: int = 0) -> None:
        """Schedule the action ``min_delay + delay`` ns after the current tag, carrying
        ``value``: ``schedule()``, ``schedule(delay=ms(10))``, ``schedule(value=x)``,
        ``schedule(delay=0, value=x)``.

        Both arguments are keyword-only, and a positional call is an error, never a guess:
        LF's Python target writes ``schedule(delay, value)`` and reactorfed's first API
        was ``schedule(value, delay)``, so ``a.schedule(5)`` or ``a.schedule(0, 42)``
        means different things to the two, and since a value may be an int, no check of
        the arguments could tell which was meant."""
        if args:
            raise ValidationError(positional_schedule(self._slot, args))
        self._schedule(self._slot, value, delay)


def positional_schedule(action: Element | Slot, args: tuple[Any, ...]) -> str:
    """The error for ``schedule`` called with positional arguments."""
    shown = ", ".join(repr(a) if len(repr(a)) <= 40 else f"<{type(a).__name__}>" for a in args)
    return (
        f"{action.fqn}: schedule({shown}): pass the arguments by keyword, "
        "schedule(delay=..., value=...) (LF's Python target writes schedule(delay, value), an earlier "
        "reactorfed schedule(value, delay); a positional call would be misread by one of them, so it "
        "is refused)"
    )
