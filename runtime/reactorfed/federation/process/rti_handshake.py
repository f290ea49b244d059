"""The RTI's side of the join handshake: a stranger's HELLO answered with a CHALLENGE (or a
REJECT), its PROOF turned into a federate joined (or a hot swap held), a heartbeat
connection's HB_HELLO tied to its federate. The checks themselves are
:class:`~reactorfed.federation.coordination.admission.Admission`'s (sans-IO); this part
carries their answers over the RTI's socket and counts the refusals.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from ...time.clock import Clock
from ..coordination.admission import Admission, Swap
from ..coordination.credentials import claim_refusal, keys_by_index
from ..coordination.layout import Layout
from ..io.transport import Server
from ..wire import protocol as P
from .member_keys import RtiCredentials
from .rti_connections import Connections
from .rti_members import RtiMembers
from .throttle import Throttle

__all__ = ["RtiHandshake"]

log = logging.getLogger("reactorfed.rti")


class RtiHandshake:
    """Answers strangers on ``server``; ``joined(f, fd, peer)`` is called for each federate
    that passed (its control connection ``fd``)."""

    def __init__(self, layout: Layout, admission: Admission, connections: Connections,
                 credentials: RtiCredentials | None, clock: Clock, joined: Callable[[int, int, bytes], None]) -> None:
        self.layout, self.admission, self.connections = layout, admission, connections
        self.credentials, self.clock, self._joined = credentials, clock, joined
        self.server: Server | None = None  # (set by the RTI's bind)
        self.members: RtiMembers | None = None  # (elastic banks' joins: a slot's new process)
        #: handshakes refused (a REJECT sent) and heartbeat connections not tied to anyone
        self.rejected = 0
        self._warn = Throttle(log)
        #: the members' keys the federates joined were told (their CHALLENGEs', the last KEYS);
        #: stale: some were told others since (the table changed while they joined)
        self._told: dict[int, bytes] | None = None
        self._stale = False

    def on_message(self, peer: bytes, msg: P.Message, open_: bool, running: bool, session: bytes) -> None:
        """A stranger's (or a pending one's) message: HELLO, PROOF or HB_HELLO. ``open_``:
        the federation still takes its first joins; ``running``: it has started."""
        adm = self.admission
        if isinstance(msg, P.Hello):
            # (a slot's new process: its last one may be gone; only the slot's own key says so)
            if self.members is not None and (self.credentials is None or claim_refusal(self._member(), msg.name) is None):
                self.members.superseded(msg.name)
            self.answer(peer, adm.hello(peer, msg, self.clock.now(), os.urandom(16), open_=open_,
                                        member=self._member(), keys=self._challenge_keys()))
        elif isinstance(msg, P.Proof):
            self._on_proof(peer, adm.proof(peer, msg, self._member()))
        elif isinstance(msg, P.HbHello):
            hb = adm.heartbeat_hello(peer, msg, session, running=running, member=self._member())
            if hb is None:
                self.rejected += 1
            else:
                self.connections.joined(self._fd(), hb)

    def answer(self, peer: bytes, reply: P.Challenge | P.Reject) -> None:
        """Send ``reply`` to ``peer`` (a REJECT is counted and warned of)."""
        if isinstance(reply, P.Reject):
            self.rejected += 1
            self._warn.warning("rejected a federate: %s", reply.reason)
        assert self.server is not None
        self.server.send(peer, [reply.pack()])

    def member_keys(self) -> dict[int, bytes]:
        """The members' public keys now, by index (what CHALLENGE carries; empty without a
        key per member)."""
        creds = self.credentials
        return {} if creds is None else keys_by_index(self.layout, creds.current())

    def keys_news(self) -> dict[int, bytes] | None:
        """The members' public keys, when the federates joined may know others: the issuer
        changed them since they were told (a slot's fresh key, a key withdrawn), or the
        table changed while they joined. They must learn them (:class:`~..wire.protocol.Keys`),
        their data ports admitting only the current keys. None: nothing new (or no key per member)."""
        if self.credentials is None or self._told is None:
            return None
        keys = self.member_keys()
        if keys == self._told and not self._stale:
            return None
        self._told, self._stale = keys, False
        return keys

    def _challenge_keys(self) -> dict[int, bytes]:
        """The keys a CHALLENGE carries (the table now), noted as told."""
        keys = self.member_keys()
        if self._told is None:
            self._told = keys
        elif keys != self._told:
            self._stale = True
        return keys

    def _member(self) -> str | None:
        """The member whose key the message being handled came with (a key per member)."""
        assert self.server is not None
        return self.server.last_user if self.credentials is not None else None

    def _fd(self) -> int:
        assert self.server is not None
        return self.server.last_fd

    def _on_proof(self, peer: bytes, joined: int | Swap | P.Reject) -> None:
        if isinstance(joined, P.Reject):
            self.answer(peer, joined)
        elif isinstance(joined, Swap):
            assert self.members is not None  # (only a transient federate's: elastic)
            self.connections.hold(self._fd(), joined.federate)
            self.members.swap(joined.federate)
        else:
            self._joined(joined, self._fd(), peer)
