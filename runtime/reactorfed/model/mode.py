"""Modes: Lingua Franca's modal reactors (``mode``, ``reset``/``history`` transitions,
mode-local reactions, timers, actions, state and contained reactors).

A mode is declared in the reactor's class body, and what belongs to it is declared
inside a ``with`` block on it: the class body's ``with`` holds its reactions, timers,
actions and reset state; ``__init__``'s ``with self.<mode>:`` holds the contained
reactors it creates and the connections it makes::

    class CounterCycle(Reactor):
        next = Input(bool)
        count = Output(int)
        One = Mode(initial=True)   # LF: initial mode One { ... }
        Two = Mode()

        with One:
            @reaction(triggers=[next], effects=[count, reset(Two)])  # LF: -> count, reset(Two)
            def one(self, next, count, Two):
                count.set(1)
                Two.set()

        with Two:
            ...

A reaction that may change the mode declares the transition as an effect,
``reset(Two)`` (the mode is entered afresh: its timers restart, its events are dropped,
its reset state and its contained modal reactors go back to their initial values and
modes, its ``RESET`` reactions run) or ``history(Two)`` (the mode resumes where it was
left: its timers and actions keep their remaining delays); the handle it gets, named as
the mode, has ``set()``. The change happens at the end of the tag; the new mode is active
from the next microstep. The runtime part is :mod:`reactorfed.execution.modes`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ..errors import UndeclaredAccessError, ValidationError
from .trigger import Slot, undeclared

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = [
    "ModalState",
    "Mode",
    "ModeElement",
    "ModeHandle",
    "ModeSlot",
    "ResetState",
    "Transition",
    "check_modes",
    "declaring_mode",
    "history",
    "mode_of",
    "place_in_mode",
    "reset",
]

T = TypeVar("T")

#: the ``with`` blocks open on this thread: Mode declarations (a class body) and
#: ModeElements (a reactor's ``__init__``)
_open = threading.local()


def _opened() -> list[Any]:
    s: list[Any] | None = getattr(_open, "stack", None)
    if s is None:
        s = _open.stack = []
    return s


def declaring_mode() -> Mode | None:
    """The mode whose class-body ``with`` block is open here (None: none): what a timer,
    an action, a reaction or a reset state declared now belongs to."""
    s = _opened()
    return s[-1] if s and isinstance(s[-1], Mode) else None


class Kind(StrEnum):
    RESET = "reset"
    HISTORY = "history"


class Mode:
    """A mode of a reactor class (LF's ``mode`` / ``initial mode``). Exactly one of a
    class's modes is ``initial``."""

    def __init__(self, *, initial: bool = False) -> None:
        self.initial = initial
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __enter__(self) -> Mode:
        _opened().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        top = _opened().pop()
        assert top is self, f"mode blocks closed out of order: {top!r} inside {self!r}"

    @overload
    def __get__(self, obj: None, owner: type) -> Mode: ...
    @overload
    def __get__(self, obj: object, owner: type) -> ModeElement: ...

    def __get__(self, obj: Any, owner: type) -> Mode | ModeElement:
        if obj is None:
            return self
        e = ModeElement(obj, self)
        obj.__dict__[self.name] = e
        return e

    def __repr__(self) -> str:
        return f"Mode({'initial=True, ' if self.initial else ''}name={self.name!r})"


class ModeElement:
    """The mode of one reactor instance (``self.One``): in ``__init__``, ``with self.One:``
    puts the reactors created and the connections made in it. Reactions change modes
    through the handles they declared, never through this."""

    __slots__ = ("decl", "fqn", "name", "reactor")

    def __init__(self, reactor: Reactor, decl: Mode) -> None:
        self.reactor = reactor
        self.decl = decl
        self.name = decl.name
        self.fqn = f"{reactor.fqn}.{decl.name}"

    def __enter__(self) -> ModeElement:
        _opened().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        top = _opened().pop()
        assert top is self, f"mode blocks closed out of order: {top!r} inside {self!r}"

    def set(self) -> None:
        raise UndeclaredAccessError(undeclared(
            self.reactor, f"sets the mode {self.fqn} without declaring reset({self.name}) or "
            f"history({self.name}) as an effect"))

    def __repr__(self) -> str:
        return f"<mode {self.fqn}>"


def place_in_mode(r: Reactor, parent: Reactor | None) -> None:
    """A new reactor created in ``parent``'s ``__init__``: record the mode of ``parent``
    whose ``with`` block is open (None: none)."""
    s = _opened()
    top = s[-1] if s else None
    r.__dict__["_mode"] = top if isinstance(top, ModeElement) and top.reactor is parent else None


def mode_of(r: Reactor) -> ModeElement | None:
    """The mode of its parent that ``r`` was created in (None: none)."""
    m: ModeElement | None = r.__dict__["_mode"]
    return m


def open_mode_of(owner: Reactor) -> ModeElement | None:
    """The mode of ``owner`` whose ``with`` block is open (a connection made now is in it)."""
    s = _opened()
    top = s[-1] if s else None
    return top if isinstance(top, ModeElement) and top.reactor is owner else None


class Transition:
    """An effect of a reaction: a transition to ``mode``, ``reset(mode)`` or ``history(mode)``."""

    __slots__ = ("kind", "mode")

    def __init__(self, mode: Mode, kind: Kind) -> None:
        if not isinstance(mode, Mode):
            raise ValidationError(f"{kind.value}({mode!r}): a transition goes to a Mode declared in the class body")
        self.mode = mode
        self.kind = kind

    @property
    def name(self) -> str:
        return self.mode.name

    def __repr__(self) -> str:
        return f"{self.kind.value}({self.mode.name})"


def reset(mode: Mode) -> Transition:
    """LF's ``reset(M)``: enter ``M`` afresh (a reaction's effect)."""
    return Transition(mode, Kind.RESET)


def history(mode: Mode) -> Transition:
    """LF's ``history(M)``: resume ``M`` where it was left (a reaction's effect)."""
    return Transition(mode, Kind.HISTORY)


class ResetState(Generic[T]):
    """LF's ``reset state x = v``: a state variable set back to its initial value whenever
    its mode is entered with a reset transition (declared in a mode's ``with`` block, its
    mode; outside, the mode the reactor instance is in). ``self.x`` starts as a deep copy of
    ``value``, or ``factory(self)`` when the initial value depends on parameters (called
    after ``__init__``, and again at every reset)."""

    def __init__(self, value: T | None = None, *, factory: Callable[[Any], T] | None = None) -> None:
        self.value = value
        self.factory = factory
        self.mode = declaring_mode()
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def initial(self, reactor: Any) -> T:
        """A fresh initial value for ``reactor``."""
        if self.factory is not None:
            return self.factory(reactor)
        return copy.deepcopy(self.value)  # type: ignore[return-value]

    @overload
    def __get__(self, obj: None, owner: type) -> ResetState[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: Any, owner: type) -> T | ResetState[T]:
        if obj is None:
            return self
        v = self.initial(obj)
        obj.__dict__[self.name] = v
        return v

    if TYPE_CHECKING:  # for type checkers only: at run time the instance's dict takes the value
        def __set__(self, obj: Any, value: T) -> None: ...

    def __repr__(self) -> str:
        return f"ResetState(name={self.name!r})"


def check_modes(cls: type, modes: Sequence[Mode], elements: Sequence[Any], reactions: Sequence[Any]) -> None:
    """A reactor class's modes, checked when it is defined: one initial mode; every
    element and reaction declared in a mode is in one of the class's; every transition
    goes to one of them."""
    where = cls.__name__
    if modes:
        initial = [m.name for m in modes if m.initial]
        if len(initial) != 1:
            names = ", ".join(m.name for m in modes)
            what = "none is initial" if not initial else f"{len(initial)} are initial ({', '.join(initial)})"
            raise ValidationError(f"reactor {where}: of its modes {names}, {what}: declare exactly one Mode(initial=True)")
    own = set(map(id, modes))
    for e in (*elements, *reactions):
        m = getattr(e, "mode", None)
        if m is not None and id(m) not in own:
            raise ValidationError(f"{where}.{e.name} is declared in the mode {m.name} of another reactor class")
    for r in reactions:
        for t in r.effects:
            if isinstance(t, Transition) and id(t.mode) not in own:
                raise ValidationError(
                    f"reaction {where}.{r.name}: {t!r} goes to a mode that is not {where}'s "
                    f"(its modes: {', '.join(m.name for m in modes) or 'none'}); a reaction changes its own reactor's mode")
        for ref in (*r.triggers, *r.sources):
            if isinstance(ref, Transition):
                raise ValidationError(f"reaction {where}.{r.name}: {ref!r} is an effect, not a trigger or a source")


class ModalState:
    """The modes of one reactor instance in one program (made at assembly): the current
    mode, and the transition a reaction asked for at this tag (None: none)."""

    __slots__ = ("change", "current", "initial", "modes", "next", "parent", "reactor")

    def __init__(self, reactor: Reactor, parent: ModeSlot | None) -> None:
        self.reactor = reactor
        #: the mode the reactor is in (None: outside every mode)
        self.parent = parent
        self.modes: list[ModeSlot] = []
        self.initial: ModeSlot | None = None
        self.current: ModeSlot | None = None
        self.next: ModeSlot | None = None
        self.change = Kind.HISTORY


class ModeSlot:
    """One mode of one reactor instance in one program (made at assembly): whether it is
    active, whether it was ever entered, and the events of its timers and actions held
    while it is not active."""

    __slots__ = ("active", "entered", "fqn", "reset_reactions", "startup_reactions", "state", "suspended")

    def __init__(self, element: ModeElement, state: ModalState) -> None:
        self.fqn = element.fqn
        self.state = state
        self.active = False
        #: entered at least once (its startup reactions ran; its shutdown reactions will)
        self.entered = False
        self.startup_reactions: list[Any] = []
        self.reset_reactions: list[Any] = []
        #: events held while inactive: (tag, slot, value, time they were suspended at)
        self.suspended: list[tuple[tuple[int, int], Slot, Any, int]] = []

    def __repr__(self) -> str:
        return f"<mode slot {self.fqn} active={self.active}>"


class ModeHandle:
    """What a reaction that declares ``reset(M)`` or ``history(M)`` gets, named ``M``:
    ``M.set()`` asks for the transition (at the end of the tag; the last asked wins)."""

    __slots__ = ("_kind", "_requested", "_target")

    def __init__(self, target: ModeSlot, kind: Kind, requested: list[ModalState]) -> None:
        self._target = target
        self._kind = kind
        self._requested = requested

    def set(self) -> None:
        st = self._target.state
        st.next = self._target
        st.change = self._kind
        self._requested.append(st)
