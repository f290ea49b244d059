"""Joining the federation: the federate's handshake with the RTI, which ends with the
agreed start time, the session key and the peers' data addresses.

Both sides prove the shared secret (HMAC challenge-response, each over the other's
nonce), inside the CurveZMQ connection that already proved it (see :mod:`..io.curve`):
a federate whose encrypted connection the RTI refuses is told why, at once, instead of
waiting out the join timeout. Kept apart from the coordinator: it runs once, before the
run, and hands the run nothing but the START message.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ...time.clock import Clock
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


def join(rti: Client, cfg: FederateConfig, name: str, digest: str, endpoint: str, clock: Clock,
         sync: FederateClockSync) -> Joined:
    """Join as federate ``name`` (data port at ``endpoint``) over the RTI link ``rti``;
    ``sync`` answers the RTI's initial clock synchronization, which comes before START."""
    nonce = os.urandom(16)
    rti.send([P.Hello(P.PROTOCOL_VERSION, cfg.federation_id, name, digest, endpoint, nonce).pack()])
    deadline = clock.now() + cfg.join_timeout_ns
    challenge = _await_rti(rti, cfg, name, clock, deadline, P.Challenge, "the RTI's challenge")
    if not P.mac_equal(challenge.mac, P.mac(cfg.secret, "rti", nonce, cfg.federation_id, name)):
        raise FederationError(
            f"federate {name} and the RTI at {cfg.rti} do not share a secret: the RTI's proof does "
            "not match this federate's secret (a wrong secret here, or not the federation's RTI)"
        )
    rti.send([P.Proof(P.mac(cfg.secret, "federate", challenge.nonce, cfg.federation_id, name)).pack()])
    start = _await_rti(rti, cfg, name, clock, deadline, P.Start, "the start of the federation (are all federates up?)",
                       sync)
    sync.started()
    return Joined(start.start, start.peers, start.session, start.federate, start.absent, start.join,
                  start.decentralized, start.window)


def _await_rti(rti: Client, cfg: FederateConfig, name: str, clock: Clock, deadline: int, expected: type[_M],
               what: str, sync: FederateClockSync | None = None) -> _M:
    """The RTI's next message, of type ``expected``; its REJECT or ABORT raises. With
    ``sync``, clock synchronization's messages meanwhile are answered."""
    allowed = frozenset({P.KIND[expected], P.REJECT, P.ABORT}) | (CLOCK_SYNC if sync is not None else frozenset())
    monitor = Monitor(rti)  # for handshakes that fail (a connection made later, or again)
    try:
        with Poller(rti, monitor) as poller:
            return _read_rti(rti, monitor, poller, cfg, name, clock, deadline, expected, allowed, what, sync)
    finally:
        monitor.close()


def _read_rti(rti: Client, monitor: Monitor, poller: Poller, cfg: FederateConfig, name: str, clock: Clock,
              deadline: int, expected: type[_M], allowed: frozenset[int], what: str,
              sync: FederateClockSync | None) -> _M:
    last = ""
    refusals = Refusals(cfg.rti)
    while True:
        left = deadline - clock.now()
        if left <= 0:
            raise FederationError(f"federate {name} timed out waiting for {what} from the RTI at {cfg.rti}")
        ready = poller.wait(min(left // 1_000_000 + 1, 200))
        if monitor in ready:
            refused = monitor.refused()
            last = refused[-1] if refused else last
            if refused and refusals.for_good(monitor.handshake_failures, monitor.explained_failures,
                                             monitor.handshakes):
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
