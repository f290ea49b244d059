"""The protocol between federates and the RTI, and between peers, in one namespace: what
the drivers use as ``P.X`` (``from ..wire import protocol as P``).

Its parts: :mod:`.kinds` (message types, names, schemas, the checks every received array
passes), :mod:`.messages` (the typed control messages and :func:`parse`),
:mod:`.membership` (elastic banks' rounds), :mod:`.data` (the data plane: BATCH items and
the compact form), and here the HMAC of the challenge (:func:`mac`).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from .clocksync import ClockProbe, ClockT1, ClockT3, ClockT4
from .data import (
    COMPACT,
    Item,
    check_item,
    compact_meta,
    is_compact,
    pack_compact,
    parse_batch,
    parse_compact,
)
from .kinds import (
    ABORT,
    ABSENT,
    ADMIT,
    AUTH,
    BATCH,
    CHALLENGE,
    CHANGE,
    CLOCK_PROBE,
    CLOCK_T1,
    CLOCK_T3,
    CLOCK_T4,
    CREDIT,
    DATA,
    DATA_INLINE,
    FAIL,
    FROM_RTI,
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
    PROTOCOL_VERSION,
    PTAG,
    QUERY,
    QUERY_REPLY,
    REFUSED,
    REJECT,
    RELEASE,
    RESIGN,
    ROUND_END,
    RTI_MAX_MESSAGE,
    SHM_DATA,
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
    pack,
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
from .messages import (
    KIND,
    TYPED,
    Abort,
    Auth,
    Challenge,
    Credit,
    Fail,
    HbHello,
    Heartbeat,
    Hello,
    Keys,
    Lead,
    Ltc,
    Message,
    Progress,
    Promise,
    Proof,
    Ptag,
    Reject,
    Release,
    Resign,
    ShmOpen,
    Start,
    StopGranted,
    StopMark,
    StopReply,
    StopReq,
    StopRequest,
    Tag,
    Watch,
    parse,
)

__all__ = [
    "ABORT", "ABSENT", "ADMIT", "AUTH", "BATCH", "CHALLENGE", "CHANGE", "CLOCK_PROBE", "CLOCK_T1", "CLOCK_T3",
    "CLOCK_T4", "COMPACT", "CREDIT", "DATA", "DATA_INLINE", "FAIL",
    "FROM_RTI", "HB_HELLO", "HEARTBEAT", "HELLO", "JOIN_REQ", "KEYS", "KIND", "LEAD", "LEAVE_REQ", "LOST", "LTC", "NAMES", "PEER",
    "PROGRESS", "PROMISE", "PROOF",
    "PROTOCOL_VERSION", "PTAG", "QUERY", "QUERY_REPLY", "REFUSED", "REJECT", "RELEASE", "RESIGN", "ROUND_END",
    "RTI_MAX_MESSAGE", "SHM_DATA", "SHM_OPEN", "START", "STOP_GRANTED", "STOP_MARK", "STOP_REPLY", "STOP_REQ",
    "STOP_REQUEST", "TAG", "TYPED", "WATCH",
    "Abort", "Admit", "Auth", "Challenge", "Change", "ClockProbe", "ClockT1", "ClockT3", "ClockT4", "Credit", "Fail", "HbHello",
    "Heartbeat", "Hello", "Item", "JoinReq", "Keys",
    "Lead", "LeaveReq", "Lost", "Ltc", "Message", "Peer", "Progress", "Promise", "Proof", "ProtocolError", "Ptag", "Query",
    "QueryReply", "Refused",
    "Reject", "Release", "Resign", "RoundEnd", "ShmOpen", "Start", "StopGranted", "StopMark", "StopReply", "StopReq",
    "StopRequest", "Tag", "Watch", "check_item", "compact_meta", "is_compact", "mac", "mac_equal", "pack", "pack_compact",
    "parse", "parse_batch", "parse_compact",
]


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
