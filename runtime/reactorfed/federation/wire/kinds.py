"""The protocol's vocabulary: message types (numbers on the wire), their names, each
type's field schema, and the checks every received array passes before anything reads it.

Every message is one msgpack array whose first element is its type. Nothing received is
trusted: :func:`validated` checks every field's type and range and raises
:class:`ProtocolError` for anything else, so a hostile or broken peer cannot crash the
RTI or a federate. The messages themselves: :mod:`.messages` (typed control messages),
:mod:`.membership` (elastic banks' rounds), :mod:`.data` (the data plane).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgpack

__all__ = ["FROM_RTI", "NAMES", "PROTOCOL_VERSION", "RTI_MAX_MESSAGE", "SCHEMA", "ProtocolError", "pack", "packb", "unpackb", "validated"]

PROTOCOL_VERSION = 12  # 2: a resigned federate waits for RELEASE before closing its links; 3: CHANGE carries an
#   endpoint; 4: START says which elastic slots are absent and whether to ask to join; PEER, LOST; 5: PROGRESS;
#   6: LOST carries the failed member's quiet tag, QUERY_REPLY the last tags taken from failed members;
#   7: START says whether the coordination is decentralized; 8: clock synchronization (CLOCK_*);
#   9: START carries the lead window, LEAD, WATCH; 10: CHALLENGE carries the members' public keys;
#   11: KEYS; 12: CREDIT (flow control on data links)
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
PROGRESS = 14  # done, total (each None: not known), figures {name: number}: the program's progress for a
#   person, on the heartbeat connection (at most once a second, when it changed)
CLOCK_T3 = 15  # clock synchronization: the reply to CLOCK_T1 (its arrival is T4)
# RTI -> federate
CHALLENGE = 20  # nonce, mac, the members' public keys {index: 32 bytes} (empty: one key per federation)
REJECT = 21  # reason
START = 22  # start time, peers {index: endpoint}, session, federate index, [elastic slots absent at the
#   start], join (this process asks to join a running federation: JOIN_REQ), decentralized, the lead
#   window (ns; None: none)
TAG = 23  # t, m, counts
PTAG = 24  # t, m, counts
STOP_REQUEST = 25  # t, m
STOP_GRANTED = 26  # t, m
ABORT = 27  # reason
QUERY = 28  # round, t, m, [[member, joined], ...]: a membership round asks (answer: QUERY_REPLY)
CHANGE = 29  # t, m, member, joined, endpoint: from this tag on, the member is present (or absent); its data address ("": unknown)
ADMIT = 30  # t, m, sent, recv: a joining member starts at this tag, with these message counts
REFUSED = 31  # joined, reason: a member's join or leave request was not carried out
ROUND_END = 32  # round: the round is over, its CHANGEs came before (a federate's barrier lifts)
RELEASE = 33  # a resigned federate's messages were all received (or their receivers are gone)
PEER = 34  # t, m, member, endpoint: the data address of the member's incarnation that joins at (t, m)
#   (a replayed join, whose CHANGE went out without it)
LOST = 35  # member: an elastic member's process failed (nothing more it sent is waited for)
CLOCK_T1 = 36  # time: clock synchronization's exchange begins (the RTI's clock)
CLOCK_T4 = 37  # time: the RTI's clock when the CLOCK_T3 arrived
CLOCK_PROBE = 38  # time: a coded probe, right after a runtime CLOCK_T4 (the RTI's clock)
LEAD = 39  # t, m: the lead window lets this federate process every tag up to this one
#: the members' public keys {index: 32 bytes}, all of them, when the issuer changed one (a slot's fresh
#: key, a key withdrawn) after the federate joined: its data port admits them, its links expect them
KEYS = 50
WATCH = 49  # t, m: report to the RTI at once when the next event reaches this tag (a producer waits on it)
#: what the RTI sends a running federate on its control connection
FROM_RTI = frozenset({TAG, PTAG, STOP_REQUEST, STOP_GRANTED, ABORT, HEARTBEAT, REJECT, LEAD, WATCH, KEYS})
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
CREDIT = 51  # t, m: receiver -> sender: every tag up to this one is processed (what came for it, consumed)

NAMES = {
    HELLO: "HELLO", PROOF: "PROOF", LTC: "LTC", STOP_REQ: "STOP_REQ",
    STOP_REPLY: "STOP_REPLY", RESIGN: "RESIGN", HEARTBEAT: "HEARTBEAT", FAIL: "FAIL",
    HB_HELLO: "HB_HELLO", CHALLENGE: "CHALLENGE", REJECT: "REJECT", START: "START", TAG: "TAG",
    PTAG: "PTAG", STOP_REQUEST: "STOP_REQUEST", STOP_GRANTED: "STOP_GRANTED", ABORT: "ABORT",
    DATA: "DATA", ABSENT: "ABSENT", AUTH: "AUTH", PROMISE: "PROMISE",
    SHM_OPEN: "SHM_OPEN", SHM_DATA: "SHM_DATA", BATCH: "BATCH", DATA_INLINE: "DATA_INLINE",
    STOP_MARK: "STOP_MARK", QUERY_REPLY: "QUERY_REPLY", JOIN_REQ: "JOIN_REQ", LEAVE_REQ: "LEAVE_REQ",
    QUERY: "QUERY", CHANGE: "CHANGE", ADMIT: "ADMIT", REFUSED: "REFUSED", ROUND_END: "ROUND_END",
    RELEASE: "RELEASE", PEER: "PEER", LOST: "LOST", PROGRESS: "PROGRESS", CLOCK_T1: "CLOCK_T1",
    CLOCK_T3: "CLOCK_T3", CLOCK_T4: "CLOCK_T4", CLOCK_PROBE: "CLOCK_PROBE", LEAD: "LEAD", WATCH: "WATCH", KEYS: "KEYS",
    CREDIT: "CREDIT",
}

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
MAX_STR = 4096
MAX_ENTRIES = 4096
#: a PROGRESS's figures: at most this many, names at most MAX_NAME long (the reporting side checks the same)
MAX_FIGURES = 8
MAX_NAME = 32

# Field kinds: "i" int64, "u" int >= 0, "s" short str, "b16" 16 bytes, "b32" 32 bytes,
# "counts" {int >= 0: int >= 0}, "sent" {int >= 0: [count, t, m]}, "peers" {int: str},
# "bin" bytes, "items" a non-empty list of lists (each checked by check_item), "bool",
# "changes" a non-empty list of [member (int >= 0), joined (bool)], "tags" {int >= 0: [t, m >= 0]},
# "ints" a list of ints >= 0, "u?" an int
# >= 0 or None, "figures" at most MAX_FIGURES {short str: finite int or float}, "any".
SCHEMA: dict[int, tuple[str, ...]] = {
    HELLO: ("u", "s", "s", "s", "s", "b16"),
    PROOF: ("b32",),
    LTC: ("i", "u", "i", "u", "sent", "counts"),
    STOP_REQ: ("i", "u"),
    STOP_REPLY: ("i", "u"),
    RESIGN: ("i", "u", "sent", "counts"),
    HEARTBEAT: (),
    FAIL: ("s",),
    HB_HELLO: ("s", "s", "b16", "b32"),
    CHALLENGE: ("b16", "b32", "keys"),
    KEYS: ("keys",),
    REJECT: ("s",),
    START: ("i", "peers", "b16", "u", "ints", "bool", "bool", "u?"),
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
    QUERY_REPLY: ("u", "i", "u", "tags"),
    JOIN_REQ: ("i",),
    LEAVE_REQ: (),
    QUERY: ("u", "i", "u", "changes"),
    CHANGE: ("i", "u", "u", "bool", "s"),
    ADMIT: ("i", "u", "counts", "counts"),
    REFUSED: ("bool", "s"),
    ROUND_END: ("u",),
    RELEASE: (),
    PEER: ("i", "u", "u", "s"),
    LOST: ("u", "i", "u"),
    PROGRESS: ("u?", "u?", "figures"),
    CLOCK_T1: ("i",),
    CLOCK_T3: (),
    CLOCK_T4: ("i",),
    CLOCK_PROBE: ("i",),
    LEAD: ("i", "u"),
    WATCH: ("i", "u"),
    CREDIT: ("i", "u"),
}

class ProtocolError(ValueError):
    """A message that does not follow the protocol."""


def packb(msg: list[Any]) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


def pack(kind: int, *fields: Any) -> bytes:
    """A positional message, ``[kind, *fields]``, on the wire (a BATCH: the typed messages
    have their own ``pack()``)."""
    return packb([kind, *fields])


def unpackb(data: bytes | memoryview) -> Any:
    """Decode one message's array, with limits (no string, map or array larger than a
    control message may hold)."""
    try:
        return msgpack.unpackb(
            data, raw=False, strict_map_key=False, max_array_len=MAX_ENTRIES, max_map_len=MAX_ENTRIES,
            max_str_len=MAX_STR, max_bin_len=1 << 20, use_list=True,
        )
    except Exception as e:
        raise ProtocolError(f"undecodable message: {type(e).__name__}") from None


def validated(msg: Any, allowed: frozenset[int] | None, what: str) -> list[Any]:
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
            raise ProtocolError(f"{NAMES[kind]}: field {i} is not a valid {SCHEMA[kind][i - 1]}")
        i += 1
    return msg


def _is_int(v: Any) -> bool:
    return type(v) is int and I64_MIN <= v <= I64_MAX


def _is_uint(v: Any) -> bool:
    return type(v) is int and 0 <= v <= I64_MAX


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


def _is_tags(v: Any) -> bool:
    return isinstance(v, dict) and all(
        _is_uint(k) and isinstance(t, list) and len(t) == 2 and _is_int(t[0]) and _is_uint(t[1]) for k, t in v.items())


def _is_ints(v: Any) -> bool:
    return isinstance(v, list) and all(_is_uint(i) for i in v)


def _is_figures(v: Any) -> bool:
    return isinstance(v, dict) and len(v) <= MAX_FIGURES and all(
        type(k) is str and 0 < len(k) <= MAX_NAME
        and (_is_int(x) or (type(x) is float and math.isfinite(x))) for k, x in v.items())


def _is_keys(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_uint(k) and isinstance(b, bytes) and len(b) == 32 for k, b in v.items())


def _is_peers(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_uint(k) and isinstance(e, str) for k, e in v.items())


_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "i": _is_int,
    "u": _is_uint,
    "s": lambda v: isinstance(v, str) and len(v) <= MAX_STR,
    "bin": lambda v: isinstance(v, bytes),
    "items": lambda v: isinstance(v, list) and len(v) > 0,
    "b16": lambda v: isinstance(v, bytes) and len(v) == 16,
    "b32": lambda v: isinstance(v, bytes) and len(v) == 32,
    "counts": _is_counts,
    "sent": _is_sent,
    "peers": _is_peers,
    "keys": _is_keys,
    "bool": lambda v: type(v) is bool,
    "changes": _is_changes,
    "tags": _is_tags,
    "ints": _is_ints,
    "u?": lambda v: v is None or _is_uint(v),
    "figures": _is_figures,
    "any": lambda v: True,
}
#: per message type, one check per field (looked up once, not per message)
_CHECKS: dict[int, tuple[Callable[[Any], bool], ...]] = {
    kind: tuple(_FIELD_CHECKS[f] for f in schema) for kind, schema in SCHEMA.items()
}

