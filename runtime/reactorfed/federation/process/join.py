"""Joining the federation: the federate's handshake with the RTI, which ends with the
agreed start time, the session key and the peers' data addresses.

With a key per member (:mod:`.member_keys`), the CurveZMQ handshake has proved both ends
(the RTI holds the key this federate expects; the RTI checks this federate's key against
the name it claims), and the RTI's challenge carries the members' public keys, which the
data port admits before any peer can connect. With one key per federation, both sides
prove the shared secret (HMAC challenge-response, each over the other's nonce), inside the
CurveZMQ connection that already proved it (see :mod:`..io.curve`). Either way, a federate
whose encrypted connection the RTI refuses is told why, at once, instead of waiting out
the join timeout; but for its own key, with a key per member, when the RTI does not know it
(yet): its issuer may have made it a moment ago, and the RTI's table of keys catches up
with a lag (in Kubernetes, a ConfigMap reaches the RTI's volume up to a minute later). That
refusal is retried, connecting again, until the join timeout, and said once at INFO. A key
the RTI knows, presented as another member, is refused at once (the RTI's REJECT).
Kept apart from the coordinator: it runs once, before the run, and hands the run nothing
but the START message.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ...time.clock import Clock
from ..coordination.admission import NO_MAC
from ..errors import FederationError
from ..io.curve import Refusals
from ..io.transport import Client, Monitor, Poller
from ..wire import protocol as P
from .clock_sync import FROM_RTI as CLOCK_SYNC

if TYPE_CHECKING:
    from .clock_sync import FederateClockSync
    from .federate_config import FederateConfig

__all__ = ["Joined", "colocated", "join"]

log = logging.getLogger("reactorfed.federate")

_M = TypeVar("_M", P.Challenge, P.Start)
#: how long a federate whose key the RTI refused waits before it connects again
KEY_RETRY_NS = 1_000_000_000


class _KeyNotAdmitted(Exception):
    """The RTI refused this federate's key, which it may yet admit (a key per member)."""


@dataclass(frozen=True, slots=True)
class Joined:
    """What the RTI's START message gives a federate that joined."""

    start: int  # the federation's start time (ns)
    peers: dict[int, str]  # downstream peer -> its data address
    session: bytes  # keys the proofs between peers, and the heartbeat's
    index: int  # this federate's number in the RTI's layout
    absent: tuple[int, ...] = ()  # the elastic slots absent at the start, by the RTI
    join: bool = False  # this process asks to join a running federation (an elastic slot's)
    decentralized: bool = False  # the RTI sends no grants (decentralized coordination)
    window: int | None = None  # the lead window (ns; None: none)
    keys: dict[int, bytes] = field(default_factory=dict)  # the members' public keys (a key per member)
    key_refused: int = 0  # how often the RTI refused this federate's key before it admitted it


def join(rti: Client, cfg: FederateConfig, name: str, digest: str, endpoint: str, clock: Clock,
         sync: FederateClockSync, on_keys: Callable[[dict[int, bytes]], None] | None = None) -> Joined:
    """Join as federate ``name`` (data port at ``endpoint``) over the RTI link ``rti``;
    ``sync`` answers the RTI's initial clock synchronization, which comes before START.
    ``on_keys``: given the members' public keys (a key per member) before this federate
    proves itself, so before any peer can have its START."""
    nonce = os.urandom(16)
    keys: dict[int, bytes] = {}
    deadline = clock.now() + cfg.join_timeout_ns
    refused = 0
    while True:
        rti.send([P.Hello(P.PROTOCOL_VERSION, cfg.federation_id, name, digest, endpoint, nonce).pack()])
        try:
            challenge = _await_rti(rti, cfg, name, clock, deadline, P.Challenge, "the RTI's challenge",
                                   key_refused=refused)
            break
        except _KeyNotAdmitted as e:
            if not refused:
                log.info("federate %s: the RTI at %s does not admit its key yet (%s); the RTI's member table may "
                         "not have caught up with a key just issued: connecting again until the join timeout (%d s)",
                         name, cfg.rti, e, cfg.join_timeout_ns // 10**9)
            refused += 1
            clock.wait_until(min(deadline, clock.now() + KEY_RETRY_NS), threading.Event())
            rti.reconnect()
    if cfg.credentials is not None:
        # A key per member: the RTI proved itself by holding the key this federate expects
        # of it (the handshake), and it checks this federate's key; no secret to MAC with.
        keys = challenge.keys
        if on_keys is not None:
            on_keys(keys)  # before the proof: no START (so no peer's connection) comes before
        rti.send([P.Proof(NO_MAC).pack()])
    else:
        if not P.mac_equal(challenge.mac, P.mac(cfg.secret, "rti", nonce, cfg.federation_id, name)):
            raise FederationError(
                f"federate {name} and the RTI at {cfg.rti} do not share a secret: the RTI's proof does "
                "not match this federate's secret (a wrong secret here, or not the federation's RTI)"
            )
        rti.send([P.Proof(P.mac(cfg.secret, "federate", challenge.nonce, cfg.federation_id, name)).pack()])
    start = _await_rti(rti, cfg, name, clock, deadline, P.Start, "the start of the federation (are all federates up?)",
                       sync, on_keys=on_keys)
    sync.started()
    if rti.monitor is not None:  # (the join's; nothing reads it from here on)
        rti.monitor.close()
        rti.monitor = None
    return Joined(start.start, start.peers, start.session, start.federate, start.absent, start.join,
                  start.decentralized, start.window, keys, refused)


def _await_rti(rti: Client, cfg: FederateConfig, name: str, clock: Clock, deadline: int, expected: type[_M],
               what: str, sync: FederateClockSync | None = None, key_refused: int = 0,
               on_keys: Callable[[dict[int, bytes]], None] | None = None) -> _M:
    """The RTI's next message, of type ``expected``; its REJECT or ABORT raises. With
    ``sync``, clock synchronization's messages meanwhile are answered; with ``on_keys``, a
    KEYS (the table changed while the federation gathered) is handed to it. ``key_refused``:
    how many times the RTI refused this federate's key so far (:class:`_KeyNotAdmitted`)."""
    allowed = (frozenset({P.KIND[expected], P.REJECT, P.ABORT}) | (CLOCK_SYNC if sync is not None else frozenset())
               | (frozenset({P.KEYS}) if on_keys is not None else frozenset()))
    # For handshakes that fail: the client's own monitor, which watched the connection from
    # before it was made (a refusal that came before this look is not missed), else one
    # from now on (a connection made later, or again).
    own = rti.monitor is None
    monitor = Monitor(rti) if rti.monitor is None else rti.monitor
    try:
        with Poller(rti, monitor) as poller:
            return _read_rti(rti, monitor, poller, cfg, name, clock, deadline, expected, allowed, what, sync,
                             key_refused, on_keys)
    finally:
        if own:
            monitor.close()


def _read_rti(rti: Client, monitor: Monitor, poller: Poller, cfg: FederateConfig, name: str, clock: Clock,
              deadline: int, expected: type[_M], allowed: frozenset[int], what: str,
              sync: FederateClockSync | None, key_refused: int,
              on_keys: Callable[[dict[int, bytes]], None] | None) -> _M:
    last = ""
    refusals = Refusals(cfg.rti, key_may_come=cfg.credentials is not None)
    while True:
        left = deadline - clock.now()
        if left <= 0:
            if key_refused:
                raise FederationError(
                    f"federate {name} timed out waiting for {what} from the RTI at {cfg.rti}: the RTI refused its key "
                    f"{key_refused} times (a key not issued to this member or withdrawn, or not this federation's RTI)")
            raise FederationError(f"federate {name} timed out waiting for {what} from the RTI at {cfg.rti}")
        ready = poller.wait(min(left // 1_000_000 + 1, 200))
        if monitor in ready:
            refused = monitor.refused()
            last = refused[-1] if refused else last
            if refused and refusals.key_refused(monitor.key_refusals, monitor.handshakes):
                raise _KeyNotAdmitted(last)
            if refused and refusals.for_good(monitor.handshake_failures, monitor.explained_failures,
                                             monitor.handshakes, monitor.key_refusals):
                if cfg.credentials is not None:
                    raise FederationError(
                        f"federate {name} and the RTI at {cfg.rti} do not accept each other's keys: the encrypted "
                        f"handshake failed {monitor.handshake_failures} times ({last}). A key not issued to this "
                        "member or withdrawn, not this federation's RTI, or something between that alters the bytes")
                raise FederationError(
                    f"federate {name} and the RTI at {cfg.rti} do not share a secret: the encrypted handshake "
                    f"failed {monitor.handshake_failures} times ({last}). A wrong secret or federation id here, "
                    "not this federation's RTI, or something between that alters the bytes")
        if rti not in ready:
            continue
        while True:
            frames = rti.recv()
            if frames is None:
                break
            if not frames:
                continue
            try:
                msg = P.parse(frames[0], allowed)
            except P.ProtocolError as e:
                log.warning("ignoring a bad message from the RTI: %s", e)
                continue
            if isinstance(msg, P.Abort):
                raise FederationError(f"the federation was aborted: {msg.reason}")
            if isinstance(msg, P.Reject):
                raise FederationError(f"the RTI rejected federate {name}: {msg.reason}")
            if sync is not None and P.KIND[type(msg)] in CLOCK_SYNC:
                sync.on_message(msg, lambda b: rti.send([b]), initial=True)
                continue
            if isinstance(msg, P.Keys) and on_keys is not None:
                on_keys(msg.keys)
                continue
            assert isinstance(msg, expected)
            return msg


def colocated(endpoint: str, peers: dict[int, str]) -> set[int]:
    """The peers whose data address is on the host of ``endpoint`` (this federate's)."""
    mine = _host(endpoint)
    return {d for d, ep in peers.items() if _host(ep) == mine or (_loopback(mine) and _loopback(_host(ep)))}


def _host(endpoint: str) -> str:
    return endpoint.removeprefix("tcp://").rsplit(":", 1)[0]


def _loopback(host: str) -> bool:
    return host.startswith("127.") or host in ("localhost", "::1", "[::1]")
