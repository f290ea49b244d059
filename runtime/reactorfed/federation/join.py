"""Joining the federation: the federate's handshake with the RTI, which ends with the
agreed start time, the session key and the peers' data addresses.

Both sides prove the shared secret (HMAC challenge-response, each over the other's
nonce). Kept apart from the coordinator: it runs once, before the run, and hands the run
nothing but the START message.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import Clock
from . import protocol as P
from .errors import FederationError
from .transport import Client, Poller

if TYPE_CHECKING:
    from .federate import FederateConfig

__all__ = ["Joined", "colocated", "join"]

log = logging.getLogger("reactorfed.federate")


@dataclass(frozen=True, slots=True)
class Joined:
    """What the RTI's START message gives a federate that joined."""

    start: int  # the federation's start time (ns)
    peers: dict[int, str]  # downstream peer -> its data address
    session: bytes  # keys the proofs between peers, and the heartbeat's
    index: int  # this federate's number in the RTI's layout


def join(rti: Client, cfg: FederateConfig, name: str, digest: str, endpoint: str, clock: Clock) -> Joined:
    """Join as federate ``name`` (data port at ``endpoint``) over the RTI link ``rti``."""
    nonce = os.urandom(16)
    rti.send([P.Hello(P.PROTOCOL_VERSION, cfg.federation_id, name, digest, endpoint, nonce).pack()])
    deadline = clock.now() + cfg.join_timeout_ns
    msg = _await_rti(rti, cfg, name, clock, deadline, {P.CHALLENGE, P.REJECT}, "the RTI's challenge")
    if msg[0] == P.REJECT:
        raise FederationError(f"the RTI rejected federate {name}: {msg[1]}")
    rti_nonce, rti_mac = msg[1], msg[2]
    if not P.mac_equal(rti_mac, P.mac(cfg.secret, "rti", nonce, cfg.federation_id, name)):
        raise FederationError(
            f"federate {name} and the RTI at {cfg.rti} do not share a secret: the RTI's proof does "
            "not match this federate's secret (a wrong secret here, or not the federation's RTI)"
        )
    rti.send([P.Proof(P.mac(cfg.secret, "federate", rti_nonce, cfg.federation_id, name)).pack()])
    msg = _await_rti(rti, cfg, name, clock, deadline, {P.START, P.REJECT},
                     "the start of the federation (are all federates up?)")
    if msg[0] == P.REJECT:
        raise FederationError(f"the RTI rejected federate {name}: {msg[1]}")
    return Joined(int(msg[1]), msg[2], msg[3], msg[4])


def _await_rti(rti: Client, cfg: FederateConfig, name: str, clock: Clock, deadline: int, kinds: set[int],
               what: str) -> list[Any]:
    poller = Poller(rti)
    while True:
        left = deadline - clock.now()
        if left <= 0:
            raise FederationError(f"federate {name} timed out waiting for {what} from the RTI at {cfg.rti}")
        if not poller.wait(min(left // 1_000_000 + 1, 200)):
            continue
        frames = rti.recv()
        if not frames:
            continue
        try:
            msg = P.parse(frames[0], frozenset(kinds | {P.ABORT}))
        except P.ProtocolError as e:
            log.warning("ignoring a bad message from the RTI: %s", e)
            continue
        if msg[0] == P.ABORT:
            raise FederationError(f"the federation was aborted: {msg[1]}")
        return msg


def colocated(endpoint: str, peers: dict[int, str]) -> set[int]:
    """The peers whose data address is on the host of ``endpoint`` (this federate's)."""
    mine = _host(endpoint)
    return {d for d, ep in peers.items() if _host(ep) == mine or (_loopback(mine) and _loopback(_host(ep)))}


def _host(endpoint: str) -> str:
    return endpoint.removeprefix("tcp://").rsplit(":", 1)[0]


def _loopback(host: str) -> bool:
    return host.startswith("127.") or host in ("localhost", "::1", "[::1]")
