"""The typed control messages: federate <-> RTI, and what a peer sends besides data
(AUTH, SHM_OPEN, PROMISE, STOP_MARK). One :class:`~typing.NamedTuple` each
(:data:`Message`), with named fields (a tag as one :data:`~reactorfed.time.tag.TagT`, two
fields on the wire); ``msg.pack()`` gives its bytes and :func:`parse` returns one, checked
against the schema of :mod:`.kinds`. The membership rounds' messages are in
:mod:`.membership`; the data plane's, positional for speed, in :mod:`.data`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ...time.tag import TagT
from .clocksync import ClockProbe, ClockT1, ClockT3, ClockT4
from .kinds import (
    ABORT,
    ADMIT,
    AUTH,
    CHALLENGE,
    CHANGE,
    CLOCK_PROBE,
    CLOCK_T1,
    CLOCK_T3,
    CLOCK_T4,
    CREDIT,
    FAIL,
    HB_HELLO,
    HEARTBEAT,
    HELLO,
    JOIN_REQ,
    KEYS,
    LEAD,
    LEAVE_REQ,
    LOST,
    LTC,
    NAMES,
    PEER,
    PROGRESS,
    PROMISE,
    PROOF,
    PTAG,
    QUERY,
    QUERY_REPLY,
    REFUSED,
    REJECT,
    RELEASE,
    RESIGN,
    ROUND_END,
    SHM_OPEN,
    START,
    STOP_GRANTED,
    STOP_MARK,
    STOP_REPLY,
    STOP_REQ,
    STOP_REQUEST,
    TAG,
    WATCH,
    ProtocolError,
    packb,
    unpackb,
    validated,
)
from .membership import (
    Admit,
    Change,
    JoinReq,
    LeaveReq,
    Lost,
    Peer,
    Query,
    QueryReply,
    Refused,
    RoundEnd,
)

__all__ = [
    "BUILD", "KIND", "TYPED", "Abort", "Auth", "Challenge", "Credit", "Fail", "HbHello", "Heartbeat", "Hello", "Keys", "Lead", "Ltc", "Message",
    "Progress", "Promise", "Proof", "Ptag", "Reject", "Release", "Resign", "ShmOpen", "Start", "StopGranted", "StopMark",
    "StopReply", "StopReq", "StopRequest", "Tag", "Watch", "parse",
]

# One class per control message, named after its type (STOP_REQ: StopReq), fields in wire
# order; a tag is one field here and two (t, m) on the wire. ``pack()`` gives exactly the
# bytes of the positional array; ``_of`` builds one from an array the schema checks passed
# (with tuple.__new__: a NamedTuple's own __new__ is Python, and slower). As tuples,
# messages of different types with equal fields compare equal (StopReq(t) ==
# StopReply(t)): dispatch on the type (isinstance, match), never on ==.
_new = tuple.__new__


class Hello(NamedTuple):
    """federate -> RTI: the first message of a federate joining; ``nonce`` is the one the
    RTI's proof (:class:`Challenge`) must cover."""

    version: int
    federation_id: str
    name: str  # the federate's
    digest: str  # the program's
    endpoint: str  # the federate's data port, as peers reach it
    nonce: bytes  # 16 bytes

    def pack(self) -> bytes:
        return packb([HELLO, self.version, self.federation_id, self.name, self.digest, self.endpoint, self.nonce])

    @classmethod
    def _of(cls, m: list[Any]) -> Hello:
        return _new(cls, (m[1], m[2], m[3], m[4], m[5], m[6]))


class Proof(NamedTuple):
    """federate -> RTI: the federate's proof of the secret, over the RTI's nonce."""

    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return packb([PROOF, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> Proof:
        return _new(cls, (m[1],))


class Ltc(NamedTuple):
    """federate -> RTI: the latest tag complete and the next event tag; the messages sent
    to each downstream peer since the last report (``{peer: [count, t, m]}``, the earliest
    one's tag) and received from each upstream peer (cumulative)."""

    tag: TagT
    net: TagT
    sent: dict[int, list[int]]
    received: dict[int, int]

    def pack(self) -> bytes:
        return packb([LTC, *self.tag, *self.net, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Ltc:
        return _new(cls, ((m[1], m[2]), (m[3], m[4]), m[5], m[6]))


class StopReq(NamedTuple):
    """federate -> RTI: this federate asks to stop at ``tag``."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([STOP_REQ, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopReq:
        return _new(cls, ((m[1], m[2]),))


class StopReply(NamedTuple):
    """federate -> RTI: the earliest tag this federate can stop at (the answer to a
    :class:`StopRequest`)."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([STOP_REPLY, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopReply:
        return _new(cls, ((m[1], m[2]),))


class Resign(NamedTuple):
    """federate -> RTI: done at ``tag``; the final counts (as in :class:`Ltc`)."""

    tag: TagT
    sent: dict[int, list[int]]
    received: dict[int, int]

    def pack(self) -> bytes:
        return packb([RESIGN, *self.tag, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Resign:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Heartbeat(NamedTuple):
    """Both directions, on the heartbeat connection: alive."""

    def pack(self) -> bytes:
        return packb([HEARTBEAT])

    @classmethod
    def _of(cls, m: list[Any]) -> Heartbeat:
        return _new(cls, ())


class Fail(NamedTuple):
    """federate -> RTI: this federate failed (the federation is aborted)."""

    reason: str

    def pack(self) -> bytes:
        return packb([FAIL, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Fail:
        return _new(cls, (m[1],))


class Progress(NamedTuple):
    """federate -> RTI, on the heartbeat connection: the program's progress for a person
    (:mod:`reactorfed.observe.progress`): ``done`` of ``total`` (None: not known) and its
    figures."""

    done: int | None
    total: int | None
    figures: dict[str, int | float]

    def pack(self) -> bytes:
        return packb([PROGRESS, self.done, self.total, self.figures])

    @classmethod
    def _of(cls, m: list[Any]) -> Progress:
        return _new(cls, (m[1], m[2], m[3]))


class HbHello(NamedTuple):
    """federate -> RTI: the heartbeat connection's join, proved over the session."""

    federation_id: str
    name: str  # the federate's
    nonce: bytes  # 16 bytes, never used twice
    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return packb([HB_HELLO, self.federation_id, self.name, self.nonce, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> HbHello:
        return _new(cls, (m[1], m[2], m[3], m[4]))


class Challenge(NamedTuple):
    """RTI -> federate: the RTI's nonce, and its proof of the secret over the federate's;
    with a key per member, the members' public keys instead (its MAC zeros: no secret is
    shared). They come before any START, so that every data port admits its upstream
    peers' keys before they connect."""

    nonce: bytes  # 16 bytes
    mac: bytes  # 32 bytes
    #: the members' public keys (32 raw bytes) by index (empty: one keypair per federation):
    #: a federate's data port admits its upstream peers' keys, and it expects its
    #: downstream peers' of their ports
    keys: dict[int, bytes] = {}

    def pack(self) -> bytes:
        return packb([CHALLENGE, self.nonce, self.mac, self.keys])

    @classmethod
    def _of(cls, m: list[Any]) -> Challenge:
        return _new(cls, (m[1], m[2], m[3]))


class Reject(NamedTuple):
    """RTI -> federate: refused (the handshake, or a federate dropped)."""

    reason: str

    def pack(self) -> bytes:
        return packb([REJECT, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Reject:
        return _new(cls, (m[1],))


class Start(NamedTuple):
    """RTI -> federate: every federate joined; the federation starts (or, for an elastic
    slot's process that connects while it runs: it runs, and this process is to join)."""

    start: int  # the start time (ns)
    peers: dict[int, str]  # downstream peer -> its data address
    session: bytes  # 16 bytes: keys the proofs between peers and the heartbeat's
    federate: int  # this federate's index in the RTI's layout
    #: the elastic slots absent at the start, by the RTI's program (its widths win over a
    #: process's own: the program's digest does not cover the initial width)
    absent: tuple[int, ...] = ()
    #: this process asks to join (JOIN_REQ) before it runs: its slot is absent at the start,
    #: or the federation runs already (a new process for a slot, present before or not)
    join: bool = False
    #: the federation runs under decentralized coordination: no grants come from the RTI
    decentralized: bool = False
    #: how far (ns of logical time) a federate may run ahead of its downstream federates
    #: (None: without limit); see :mod:`..coordination.rti_lead`
    window: int | None = None

    def pack(self) -> bytes:
        return packb([START, self.start, self.peers, self.session, self.federate, list(self.absent), self.join,
                      self.decentralized, self.window])

    @classmethod
    def _of(cls, m: list[Any]) -> Start:
        return _new(cls, (m[1], m[2], m[3], m[4], tuple(m[5]), m[6], m[7], m[8]))


class Tag(NamedTuple):
    """RTI -> federate: tag advance grant, every tag up to ``tag``, once ``counts``
    messages from each upstream peer have arrived."""

    tag: TagT
    counts: dict[int, int]

    def pack(self) -> bytes:
        return packb([TAG, *self.tag, self.counts])

    @classmethod
    def _of(cls, m: list[Any]) -> Tag:
        return _new(cls, ((m[1], m[2]), m[3]))


class Ptag(NamedTuple):
    """RTI -> federate: provisional tag advance grant, ``tag`` itself (zero-delay cycles),
    once ``counts`` messages from each upstream peer have arrived."""

    tag: TagT
    counts: dict[int, int]

    def pack(self) -> bytes:
        return packb([PTAG, *self.tag, self.counts])

    @classmethod
    def _of(cls, m: list[Any]) -> Ptag:
        return _new(cls, ((m[1], m[2]), m[3]))


class Lead(NamedTuple):
    """RTI -> federate: the lead window lets it process every tag up to ``tag``."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([LEAD, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> Lead:
        return _new(cls, ((m[1], m[2]),))


class Credit(NamedTuple):
    """Data receiver -> its upstream peer: every tag up to ``tag`` is processed, and with it
    what the peer sent for those tags (see :mod:`..coordination.flow`)."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([CREDIT, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> Credit:
        return _new(cls, ((m[1], m[2]),))


class Keys(NamedTuple):
    """RTI -> federate: the members' public keys (32 raw bytes) by index, all of them, once
    the issuer changed one after this federate joined (an elastic slot's fresh key, a key
    withdrawn): its data port admits its upstream peers' from now on, and its links to a
    peer that joins later expect that peer's."""

    keys: dict[int, bytes]

    def pack(self) -> bytes:
        return packb([KEYS, self.keys])

    @classmethod
    def _of(cls, m: list[Any]) -> Keys:
        return _new(cls, (m[1],))


class Watch(NamedTuple):
    """RTI -> federate: report at once when the next event reaches ``tag`` (an upstream
    federate waits at the edge of its lead window for this one's progress)."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([WATCH, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> Watch:
        return _new(cls, ((m[1], m[2]),))


class StopRequest(NamedTuple):
    """RTI -> federate: a federate asked to stop at ``tag``: answer with a :class:`StopReply`."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([STOP_REQUEST, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopRequest:
        return _new(cls, ((m[1], m[2]),))


class StopGranted(NamedTuple):
    """RTI -> federate: the agreed stop tag."""

    tag: TagT

    def pack(self) -> bytes:
        return packb([STOP_GRANTED, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopGranted:
        return _new(cls, ((m[1], m[2]),))


class Abort(NamedTuple):
    """RTI -> federate: the federation failed."""

    reason: str

    def pack(self) -> bytes:
        return packb([ABORT, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Abort:
        return _new(cls, (m[1],))


class Auth(NamedTuple):
    """peer -> peer: the first message on a data connection, proving who sends."""

    sender: int  # the sender's federate index
    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return packb([AUTH, self.sender, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> Auth:
        return _new(cls, (m[1], m[2]))


class Release(NamedTuple):
    """RTI -> a federate that resigned: every message it sent has been received, or its
    receiver resigned or failed. Until then it keeps its links open: closing them would
    drop what is still queued in its process (see :mod:`..coordination.rti_core`)."""

    def pack(self) -> bytes:
        return packb([RELEASE])

    @classmethod
    def _of(cls, m: list[Any]) -> Release:
        return _new(cls, ())


# The next three travel as items of a BATCH: ``item()`` is what goes into one.


class ShmOpen(NamedTuple):
    """peer -> peer (a batch item): payloads from this sender may come through the
    shared-memory segment ``name``."""

    name: str

    def item(self) -> list[Any]:
        return [SHM_OPEN, self.name]

    def pack(self) -> bytes:
        return packb(self.item())

    @classmethod
    def _of(cls, m: list[Any]) -> ShmOpen:
        return _new(cls, (m[1],))


class Promise(NamedTuple):
    """peer -> peer (a batch item): the sender will send nothing more before ``tag`` plus
    each link's delay."""

    tag: TagT

    def item(self) -> list[Any]:
        return [PROMISE, *self.tag]

    def pack(self) -> bytes:
        return packb(self.item())

    @classmethod
    def _of(cls, m: list[Any]) -> Promise:
        return _new(cls, ((m[1], m[2]),))


class StopMark(NamedTuple):
    """peer -> peer (a batch item): a :class:`Promise` made knowing of a stop (or
    resigned), as are all of the sender's next ones."""

    tag: TagT

    def item(self) -> list[Any]:
        return [STOP_MARK, *self.tag]

    def pack(self) -> bytes:
        return packb(self.item())

    @classmethod
    def _of(cls, m: list[Any]) -> StopMark:
        return _new(cls, ((m[1], m[2]),))


Message = (
    Hello | Proof | Ltc | StopReq | StopReply | Resign | Heartbeat | Fail | HbHello | Challenge | Reject | Start | Tag
    | Ptag | StopRequest | StopGranted | Abort | Auth | ShmOpen | Promise | StopMark | QueryReply | JoinReq | LeaveReq
    | Query | Change | Admit | Refused | RoundEnd | Release | Peer | Lost | Progress | ClockT1 | ClockT3 | ClockT4
    | ClockProbe | Lead | Watch | Keys | Credit
)

#: message type -> its class (the data plane's positional messages have none)
TYPED: dict[int, type[Message]] = {
    HELLO: Hello, PROOF: Proof, LTC: Ltc, STOP_REQ: StopReq, STOP_REPLY: StopReply, RESIGN: Resign,
    HEARTBEAT: Heartbeat, FAIL: Fail, HB_HELLO: HbHello, CHALLENGE: Challenge, REJECT: Reject, START: Start,
    TAG: Tag, PTAG: Ptag, STOP_REQUEST: StopRequest, STOP_GRANTED: StopGranted, ABORT: Abort, AUTH: Auth,
    SHM_OPEN: ShmOpen, PROMISE: Promise, STOP_MARK: StopMark, QUERY_REPLY: QueryReply, JOIN_REQ: JoinReq,
    LEAVE_REQ: LeaveReq, QUERY: Query, CHANGE: Change, ADMIT: Admit, REFUSED: Refused, ROUND_END: RoundEnd,
    RELEASE: Release, PEER: Peer, LOST: Lost, PROGRESS: Progress, CLOCK_T1: ClockT1, CLOCK_T3: ClockT3,
    CLOCK_T4: ClockT4, CLOCK_PROBE: ClockProbe, LEAD: Lead, WATCH: Watch, KEYS: Keys,
    CREDIT: Credit,
}
#: a message class -> its type
KIND: dict[type[Message], int] = {cls: kind for kind, cls in TYPED.items()}
BUILD: dict[int, Callable[[list[Any]], Message]] = {kind: cls._of for kind, cls in TYPED.items()}



def parse(data: bytes | memoryview, allowed: frozenset[int] | None = None) -> Message:
    """Decode and validate one control message (of a type in ``allowed``, if given)."""
    msg = validated(unpackb(data), allowed, "a message")
    build = BUILD.get(msg[0])
    if build is None:
        raise ProtocolError(f"{NAMES[msg[0]]} is not a control message")
    return build(msg)
