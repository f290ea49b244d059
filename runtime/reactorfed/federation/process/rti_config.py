"""The RTI's configuration, its phases and its run's summary (the server:
:mod:`.rti_server`, which exports these names too)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..coordination.clock_sync import CLOCK_SYNC_MODES
from ..io.curve import CurveKeys, federation_keys, plaintext_opted_out
from ..wire import protocol as P
from .defaults import DEFAULT_HEARTBEAT_TIMEOUT_NS, DEFAULT_LEAD_WINDOW_NS
from .member_keys import RtiCredentials
from .rti_members import MemberRecord, Schedule

__all__ = ["RtiConfig", "RtiPhase", "RtiSummary"]


class RtiPhase(StrEnum):
    """Where the RTI is in a federation's life (``/status``'s ``phase``)."""

    JOINING = "joining"  # accepting the declared federates
    RUNNING = "running"  # all joined: granting tags
    DONE = "done"  # every federate resigned
    FAILED = "failed"  # aborted (a federate failed or stopped answering)


@dataclass
class RtiConfig:
    federation_id: str
    #: the federation's shared secret, when its members share one (empty with ``credentials``)
    secret: bytes
    host: str = "127.0.0.1"
    port: int = 15045
    #: the program's own HEARTBEAT on the heartbeat connection, for the silence backstop
    #: (at least 10 s when on); ZeroMQ's heartbeats tell whether the process answers. At
    #: 200 ms, 256 federates sent the RTI 1,280 and got 1,280 such encrypted messages a
    #: second: more than half the RTI's CPU in a busy run (10.5 s of 95 s; 4.8 s at 1 s).
    heartbeat_ns: int = 1_000_000_000
    #: a federate whose connection answers nothing, not even ZeroMQ's own heartbeats
    #: (answered without the interpreter), for this long is dead; one whose process ended
    #: is found at once, from its closed connection
    liveness_ns: int = DEFAULT_HEARTBEAT_TIMEOUT_NS
    #: an optional backstop: a federate whose program sends nothing for this long is dead
    #: too. None (the default): never, since a process busy in one reaction, or starved of
    #: CPU, stays silent while its connection lives (--silence-timeout)
    silence_ns: int | None = None
    join_timeout_ns: int = 60_000_000_000
    start_delay_ns: int = 20_000_000
    max_message: int = P.RTI_MAX_MESSAGE
    #: plain-text TCP, for a single host whose users are all trusted (see FederateConfig)
    insecure_plaintext_tcp: bool = field(default_factory=plaintext_opted_out)
    #: elastic banks: replay these changes (tags after the start) instead of taking
    #: requests; or a JSON file of a run's record (:class:`.rti_members.MemberRecord`)
    membership: Schedule | None = None
    #: "centralized" (the RTI grants tags) or "decentralized" (no grant: each federate
    #: advances on its upstream peers' promises, or once its maxwait has passed; the RTI
    #: still admits the federates, fixes the start and agrees on a stop)
    coordination: str = "centralized"
    #: LF's ``clock-sync``: "off", "init" (the federates' clocks are synchronized with the
    #: RTI's before the start) or "on" (also while running, every ``clock_sync_period_ns``);
    #: the federates correct their clocks if theirs says so (FederateConfig.clock_sync)
    clock_sync: str = "off"
    clock_sync_period_ns: int = 5_000_000
    #: LF's ``trials``: exchanges before the start, and per estimate while running
    clock_sync_exchanges: int = 10
    #: how far (ns of logical time) a federate may run ahead of the federates downstream
    #: of it; None: without limit (:mod:`..coordination.rti_lead`)
    lead_window: int | None = DEFAULT_LEAD_WINDOW_NS
    #: a key per member (:mod:`.member_keys`): the RTI's own keypair and the members'
    #: public keys; None: one keypair per federation, derived from ``secret``
    credentials: RtiCredentials | None = None

    def __post_init__(self) -> None:
        if self.coordination not in ("centralized", "decentralized"):
            raise ValueError(f"coordination must be 'centralized' or 'decentralized', got {self.coordination!r}")
        if self.clock_sync not in CLOCK_SYNC_MODES:
            raise ValueError(f"clock_sync must be 'off', 'init' or 'on', got {self.clock_sync!r}")
        if self.clock_sync_period_ns <= 0 or self.clock_sync_exchanges < 1:
            raise ValueError("clock sync: the period must be positive and the exchanges at least 1")
        if self.credentials is not None and self.insecure_plaintext_tcp:
            raise ValueError("a key per member needs CurveZMQ: credentials and plain-text TCP exclude each other")
        if self.lead_window is not None and self.lead_window < 0:
            raise ValueError(f"lead_window must be at least 0 ns (or None: no window), got {self.lead_window}")

    def curve(self) -> CurveKeys | None:
        """The RTI's keys for its TCP links (None: plain text, opted out)."""
        if self.insecure_plaintext_tcp:
            return None
        if self.credentials is not None:
            return self.credentials.keys
        return federation_keys(self.secret, self.federation_id)


@dataclass(frozen=True)
class RtiSummary:
    federates: int
    grants: int
    messages: int
    rejected: int
    wall_ns: int
    last_tag_elapsed: tuple[int, int]
    #: CPU time this process used while serving (as a federate's run summary reports its own)
    cpu_ns: int = 0
    #: elastic banks: the members' joins and leaves, in order (empty without elastic banks)
    membership: tuple[MemberRecord, ...] = ()

    def __str__(self) -> str:
        t, m = self.last_tag_elapsed
        changes = f"; {len(self.membership)} membership changes" if self.membership else ""
        return (
            f"RTI: {self.federates} federates resigned; {self.grants} grants, {self.messages} control messages, "
            f"{self.rejected} rejected, in {self.wall_ns / 1e9:.3f} s wall, {self.cpu_ns / 1e9:.3f} s CPU; "
            f"last tag {t} ns +{m}{changes}"
        )
