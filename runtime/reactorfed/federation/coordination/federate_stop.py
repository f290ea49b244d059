"""A federate's side of the stop agreement, pure: the :class:`StopAgreement` part of
:class:`.federate_core.FederateCore`, which holds where the agreement is; the core's
methods that take the stop messages (:meth:`~.federate_core.FederateCore.on_stop_request`,
:meth:`~.federate_core.FederateCore.on_stop_granted`,
:meth:`~.federate_core.FederateCore.request_stop`, the StopMarks of
:meth:`~.federate_core.FederateCore.on_mark`, and
:meth:`~.federate_core.FederateCore.resign`) ask it, and apply its answers to the grants
and promises they own.

A local stop request goes to the RTI (STOP_REQ); a stop request from the RTI is answered
with the earliest tag this federate can still stop at (the request's, or the tag after its
current one: :meth:`StopAgreement.answer`). From either until the RTI's STOP_GRANTED, the
federate does not reach the tag it asked or answered (:attr:`StopAgreement.limit`: the stop
may come exactly there, and then that tag's events run once, with the shutdown reactions),
and reports and promises nothing past it (what its shutdown reactions send goes out at
it); the granted tag (:attr:`StopAgreement.granted`) lowers the scheduler's stop tag. A
local request may come from a reaction, inside a tag whose outputs are not sent yet:
nothing reported or promised meanwhile passes that tag. (The core reads ``limit`` and
``granted`` directly on its hot paths, as ``acquire``: no call into this part.)

Promises and grants made before a stop was known do not count the event the stop gives
every federate at the stop tag (its shutdown reactions). So a federate that learns of a
stop sends its downstream peers a :class:`StopMark <..wire.protocol.StopMark>`: a promise
(as Promise) made knowing of the stop (:meth:`StopAgreement.mark`), and so are all its
promises from there on, as are those of a federate that resigned. Once the stop tag is
agreed, a peer's promises from before its Mark hold only for the tags before the stop tag
(plus the link's delay: see :class:`.federate_promises.PeerPromises`), and the grants held
at the agreement stop short of it. The RTI recomputes its grants from the agreement
(:class:`.rti_core.RtiCore`).
"""

from __future__ import annotations

from ...time.tag import NEVER, TagT, succ

__all__ = ["StopAgreement"]


class StopAgreement:
    """Where a federate's stop agreement is (see the module docstring)."""

    def __init__(self) -> None:
        #: agreed not to reach this tag until the stop is granted (None: no stop known)
        self.limit: TagT | None = None
        #: the agreed stop tag (None: not agreed yet)
        self.granted: TagT | None = None
        #: this federate's Mark went to its downstream peers
        self.marked = False

    def answer(self, tag: TagT, current: TagT, start: int) -> TagT:
        """The RTI asks to stop at ``tag``; this federate is at ``current`` (it started at
        ``start``). The earliest tag it can stop at, which it does not reach until the stop
        is agreed."""
        reply = max(tag, succ(current) if current[0] != NEVER else (start, 0))
        self.ask(reply)
        return reply

    def ask(self, tag: TagT) -> None:
        """This federate asks to stop at ``tag`` (or answered it): it goes no further until
        the stop is agreed."""
        self.limit = tag if self.limit is None else max(tag, self.limit)

    def mark(self, promised: TagT) -> TagT | None:
        """This federate knows of a stop, and its latest promise is ``promised``: its
        promises from here on account for it (nothing past :attr:`limit` until the stop is
        agreed). The tag of the Mark that tells the downstream peers, with the most it can
        promise now; None: the Mark went already."""
        if self.marked:
            return None
        self.marked = True
        limit = self.limit
        assert limit is not None
        return promised if promised < limit else limit

    def agreed(self, tag: TagT) -> None:
        """The federation stops at ``tag``."""
        self.granted = tag

    def resigned(self) -> None:
        """This federate resigned: its last Mark (of FOREVER) went, and no other follows."""
        self.marked = True
