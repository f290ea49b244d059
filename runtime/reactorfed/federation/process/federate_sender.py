"""A federate's sender of what its core queues (:class:`OutboxSender`): promises and stop
marks go into the downstream peers' batches (they leave at the next flush of
:class:`.outbound.Outbound`), every other message to the RTI at once."""

from __future__ import annotations

from collections.abc import Sequence

from ...execution.tracing import Tracer
from ...observe.trace.records import PROMISE
from ...time.clock import Clock
from ...time.tag import FOREVER_T
from ..coordination.federate_core import FederateCore, Message
from ..errors import FederationError
from ..io.transport import Client, TransportError
from ..wire import protocol as P
from .federate_members import FederateMembers
from .heartbeat import Liveness
from .outbound import Outbound

__all__ = ["OutboxSender"]


class OutboxSender:
    """Sends what a :class:`..coordination.federate_core.FederateCore` queues (see the module)."""

    def __init__(self, core: FederateCore, out: Outbound, downstream: list[int], names: Sequence[str],
                 members: FederateMembers | None, clock: Clock) -> None:
        self.core = core
        self.out = out
        self.downstream = downstream
        self.names = names
        self.members = members  # elastic banks: promises only to the peers present
        self.clock = clock
        #: the RTI's connection and what tells whether it is lost (set once joining begins)
        self.rti: Client | None = None
        self.live: Liveness | None = None
        #: records the promises in a traced run (None: untraced)
        self.tracer: Tracer | None = None

    def send(self, outbox: list[Message]) -> None:
        """Send what the core queued, in order, and empty its queue: promises go into the
        peers' batches (they leave at the next flush), the rest to the RTI at once."""
        rti = self.rti
        assert rti is not None
        members = self.members
        for m in outbox:
            if isinstance(m, (P.Promise, P.StopMark)):
                if self.tracer is not None:
                    for d in self.downstream:
                        self.tracer.record(PROMISE, m.tag, self.names[d])
                if members is None:
                    self.out.post_all(m.item())
                    if isinstance(m, P.StopMark) and m.tag >= FOREVER_T:
                        self.out.post_data_only(m.item())  # (its end, to physical-only peers too)
                else:  # only to the peers present (an absent slot may have no link at all)
                    item = m.item()
                    for d in members.promise_peers(self.downstream, m.tag):
                        self.out.post(d, item)
            else:
                try:
                    rti.send([m.pack()])
                except TransportError as e:  # the RTI's word, if it said why (an ABORT), else this
                    assert self.live is not None
                    raise FederationError(self.live.lost(self.clock.now()) or f"lost the RTI: {e}") from None
        outbox.clear()

    def report_held(self) -> None:
        """Report a completed tag held back now: a receiver may need it (the outbound side
        is about to wait for a peer)."""
        core = self.core
        core.report_held(self.clock.now())
        if core.outbox:
            self.send(core.outbox)
