"""The RTI server's sending side (:class:`RtiGrants`): the grants that a batch of reports
made due (one pass per batch, so that a backlog of reports yields one grant per federate
covering every tag they made safe), the RELEASEs that come with them, the stop agreement's
broadcast, and messages to one federate's control connection. The server
(:mod:`.rti_server`) reads the reports; the elastic banks' part (:mod:`.rti_members`)
sends its grants and messages through this object too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...execution.tracing import Tracer
from ...observe.trace.records import GRANT, STOP
from ..coordination.admission import Admission
from ..coordination.federate_maxwait import check_decentralized, rti_backstop
from ..coordination.layout import Layout
from ..coordination.rti_core import Grant, RtiCore
from ..io.transport import Server
from ..wire import protocol as P

if TYPE_CHECKING:
    from .rti_members import RtiMembers

__all__ = ["RtiGrants"]


class RtiGrants:
    """What the RTI sends its federates besides the handshake's answers (see the module)."""

    def __init__(self, core: RtiCore, layout: Layout, admission: Admission, decentralized: bool = False) -> None:
        if decentralized:
            check_decentralized(layout)  # refused before anyone joins
        self.core = core
        self.layout = layout
        self.admission = admission
        #: the RTI's socket, once bound (:meth:`.rti_server.RtiServer.bind`)
        self.socket: Server | None = None
        #: records grants and stop agreements in a traced run (None: untraced)
        self.tracer: Tracer | None = None
        #: elastic banks' part: what a regrant agreed goes before its grants (None: no elastic bank)
        self.members: RtiMembers | None = None
        #: federates whose reports may make grants due (sent by :meth:`flush`)
        self.dirty: set[int] = set()
        self.sent = 0  # grants sent (TAG and PTAG)
        #: decentralized coordination: grants are computed (the stop agreement and the
        #: RELEASEs read the same state) but sent only to the members of cycles, which
        #: promises cannot advance (rti_backstop)
        self.decentralized = decentralized

    def flush(self) -> None:
        """Send the grants due after a batch of reports: one pass, so a backlog of reports
        yields one grant per federate covering every tag they made safe."""
        if self.dirty:
            grants = self.core.regrant(self.dirty)
            self.dirty.clear()
            if self.members is not None:  # what the regrant agreed goes before its grants
                self.members.route()
            if self.decentralized:
                grants = rti_backstop(self.layout, grants, self.core.stop_tag)
            for g in grants:
                self.send_grant(g)
            if self.core.lead.held:
                self._send_leads()
            released = self.core.take_released()
            if released:
                assert self.socket is not None
                msg = P.Release().pack()
                for f in released:
                    peer = self.admission.control_of.get(f)  # (None: an elastic member's process is gone)
                    if peer is not None:
                        self.socket.send(peer, [msg])
            if self.members is not None:  # (a leave the regrant agreed may free a slot a new process waits for)
                self.members.retry_held()

    def _send_leads(self) -> None:
        """The LEADs and WATCHes of the lead window (:mod:`..coordination.rti_lead`) due
        after this batch."""
        leads, watches = self.core.lead.due()
        for f, tag in leads:
            self.send(f, P.Lead(tag).pack())
        for f, tag in watches:
            self.send(f, P.Watch(tag).pack())

    def stop_if_agreed(self, tag: tuple[int, int] | None) -> None:
        if tag is not None:
            if self.tracer is not None:
                self.tracer.record(STOP, tag, "agreed")
            self.broadcast(P.StopGranted(tag).pack())
            # The grants are computed afresh from the agreement (RtiCore.on_stop_reply):
            # after the STOP_GRANTED on every federate's connection, with this batch's.
            self.dirty.update(range(len(self.layout.names)))

    def broadcast(self, data: bytes) -> None:
        """To every federate connected that has not resigned."""
        assert self.socket is not None
        for f, peer in self.admission.control_of.items():
            if not self.core.feds[f].resigned:
                self.socket.send(peer, [data])

    def send_grant(self, g: Grant) -> None:
        self.sent += 1
        assert self.socket is not None
        grant = P.Ptag(g.tag, g.counts) if g.provisional else P.Tag(g.tag, g.counts)
        self.socket.send(self.admission.control_of[g.federate], [grant.pack()])
        if self.tracer is not None:
            self.tracer.record(GRANT, g.tag, self.layout.names[g.federate], g.provisional)

    def send(self, f: int, data: bytes) -> None:
        """To federate ``f``'s control connection, if it has one (None: its process is gone)."""
        peer = self.admission.control_of.get(f)
        sock = self.socket
        if peer is not None and sock is not None:
            sock.send(peer, [data])
