"""Who is in the federation, pure: the RTI's side of joining and of losing a federate.

:class:`Admission` is the RTI's door. A federate's control connection says HELLO and gets
a challenge, answers it with a PROOF and is in; its heartbeat connection is admitted with
a MAC keyed by the session. With a key per member (``secret`` None), the transport has
authenticated both ends already and names the member each connection's key was issued to:
a HELLO, PROOF or heartbeat HELLO is admitted only from the member it claims to be
(:func:`.credentials.claim_refusal`), and the challenge's MACs are left empty (zeros: no
secret is shared to key them). Strangers get a reason (a wrong federation, a wrong program,
a duplicate) or nothing. Half-finished handshakes are bounded in number and in time, so a
flood of HELLOs can neither exhaust memory nor push a real federate's handshake out. The
federation starts once its initial members are in; a slot of an elastic bank (issue 19)
may also come later, while it runs, and its process is forgotten (:meth:`Admission.forget`)
once gone, so that its slot can be taken again.

A second process for a federate that has joined is a duplicate, refused, except for a
transient federate's (LF's ``@transient``) while the federation runs: that is a *hot swap*
(:class:`Swap`). Its handshake completes (only a federate that proves itself can make the
present one leave), then it is held, one at a time per federate, until the present process
is forgotten, and takes its slot then (:meth:`Admission.take_over`).

:class:`Departures` judges connections that closed before their federate resigned.

Both are sans-IO, as :class:`.rti_core.RtiCore` is: the server passes the time, the fresh
nonces and the peers' routing ids (opaque bytes), and sends what comes back.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..wire import protocol as P
from .credentials import claim_refusal
from .layout import Layout

__all__ = ["NO_MAC", "Admission", "Departures", "PeerKind", "Swap"]

#: the challenge's MACs with a key per member: no secret is shared to key them (the
#: transport authenticated both ends, and the RTI checks whose key each connection has)
NO_MAC = bytes(32)

#: Half-finished handshakes: a real federate answers its challenge within milliseconds,
#: so entries expire after a while, and a flood of strangers' HELLOs would have to exceed
#: this many between a real HELLO and its PROOF to push it out.
MAX_PENDING = 4096
PENDING_TTL_NS = 10_000_000_000


class PeerKind(Enum):
    """What a connection is to the RTI, which fixes the messages it may send."""

    CONTROL = "control"  # a joined federate's control connection
    HEARTBEAT = "heartbeat"  # a joined federate's heartbeat connection
    PENDING = "pending"  # said HELLO, was challenged, owes a PROOF
    HELD = "held"  # a hot swap's new process, proved: waits for the present one to leave
    STRANGER = "stranger"


@dataclass(frozen=True, slots=True)
class Swap:
    """A PROOF's outcome for a transient federate's new process while its present one
    runs: held (a hot swap); the present one is to leave, and this one takes its slot
    once that one's process is forgotten."""

    federate: int


@dataclass(frozen=True, slots=True)
class _Pending:
    federate: int
    nonce: bytes  # the RTI's challenge nonce
    since: int
    endpoint: str  # the federate's data address, as peers reach it
    swap: bool = False  # its federate had joined when it said HELLO: a hot swap, if it proves itself


class Admission:
    """The federates joined (by control and heartbeat connection) and the handshakes
    under way."""

    def __init__(self, layout: Layout, federation_id: str, secret: bytes | None, *,
                 max_pending: int = MAX_PENDING, pending_ttl_ns: int = PENDING_TTL_NS) -> None:
        self.layout = layout
        self.federation_id = federation_id
        self._secret = secret
        self._max_pending = max_pending
        self._ttl = pending_ttl_ns
        self._pending: OrderedDict[bytes, _Pending] = OrderedDict()  # oldest first
        #: control connection -> federate, and back
        self.control: dict[bytes, int] = {}
        self.control_of: dict[int, bytes] = {}
        #: heartbeat connection -> federate
        self.heartbeat: dict[bytes, int] = {}
        #: federate -> its data address, as its peers reach it
        self.endpoints: dict[int, str] = {}
        self._hb_nonces: set[bytes] = set()
        #: hot swaps under way: federate -> its new process's control connection and data address
        self._swaps: dict[int, tuple[bytes, str]] = {}
        self._held: dict[bytes, int] = {}  # and back
        #: the federates the start waits for: all but the elastic slots absent at first
        self._initial = layout.initial_members()

    # -- what is known ---------------------------------------------------------------------
    def kind(self, peer: bytes) -> PeerKind:
        if peer in self.control:
            return PeerKind.CONTROL
        if peer in self.heartbeat:
            return PeerKind.HEARTBEAT
        if peer in self._pending:
            return PeerKind.PENDING
        if peer in self._held:
            return PeerKind.HELD
        return PeerKind.STRANGER

    @property
    def pending(self) -> list[bytes]:
        """The peers whose handshake is under way, oldest first."""
        return list(self._pending)

    def pending_federate(self, peer: bytes) -> int | None:
        p = self._pending.get(peer)
        return None if p is None else p.federate

    def challenge_nonce(self, peer: bytes) -> bytes | None:
        p = self._pending.get(peer)
        return None if p is None else p.nonce

    @property
    def complete(self) -> bool:
        """Has every federate present at the start joined?"""
        if not self.layout.elastic:  # (every federate: counting them is enough)
            return len(self.control_of) == len(self.layout.names)
        return all(f in self.control_of for f in self._initial)

    def missing(self) -> list[str]:
        """The federates present at the start that have not joined, by name."""
        return [n for i, n in enumerate(self.layout.names) if i in self._initial and i not in self.control_of]

    def peers(self) -> list[bytes]:
        """Every connection the RTI knows: joined, heartbeat and pending (for an abort)."""
        return [*self.control, *self.heartbeat, *self._pending, *self._held]

    def swappable(self, f: int) -> bool:
        """Whether a new process for ``f`` may take over from its present one: ``f`` is a
        transient federate (a bank's member is not: the operator gives each slot one
        process, and a second one is an accident)."""
        g = self.layout.elastic_of(f)
        return g is not None and g.transient

    # -- handshakes --------------------------------------------------------------------------
    def hello(self, peer: bytes, msg: P.Hello, now: int, nonce: bytes, *, open_: bool,
              member: str | None = None, keys: dict[int, bytes] | None = None) -> P.Challenge | P.Reject:
        """A HELLO: the challenge to send (carrying ``nonce``, fresh), or why not.
        ``open_``: the federation still takes federates (it has not started); a slot of
        an elastic bank whose process is not connected is taken at any time (it then asks
        to join: the RTI's core decides when), and so is a transient federate's while the
        federation runs (a hot swap, if it proves itself: :meth:`proof`). ``member``: whom
        the connection's key was issued to, and ``keys`` the members' public keys (a key
        per member: the challenge carries them)."""
        name = msg.name
        if msg.version != P.PROTOCOL_VERSION:
            return P.Reject(f"protocol version {msg.version}; this RTI speaks version {P.PROTOCOL_VERSION}")
        if msg.federation_id != self.federation_id:
            return P.Reject(f"wrong federation {msg.federation_id!r} (this RTI runs {self.federation_id!r})")
        if name not in self.layout.names:
            return P.Reject(f"no federate {name!r} in this federation (expected: {', '.join(self.layout.names)})")
        if self._secret is None and (refused := claim_refusal(member, name)) is not None:
            return P.Reject(refused)
        f = self.layout.index(name)
        swap = f in self.control_of
        if swap and (open_ or not self.swappable(f)):
            return P.Reject(f"duplicate federate {name!r}: it has already joined")
        if swap and f in self._swaps:
            return P.Reject(f"transient federate {name!r}: a hot swap of it is under way already (one at a time)")
        if not open_ and self.layout.elastic_of(f) is None:
            return P.Reject("the federation has already started")
        if msg.digest != self.layout.digest:
            return P.Reject(f"federate {name!r} runs a different program (digest {msg.digest}, expected {self.layout.digest})")
        if not msg.endpoint.startswith("tcp://"):
            return P.Reject("bad data endpoint")
        self._pending.pop(peer, None)  # a second HELLO on one connection: the latest counts
        self._pending[peer] = _Pending(f, nonce, now, msg.endpoint, swap)
        while self._pending:
            oldest = next(iter(self._pending.values()))
            if len(self._pending) <= self._max_pending and now - oldest.since <= self._ttl:
                break
            self._pending.popitem(last=False)
        if self._secret is None:
            return P.Challenge(nonce, NO_MAC, keys or {})
        return P.Challenge(nonce, P.mac(self._secret, "rti", msg.nonce, msg.federation_id, name))

    def proof(self, peer: bytes, msg: P.Proof, member: str | None = None) -> int | Swap | P.Reject:
        """A PROOF from a peer that was challenged: the federate now joined, a hot swap
        held (:class:`Swap`), or why not (``member``: as for :meth:`hello`)."""
        p = self._pending.pop(peer)
        f = p.federate
        name = self.layout.names[f]
        if self._secret is None:
            if (refused := claim_refusal(member, name)) is not None:
                return P.Reject(refused)
        elif not P.mac_equal(msg.mac, P.mac(self._secret, "federate", p.nonce, self.federation_id, name)):
            return P.Reject(f"federate {name!r} failed authentication (wrong secret?)")
        if f in self.control_of:
            if not p.swap:  # (it joined meanwhile: the federation had not started)
                return P.Reject(f"duplicate federate {name!r}: it has already joined")
            if f in self._swaps:
                return P.Reject(f"transient federate {name!r}: a hot swap of it is under way already (one at a time)")
            self._swaps[f] = (peer, p.endpoint)
            self._held[peer] = f
            return Swap(f)
        self.control[peer] = p.federate
        self.control_of[p.federate] = peer
        self.endpoints[p.federate] = p.endpoint
        return p.federate

    def heartbeat_hello(self, peer: bytes, msg: P.HbHello, session: bytes, *, running: bool,
                        member: str | None = None) -> int | None:
        """A heartbeat connection's HELLO: the federate it belongs to, or None (refused
        without a word: a stranger learns nothing). Each nonce is accepted once. With a key
        per member, only from the member the connection's key was issued to (``member``),
        its MAC keyed by the session alone."""
        name, nonce = msg.name, msg.nonce
        if (not running or msg.federation_id != self.federation_id or name not in self.layout.names
                or nonce in self._hb_nonces):
            return None
        if self._secret is None and claim_refusal(member, name) is not None:
            return None
        if not P.mac_equal(msg.mac, P.mac(self._secret or session, "hb", session, name, nonce)):
            return None
        self._hb_nonces.add(nonce)
        f = self.heartbeat[peer] = self.layout.index(name)
        return f

    def forget(self, f: int) -> None:
        """Elastic slot ``f``'s process is gone (it left, or failed): its connections are
        strangers from now on (what they still send is refused), and its slot may be
        joined again by a new process, with a new handshake."""
        peer = self.control_of.pop(f, None)
        if peer is not None:
            del self.control[peer]
        for p in [p for p, g in self.heartbeat.items() if g == f]:
            del self.heartbeat[p]
        self.endpoints.pop(f, None)

    def take_over(self, f: int) -> bytes | None:
        """``f``'s held new process (a hot swap), once its last one is forgotten: it has
        joined now, over the connection returned. None: no swap of ``f`` is held, or its
        last process is still here."""
        if f in self.control_of or f not in self._swaps:
            return None
        peer, endpoint = self._swaps.pop(f)
        del self._held[peer]
        self.control[peer] = f
        self.control_of[f] = peer
        self.endpoints[f] = endpoint
        return peer

    def drop_swap(self, f: int) -> bytes | None:
        """``f``'s held new process is given up (its connection closed, or the swap was
        refused): the connection it had, if any."""
        held = self._swaps.pop(f, None)
        if held is None:
            return None
        del self._held[held[0]]
        return held[0]


class Departures:
    """Federates whose connection to the RTI closed before they resigned.

    Both of a federate's connections close when its process ends; after a clean RESIGN on
    one, the other may close first: a short grace (at most a second, at most the liveness
    limit) tells the two apart. The grace counts only while every message received so far
    has been read (``drained``): with a backlog (hundreds of federates reporting at once), a
    RESIGN can wait in the queue longer than the grace (a 256-federate chain was failed so,
    its federates all done). A backlog that never clears (a flood) defers the verdict ten
    graces at most.
    """

    def __init__(self, liveness_ns: int) -> None:
        self.liveness_ns = liveness_ns
        self.grace_ns = min(1_000_000_000, liveness_ns)
        self._since: dict[int, int] = {}  # federate -> when a connection of it closed
        #: the last connection the transport refused (a wrong key, a stranger, bytes that
        #: failed to decrypt): when, and why
        self._refusal: tuple[int, str] | None = None

    def __bool__(self) -> bool:
        return bool(self._since)

    def __contains__(self, f: int) -> bool:
        return f in self._since

    def closed(self, f: int, now: int) -> None:
        """A connection of federate ``f`` (which has not resigned) closed at ``now``."""
        self._since.setdefault(f, now)

    def judge(self, now: int, drained: bool, resigned: Callable[[int], bool]) -> int | None:
        """The first federate found dead, if any (judged once: an elastic member's death
        ends nothing, and the next call looks at the others); federates that resigned
        meanwhile are forgiven."""
        for f, since in list(self._since.items()):
            if resigned(f):
                del self._since[f]
            elif (now - since >= self.grace_ns and drained) or now - since >= 10 * self.grace_ns:
                del self._since[f]
                return f
        return None

    def refused(self, now: int, reason: str) -> None:
        """The transport refused a connection at ``now``, for ``reason``."""
        self._refusal = (now, reason)

    def refused_then(self, now: int) -> str:
        """What the transport refused shortly before a federate's connection was judged
        closed, to name with the verdict: a connection whose bytes were altered or injected
        on the way stops decrypting, and the heartbeats close it up to the liveness time
        later (then comes the grace), so the refusal explains the close."""
        r = self._refusal
        if r is None or now - r[0] > self.liveness_ns + 10 * self.grace_ns:
            return ""
        return f"; the RTI refused a connection then: {r[1]}"
