"""The RTI core's records (:mod:`.rti_core`): what it knows of each federate, the grants
it makes, and the groups of federates that share an EIMT."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...time.tag import FOREVER_T, MAX_MICROSTEP, NEVER_T, TagT
from .layout import Delay

__all__ = ["FOREVER_T", "MAX_MICROSTEP", "NEVER_T", "EimtGroup", "FederateState", "Grant"]



@dataclass
class FederateState:
    net: TagT = NEVER_T
    ltc: TagT = NEVER_T
    resigned: bool = False
    granted: TagT = NEVER_T
    ptag: TagT = NEVER_T
    #: cumulative messages sent to each downstream federate
    sent: dict[int, int] = field(default_factory=dict)
    #: cumulative messages received from each upstream federate
    received: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Grant:
    federate: int
    tag: TagT
    provisional: bool
    counts: dict[int, int]


class EimtGroup:
    """Federates with the same terms, hence the same EIMT (:mod:`.rti_bounds`): ``best``,
    attained by ``count`` of the terms: the next events of the federates ``upstream``
    and the bounds of the federates ``bounds``, each plus its delay."""

    __slots__ = ("best", "bounds", "count", "members", "relays", "scc_max", "upstream")

    def __init__(self, upstream: dict[int, Delay], bounds: dict[int, Delay] | None = None) -> None:
        self.upstream = upstream
        self.bounds = bounds or {}
        self.members: set[int] = set()  # those not resigned
        self.relays: tuple[int, ...] = ()  # all with a link out of their component
        self.scc_max = 0  # the largest zero-delay cycle a member is in (see _moved)
        self.best = FOREVER_T
        self.count = 0
