"""Reactions: the code of a reactor, with declared triggers, sources and effects.

::

    class Relay(Reactor):
        inp = Input(int)
        out = Output(int)

        @reaction(triggers=[inp], effects=[out])
        def forward(self, inp, out):
            out.set(inp.get() + 1)

The function's parameters after ``self`` are bound by name to the declared elements
(ports, actions, timers, or contained reactors for ``"child.port"`` references); a
parameter naming nothing declared is refused when the class is defined.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..time.duration import DurationParam, check_duration, check_param, resolve_param
from ..time.tag import FOREVER
from .mode import declaring_mode

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["Reaction", "ReactionDecl", "reaction"]

# An element reference in a reaction declaration: a declaration object from the class
# body (Input/Output/Timer/action, STARTUP/SHUTDOWN), or a string: "name" for one of
# this reactor's elements, "child.port" for a contained reactor's port.
Ref = Any


class ReactionDecl:
    """A reaction as declared on a reactor class."""

    def __init__(
        self,
        fn: Callable[..., Any],
        triggers: Sequence[Ref],
        sources: Sequence[Ref],
        effects: Sequence[Ref],
        deadline: DurationParam | None,
    ) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.triggers = list(triggers)
        self.sources = list(sources)
        self.effects = list(effects)
        self.deadline = deadline
        self.deadline_fn: Callable[..., Any] | None = None
        #: LF's ``tardy`` handler (formerly ``STAA``/``STP``): see :meth:`tardy_handler`
        self.tardy_fn: Callable[..., Any] | None = None
        self.params = [p.name for p in list(inspect.signature(fn).parameters.values())[1:]]
        #: the mode whose ``with`` block declares it (None: none; :mod:`.mode`)
        self.mode = declaring_mode()
        if deadline is not None:
            check_param(deadline, f"reaction {self.name}: deadline")
        if not self.triggers:
            raise ValidationError(f"reaction {self.name} declares no trigger")

    def deadline_handler(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate the function that runs instead of the body when the deadline is missed.
        It takes the same parameters as the reaction."""
        if self.deadline is None:
            raise ValidationError(f"reaction {self.name} has a deadline handler but no deadline")
        self.deadline_fn = fn
        return fn

    def tardy_handler(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate the function that runs instead of the body when a message that triggers
        the reaction is tardy (LF's ``tardy`` handler, formerly ``STAA``/``STP``): under
        decentralized coordination it arrived after this federate had passed its intended
        tag, and is processed at a later tag (``port.intended_tag`` says which it was
        meant for). It takes the same parameters as the reaction."""
        self.tardy_fn = fn
        return fn

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<reaction decl {self.name}>"


def reaction(
    *,
    triggers: Sequence[Ref],
    sources: Sequence[Ref] = (),
    effects: Sequence[Ref] = (),
    deadline: DurationParam | None = None,
) -> Callable[[Callable[..., Any]], ReactionDecl]:
    """Declare a reaction. ``deadline`` (ns) makes the runtime check, just before the
    reaction runs, that physical time has not passed logical time + deadline; when it
    has, the ``@<reaction>.deadline_handler`` runs instead (or the body, with a warning
    counted, when there is no handler). A deadline of 0 is always missed, as in
    reactor-c. ``deadline`` may also name an attribute the
    reactor's ``__init__`` sets, or be a function of the reactor (LF's ``deadline(d)``
    with a parameter ``d``): resolved for each instance when the program is assembled."""

    def wrap(fn: Callable[..., Any]) -> ReactionDecl:
        return ReactionDecl(fn, triggers, sources, effects, deadline)

    return wrap


class Reaction:
    """A reaction of one reactor instance, placed in the precedence graph."""

    __slots__ = (
        "args",
        "body",
        "call",
        "deadline",
        "decl",
        "effects",
        "fqn",
        "handler",
        "index",
        "inferred_deadline",
        "late",
        "level",
        "order",
        "rank",
        "reactor",
        "sources",
        "stamp",
        "tardy",
        "triggers",
    )

    def __init__(self, reactor: Reactor, decl: ReactionDecl, index: int, order: int) -> None:
        self.reactor = reactor
        self.decl = decl
        self.index = index  # position among the reactor's reactions
        self.order = order  # position in the whole program (assembly order)
        self.fqn = f"{reactor.fqn}.{decl.name}"
        self.body = decl.fn
        self.late = decl.deadline_fn
        #: its tardy handler with its arguments bound (None: none), set by the scheduler
        self.tardy: Callable[[], Any] | None = None
        self.deadline: int | None = None
        if decl.deadline is not None:
            what = f"{self.fqn}: deadline"
            self.deadline = check_duration(resolve_param(decl.deadline, reactor, what), what)
        self.level = 0
        #: its deadline or the smallest downstream of it (ns; FOREVER: none), set at assembly
        self.inferred_deadline = FOREVER
        self.rank = 0
        self.stamp = -1
        self.args: tuple[Any, ...] = ()
        #: the deadline handler with its arguments bound, set by the scheduler
        self.handler: Callable[[], Any] | None = None
        #: the body (or deadline check) with its arguments bound, set by the scheduler
        self.call: Callable[[], Any] = self._unbound
        # Resolved runtime elements (ports' channels, actions, timers, builtin slots).
        self.triggers: list[Any] = []
        self.sources: list[Any] = []
        self.effects: list[Any] = []

    def _unbound(self) -> None:
        raise AssertionError(f"{self.fqn} runs before the scheduler bound it")

    def __repr__(self) -> str:
        return f"<reaction {self.fqn} level={self.level}>"
