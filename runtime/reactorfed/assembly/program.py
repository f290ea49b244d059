"""A :class:`Program`: one assembly of a reactor tree (made by
:func:`~reactorfed.assembly.assemble.assemble`), and the :class:`Wire` into each connected
channel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..model.action import Action, ActionSlot
from ..model.mode import ModeElement
from ..model.port import Port
from ..model.reaction import Reaction
from ..model.reactor import Reactor
from ..model.timer import TimerElement, TimerSlot
from ..model.trigger import Slot
from .partition import Partition

if TYPE_CHECKING:
    from .modes import ModeTable

__all__ = ["Program", "Wire"]


class Wire(NamedTuple):
    """The connection into one channel, resolved at assembly."""

    src: Port[Any]
    #: None: same tag; 0: next microstep; d: d ns later (a physical connection: its after, 0 if None)
    delay: int | None
    #: LF's physical connection (~>)
    physical: bool
    #: the mode of its reactor the connection was made in (None: none)
    mode: ModeElement | None = None
    #: how its values cross between federates (None: by their type; model.serializer)
    serializer: Any = None
    #: LF's ``@absent_after`` (ns; decentralized coordination between federates)
    absent_after: int = 0


class Program:
    """One assembly of a reactor tree: every reactor, channel, action and reaction,
    ranked, and the runtime state one run needs (the slots, the actions' and timers'
    parameters, the reactions and their bindings). Made by :func:`assemble`; bound to
    one :class:`~reactorfed.execution.scheduler.Scheduler`, once."""

    def __init__(self, main: Reactor, partition: Partition | None = None) -> None:
        self.main = main
        #: federated execution: the federates and the links between them (None: the
        #: whole program runs here)
        self.partition = partition
        self.reactors: list[Reactor] = []
        #: the tree's channels (every port's, in tree order)
        self.channels: list[Port[Any]] = []
        #: the slots of this process's actions and timers
        self.actions: list[ActionSlot] = []
        self.timers: list[TimerSlot] = []
        self.reactions: list[Reaction] = []  # sorted by rank
        self.startup = Slot(f"{main.name}.startup")
        self.shutdown = Slot(f"{main.name}.shutdown")
        self.edges: dict[Reaction, list[Reaction]] = {}
        #: the connection into each connected channel
        self.wires: dict[Port[Any], Wire] = {}
        #: more connections into a channel, each in another mode of its reactor than its wire's
        self.alternatives: dict[Port[Any], list[Wire]] = {}
        #: the program's modes (None: it has none; :mod:`.modes`)
        self.modes: ModeTable | None = None
        #: every channel's, action's and timer's slot (channels joined by zero-delay
        #: connections share one)
        self.slots: dict[Port[Any] | Action | TimerElement, Slot] = {}
        #: the scheduler this program is bound to (see Scheduler.bind)
        self.scheduler: Any = None

    def slot_of(self, element: Port[Any] | Action | TimerElement) -> Any:
        """The slot that holds ``element``'s value in this program (an :class:`ActionSlot`
        for an action, a :class:`TimerSlot` for a timer)."""
        return self.slots[element]

    def readers_of(self, port: Port[Any]) -> list[Reaction]:
        """This program's reactions that read ``port``'s value: triggered by it, or reading
        it as a source, through any channel that shares its slot."""
        slot = self.slots[port]
        slots = self.slots
        return [rx for rx in self.reactions
                if any(isinstance(e, Port) and slots.get(e) is slot for e in (*rx.triggers, *rx.sources))]

    def is_local(self, reactor: Reactor) -> bool:
        """Does ``reactor`` run in this process?"""
        return self.partition is None or self.partition.is_local(reactor)

    def keeps(self, reactor: Reactor, decl: Any) -> bool:
        """Does this process run the reaction, action or timer ``decl`` declares in
        ``reactor``? (A federate keeps a share of the main reactor's: :mod:`.toplevel`.)"""
        return self.partition is None or self.partition.keeps(reactor, decl)

    @property
    def max_level(self) -> int:
        return max((r.level for r in self.reactions), default=-1)
