"""What each federate keeps of a federated program's main reactor.

LF replicates a federated program's top-level reactor in every federate (its code
generator's ``FedMainEmitter`` and ``FederateInstance.includes``), and so does reactorfed:

* its state: every federate's process builds the whole tree, so each has its own copy;
* a reaction that touches the ports of one federate (triggered by or reading one of its
  outputs, writing one of its inputs) runs only in that federate; a reaction that touches
  the ports of two federates is refused (LF: "Mixed triggers and effects from different
  federates"); any other reaction runs in every federate;
* an action or a timer is kept by a federate whose kept reactions reference it, and only
  there: LF generates no other;
* its own ports are every federate's too, but cannot be connected to a federate's ports
  (LF generates no top-level ports in a federate; refused by :func:`check_own_ports`);
* modes in it are refused, as LF refuses them ("Modes at the top level are not supported
  under federated execution").

One process runs the main reactor whole, as before: none of this applies without a
federate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ValidationError
from ..model.action import Action
from ..model.port import Port
from ..model.reaction import Reaction
from ..model.reactor import Reactor, modes_of
from ..model.timer import TimerElement

__all__ = ["check_own_ports", "kept_declarations"]


def kept_declarations(
    main: Reactor,
    federate: str,
    federate_of: Callable[[Reactor], str],
    reactions: Iterable[Reaction],
) -> frozenset[Any]:
    """The declarations of ``main``'s reactions, actions and timers that ``federate`` keeps
    (``reactions``: the program's reactions; ``federate_of``: the federate of a reactor
    under main)."""
    if modes_of(main):
        raise ValidationError(
            f"{main.fqn}: a federated program's main reactor cannot have modes "
            "(LF: modes at the top level are not supported under federated execution)"
        )
    kept: set[Any] = set()
    for rx in reactions:
        if rx.reactor is not main:
            continue
        touched = {
            federate_of(e.reactor)
            for e in (*rx.triggers, *rx.sources, *rx.effects)
            if isinstance(e, Port) and e.reactor is not main
        }
        if len(touched) > 1:
            raise ValidationError(
                f"reaction {rx.fqn} touches the ports of the federates {', '.join(sorted(touched))}; "
                "a reaction of a federated program's main reactor may touch the ports of one federate only"
            )
        if touched and federate not in touched:
            continue
        kept.add(rx.decl)
        for e in (*rx.triggers, *rx.sources, *rx.effects):
            if isinstance(e, (Action, TimerElement)):
                kept.add(e.decl)
    return frozenset(kept)


def check_own_ports(main: Reactor, src: Port[Any], dst: Port[Any]) -> None:
    """Refuse a connection between one of ``main``'s own ports and a federate's port."""
    if (src.reactor is main) != (dst.reactor is main):
        raise ValidationError(
            f"{main.fqn}: the connection {src.fqn} -> {dst.fqn} joins the main reactor's own port to a "
            "federate's; a federated program's main reactor cannot connect its ports to federates "
            "(each federate has its own copy of them)"
        )
