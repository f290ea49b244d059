"""LF's ``@maxwait`` on a federate: how long, under decentralized coordination, it waits
in physical time past a tag's time for messages it has not heard about before it
processes the tag without them (formerly STA, the safe-to-advance offset; LF's default,
since 2026, is forever: a federate then advances only once its upstream peers have said
what they send, and no message is ever tardy unless maxwait is lowered).

::

    class Main(Reactor):
        def __init__(self):
            self.a = Platform()
            self.b = Platform()
            maxwait(self.b, ms(0))     # LF: @maxwait(0) b = new Platform()

A reaction changes its federate's maxwait at run time with ``self.set_fed_maxwait(d)``
(LF's ``lf.set_fed_maxwait``) and reads it with ``self.fed_maxwait()``.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ValidationError
from ..time.duration import check_duration
from ..time.tag import FOREVER

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["MaxWaitControl", "maxwait", "maxwait_of", "running_maxwait"]


class MaxWaitControl(Protocol):
    """What a decentralized federate's scheduler holds (``Scheduler.fed_maxwait``)."""

    maxwait: int

    def set(self, maxwait: int) -> None: ...

_DECLARED: weakref.WeakKeyDictionary[Reactor, int] = weakref.WeakKeyDictionary()


def maxwait(federate: Reactor, d: int) -> None:
    """Declare federate ``federate``'s maxwait (ns, or FOREVER), in its parent's
    ``__init__`` (the main reactor of a federated program)."""
    check_duration(d, f"{federate.fqn}: maxwait")
    if federate.parent is None:
        raise ValidationError(f"{federate.fqn}: maxwait is declared on a federate, a child of the main reactor")
    _DECLARED[federate] = d


def maxwait_of(federate: Reactor) -> int:
    """The maxwait declared for ``federate`` (FOREVER when none was)."""
    return _DECLARED.get(federate, FOREVER)


def running_maxwait(sched: Any, who: str) -> MaxWaitControl:
    """The running federate's maxwait; a ValidationError naming ``who`` outside one that
    runs under decentralized coordination."""
    mw: MaxWaitControl | None = sched.fed_maxwait
    if mw is None:
        raise ValidationError(f"{who}: maxwait exists only in a federate under decentralized coordination")
    return mw
