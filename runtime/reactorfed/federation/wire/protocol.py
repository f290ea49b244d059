"""The control protocol between federates and the RTI, and the data-plane headers.

Every message is one msgpack array whose first element is the message type. Nothing
received is trusted: :func:`parse` checks every field's type and range and raises
:class:`ProtocolError` for anything else, so a hostile or broken peer cannot crash the
RTI or a federate.

Control messages (federate <-> RTI, and a peer's AUTH, SHM_OPEN, PROMISE and STOP_MARK)
are typed: one :class:`~typing.NamedTuple` each (:data:`Message`), with named fields (a
tag as one :data:`~reactorfed.tag.TagT`, two fields on the wire); ``msg.pack()`` gives its
bytes and :func:`parse` returns one. The data plane's messages, one per payload (DATA,
ABSENT, SHM_DATA, DATA_INLINE, the BATCH that carries them, the compact form), stay
positional lists, read with :func:`parse_batch` and :func:`check_item`: see there.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

import msgpack

from ...tag import TagT

__all__ = [
    "FROM_RTI", "KIND", "PROTOCOL_VERSION", "TYPED", "Abort", "Admit", "Auth", "Challenge", "Change", "Fail", "HbHello",
    "Heartbeat", "Hello", "Item", "JoinReq", "LeaveReq", "Ltc", "Message", "Promise", "Proof", "ProtocolError",
    "Ptag", "Query", "QueryReply", "Refused", "Reject", "Release", "Resign", "RoundEnd", "ShmOpen", "Start", "StopGranted", "StopMark",
    "StopReply", "StopReq", "StopRequest", "Tag", "check_item", "compact_meta", "is_compact", "mac", "mac_equal",
    "pack", "pack_compact", "parse", "parse_batch", "parse_compact",
]

PROTOCOL_VERSION = 2  # 2: a resigned federate waits for RELEASE before closing its links
#: the largest control message (RTI connections refuse bigger frames)
RTI_MAX_MESSAGE = 64 * 1024

# federate -> RTI
HELLO = 1  # version, federation id, federate name, program digest, data endpoint, nonce
PROOF = 2  # mac
# 3 was NET (a next event tag alone): every report is an LTC, which carries the NET
LTC = 4  # t, m, net_t, net_m, sent, recv
STOP_REQ = 5  # t, m
STOP_REPLY = 6  # t, m
RESIGN = 7  # t, m, sent, recv
HEARTBEAT = 8  # (both directions)
FAIL = 9  # reason
HB_HELLO = 10  # federation id, federate name, nonce: the heartbeat channel's join
QUERY_REPLY = 11  # round, t, m: the earliest tag this federate can apply a round's changes at
JOIN_REQ = 12  # physical time: an elastic member (admitted by the handshake) asks to join
LEAVE_REQ = 13  # an elastic member asks to leave
# RTI -> federate
CHALLENGE = 20  # nonce, mac
REJECT = 21  # reason
START = 22  # start time, peers {index: endpoint}, session, federate index
TAG = 23  # t, m, counts
PTAG = 24  # t, m, counts
STOP_REQUEST = 25  # t, m
STOP_GRANTED = 26  # t, m
ABORT = 27  # reason
QUERY = 28  # round, t, m, [[member, joined], ...]: a membership round asks (answer: QUERY_REPLY)
CHANGE = 29  # t, m, member, joined: from this tag on, the member is present (or absent)
ADMIT = 30  # t, m, sent, recv: a joining member starts at this tag, with these message counts
REFUSED = 31  # joined, reason: a member's join or leave request was not carried out
ROUND_END = 32  # round: the round is over, its CHANGEs came before (a federate's barrier lifts)
RELEASE = 33  # a resigned federate's messages were all received (or their receivers are gone)
#: what the RTI sends a running federate on its control connection
FROM_RTI = frozenset({TAG, PTAG, STOP_REQUEST, STOP_GRANTED, ABORT, HEARTBEAT, REJECT})
# federate -> federate (data plane)
DATA = 40  # link, t, m, codec, meta  (+ one payload frame)
ABSENT = 41  # link, t, m
AUTH = 42  # sender index, mac
SHM_OPEN = 44  # segment name: payloads from this sender may come through it
SHM_DATA = 45  # link, t, m, codec, meta, offset, length  (the payload is in the shared segment)
BATCH = 46  # [item, ...]: what a federate sends one peer at once; each item is a data-plane
#   message below as a list; DATA items' payloads follow as frames, in order
DATA_INLINE = 47  # link, t, m, codec, meta, payload bytes: a small DATA inside a batch
PROMISE = 43  # t, m: the sender will send nothing more before this tag plus each link's delay
STOP_MARK = 48  # t, m: a PROMISE made knowing of a stop (or resigned), as are the sender's next

NAMES = {
    HELLO: "HELLO", PROOF: "PROOF", LTC: "LTC", STOP_REQ: "STOP_REQ",
    STOP_REPLY: "STOP_REPLY", RESIGN: "RESIGN", HEARTBEAT: "HEARTBEAT", FAIL: "FAIL",
    HB_HELLO: "HB_HELLO", CHALLENGE: "CHALLENGE", REJECT: "REJECT", START: "START", TAG: "TAG",
    PTAG: "PTAG", STOP_REQUEST: "STOP_REQUEST", STOP_GRANTED: "STOP_GRANTED", ABORT: "ABORT",
    DATA: "DATA", ABSENT: "ABSENT", AUTH: "AUTH", PROMISE: "PROMISE",
    SHM_OPEN: "SHM_OPEN", SHM_DATA: "SHM_DATA", BATCH: "BATCH", DATA_INLINE: "DATA_INLINE",
    STOP_MARK: "STOP_MARK", QUERY_REPLY: "QUERY_REPLY", JOIN_REQ: "JOIN_REQ", LEAVE_REQ: "LEAVE_REQ",
    QUERY: "QUERY", CHANGE: "CHANGE", ADMIT: "ADMIT", REFUSED: "REFUSED", ROUND_END: "ROUND_END",
    RELEASE: "RELEASE",
}

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_MAX_STR = 4096
_MAX_ENTRIES = 4096

# Field kinds: "i" int64, "u" int >= 0, "s" short str, "b16" 16 bytes, "b32" 32 bytes,
# "counts" {int >= 0: int >= 0}, "sent" {int >= 0: [count, t, m]}, "peers" {int: str},
# "bin" bytes, "items" a non-empty list of lists (each checked by check_item), "bool",
# "changes" a non-empty list of [member (int >= 0), joined (bool)], "any".
_SCHEMA: dict[int, tuple[str, ...]] = {
    HELLO: ("u", "s", "s", "s", "s", "b16"),
    PROOF: ("b32",),
    LTC: ("i", "u", "i", "u", "sent", "counts"),
    STOP_REQ: ("i", "u"),
    STOP_REPLY: ("i", "u"),
    RESIGN: ("i", "u", "sent", "counts"),
    HEARTBEAT: (),
    FAIL: ("s",),
    HB_HELLO: ("s", "s", "b16", "b32"),
    CHALLENGE: ("b16", "b32"),
    REJECT: ("s",),
    START: ("i", "peers", "b16", "u"),
    TAG: ("i", "u", "counts"),
    PTAG: ("i", "u", "counts"),
    STOP_REQUEST: ("i", "u"),
    STOP_GRANTED: ("i", "u"),
    ABORT: ("s",),
    DATA: ("u", "i", "u", "u", "any"),
    ABSENT: ("u", "i", "u"),
    AUTH: ("u", "b32"),
    PROMISE: ("i", "u"),
    SHM_OPEN: ("s",),
    SHM_DATA: ("u", "i", "u", "u", "any", "u", "u"),
    BATCH: ("items",),
    DATA_INLINE: ("u", "i", "u", "u", "any", "bin"),
    STOP_MARK: ("i", "u"),
    QUERY_REPLY: ("u", "i", "u"),
    JOIN_REQ: ("i",),
    LEAVE_REQ: (),
    QUERY: ("u", "i", "u", "changes"),
    CHANGE: ("i", "u", "u", "bool"),
    ADMIT: ("i", "u", "counts", "counts"),
    REFUSED: ("bool", "s"),
    ROUND_END: ("u",),
    RELEASE: (),
}


class ProtocolError(ValueError):
    """A message that does not follow the protocol."""


def _packb(msg: list[Any]) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


def pack(kind: int, *fields: Any) -> bytes:
    """A positional message, ``[kind, *fields]``, on the wire (a BATCH: the typed messages
    have their own ``pack()``)."""
    return _packb([kind, *fields])


# -- typed messages ---------------------------------------------------------------------
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
        return _packb([HELLO, self.version, self.federation_id, self.name, self.digest, self.endpoint, self.nonce])

    @classmethod
    def _of(cls, m: list[Any]) -> Hello:
        return _new(cls, (m[1], m[2], m[3], m[4], m[5], m[6]))


class Proof(NamedTuple):
    """federate -> RTI: the federate's proof of the secret, over the RTI's nonce."""

    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return _packb([PROOF, self.mac])

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
        return _packb([LTC, *self.tag, *self.net, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Ltc:
        return _new(cls, ((m[1], m[2]), (m[3], m[4]), m[5], m[6]))


class StopReq(NamedTuple):
    """federate -> RTI: this federate asks to stop at ``tag``."""

    tag: TagT

    def pack(self) -> bytes:
        return _packb([STOP_REQ, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopReq:
        return _new(cls, ((m[1], m[2]),))


class StopReply(NamedTuple):
    """federate -> RTI: the earliest tag this federate can stop at (the answer to a
    :class:`StopRequest`)."""

    tag: TagT

    def pack(self) -> bytes:
        return _packb([STOP_REPLY, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopReply:
        return _new(cls, ((m[1], m[2]),))


class Resign(NamedTuple):
    """federate -> RTI: done at ``tag``; the final counts (as in :class:`Ltc`)."""

    tag: TagT
    sent: dict[int, list[int]]
    received: dict[int, int]

    def pack(self) -> bytes:
        return _packb([RESIGN, *self.tag, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Resign:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Heartbeat(NamedTuple):
    """Both directions, on the heartbeat connection: alive."""

    def pack(self) -> bytes:
        return _packb([HEARTBEAT])

    @classmethod
    def _of(cls, m: list[Any]) -> Heartbeat:
        return _new(cls, ())


class Fail(NamedTuple):
    """federate -> RTI: this federate failed (the federation is aborted)."""

    reason: str

    def pack(self) -> bytes:
        return _packb([FAIL, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Fail:
        return _new(cls, (m[1],))


class HbHello(NamedTuple):
    """federate -> RTI: the heartbeat connection's join, proved over the session."""

    federation_id: str
    name: str  # the federate's
    nonce: bytes  # 16 bytes, never used twice
    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return _packb([HB_HELLO, self.federation_id, self.name, self.nonce, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> HbHello:
        return _new(cls, (m[1], m[2], m[3], m[4]))


class Challenge(NamedTuple):
    """RTI -> federate: the RTI's nonce, and its proof of the secret over the federate's."""

    nonce: bytes  # 16 bytes
    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return _packb([CHALLENGE, self.nonce, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> Challenge:
        return _new(cls, (m[1], m[2]))


class Reject(NamedTuple):
    """RTI -> federate: refused (the handshake, or a federate dropped)."""

    reason: str

    def pack(self) -> bytes:
        return _packb([REJECT, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Reject:
        return _new(cls, (m[1],))


class Start(NamedTuple):
    """RTI -> federate: every federate joined; the federation starts."""

    start: int  # the start time (ns)
    peers: dict[int, str]  # downstream peer -> its data address
    session: bytes  # 16 bytes: keys the proofs between peers and the heartbeat's
    federate: int  # this federate's index in the RTI's layout

    def pack(self) -> bytes:
        return _packb([START, self.start, self.peers, self.session, self.federate])

    @classmethod
    def _of(cls, m: list[Any]) -> Start:
        return _new(cls, (m[1], m[2], m[3], m[4]))


class Tag(NamedTuple):
    """RTI -> federate: tag advance grant, every tag up to ``tag``, once ``counts``
    messages from each upstream peer have arrived."""

    tag: TagT
    counts: dict[int, int]

    def pack(self) -> bytes:
        return _packb([TAG, *self.tag, self.counts])

    @classmethod
    def _of(cls, m: list[Any]) -> Tag:
        return _new(cls, ((m[1], m[2]), m[3]))


class Ptag(NamedTuple):
    """RTI -> federate: provisional tag advance grant, ``tag`` itself (zero-delay cycles),
    once ``counts`` messages from each upstream peer have arrived."""

    tag: TagT
    counts: dict[int, int]

    def pack(self) -> bytes:
        return _packb([PTAG, *self.tag, self.counts])

    @classmethod
    def _of(cls, m: list[Any]) -> Ptag:
        return _new(cls, ((m[1], m[2]), m[3]))


class StopRequest(NamedTuple):
    """RTI -> federate: a federate asked to stop at ``tag``: answer with a :class:`StopReply`."""

    tag: TagT

    def pack(self) -> bytes:
        return _packb([STOP_REQUEST, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopRequest:
        return _new(cls, ((m[1], m[2]),))


class StopGranted(NamedTuple):
    """RTI -> federate: the agreed stop tag."""

    tag: TagT

    def pack(self) -> bytes:
        return _packb([STOP_GRANTED, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> StopGranted:
        return _new(cls, ((m[1], m[2]),))


class Abort(NamedTuple):
    """RTI -> federate: the federation failed."""

    reason: str

    def pack(self) -> bytes:
        return _packb([ABORT, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Abort:
        return _new(cls, (m[1],))


class Auth(NamedTuple):
    """peer -> peer: the first message on a data connection, proving who sends."""

    sender: int  # the sender's federate index
    mac: bytes  # 32 bytes

    def pack(self) -> bytes:
        return _packb([AUTH, self.sender, self.mac])

    @classmethod
    def _of(cls, m: list[Any]) -> Auth:
        return _new(cls, (m[1], m[2]))


# -- membership of elastic banks (issue 19) -------------------------------------------------
# A round, as the RTI's core runs it (coordination/rti_core.py, membership.py): the RTI asks
# every present federate (Query), each answers (QueryReply) and goes no further than its
# answer until the round is over (RoundEnd, after the round's Changes); a joining member
# gets its start (Admit). A member asks to join (JoinReq, after the handshake) or to leave
# (LeaveReq); Refused when the RTI did not.


class QueryReply(NamedTuple):
    """federate -> RTI: the earliest tag this federate can apply round ``round``'s changes
    at (it goes no further than ``tag`` until they come)."""

    round: int
    tag: TagT

    def pack(self) -> bytes:
        return _packb([QUERY_REPLY, self.round, *self.tag])

    @classmethod
    def _of(cls, m: list[Any]) -> QueryReply:
        return _new(cls, (m[1], (m[2], m[3])))


class JoinReq(NamedTuple):
    """federate -> RTI: this elastic member (its slot admitted by the handshake) asks to
    join the running federation; ``physical_time`` is its clock at the request (Lingua
    Franca's first term of the effective start tag)."""

    physical_time: int

    def pack(self) -> bytes:
        return _packb([JOIN_REQ, self.physical_time])

    @classmethod
    def _of(cls, m: list[Any]) -> JoinReq:
        return _new(cls, (m[1],))


class LeaveReq(NamedTuple):
    """federate -> RTI: this elastic member asks to leave (at a tag agreed in a round)."""

    def pack(self) -> bytes:
        return _packb([LEAVE_REQ])

    @classmethod
    def _of(cls, m: list[Any]) -> LeaveReq:
        return _new(cls, ())


class Query(NamedTuple):
    """RTI -> federate: membership round ``round`` will apply ``changes`` ((member,
    joined), ...) at ``tag`` or later: answer with a :class:`QueryReply`."""

    round: int
    tag: TagT
    changes: tuple[tuple[int, bool], ...]

    def pack(self) -> bytes:
        return _packb([QUERY, self.round, *self.tag, [list(c) for c in self.changes]])

    @classmethod
    def _of(cls, m: list[Any]) -> Query:
        return _new(cls, (m[1], (m[2], m[3]), tuple((c[0], c[1]) for c in m[4])))


class Change(NamedTuple):
    """RTI -> federate: from ``tag`` on, ``member`` is present (``joined``) or absent."""

    tag: TagT
    member: int
    joined: bool

    def pack(self) -> bytes:
        return _packb([CHANGE, *self.tag, self.member, self.joined])

    @classmethod
    def _of(cls, m: list[Any]) -> Change:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Admit(NamedTuple):
    """RTI -> a joining member: start at ``tag``; the message counts its slot starts from,
    per downstream peer (``sent``) and upstream peer (``received``)."""

    tag: TagT
    sent: dict[int, int]
    received: dict[int, int]

    def pack(self) -> bytes:
        return _packb([ADMIT, *self.tag, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Admit:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Refused(NamedTuple):
    """RTI -> member: its request to join (``joined``) or leave was not carried out."""

    joined: bool
    reason: str

    def pack(self) -> bytes:
        return _packb([REFUSED, self.joined, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Refused:
        return _new(cls, (m[1], m[2]))


class RoundEnd(NamedTuple):
    """RTI -> federate: membership round ``round`` is over; its :class:`Change` s (none if
    it was called off) came before this. The barrier of the answer to its Query lifts."""

    round: int

    def pack(self) -> bytes:
        return _packb([ROUND_END, self.round])

    @classmethod
    def _of(cls, m: list[Any]) -> RoundEnd:
        return _new(cls, (m[1],))


class Release(NamedTuple):
    """RTI -> a federate that resigned: every message it sent has been received, or its
    receiver resigned or failed. Until then it keeps its links open: closing them would
    drop what is still queued in its process (see :mod:`..coordination.rti_core`)."""

    def pack(self) -> bytes:
        return _packb([RELEASE])

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
        return _packb(self.item())

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
        return _packb(self.item())

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
        return _packb(self.item())

    @classmethod
    def _of(cls, m: list[Any]) -> StopMark:
        return _new(cls, ((m[1], m[2]),))


Message = (
    Hello | Proof | Ltc | StopReq | StopReply | Resign | Heartbeat | Fail | HbHello | Challenge | Reject | Start | Tag
    | Ptag | StopRequest | StopGranted | Abort | Auth | ShmOpen | Promise | StopMark | QueryReply | JoinReq | LeaveReq
    | Query | Change | Admit | Refused | RoundEnd | Release
)
#: a checked batch item (:func:`check_item`): a data-plane item's array, or a typed message
Item = list[Any] | Message

#: message type -> its class (the data plane's positional messages have none)
TYPED: dict[int, type[Message]] = {
    HELLO: Hello, PROOF: Proof, LTC: Ltc, STOP_REQ: StopReq, STOP_REPLY: StopReply, RESIGN: Resign,
    HEARTBEAT: Heartbeat, FAIL: Fail, HB_HELLO: HbHello, CHALLENGE: Challenge, REJECT: Reject, START: Start,
    TAG: Tag, PTAG: Ptag, STOP_REQUEST: StopRequest, STOP_GRANTED: StopGranted, ABORT: Abort, AUTH: Auth,
    SHM_OPEN: ShmOpen, PROMISE: Promise, STOP_MARK: StopMark, QUERY_REPLY: QueryReply, JOIN_REQ: JoinReq,
    LEAVE_REQ: LeaveReq, QUERY: Query, CHANGE: Change, ADMIT: Admit, REFUSED: Refused, ROUND_END: RoundEnd,
    RELEASE: Release,
}
#: a message class -> its type
KIND: dict[type[Message], int] = {cls: kind for kind, cls in TYPED.items()}
_BUILD: dict[int, Callable[[list[Any]], Message]] = {kind: cls._of for kind, cls in TYPED.items()}


# -- reading ------------------------------------------------------------------------------
def parse(data: bytes | memoryview, allowed: frozenset[int] | None = None) -> Message:
    """Decode and validate one control message (of a type in ``allowed``, if given)."""
    try:
        msg = msgpack.unpackb(
            data, raw=False, strict_map_key=False, max_array_len=_MAX_ENTRIES, max_map_len=_MAX_ENTRIES,
            max_str_len=_MAX_STR, max_bin_len=1 << 20, use_list=True,
        )
    except Exception as e:
        raise ProtocolError(f"undecodable message: {type(e).__name__}") from None
    msg = _validated(msg, allowed, "a message")
    build = _BUILD.get(msg[0])
    if build is None:
        raise ProtocolError(f"{NAMES[msg[0]]} is not a control message")
    return build(msg)


# The data plane: what a peer sends per payload (a BATCH, its DATA, DATA_INLINE, SHM_DATA
# and ABSENT items, the compact form) stays positional, the arrays as they come off the
# wire: a NamedTuple per batch and per item added 27-34% to reading and dispatching a
# small batch (one or two values and a promise: ~2 us), the BATCH's alone 12-15%. Items,
# after check_item:
#   DATA        [DATA, link, t, m, codec, meta]                     (+ its payload frame)
#   DATA_INLINE [DATA_INLINE, link, t, m, codec, meta, payload]
#   SHM_DATA    [SHM_DATA, link, t, m, codec, meta, offset, length] (payload in the ring)
#   ABSENT      [ABSENT, link, t, m]
_BATCH_ONLY = frozenset({BATCH})


def parse_batch(data: bytes | memoryview) -> list[Any]:
    """Decode and validate a BATCH; its items, each to be checked with :func:`check_item`."""
    try:
        msg = msgpack.unpackb(
            data, raw=False, strict_map_key=False, max_array_len=_MAX_ENTRIES, max_map_len=_MAX_ENTRIES,
            max_str_len=_MAX_STR, max_bin_len=1 << 20, use_list=True,
        )
    except Exception as e:
        raise ProtocolError(f"undecodable message: {type(e).__name__}") from None
    items: list[Any] = _validated(msg, _BATCH_ONLY, "a message")[1]
    return items


def check_item(msg: Any, allowed: frozenset[int]) -> Item:
    """Validate one item of a BATCH (already decoded) as a message of an allowed type: a
    data-plane item's array as it is, a typed message (a :class:`Promise`...) as one."""
    # Every message of a closed loop carries these two: checked here field by field,
    # what the schema checks (the general path below says what is wrong, if anything).
    if type(msg) is list:
        n = len(msg)
        if n == 7 and msg[0] == DATA_INLINE and DATA_INLINE in allowed:
            link, t, m, codec = msg[1], msg[2], msg[3], msg[4]
            if (type(link) is int and type(t) is int and type(m) is int and type(codec) is int
                    and 0 <= link <= _I64_MAX and _I64_MIN <= t <= _I64_MAX and 0 <= m <= _I64_MAX
                    and 0 <= codec <= _I64_MAX and type(msg[6]) is bytes):
                return msg
        elif n == 3 and msg[0] == PROMISE and PROMISE in allowed:
            t, m = msg[1], msg[2]
            if type(t) is int and type(m) is int and _I64_MIN <= t <= _I64_MAX and 0 <= m <= _I64_MAX:
                return _new(Promise, ((t, m),))
    msg = _validated(msg, allowed, "a batch item")
    build = _BUILD.get(msg[0])
    return msg if build is None else build(msg)


def _validated(msg: Any, allowed: frozenset[int] | None, what: str) -> list[Any]:
    if type(msg) is not list or not msg or type(msg[0]) is not int:
        raise ProtocolError(f"{what} is an array starting with its type")
    kind = msg[0]
    checks = _CHECKS.get(kind)
    if checks is None:
        raise ProtocolError(f"unknown message type {kind}")
    if allowed is not None and kind not in allowed:
        raise ProtocolError(f"unexpected {NAMES[kind]} here")
    if len(msg) != len(checks) + 1:
        raise ProtocolError(f"{NAMES[kind]} has {len(msg) - 1} fields, expected {len(checks)}")
    i = 1
    for ok in checks:
        if not ok(msg[i]):
            raise ProtocolError(f"{NAMES[kind]}: field {i} is not a valid {_SCHEMA[kind][i - 1]}")
        i += 1
    return msg


def _is_int(v: Any) -> bool:
    return type(v) is int and _I64_MIN <= v <= _I64_MAX


def _is_uint(v: Any) -> bool:
    return type(v) is int and 0 <= v <= _I64_MAX


def _is_counts(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_int(k) and k >= 0 and _is_int(c) and c >= 0 for k, c in v.items())


def _is_sent(v: Any) -> bool:
    return isinstance(v, dict) and all(
        _is_int(k) and k >= 0 and isinstance(e, list) and len(e) == 3
        and _is_int(e[0]) and e[0] >= 0 and _is_int(e[1]) and _is_int(e[2]) and e[2] >= 0
        for k, e in v.items()
    )


def _is_changes(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(
        isinstance(c, list) and len(c) == 2 and _is_uint(c[0]) and type(c[1]) is bool for c in v)


def _is_peers(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_uint(k) and isinstance(e, str) for k, e in v.items())


_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "i": _is_int,
    "u": _is_uint,
    "s": lambda v: isinstance(v, str) and len(v) <= _MAX_STR,
    "bin": lambda v: isinstance(v, bytes),
    "items": lambda v: isinstance(v, list) and len(v) > 0,
    "b16": lambda v: isinstance(v, bytes) and len(v) == 16,
    "b32": lambda v: isinstance(v, bytes) and len(v) == 32,
    "counts": _is_counts,
    "sent": _is_sent,
    "peers": _is_peers,
    "bool": lambda v: type(v) is bool,
    "changes": _is_changes,
    "any": lambda v: True,
}
#: per message type, one check per field (looked up once, not per message)
_CHECKS: dict[int, tuple[Callable[[Any], bool], ...]] = {
    kind: tuple(_FIELD_CHECKS[f] for f in schema) for kind, schema in _SCHEMA.items()
}


# -- the compact data message --------------------------------------------------------------
# What a closed loop sends at every step (one small value and a promise, or a promise
# alone) as a fixed header instead of a msgpack BATCH: one struct unpack instead of a
# generic decode and an item-by-item check. Its first byte, 0xC1, starts no msgpack
# object ("never used" in the msgpack spec), so a receiver tells the two apart by it.
#   magic u8, flags u8 (1: data, 2: promise, 3: both; data first), link u32, t i64, m i64,
#   codec u8, promise t i64, promise m i64, meta length u16; then the value's meta
#   (msgpack), zeros up to a multiple of 16 bytes, and its payload bytes (what DATA_INLINE
#   carries): an array over the payload is aligned as one in a bytes object of its own.
COMPACT = 0xC1
_C_DATA = 1
_C_PROMISE = 2
_COMPACT_HEAD = struct.Struct("<BBIqqBqqH")
_PAD = [b"\0" * (-n & 15) for n in range(16)]  # by the length so far mod 16: the zeros that align the payload
_NIL = b"\xc0"  # msgpack None: the meta of a plain (msgpack) value


def is_compact(frame: bytes | memoryview) -> bool:
    return len(frame) > 0 and frame[0] == COMPACT


def pack_compact(items: list[list[Any]]) -> bytes | None:
    """``items`` (a batch: [DATA_INLINE], [DATA_INLINE, PROMISE] or [PROMISE]) as one
    compact message, or None if it is not one of those or a field does not fit."""
    first = items[0]
    n = len(items)
    if first[0] == DATA_INLINE:
        if n == 1:
            flags = pt = pm = 0
        else:
            p = items[1]
            if n != 2 or p[0] != PROMISE:
                return None
            flags, pt, pm = _C_PROMISE, p[1], p[2]
        _, link, t, m, codec, meta, payload = first
        mb = _NIL if meta is None else msgpack.packb(meta, use_bin_type=True)
        if m < 0 or pm < 0 or len(mb) > 0xFFFF:
            return None
        try:
            head = _COMPACT_HEAD.pack(COMPACT, flags | _C_DATA, link, t, m, codec, pt, pm, len(mb))
        except struct.error:  # a field out of its range: the BATCH carries any
            return None
        return b"".join((head, mb, _PAD[(_COMPACT_HEAD.size + len(mb)) & 15], payload)) if payload else head + mb
    if first[0] == PROMISE and n == 1 and first[2] >= 0:
        try:
            return _COMPACT_HEAD.pack(COMPACT, _C_PROMISE, 0, 0, 0, 0, first[1], first[2], 0)
        except struct.error:
            return None
    return None


def parse_compact(frame: memoryview) -> tuple[int, int, int, int, int, bytes, memoryview, int, int]:
    """A compact message: (flags, link, t, m, codec, meta bytes, payload, promise t,
    promise m); decode the meta with :func:`compact_meta`."""
    n = len(frame)
    head = _COMPACT_HEAD.size
    if n < head:
        raise ProtocolError(f"a compact message of {n} bytes, shorter than its header")
    _, flags, link, t, m, codec, pt, pm, mlen = _COMPACT_HEAD.unpack_from(frame)
    if not 1 <= flags <= 3:
        raise ProtocolError(f"a compact message with flags {flags}")
    if m < 0 or pm < 0:
        raise ProtocolError("a compact message with a negative microstep")
    if flags == _C_PROMISE:
        if mlen or n != head:
            raise ProtocolError("a compact promise with a payload")
        return flags, 0, 0, 0, 0, b"", frame[head:], pt, pm
    end = head + mlen
    start = (end + 15) & ~15  # the payload's (aligned) start
    if start > n:
        if end != n:  # an empty payload has no padding
            raise ProtocolError("a compact message's meta runs past its end")
        start = end
    return flags, link, t, m, codec, bytes(frame[head:end]), frame[start:], pt, pm


def compact_meta(mb: bytes) -> Any:
    """The meta of a compact message's value, from its bytes."""
    try:
        return msgpack.unpackb(mb, raw=False, strict_map_key=False, max_array_len=_MAX_ENTRIES,
                               max_map_len=_MAX_ENTRIES, max_str_len=_MAX_STR, max_bin_len=_MAX_STR)
    except Exception as e:
        raise ProtocolError(f"a compact message's meta is undecodable: {type(e).__name__}") from None


def mac(secret: bytes, *parts: bytes | str | int) -> bytes:
    """HMAC-SHA256 over length-prefixed parts (so no two part lists collide)."""
    h = hmac.new(secret, digestmod=hashlib.sha256)
    for p in parts:
        b = p.encode() if isinstance(p, str) else p.to_bytes(8, "big", signed=True) if isinstance(p, int) else p
        h.update(len(b).to_bytes(4, "big"))
        h.update(b)
    return h.digest()


def mac_equal(a: Any, b: bytes) -> bool:
    """Constant-time comparison of a received MAC (of any type) with the expected one."""
    return isinstance(a, bytes) and hmac.compare_digest(a, b)
