"""Frames cut to a bounded size on the wire, and put back together on arrival.

libzmq reads a frame whole before anything judges it, into a buffer as large as the frame
says it is, up to the socket's limit (ZMQ_MAXMSGSIZE): also during the CurveZMQ handshake,
before the peer proved anything. With a limit of the largest payload (1 GiB by default),
an unauthenticated peer could make a federate hold as much as it sends for the whole
handshake interval. So every socket's limit is :data:`WIRE_MAX`, a quarter of a megabyte,
and a frame larger than :data:`CHUNK` travels cut into pieces, behind a header frame that
says how many pieces each original frame has; the receiver joins them (one copy, only for
frames above :data:`CHUNK`) and checks the whole against its own limit.

The size of a piece trades what a stranger can hold against what every large frame costs:
each piece is one more message to send, encrypt and receive, and the join a copy. 256 KiB
is of the order of what the kernel already lets any TCP connection queue (its receive
buffer starts at 128 KiB and grows to megabytes); pieces of 64 KiB cost a 100 KB frame
about 30 us more CPU than one piece, a sixth of its throughput encrypted (docs/federation.md).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

__all__ = ["CHUNK", "MAGIC", "WIRE_MAX", "join", "split", "wire_limit"]

CHUNK = 256 * 1024
#: the largest frame a socket accepts: a piece, its CurveZMQ box and command header
WIRE_MAX = CHUNK + 256
#: the header frame's first bytes: no protocol message starts so (msgpack arrays never
#: start with 0x00)
MAGIC = b"\x00RFC"
_COUNT = struct.Struct("<I")


def wire_limit(max_message: int) -> int:
    """ZMQ_MAXMSGSIZE for a socket taking messages of ``max_message`` bytes (-1: any): never
    more than a piece and its CurveZMQ box, whatever the message limit."""
    return WIRE_MAX if max_message < 0 or max_message > CHUNK else max_message + (WIRE_MAX - CHUNK)


def split(frames: Sequence[Any]) -> list[Any] | None:
    """``frames`` with each frame above :data:`CHUNK` cut into pieces (views, no copy),
    behind the header frame; None when no frame is above :data:`CHUNK`."""
    views = [memoryview(f) for f in frames]
    if all(v.nbytes <= CHUNK for v in views):
        return None
    counts: list[int] = []
    out: list[Any] = []
    for f, v in zip(frames, views, strict=True):
        n = v.nbytes
        if n <= CHUNK:
            out.append(f)
            counts.append(1)
            continue
        flat = v.cast("B") if v.c_contiguous else memoryview(v.tobytes())
        out += [flat[i:i + CHUNK] for i in range(0, n, CHUNK)]
        counts.append(-(-n // CHUNK))
    return [MAGIC + struct.pack(f"<{len(counts)}I", *counts), *out]


def join(frames: Sequence[memoryview], max_total: int) -> list[memoryview] | None:
    """The original frames of a message whose first frame is a header (see :func:`split`),
    or None when the message is malformed (the counts do not match, a piece is not full)
    or larger in all than ``max_total`` bytes (-1: no limit)."""
    header = frames[0]
    body = header.nbytes - len(MAGIC)
    if body <= 0 or body % _COUNT.size or bytes(header[: len(MAGIC)]) != MAGIC:
        return None
    counts = [c for (c,) in _COUNT.iter_unpack(header[len(MAGIC):])]
    if any(c < 1 for c in counts) or sum(counts) != len(frames) - 1:
        return None
    if max_total >= 0 and sum(f.nbytes for f in frames[1:]) > max_total:
        return None
    out: list[memoryview] = []
    i = 1
    for c in counts:
        group = frames[i:i + c]
        i += c
        if c == 1:
            out.append(group[0])
            continue
        if any(p.nbytes != CHUNK for p in group[:-1]) or not 0 < group[-1].nbytes <= CHUNK:
            return None
        out.append(memoryview(b"".join(group)))
    return out
