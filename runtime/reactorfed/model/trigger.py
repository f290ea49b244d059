"""The value cell behind everything a reaction can be triggered by.

A :class:`Slot` holds the value and presence of a port (shared by every port joined to
it by zero-delay connections), an action, a timer, or startup/shutdown. The scheduler
sets it, pushes the reactions it triggers, and clears its presence at the end of the tag
(the value stays: a port's persists, see :mod:`reactorfed.model.port`).

Slots are runtime state: assembly (:func:`reactorfed.assembly.assemble.assemble`) makes new ones for
every program it builds, and the reactor tree never holds one. The tree's actions and
timers are :class:`Element` s: what a reactor declared, named, never a value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UndeclaredAccessError
from .attachment import scheduler_of

if TYPE_CHECKING:
    from .reaction import Reaction
    from .reactor import Reactor

__all__: list[str] = []


class Slot:
    __slots__ = ("delayed", "fqn", "intended", "present", "reactions", "value")

    def __init__(self, fqn: str) -> None:
        self.fqn = fqn
        self.value: Any = None
        self.present = False
        #: reactions triggered when this slot becomes present, sorted by rank
        self.reactions: list[Reaction] = []
        #: outgoing delayed connections: (destination slot, delay ns; 0 = next microstep;
        #: -1 - d: a physical connection with after d, see Scheduler._process)
        self.delayed: list[tuple[Slot, int]] = []
        #: the tag a tardy message in it was meant for (decentralized coordination: it
        #: arrived late and is processed now); None: its value is on time
        self.intended: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"<slot {self.fqn} present={self.present}>"


def undeclared(reactor: Reactor, what: str) -> str:
    """The message for an undeclared access: who (the running reaction) did ``what``."""
    env = scheduler_of(reactor)
    who = env.current_reaction_name() if env is not None else None
    return f"{'reaction ' + who if who else 'code outside any reaction'} {what}"


class Element:
    """An action or a timer of one reactor instance, as declared (the construction
    phase's object, ``self.act`` or ``self.t`` in a reactor): reactions read it through
    the handles they declared, so reading it directly is an undeclared read. Its value
    lives in the slot each assembly makes for it (``ActionSlot``, ``TimerSlot``)."""

    __slots__ = ("fqn", "name", "reactor")

    def __init__(self, reactor: Reactor, name: str) -> None:
        self.reactor = reactor
        self.name = name
        self.fqn = f"{reactor.fqn}.{name}"

    def get(self) -> Any:
        raise UndeclaredAccessError(self._undeclared_read())

    @property
    def is_present(self) -> bool:
        raise UndeclaredAccessError(self._undeclared_read())

    def _undeclared_read(self) -> str:
        return undeclared(self.reactor, f"reads {self.fqn} without declaring it as a trigger or source")


class OwnedSlot(Slot):
    """The runtime slot of an action or a timer of one program: it belongs to one reactor."""

    __slots__ = ("reactor",)

    def __init__(self, element: Element) -> None:
        super().__init__(element.fqn)
        self.reactor = element.reactor
