"""How a federated program is split: its federates and the connections between them.

The main reactor's children (each bank member on its own) are the federates. Assembly
for one federate (``assemble(main, federate)``) computes a :class:`Partition` from the
tree's declarations, keeps that federate's reactions and turns every connection between
two federates into a :class:`NetLink`, which the federation carries over the network.
The main reactor itself runs in every federate, each keeping its own share of its
reactions, actions and timers (:mod:`.toplevel`, LF's replication). The partition is the
federation's view of the program (``reactorfed.federation``'s layout is built from it);
the :class:`~reactorfed.assembly.program.Program` only runs its part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.port import Port
    from ..model.reactor import Reactor

__all__ = ["NetLink", "Partition"]


class NetLink:
    """A connection between two federates: carried over the network. A physical one
    (LF's ``~>``) is stamped by the receiver with its own physical time at arrival (plus
    the delay), and takes no part in time coordination."""

    __slots__ = ("absent_after", "delay", "dst", "dst_fed", "id", "physical", "serializer", "src", "src_fed")

    def __init__(self, id: int, src: Port[Any], dst: Port[Any], delay: int | None, src_fed: str, dst_fed: str,
                 physical: bool = False, serializer: Any = None, absent_after: int = 0) -> None:
        self.id = id
        self.physical = physical
        #: the connection's own serializer (None: values go by their type; model.serializer)
        self.serializer = serializer
        self.src = src
        self.dst = dst
        #: None: same tag; 0: next microstep; d: d ns later
        self.delay = delay
        self.src_fed = src_fed
        self.dst_fed = dst_fed
        #: LF's ``@absent_after`` (ns): decentralized coordination's wait for it, after maxwait
        self.absent_after = absent_after

    def __repr__(self) -> str:
        after = "" if self.delay is None else f" after {self.delay} ns"
        arrow = "~>" if self.physical else "->"
        return f"<link {self.id}: {self.src.fqn} {arrow} {self.dst.fqn}{after}>"


class Partition:
    """The federates of ``main`` (its children's names, in order), the one that runs in
    this process, and the links between federates (numbered in channel order)."""

    __slots__ = ("federate", "federates", "kept", "links", "main")

    def __init__(self, main: Reactor, federate: str, federates: list[str], links: list[NetLink],
                 kept: frozenset[Any] = frozenset()) -> None:
        self.main = main
        #: the federate this process runs
        self.federate = federate
        self.federates = federates
        self.links = links
        #: the declarations of the main reactor's reactions, actions and timers this
        #: federate keeps (:mod:`.toplevel`)
        self.kept = kept

    def federate_of(self, reactor: Reactor) -> str:
        """The federate ``reactor`` belongs to: the name of its ancestor (or itself) that
        is a child of the main reactor."""
        r: Reactor | None = reactor
        while r is not None and r.parent is not self.main:
            r = r.parent
        if r is None:
            raise ValueError(f"{reactor.fqn} is in no federate of {self.main.fqn}")
        return r.name

    def is_local(self, reactor: Reactor) -> bool:
        """Does ``reactor`` run in this process? (The main reactor runs in every one.)"""
        return reactor is self.main or self.federate_of(reactor) == self.federate

    def keeps(self, reactor: Reactor, decl: Any) -> bool:
        """Does this process run the element ``decl`` declares in ``reactor`` (a reaction,
        an action or a timer)?"""
        return self.is_local(reactor) and (reactor is not self.main or decl in self.kept)

    def __repr__(self) -> str:
        return f"<partition of {self.main.fqn}: {self.federate} of {', '.join(self.federates)}; {len(self.links)} links>"
