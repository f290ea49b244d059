"""The data plane: what a peer sends per payload. A BATCH carries DATA, DATA_INLINE,
SHM_DATA and ABSENT items (and the typed PROMISE, STOP_MARK and SHM_OPEN of
:mod:`.messages`); a closed loop's step goes in the compact form instead.

These stay positional, the arrays as they come off the wire: a NamedTuple per batch and
per item added 27-34% to reading and dispatching a small batch (one or two values and a
promise: ~2 us), the BATCH's alone 12-15%. Items, after :func:`check_item`:

    DATA        [DATA, link, t, m, codec, meta]                     (+ its payload frame)
    DATA_INLINE [DATA_INLINE, link, t, m, codec, meta, payload]
    SHM_DATA    [SHM_DATA, link, t, m, codec, meta, offset, length] (payload in the ring)
    ABSENT      [ABSENT, link, t, m]
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

from .kinds import (
    BATCH,
    DATA_INLINE,
    I64_MAX,
    I64_MIN,
    MAX_ENTRIES,
    MAX_STR,
    PROMISE,
    ProtocolError,
    unpackb,
    validated,
)
from .messages import BUILD, Message, Promise

__all__ = ["COMPACT", "Item", "check_item", "compact_meta", "is_compact", "pack_compact", "parse_batch", "parse_compact"]

#: a checked batch item (:func:`check_item`): a data-plane item's array, or a typed message
Item = list[Any] | Message
_new = tuple.__new__  # see messages.py

_BATCH_ONLY = frozenset({BATCH})


def parse_batch(data: bytes | memoryview) -> list[Any]:
    """Decode and validate a BATCH; its items, each to be checked with :func:`check_item`."""
    items: list[Any] = validated(unpackb(data), _BATCH_ONLY, "a message")[1]
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
                    and 0 <= link <= I64_MAX and I64_MIN <= t <= I64_MAX and 0 <= m <= I64_MAX
                    and 0 <= codec <= I64_MAX and type(msg[6]) is bytes):
                return msg
        elif n == 3 and msg[0] == PROMISE and PROMISE in allowed:
            t, m = msg[1], msg[2]
            if type(t) is int and type(m) is int and I64_MIN <= t <= I64_MAX and 0 <= m <= I64_MAX:
                return _new(Promise, ((t, m),))
    msg = validated(msg, allowed, "a batch item")
    build = BUILD.get(msg[0])
    return msg if build is None else build(msg)


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
        return msgpack.unpackb(mb, raw=False, strict_map_key=False, max_array_len=MAX_ENTRIES,
                               max_map_len=MAX_ENTRIES, max_str_len=MAX_STR, max_bin_len=MAX_STR)
    except Exception as e:
        raise ProtocolError(f"a compact message's meta is undecodable: {type(e).__name__}") from None
