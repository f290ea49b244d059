"""Reactors: classes that declare ports, actions, timers and reactions, hold state as
plain attributes, and contain other reactors.

A reactor's ``__init__`` takes its parameters, sets its state, creates contained
reactors (plain attribute assignment names them) and connects ports; calling
``super().__init__()`` is not needed. That is the **construction** phase: it only
declares. Full names are fixed when the top-level reactor's construction ends.

Nothing runs until an :class:`Environment` **assembles** the tree (which reads the
declarations and never changes them: every assembly builds a new, independent
``Program``) and **executes** it. The same top-level reactor may therefore run again,
one run after another (never two at once); what a reactor keeps in its own attributes
(a log, a counter) carries over from one run to the next: that state is the user's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, cast

from ..errors import ValidationError
from ..observe.progress import check_progress
from ..time.duration import check_duration
from ..time.tag import Tag
from .action import Action, ActionDecl
from .attachment import record_result, running_scheduler, unattached
from .bank import Bank, take_member_index
from .declarations import check_declared, collect
from .mode import Mode, ModeElement, ResetState, open_mode_of, place_in_mode
from .port import MultiPort, Port, PortDecl
from .reaction import ReactionDecl
from .serializer import check_serializer
from .timer import Timer, TimerElement

__all__ = [
    "Connection",
    "Reactor",
    "actions_of",
    "connections_of",
    "declared_reactions",
    "modes_of",
    "ports_of",
    "reset_states_of",
    "timers_of",
]

_local = threading.local()


def _stack() -> list[Reactor]:
    s: list[Reactor] | None = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


class Connection:
    """A connection as written in a reactor's ``__init__``; checked at assembly."""

    def __init__(self, owner: Reactor, src: Any, dst: Any, after: int | None, broadcast: bool,
                 physical: bool = False, serializer: Any = None, absent_after: int = 0) -> None:
        self.owner = owner
        self.src = src
        self.dst = dst
        self.after = after
        self.broadcast = broadcast
        self.physical = physical
        #: how its values cross between federates (None: by their type; see .serializer)
        self.serializer = serializer
        #: LF's ``@absent_after``: see Reactor.connect
        self.absent_after = absent_after
        #: the mode of ``owner`` whose ``with`` block made it (None: none)
        self.mode = open_mode_of(owner)


class _ReactorMeta(type):
    def __call__(cls, /, *args: Any, name: str | None = None, **kwargs: Any) -> Any:
        stack = _stack()
        obj = cls.__new__(cls)  # type: ignore[call-overload]
        parent = stack[-1] if stack else None
        obj._setup(parent, name, take_member_index())
        stack.append(obj)
        try:
            obj.__init__(*args, **kwargs)
        finally:
            stack.pop()
        obj._finish()
        if parent is None:
            obj._rename(None)  # the tree is complete: full names are final
        return obj


class Reactor(metaclass=_ReactorMeta):
    """Base class of every reactor."""

    _decl_ports: dict[str, PortDecl[Any]] = {}
    _decl_actions: dict[str, ActionDecl[Any]] = {}
    _decl_timers: dict[str, Timer] = {}
    _decl_reactions: list[ReactionDecl] = []
    _decl_modes: dict[str, Mode] = {}
    _decl_states: dict[str, ResetState[Any]] = {}

    # Instance fields set by _setup (declared for type checkers).
    _parent: Reactor | None
    _children: list[Reactor]
    _connections: list[Connection]
    #: the member's index in its bank (None outside a bank); as in LF, a parameter the
    #: reactor may set itself (BankIndexOverride.lf)
    bank_index: int | None

    # The runtime's names for the instance, read-only: an assignment in __init__ (an LF
    # parameter called ``name``, say) would be silently replaced at assembly, so it is
    # refused (see _read_only). Stored in the instance dict under the same key.
    @property
    def name(self) -> str:
        """The instance's name: the attribute its parent assigned it to (``name=`` when
        created, or the class name for the main reactor)."""
        return cast(str, self.__dict__["name"])

    @name.setter
    def name(self, value: Any) -> None:
        _read_only(self, "name", value)

    @property
    def fqn(self) -> str:
        """The full name, from the top-level reactor down (final once the top-level
        reactor is constructed)."""
        return cast(str, self.__dict__["fqn"])

    @fqn.setter
    def fqn(self, value: Any) -> None:
        _read_only(self, "fqn", value)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Collect the class's elements, inherited ones included, in Lingua Franca's order
        (:func:`.declarations.collect`), and check them."""
        super().__init_subclass__(**kwargs)
        d = collect(cls)
        cls._decl_ports, cls._decl_actions, cls._decl_timers = d.ports, d.actions, d.timers
        cls._decl_reactions = list(d.reactions.values())
        cls._decl_modes, cls._decl_states = d.modes, d.states
        check_declared(cls, d)

    def __init__(self) -> None:
        pass

    # -- construction ------------------------------------------------------------
    def _setup(self, parent: Reactor | None, name: str | None, bank_index: int | None) -> None:
        d = self.__dict__
        d["_parent"] = parent
        unattached(self)
        place_in_mode(self, parent)
        d["_children"] = []
        d["_connections"] = []
        d["_explicit_name"] = name
        d["bank_index"] = bank_index
        d["name"] = name or type(self).__name__
        d["fqn"] = d["name"]
        if parent is not None:
            parent._children.append(self)

    def _finish(self) -> None:
        # Create every declared element not touched during __init__ (they are created
        # lazily so that multiport widths may depend on parameters set in __init__).
        for attr in (*self._decl_ports, *self._decl_actions, *self._decl_timers, *self._decl_modes, *self._decl_states):
            getattr(self, attr)
        self._name_children()

    def _name_children(self) -> None:
        named: set[int] = set()
        for attr, v in list(self.__dict__.items()):
            if attr.startswith("_"):
                continue
            if isinstance(v, Reactor) and v._parent is self and id(v) not in named:
                if v.__dict__["_explicit_name"] is None:
                    v.__dict__["name"] = attr
                named.add(id(v))
            elif isinstance(v, (Bank, list, tuple)) and v and all(isinstance(m, Reactor) for m in v):
                for i, m in enumerate(v):
                    if m._parent is self and id(m) not in named and m.__dict__["_explicit_name"] is None:
                        m.__dict__["name"] = f"{attr}[{i}]"
                        named.add(id(m))
        seen: dict[str, int] = {}
        for c in self._children:
            if c.name in seen:
                seen[c.name] += 1
                c.__dict__["name"] = f"{c.name}{seen[c.name]}"
            else:
                seen[c.name] = 0

    def _rename(self, prefix: str | None) -> None:
        """Fix full names once the hierarchy is complete (when the top-level reactor's
        construction ends)."""
        self.__dict__["fqn"] = self.name if prefix is None else f"{prefix}.{self.name}"
        for p in self._ports():
            for ch in p.channels():
                suffix = "" if ch.index is None else f"[{ch.index}]"
                ch.fqn = f"{self.fqn}.{ch.decl.name}{suffix}"
            if isinstance(p, MultiPort):
                p.fqn = f"{self.fqn}.{p.decl.name}"
        for a in self._actions():
            a.fqn = f"{self.fqn}.{a.decl.name}"
        for attr in self._decl_timers:
            cast(TimerElement, self.__dict__[attr]).fqn = f"{self.fqn}.{attr}"
        for attr in self._decl_modes:
            cast(ModeElement, self.__dict__[attr]).fqn = f"{self.fqn}.{attr}"
        for c in self._children:
            c._rename(self.fqn)

    def _ports(self) -> list[Port[Any] | MultiPort[Any]]:
        return [self.__dict__[a] for a in self._decl_ports]

    def _actions(self) -> list[Action]:
        return [self.__dict__[a] for a in self._decl_actions]

    def _timers(self) -> list[TimerElement]:
        return [self.__dict__[a] for a in self._decl_timers]

    def connect(self, src: Any, dst: Any, *, after: int | None = None, broadcast: bool = False,
                physical: bool = False, serializer: Any = None, absent_after: int = 0) -> None:
        """Connect ``src`` to ``dst``: ports, multiports, a bank's ports (``bank.out``) or
        lists of them, flattened into channels and joined pairwise.

        ``after=None`` delivers at the same tag; ``after=0`` at the next microstep;
        ``after=d`` at ``d`` ns later, microstep 0. With ``broadcast=True`` the sources
        repeat to fill the destinations (their count must divide it). Any other width
        mismatch is an error.

        ``physical=True`` is LF's physical connection (``~>``): the value arrives at the
        physical time it is delivered (at the end of the sender's tag) + ``after`` (0 when
        None), microstep 0, and never at or before the sender's tag (then its next
        microstep). Like a delay, it breaks a cycle. Between federates, the receiver stamps
        the value with its own clock at arrival + ``after``.

        ``serializer``: an object with ``serialize(value) -> bytes`` and
        ``deserialize(bytes) -> value`` that carries this connection's values between
        federates (LF's ``serializer "name"``; :mod:`.serializer`). Within one process it
        is not used.

        ``absent_after`` (ns; LF's ``@absent_after``) matters between federates under
        decentralized coordination only: once physical time passes a tag's time + the
        receiving federate's maxwait + this, a message on this connection that has not
        arrived is taken to be absent at that tag (one that comes later is tardy).
        """
        if after is not None:
            check_duration(after, f"{self.fqn}: connection delay")
        check_serializer(serializer, f"{self.fqn}: a connection")
        check_duration(absent_after, f"{self.fqn}: absent_after")
        self._connections.append(Connection(self, src, dst, after, broadcast, physical, serializer, absent_after))

    # -- logical time, for use inside reactions ---------------------------------------
    def tag(self) -> Tag:
        """The current tag (absolute time in ns since the epoch, microstep)."""
        return Tag(*running_scheduler(self).current_tag)

    def elapsed_tag(self) -> Tag:
        """The current tag relative to the start time: what traces should record."""
        env = running_scheduler(self)
        t, m = env.current_tag
        return Tag(t - env.start_time, m)

    def logical_time(self) -> int:
        return running_scheduler(self).current_tag[0]

    def elapsed(self) -> int:
        """Logical time elapsed since the start, in ns."""
        env = running_scheduler(self)
        return env.current_tag[0] - env.start_time

    def microstep(self) -> int:
        return running_scheduler(self).current_tag[1]

    def start_time(self) -> int:
        return running_scheduler(self).start_time

    def physical_time(self) -> int:
        return running_scheduler(self).clock.now()

    def check_deadline(self, invoke_handler: bool = True) -> bool:
        """Inside a reaction of this reactor: has its deadline passed (physical time past
        the tag's time + the deadline)? If so and ``invoke_handler``, its deadline handler
        runs now. False for a reaction without a deadline. LF's
        ``self.check_deadline(invoke_handler)`` (see :mod:`reactorfed.execution.deadlines`)."""
        from ..execution.deadlines import check_deadline

        return check_deadline(running_scheduler(self), self, invoke_handler)

    def update_deadline(self, deadline: int) -> None:
        """Inside a reaction of this reactor that declares a deadline: change it (ns), for
        the rest of this invocation (see :meth:`check_deadline`) and every later one.
        LF's ``self.update_deadline(d)``."""
        from ..execution.deadlines import update_deadline

        update_deadline(running_scheduler(self), self, deadline)

    def fed_maxwait(self) -> int:
        """This federate's maxwait (ns; FOREVER: none), under decentralized coordination:
        LF's ``lf.get_fed_maxwait()`` (see :mod:`reactorfed.model.maxwait`)."""
        from .maxwait import running_maxwait

        return running_maxwait(running_scheduler(self), self.fqn).maxwait

    def set_fed_maxwait(self, d: int) -> None:
        """Change this federate's maxwait from now on: LF's ``lf.set_fed_maxwait(d)``."""
        from .maxwait import running_maxwait

        running_maxwait(running_scheduler(self), self.fqn).set(check_duration(d, f"{self.fqn}: maxwait"))

    def request_stop(self) -> None:
        """Stop at the next microstep: shutdown reactions run there, later events are dropped.
        In a transient federate (``transient(...)``, LF's ``@transient``) it is that
        federate's leave instead: the federation goes on (see
        :meth:`reactorfed.execution.membership.Membership.leave_requested`)."""
        running_scheduler(self).request_stop(self)

    # -- LF's tracing API (recorded when the run is traced: --trace, --otlp-endpoint) ------
    def register_user_trace_event(self, description: str) -> int:
        """A handle (never 0) for user trace events described by ``description``."""
        return running_scheduler(self).user_events.register(description)

    def tracepoint_user_event(self, handle: int) -> None:
        """Record the user event ``handle`` at the current tag."""
        env = running_scheduler(self)
        env.user_events.record(env.tracer, env.current_tag, handle)

    def tracepoint_user_value(self, handle: int, value: Any) -> None:
        """Record ``value`` for the user event ``handle`` at the current tag."""
        env = running_scheduler(self)
        env.user_events.record(env.tracer, env.current_tag, handle, value)

    def report_result(self, values: Mapping[str, Any]) -> None:
        """Report what this reactor measured or achieved in this run (e.g. steps/s, the
        final return): it goes into the run's summary, :attr:`RunSummary.results` under
        this reactor's full name, which ``reactorfed run`` and ``reactorfed federate``
        print after their summary line (one JSON object; in the ``--json`` summary too).
        A later report replaces an earlier one."""
        running_scheduler(self)
        record_result(self, values)

    def report_progress(self, done: int | None = None, total: int | None = None, **figures: float) -> None:
        """Report how far this run is, for a person watching it: ``done`` of ``total``
        (say iterations; either may be left out) and a few ``figures`` of its own, short
        names to numbers (say ``env_steps=12_800, mean_return=212.4``; at most 8; a NaN
        figure, not known yet, is left out). The latest report of the process wins: its
        ``/status`` shows it, a federate sends it to the RTI (at most once a second), and
        ``reactorfed launch``'s progress line and ``kubectl get rfed`` show it. Cheap: call
        it as often as you like. A :class:`~reactorfed.ValidationError` names a bad field."""
        running_scheduler(self).progress.report(check_progress(done, total, figures))

    @property
    def children(self) -> list[Reactor]:
        return list(self._children)

    @property
    def parent(self) -> Reactor | None:
        return self._parent

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.fqn}>"


# -- the runtime's view of a reactor (for assembly and execution) -------------------------
# Functions, not methods: a user's reactor owns its attribute names, so the runtime adds
# no public name to every reactor (``children`` and ``parent`` are the reactor's own).
def ports_of(r: Reactor) -> list[Port[Any] | MultiPort[Any]]:
    """The ports ``r``'s class declares, in declaration order."""
    return r._ports()


def actions_of(r: Reactor) -> list[Action]:
    """The actions ``r``'s class declares, in declaration order."""
    return r._actions()


def timers_of(r: Reactor) -> list[TimerElement]:
    """The timers ``r``'s class declares, in declaration order."""
    return r._timers()


def modes_of(r: Reactor) -> list[ModeElement]:
    """The modes ``r``'s class declares, in declaration order (:mod:`.mode`)."""
    return [r.__dict__[a] for a in r._decl_modes]


def reset_states_of(cls: type[Reactor]) -> list[ResetState[Any]]:
    """The reset state variables reactor class ``cls`` declares (:class:`.mode.ResetState`)."""
    return list(cls._decl_states.values())


def connections_of(r: Reactor) -> list[Connection]:
    """The connections ``r``'s ``__init__`` made (:meth:`Reactor.connect`), in order."""
    return r._connections


def declared_reactions(cls: type[Reactor]) -> list[ReactionDecl]:
    """The reactions reactor class ``cls`` declares, inherited ones included, in Lingua
    Franca's order."""
    return cls._decl_reactions


def _read_only(r: Reactor, attr: str, value: Any) -> None:
    raise ValidationError(
        f"{type(r).__name__} {r.fqn}: self.{attr} = {value!r}: {attr!r} is the runtime's (the instance "
        "name, fixed when the reactor tree is built) and would "
        "replace or be replaced by it; keep the value under another attribute (e.g. self.label), or pass "
        "name=... when creating a reactor to choose its instance name"
    )
