"""A federate's links to its downstream peers (:class:`DownstreamLinks`): opened when it
joins, at the addresses the RTI gave, and, with elastic banks, opened again to a slot's
new process when its address comes (its CHANGE or PEER). :class:`.outbound.Outbound`
sends over them."""

from __future__ import annotations

from ...time.tag import NEVER, TagT
from ..coordination.federate_core import FederateCore
from ..coordination.layout import Layout
from ..io.local import LocalClient, split_endpoint
from ..io.transport import Poller
from ..wire import protocol as P
from .federate_config import FederateConfig
from .join import colocated
from .links import AwaitingLink, DataLink, DataPort, connect_downstream
from .outbound import Outbound

__all__ = ["DownstreamLinks"]


class DownstreamLinks:
    """The links of federate ``me`` to its downstream peers (see the module)."""

    def __init__(self, cfg: FederateConfig, layout: Layout, me: int, core: FederateCore,
                 clients: dict[int, DataLink], out: Outbound) -> None:
        self.cfg = cfg
        self.layout = layout
        self.me = me
        self.core = core
        self.clients = clients  # downstream peer -> its link (what ``out`` sends over)
        self.out = out
        self.peers: dict[int, str] = {}  # downstream peer -> its host
        self.session = b""
        self.endpoint = ""  # this federate's data address
        #: set once joined: the data port (it watches the links' handshakes), the poller
        #: (it watches the links over Unix sockets)
        self.port: DataPort | None = None
        self.poller: Poller | None = None
        self._peer_eps: dict[int, str] = {}  # downstream peer -> the address its link went to
        self.link_joins: dict[int, TagT] = {}  # elastic downstream peer -> the join its link is for

    def connect(self, endpoint: str, session: bytes, peers: dict[int, str], port: DataPort) -> None:
        """Joined: a link to every downstream peer at the address the RTI gave."""
        self.endpoint, self.session, self.port = endpoint, session, port
        self.peers = {d: split_endpoint(ep)[0] for d, ep in peers.items()}
        self.out.colocated = colocated(endpoint, self.peers)
        self.clients.update(connect_downstream(self.cfg, self.layout, self.me, session, peers, self.out.colocated,
                                               keys=port.keys))
        self._peer_eps = {d: peers[d] for d in self.clients if d in peers}
        port.watch(self.clients)  # until their encrypted handshakes succeed

    def connect_joiner(self, d: int, endpoint: str, joins: TagT) -> None:
        """Downstream slot ``d``'s incarnation joining at ``joins`` has its data address (its
        CHANGE or PEER): open a link to it."""
        if self._peer_eps.get(d) == endpoint and self.link_joins.setdefault(d, joins) == joins:
            return  # linked already: its address came with START, or with its CHANGE before
        self.out.flush()  # what waits for an earlier incarnation's process goes to it
        old = self.clients.pop(d, None)
        if old is not None and not isinstance(old, AwaitingLink):  # an earlier process: its link and ring go
            if isinstance(old, LocalClient) and self.poller is not None:
                self.poller.remove_sender(old)
            old.close(0)
            self.out.drop_ring(d)
        self.link_joins[d] = joins
        peers = {d: endpoint}
        self.peers[d] = split_endpoint(endpoint)[0]
        self.out.colocated |= colocated(self.endpoint, peers)
        links = connect_downstream(self.cfg, self.layout, self.me, self.session, peers, self.out.colocated, only=[d],
                                   keys=self.port.keys if self.port is not None else None)
        self.clients.update(links)
        self._peer_eps[d] = endpoint
        if self.port is not None:
            self.port.watch(links)
        c = links[d]
        if isinstance(c, LocalClient) and self.poller is not None:
            self.poller.add_sender(c)
        if isinstance(old, AwaitingLink):  # what was sent before its address came, after the AUTH
            for frames in old.waiting:
                c.send(frames)
        promised = self.core.reports.promised
        if promised[0] != NEVER:
            # The latest promise may have been made while the joiner was absent (not sent
            # to it), and only a later one goes out: without this one the joiner and this
            # federate could each wait for the other's next promise (a loop over a delay).
            if d in self.layout.scc[self.me] and joins < promised:
                # On a zero-delay cycle with the joiner, it was made without the joiner's
                # messages, which may make this federate send at the join tag itself: it
                # holds only up to there (the cycle's members go on by the RTI's PTAGs, or
                # by their maxwaits under decentralized coordination).
                promised = joins
            self.out.post(d, P.Promise(promised).item())

    @property
    def unix_links(self) -> int:
        """Downstream peers this federate sends to over their Unix sockets (not TCP)."""
        return sum(isinstance(c, LocalClient) for c in self.clients.values())
