"""A federate's configuration: where its RTI is, the federation's secret, where it listens
for its upstream peers, its timeouts, and how its data travels (message limit, shared
memory, Unix sockets, CurveZMQ).

Apart from the driver (:mod:`.federate`) so that the modules that only read it (joining,
the data links, the command line, threads) need not load the driver. The RTI's is
:class:`.rti_server.RtiConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..io.curve import CurveKeys, federation_keys, plaintext_opted_out
from .defaults import DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS, DEFAULT_HEARTBEAT_TIMEOUT_NS
from .member_keys import MemberCredentials

__all__ = ["FederateConfig"]


@dataclass
class FederateConfig:
    federation_id: str
    #: the federation's shared secret, when its members share one (empty with ``credentials``)
    secret: bytes
    rti: str  # tcp://host:port
    bind_host: str = "127.0.0.1"
    advertise_host: str | None = None
    #: the data port to listen on (0: any free port)
    data_port: int = 0
    #: the port peers are told to reach it on, when something between forwards it (a
    #: proxy, a NodePort); None: the port listened on
    advertise_port: int | None = None
    #: the program's own HEARTBEAT on the heartbeat connection, for the silence backstop
    #: (at least 10 s when on); ZeroMQ's heartbeats tell whether the process answers. At
    #: 200 ms, 256 federates sent the RTI 1,280 and got 1,280 such encrypted messages a
    #: second: more than half the RTI's CPU in a busy run (10.5 s of 95 s; 4.8 s at 1 s).
    heartbeat_ns: int = 1_000_000_000
    #: the RTI's connection answering nothing, not even ZeroMQ's heartbeats, for this long
    #: (or closing: at once) means the RTI is gone
    liveness_ns: int = DEFAULT_HEARTBEAT_TIMEOUT_NS
    #: an optional backstop: the RTI's program saying nothing for this long means it is
    #: gone too (None, the default: never; see RtiConfig.silence_ns)
    silence_ns: int | None = None
    join_timeout_ns: int = 60_000_000_000
    #: LF's ``advance-message-interval``: where a physical action reaches an output, how
    #: often this federate renews its promise bounded by physical time while it waits
    advance_message_interval_ns: int = DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS
    trusted_pickle: bool = False
    max_message: int = 1 << 30
    #: Also tell downstream peers directly the earliest tag this federate could still send
    #: them (a promise, on the data link), so that they advance without waiting for the
    #: RTI's grants (see "Peer promises" in docs/federation.md).
    peer_grants: bool = True
    #: Large numpy/torch payloads to a peer on this host go through a shared-memory ring
    #: (one per peer, made at the first such payload: 4 times its size, at least 8 MiB, at
    #: most this many bytes); 0: never.
    shm_bytes: int = 256 << 20
    #: payloads smaller than this go inline: below it a copy through the Unix socket costs
    #: less than the ring (its notice, its pages, and a new ring's reservation, 10-20 ms):
    #: rollout fragments of 26-34 KB went 7-18% faster inline (docs/federation.md)
    shm_min: int = 64 << 10
    #: Data to a peer on this host goes over a Unix socket, sent and read by the federates'
    #: own threads, instead of ZeroMQ over TCP (see :mod:`..io.local`); False: always TCP.
    unix_sockets: bool = True
    #: TCP links in plain text, for a single host whose users are all trusted
    #: ($REACTORFED_INSECURE_PLAINTEXT_TCP=1); by default every TCP link is CurveZMQ
    insecure_plaintext_tcp: bool = field(default_factory=plaintext_opted_out)
    #: LF's ``clock-sync``: this federate's clock follows the RTI's (a
    #: :class:`~reactorfed.time.clock.SyncedClock`), by the exchanges the RTI makes when
    #: its own ``clock_sync`` is on; False: it answers them and keeps its clock as it is
    clock_sync: bool = False
    #: LF's ``clock-sync-options``: ``trials`` (exchanges per estimate; the RTI's number
    #: too) and ``attenuation`` (a runtime estimate is divided by it)
    clock_sync_exchanges: int = 10
    clock_sync_attenuation: int = 10
    #: how far off a coded probe may arrive before its exchange is dropped (see ClockSyncOptions)
    clock_sync_guard_band_ns: int = 1_000_000
    #: LF's ``test-offset``: an artificial error of this federate's clock, (1 + its index)
    #: times this, for testing clock synchronization (which should remove it)
    clock_sync_test_offset_ns: int = 0
    #: a key per member (:mod:`.member_keys`): this federate's own keypair and the RTI's
    #: public key; None: one keypair per federation, derived from ``secret``
    credentials: MemberCredentials | None = None

    def __post_init__(self) -> None:
        if self.credentials is not None and self.insecure_plaintext_tcp:
            raise ValueError("a key per member needs CurveZMQ: credentials and plain-text TCP exclude each other")
        if self.advance_message_interval_ns < 1_000_000:
            # (its waits are polls with a timeout in ms: a shorter interval cannot be kept)
            raise ValueError(f"advance_message_interval_ns must be at least 1 ms (1000000), got {self.advance_message_interval_ns}")

    def curve(self) -> CurveKeys | None:
        """This federate's keys for its TCP links (None: plain text, opted out)."""
        if self.insecure_plaintext_tcp:
            return None
        if self.credentials is not None:
            return self.credentials.keys
        return federation_keys(self.secret, self.federation_id)

    @property
    def rti_key(self) -> bytes | None:
        """The public key the RTI must hold (None: the federation's own keypair)."""
        return None if self.credentials is None else self.credentials.rti_key

    def mac_key(self, session: bytes) -> bytes:
        """What keys the proofs between members (the heartbeat's HELLO, a data link's AUTH,
        a shared-memory ring's token): the shared secret, or with a key per member (no
        secret shared) the session the RTI gives to the members it admitted."""
        return session if self.credentials is not None else self.secret
