"""Ports: typed inputs and outputs, single channels or multiports.

A port's value persists (LF's Python target): ``handle.value`` reads the latest value the
port had, at this tag or an earlier one, while ``handle.get()`` reads the value at the
current tag only (None when absent) and ``handle.is_present`` says which. A persisted
value stays referenced until the port's next value replaces it (a large array included).

A port is declared on the reactor class (``inp = Input(int)``); each reactor instance
gets its own runtime :class:`Port` (or :class:`MultiPort` of channels). Reactions never
touch ports directly: they receive handles for what they declared — a
:class:`PortReader` for triggers and sources, a :class:`PortWriter` for effects — so
reading or writing anything undeclared is caught.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ..errors import UndeclaredAccessError, ValidationError
from ..time.tag import NEVER, Tag
from .attachment import running_scheduler
from .trigger import Slot, undeclared

if TYPE_CHECKING:
    from ..execution.strategies import ReadyQueue
    from .reactor import Reactor

__all__ = [
    "Input",
    "MultiPort",
    "MultiReader",
    "MultiWriter",
    "Output",
    "Port",
    "PortReader",
    "PortWriter",
    "SerialWriter",
]

T = TypeVar("T")
Width = int | str | Callable[[Any], int]


class PortDecl(Generic[T]):
    """Class-level declaration of a port; the reactor's instance gets a runtime port."""

    is_input = False

    # Two signatures so that a type checker infers T from the type given (Input(int) is
    # a PortDecl[int]) and still takes what is not a class (a typing alias, say).
    @overload
    def __init__(self, type: type[T], *, width: Width | None = None) -> None: ...
    @overload
    def __init__(self: PortDecl[Any], type: Any = object, *, width: Width | None = None) -> None: ...

    def __init__(self, type: Any = object, *, width: Width | None = None) -> None:
        self.type = type
        self.width = width
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        # Created lazily on first access, so a multiport's width may depend on
        # parameters set in __init__; the instance dict wins from then on.
        if obj is None:
            return self
        width = self.resolve_width(obj)
        p: Port[T] | MultiPort[T] = Port(obj, self) if width is None else MultiPort(obj, self, width)
        obj.__dict__[self.name] = p
        return p

    def resolve_width(self, reactor: Any) -> int | None:
        """The multiport width for ``reactor``, or None for a single port."""
        w = self.width
        if w is None:
            return None
        if isinstance(w, str):
            w = getattr(reactor, w)
        elif callable(w):
            w = w(reactor)
        if not isinstance(w, int) or isinstance(w, bool) or w < 0:
            raise ValidationError(f"{reactor.fqn}.{self.name}: multiport width must be an int >= 0, got {w!r}")
        return w

    def __repr__(self) -> str:
        kind = "Input" if self.is_input else "Output"
        return f"{kind}({getattr(self.type, '__name__', self.type)}, name={self.name!r})"


class Input(PortDecl[T]):
    """An input port. ``width=`` (an int, the name of a parameter attribute, or a
    function of the reactor) makes it a multiport."""

    is_input = True


class Output(PortDecl[T]):
    """An output port. ``width=`` makes it a multiport."""

    is_input = False


class Port(Generic[T]):
    """One channel of a port of one reactor instance, as declared. Its value lives in the
    slot each assembly makes (shared along zero-delay connections); its connections are
    the :class:`~reactorfed.model.reactor.Connection` s its reactors declared."""

    __slots__ = ("decl", "fqn", "index", "is_input", "reactor", "type")

    def __init__(self, reactor: Reactor, decl: PortDecl[T], index: int | None = None) -> None:
        self.reactor = reactor
        self.decl = decl
        self.index = index
        self.is_input = decl.is_input
        self.type = decl.type
        suffix = "" if index is None else f"[{index}]"
        self.fqn = f"{reactor.fqn}.{decl.name}{suffix}"

    # Direct use from a reaction body is a mistake: reactions get handles.
    def get(self) -> T | None:
        raise UndeclaredAccessError(undeclared(self.reactor, f"reads {self.fqn} without declaring it as a trigger or source"))

    def set(self, value: T) -> None:
        raise UndeclaredAccessError(undeclared(self.reactor, f"writes {self.fqn} without declaring it as an effect"))

    @property
    def is_present(self) -> bool:
        raise UndeclaredAccessError(undeclared(self.reactor, f"reads {self.fqn} without declaring it as a trigger or source"))

    @property
    def width(self) -> int:
        return 1

    def channels(self) -> list[Port[Any]]:
        return [self]

    def __repr__(self) -> str:
        return f"<{'input' if self.is_input else 'output'} {self.fqn}>"


class MultiPort(Sequence[Port[T]]):
    """A multiport: ``width`` channels, each with its own presence."""

    def __init__(self, reactor: Reactor, decl: PortDecl[T], width: int) -> None:
        self.reactor = reactor
        self.decl = decl
        self.is_input = decl.is_input
        self.fqn = f"{reactor.fqn}.{decl.name}"
        self._channels: list[Port[T]] = [Port(reactor, decl, i) for i in range(width)]

    @property
    def width(self) -> int:
        return len(self._channels)

    def channels(self) -> list[Port[Any]]:
        return list(self._channels)

    @overload
    def __getitem__(self, i: int) -> Port[T]: ...
    @overload
    def __getitem__(self, i: slice) -> list[Port[T]]: ...
    def __getitem__(self, i: int | slice) -> Port[T] | list[Port[T]]:
        return self._channels[i]

    def __len__(self) -> int:
        return len(self._channels)

    def __repr__(self) -> str:
        return f"<multiport {self.fqn} width={self.width}>"


class PortReader(Generic[T]):
    """What a reaction gets for a port it triggers on or reads: the port (for its name
    and type) and the slot that holds its value in the running program."""

    __slots__ = ("_slot", "port")

    def __init__(self, port: Port[T], slot: Slot) -> None:
        self.port = port
        self._slot = slot

    def get(self) -> T | None:
        """The value at the current tag, or None when absent (never a stale value)."""
        s = self._slot
        return s.value if s.present else None

    @property
    def is_present(self) -> bool:
        return self._slot.present

    @property
    def value(self) -> T | None:
        """The latest value this port had, at this tag or an earlier one (None before the
        first): LF's Python target's persistent ``port.value``. Use :meth:`get` (None when
        absent) or :attr:`is_present` to tell a new value from an old one."""
        return self._slot.value

    @property
    def intended_tag(self) -> Tag:
        """The tag the value at this tag was sent for (LF's ``port.intended_tag``): the
        current tag, unless the message was tardy (decentralized coordination: it arrived
        after this federate had passed that tag, and is processed later)."""
        it = self._slot.intended
        return Tag(*it) if it is not None else Tag(*running_scheduler(self.port.reactor).current_tag)

    @property
    def physical_time_of_arrival(self) -> int:
        """When the message at this tag arrived from another federate (physical time, ns;
        LF's ``port.physical_time_of_arrival``), under decentralized coordination; NEVER
        for a value that did not come over the network."""
        sched = running_scheduler(self.port.reactor)
        tardy = sched.tardy
        t = tardy.arrivals.get((sched.current_tag, self._slot)) if tardy is not None else None
        return t if t is not None else NEVER

    def __repr__(self) -> str:
        return f"<reader {self.port.fqn}>"


class PortWriter(PortReader[T]):
    """What a reaction gets for a port it declares as an effect."""

    __slots__ = ("_mark",)

    def __init__(self, port: Port[T], slot: Slot, mark: Callable[[Slot], None]) -> None:
        super().__init__(port, slot)
        self._mark = mark

    def set(self, value: T) -> None:
        """Set the port at the current tag; a second set at one tag replaces the value."""
        slot = self._slot
        slot.value = value
        if not slot.present:
            slot.present = True
            self._mark(slot)

    def __repr__(self) -> str:
        return f"<writer {self.port.fqn}>"


class CheckedWriter(PortWriter[T]):
    """A writer that checks the value's type (the environment's ``check_types``)."""

    __slots__ = ()

    def set(self, value: T) -> None:
        t = self.port.type
        if t is not object and isinstance(t, type) and not isinstance(value, t):
            raise TypeError(f"{self.port.fqn} carries {t.__name__}, got {type(value).__name__}: {value!r}")
        super().set(value)


class MultiReader(Sequence[PortReader[T]]):
    """Handles for the channels of a multiport (or of a bank's ports)."""

    def __init__(self, readers: list[PortReader[T]]) -> None:
        self._h = readers

    @overload
    def __getitem__(self, i: int) -> PortReader[T]: ...
    @overload
    def __getitem__(self, i: slice) -> list[PortReader[T]]: ...
    def __getitem__(self, i: int | slice) -> PortReader[T] | list[PortReader[T]]:
        return self._h[i]

    def __len__(self) -> int:
        return len(self._h)

    def __iter__(self) -> Iterator[PortReader[T]]:
        return iter(self._h)

    def values(self) -> list[T | None]:
        """Every channel's value, None where absent."""
        return [s.value if s.present else None for s in (h._slot for h in self._h)]

    def present(self) -> list[tuple[int, T]]:
        """(channel, value) for the channels present at this tag."""
        return [(i, h._slot.value) for i, h in enumerate(self._h) if h._slot.present]

    @property
    def is_present(self) -> bool:
        """True when any channel is present."""
        return any(h._slot.present for h in self._h)


class MultiWriter(MultiReader[T]):
    def __init__(self, writers: list[PortWriter[T]]) -> None:
        super().__init__(list(writers))
        self._w = writers

    @overload  # type: ignore[override]
    def __getitem__(self, i: int) -> PortWriter[T]: ...
    @overload
    def __getitem__(self, i: slice) -> list[PortWriter[T]]: ...
    def __getitem__(self, i: int | slice) -> PortWriter[T] | list[PortWriter[T]]:
        return self._w[i]

    def set_all(self, value: T) -> None:
        """Broadcast: set every channel to ``value``."""
        for w in self._w:
            w.set(value)


_heappush = heapq.heappush


class SerialWriter(PortWriter[Any]):
    """The writer for serial execution: does the ready queue's
    :meth:`~reactorfed.execution.strategies.ReadyQueue.mark` inline (a port write is the
    hot path: one call less per write)."""

    __slots__ = ("_ready",)

    def __init__(self, port: Port[Any], slot: Slot, mark: Callable[[Slot], None]) -> None:
        super().__init__(port, slot, mark)
        self._ready: ReadyQueue = mark.__self__  # type: ignore[attr-defined]

    def set(self, value: Any) -> None:
        slot = self._slot
        slot.value = value
        if not slot.present:
            slot.present = True
            q = self._ready
            q.written.append(slot)
            stamp = q.stamp
            for r in slot.reactions:
                if r.stamp != stamp:
                    r.stamp = stamp
                    _heappush(q.heap, r.rank)
