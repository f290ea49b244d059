"""A federate's data links: the port its upstream peers connect to (TCP, and a Unix socket
for those on this host), the links it opens to its downstream peers, and the links that
close before their peer finished.

The driver (:mod:`.federate`) reads the port's sockets in its poll loop; this module owns
making, watching and closing them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..coordination.credentials import data_admission
from ..coordination.layout import Layout
from ..errors import FederationError, LinkDownError
from ..io.curve import Refusals, warn_plaintext
from ..io.local import LocalClient, LocalServer, split_endpoint, with_local
from ..io.transport import Client, Monitor, Server
from ..wire import protocol as P
from .throttle import Throttle

if TYPE_CHECKING:
    from .federate_config import FederateConfig

__all__ = ["ELASTIC_LINK_GRACE_NS", "LINK_GRACE_NS", "AwaitingLink", "DataLink", "DataPort", "connect_downstream"]

log = logging.getLogger("reactorfed.federate")

#: How long an upstream peer's data link may be down before the federation ends (see
#: :meth:`DataPort.judge`): longer than the RTI's grace for a closed connection (1 s),
#: so that a process that ended is named by the RTI as such.
LINK_GRACE_NS = 2_000_000_000
#: The same for an elastic bank's member: its process may end (the federation goes on),
#: and the RTI says so (LOST: see judge) within its grace for a closed connection, up to
#: ten of them under a backlog (Departures). A link down longer without that verdict was
#: cut while its process runs: messages on it may be lost, and the federation ends.
ELASTIC_LINK_GRACE_NS = 12_000_000_000


class AwaitingLink:
    """The link to a downstream elastic slot whose process has not said where it is (a
    replayed join: its CHANGE went out at the start without its address, its PEER comes
    when it is admitted). A federate may reach the join's tag first (over the delay of the
    joiner's link to it): what it sends waits here, in order, and goes out on the link
    once it opens (:meth:`.federate_links.DownstreamLinks.connect_joiner`)."""

    def __init__(self) -> None:
        self.waiting: list[list[Any]] = []

    def send(self, frames: Sequence[Any]) -> None:
        self.waiting.append(list(frames))

    def close(self, linger_ms: int = 0) -> None:
        self.waiting.clear()


#: a federate's link to a downstream peer
DataLink = Client | LocalClient | AwaitingLink


class DataPort:
    """Where this federate's upstream peers connect: a TCP port (watched for connections
    that close) and, when some may be on this host, a Unix socket."""

    def __init__(self, cfg: FederateConfig, layout: Layout, me: int) -> None:
        self.cfg = cfg
        self.layout = layout
        self.me = me
        # With CurveZMQ, ZeroMQ's heartbeats too: libzmq 4.3.5 stops reading a connection
        # whose message failed to decrypt when a monitor watches its refusals (the event
        # clobbers errno), instead of closing it; the heartbeats then close it.
        curve = cfg.curve()
        if curve is None:
            warn_plaintext(f"federate {layout.names[me]}")
        #: the members' public keys, from the RTI's CHALLENGE (a key per member; empty: one per federation)
        self.keys: dict[int, bytes] = {}
        self._admitted: dict[bytes, str] = {}  # the upstream peers' keys -> their index (learn_keys)
        self.tcp = Server(f"tcp://{cfg.bind_host}:{cfg.data_port}", max_message=cfg.max_message, curve=curve,
                          liveness_ms=None if curve is None else max(1, cfg.liveness_ns // 1_000_000),
                          admit=self._admitted.get if cfg.credentials is not None else None)
        self.monitor = Monitor(self.tcp)
        #: the last connection refused (a wrong key, a stranger, bytes that failed to
        #: decrypt): when, and why
        self.refusal: tuple[int, str] | None = None
        self._warn = Throttle(log)
        self.local: LocalServer | None = None
        self._fds: dict[int, int] = {}  # an upstream peer's TCP connection -> the peer
        self.down: dict[int, int] = {}  # upstream peer -> when its data link closed
        #: this federate's TCP links to downstream peers whose handshake has not succeeded yet
        self.opening: dict[int, Client] = {}
        self._refusals: dict[int, Refusals] = {}
        self._elastic = frozenset(f for g in layout.elastic for f in g.slots)  # (see judge)
        #: the upstream peers over coordinated links: a peer only physically linked here
        #: (LF's ``~>``) sends no Mark of its end, and its link's close is not judged
        self._coordinated = frozenset(layout.direct_upstream(me))

    def addresses(self) -> tuple[str, str]:
        """The TCP endpoint and the address to advertise (with the Unix socket's path when
        there is one: peers on this host use it). Opens the Unix socket."""
        cfg = self.cfg
        port = cfg.advertise_port or self.tcp.endpoint.rsplit(":", 1)[1]
        endpoint = f"tcp://{cfg.advertise_host or cfg.bind_host}:{port}"
        if cfg.unix_sockets and self.layout.data_upstream(self.me):
            try:
                self.local = LocalServer(max_message=cfg.max_message)
            except OSError as e:
                log.warning("no Unix socket for peers on this host (%s): they send over TCP", e)
            else:
                return endpoint, with_local(endpoint, self.local.path)
        return endpoint, endpoint

    def learn_keys(self, keys: dict[int, bytes]) -> None:
        """The members' public keys (the CHALLENGE's, or the RTI's KEYS later): this port admits
        its upstream peers' from now on, each as that peer, and this federate expects its
        downstream peers' of theirs."""
        self.keys = dict(keys)
        admitted = data_admission(self.layout, self.me, keys)
        # (the ZAP handler's thread reads this dict: changed in place, never empty between)
        self._admitted.update(admitted)
        for key in [k for k in self._admitted if k not in admitted]:
            del self._admitted[key]

    def key_refusal(self, claimed: int) -> str | None:
        """Why the last message read from the TCP port, an AUTH claiming to come from
        ``claimed``, may not (its connection's key is another member's); None: it may."""
        if self.cfg.credentials is None or not self.tcp.encrypted:
            return None
        user, names = self.tcp.last_user, self.layout.names
        if user == str(claimed):
            return None
        if user is None:  # (the ZAP handler admitted it when the connection opened)
            return f"its key was withdrawn since its connection opened (it claimed to be {names[claimed]})"
        holder = names[int(user)] if user.isdigit() and int(user) < len(names) else "no member"
        return f"its key was issued to {holder}, not to {names[claimed]}"

    def authenticated(self, peer: int) -> None:
        """Upstream ``peer`` proved itself with the last message read from the TCP port. If
        that connection has closed already (its close was seen before this message was
        read: a link cut, or refused, right after it opened), the link is down. (An elastic
        slot's new process: its last one's connections are no longer watched.)"""
        fd = self.tcp.last_fd
        if peer in self._elastic:
            for old in [old for old, p in self._fds.items() if p == peer]:
                del self._fds[old]
            self.down.pop(peer, None)
        if self.monitor.was_closed(fd):
            self.down.setdefault(peer, -1)  # since the next look (see judge)
        else:
            self._fds[fd] = peer

    def closed(self, now: int, finished: set[int]) -> None:
        """Connections to the TCP port closed: an upstream peer's, before it sent its last
        (``finished``: its Mark of FOREVER came), is a link down; a stranger's is nothing."""
        for reason in self.monitor.refused():
            self.refusal = (now, reason)
            self._warn.warning("refused a connection to the data port: %s", reason, kind=reason)
        for fd in self.monitor.disconnected():
            peer = self._fds.pop(fd, None)
            if peer is not None and peer not in finished and peer in self._coordinated:
                self.down.setdefault(peer, now)

    def watch(self, links: dict[int, DataLink]) -> None:
        """Watch this federate's TCP links to its downstream peers until their (encrypted)
        handshakes succeed (see :meth:`judge`)."""
        self.opening.update({d: c for d, c in links.items() if isinstance(c, Client) and c.monitor is not None})

    def _opened(self, name: str) -> None:
        """A link whose handshake the downstream peer's port refuses, again and again (a
        wrong key, or bytes altered on the way), would leave it waiting for ever for data
        that never comes: raise :class:`LinkDownError` naming the link and the reason."""
        for d, c in list(self.opening.items()):
            m = c.monitor
            assert m is not None
            refused = m.refused()
            if m.handshakes:
                m.close()
                c.monitor = None
                del self.opening[d]
            elif refused and self._refusals.setdefault(d, Refusals(c.endpoint)).for_good(
                    m.handshake_failures, m.explained_failures, m.handshakes):
                raise LinkDownError(
                    f"the data link from {name} to {self.layout.names[d]} cannot be opened: its encrypted handshake "
                    f"failed {m.handshake_failures} times ({refused[-1] if refused else 'no detail'})")

    def judge(self, now: int, finished: set[int], name: str, lost: set[int] | frozenset[int] = frozenset()) -> None:
        """A data link that closed before its peer finished may have lost messages: ZeroMQ
        reconnects, but what was in flight is gone, and the new connection is a stranger
        here (it is not authenticated again). Unless the peer's last message arrives within
        the grace, or the RTI ends the federation first (a process that ended: it knows,
        and names it better), raise :class:`LinkDownError` naming the link. An elastic
        bank's member whose process ended is no fault: the RTI says so (``lost``: its LOST
        came, and the core stopped waiting for it), within :data:`ELASTIC_LINK_GRACE_NS`.
        Also judges the links this federate opens (:meth:`watch`)."""
        if self.opening:
            self._opened(name)
        names = self.layout.names
        for peer, since in list(self.down.items()):
            if since < 0:
                self.down[peer] = since = now
            if peer in finished or peer in lost:
                del self.down[peer]
            elif now - since >= (ELASTIC_LINK_GRACE_NS if peer in self._elastic else LINK_GRACE_NS):
                # (a connection that failed to decrypt is closed by the heartbeats: up to
                # the liveness time after its refusal)
                refused = self.refusal is not None and self.refusal[0] >= since - LINK_GRACE_NS - self.cfg.liveness_ns
                why = f"; this port refused a connection then: {self.refusal[1]}" if refused and self.refusal else ""
                cause = ("the network cut it, and the RTI did not say its process ended" if peer in self._elastic
                         else "the network cut it, or its process ended")
                raise LinkDownError(
                    f"the data link from {names[peer]} to {name} closed before {names[peer]} finished "
                    f"({cause}): messages on it may be lost{why}")

    def close(self) -> None:
        self.monitor.close()
        self.tcp.close()
        if self.local is not None:
            self.local.close()


def connect_downstream(cfg: FederateConfig, layout: Layout, me: int, session: bytes, peers: dict[int, str],
                       colocated: set[int], only: list[int] | None = None,
                       keys: dict[int, bytes] | None = None) -> dict[int, DataLink]:
    """A link to every downstream peer (``only``: to those; at the addresses the RTI gave:
    ``peers``), each opened with this federate's proof of who it is. A peer on this host (``colocated``)
    gets its Unix socket if this process can reach it (another pod's path does not exist
    here), else TCP: with a key per member, to a server that must hold the peer's key
    (``keys``, from START)."""
    links: dict[int, DataLink] = {}
    elastic = {f for g in layout.elastic for f in g.slots}
    for d in (sorted(layout.data_downstream(me)) if only is None else only):
        if d not in peers and d in elastic:
            # an elastic slot whose process is not connected: its CHANGE or PEER will say where
            # it is (what is sent meanwhile waits: a replayed join's tag may come first)
            links[d] = AwaitingLink()
            continue
        if d not in peers:
            raise FederationError(f"the RTI sent no address for federate {layout.names[d]}")
        tcp, path = split_endpoint(peers[d])
        c: Client | LocalClient | None = None
        if path is not None and cfg.unix_sockets and d in colocated:
            try:
                c = LocalClient(path)
            except OSError as e:
                log.debug("sending to %s over TCP: its Unix socket %s: %s", layout.names[d], path, e)
        if c is None:
            server_key = None
            if cfg.credentials is not None and not cfg.insecure_plaintext_tcp:
                server_key = (keys or {}).get(d)
                if server_key is None:
                    raise FederationError(f"the RTI sent no public key for federate {layout.names[d]}")
            c = Client(tcp, max_message=cfg.max_message, curve=cfg.curve(), server_key=server_key, watch=True)
        c.send([P.Auth(me, P.mac(cfg.mac_key(session), "data", session, me, d)).pack()])
        links[d] = c
    return links
