"""A single-producer/single-consumer byte ring in POSIX shared memory.

Large payloads between two federates on the same machine are copied into the ring by
the sender and out of it by the receiver instead of crossing TCP. The notice that a
record exists ("offset X, length L") still travels over the federates' ZeroMQ link, in
FIFO order; this module only moves the bytes and keeps the space accounting.

Layout: three 64-byte header lines, then ``capacity`` data bytes::

    line 0  magic (8) | sha256(token)[:16] | capacity (u64)   written once by the writer
    line 1  written (u64): bytes the producer has handed out    only the writer stores
    line 2  released (u64): bytes the consumer has given back   only the reader stores
            attached (u64): 1 once a reader has attached        only the reader stores

Both counters only grow, so free space is ``capacity - (written - released)`` and each
side needs nothing but its own counter and a load of the other's. They sit on separate
cache lines so the two processes do not bounce one line between cores.

A record is always contiguous: when the tail of the ring is too short the writer skips
to offset 0 and counts the skipped gap as part of that record. The reader knows where
the next record should start (``released % capacity``), so a record announced at 0 while
it expects another position tells it the gap, and it releases gap + header + length.

Each record starts with a 16-byte header: where its space starts in the writer's count
(``written`` before it, so the gap included) and its length. The descriptor names the
bytes after the header. The reader takes a record only if the header it finds where the
next one starts says exactly that descriptor: the positions and the counters alone would
let a descriptor name the first bytes of a record (leaving the reader out of step with
the writer), two records as one, or a wrap to 0 over records not yet taken.

Ordering: the producer copies the bytes and only then stores ``written``; the consumer
copies out and only then stores ``released``. Each counter is a single aligned 8-byte
store/load (atomic on x86-64 and arm64), and CPython never reorders across the calls.
On x86-64 (TSO) that suffices; elsewhere the ZeroMQ notice (a syscall and libzmq's
atomics) orders the producer's bytes before the consumer's reads.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import hmac
import mmap
import os
import re
import secrets
import struct
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # collections.abc.Buffer is 3.12+
    from typing_extensions import Buffer

__all__ = ["RECORD_HEADER", "ShmError", "ShmReader", "ShmWriter"]

_MAGIC = b"RFEDSHM1"
_LINE = 64
_HEADER = 3 * _LINE
_HEAD = struct.Struct("<8s16sQ")  # magic, token hash, capacity
_WRITTEN = _LINE
_RELEASED = 2 * _LINE
_ATTACHED = _RELEASED + 8
_PREFIX = "rfed-"
# Our own names only: a reader is never pointed at someone else's segment.
_NAME = re.compile(r"rfed-[0-9a-f]{8,64}")
_MIN_CAPACITY = 64
_MAX_CAPACITY = 1 << 40
_RECORD = struct.Struct("<QQ")  # the record's space starts at (writer's count), its length
#: bytes of ring space a record takes besides its data
RECORD_HEADER = _RECORD.size


class ShmError(OSError):
    """A segment that cannot be created or attached, or a bad record descriptor."""


def _token_hash(token: bytes) -> bytes:
    return hashlib.sha256(b"reactorfed-shm\0" + bytes(token)).digest()[:16]


class _Segment:
    """The mapping and our views of it; closing drops the views first, because a mapping
    with exported views cannot be closed. Held by the finalizer, never the owner."""

    def __init__(self, buf: memoryview, capacity: int, close: Callable[[], None],
                 unlink: Callable[[], None] | None) -> None:
        self.buf: memoryview | None = buf
        self.data: memoryview | None = buf[_HEADER:_HEADER + capacity]
        self.written: memoryview | None = buf[_WRITTEN:_WRITTEN + 8].cast("Q")
        self.released: memoryview | None = buf[_RELEASED:_RELEASED + 8].cast("Q")
        self.attached: memoryview | None = buf[_ATTACHED:_ATTACHED + 8].cast("Q")
        self._close = close
        self._unlink = unlink

    def close(self) -> None:
        for v in (self.data, self.written, self.released, self.attached, self.buf):
            if v is not None:
                v.release()
        self.data = self.written = self.released = self.attached = self.buf = None
        try:
            self._close()
        finally:
            unlink, self._unlink = self._unlink, None
            if unlink is not None:
                unlink()


def _unlink(shm: SharedMemory) -> None:
    try:
        shm.unlink()
    except FileNotFoundError:
        # Someone else unlinked it: gone either way, but our tracker still lists it and
        # would warn about a leak at exit.
        resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]


class ShmWriter:
    """The producer side: creates a fresh segment and unlinks it on close (and when
    garbage-collected or at exit; the resource tracker unlinks it if the process dies)."""

    def __init__(self, capacity: int, token: bytes) -> None:
        capacity = int(capacity)
        if not _MIN_CAPACITY <= capacity <= _MAX_CAPACITY:
            raise ShmError(f"shared-memory capacity must be {_MIN_CAPACITY}..{_MAX_CAPACITY} bytes, not {capacity}")
        for _ in range(8):
            try:
                shm = SharedMemory(_PREFIX + secrets.token_hex(12), create=True, size=_HEADER + capacity)
                break
            except FileExistsError:  # a 96-bit random name collided; draw another
                continue
            except OSError as e:
                raise ShmError(f"cannot create a {_HEADER + capacity}-byte shared-memory segment: {e}") from e
        else:
            raise ShmError("cannot find a free shared-memory name")
        try:
            # Reserve the memory now: a full /dev/shm (64 MB in many containers) must show
            # up here as an error, not later as SIGBUS when a record is written. (Not on
            # macOS, which has no posix_fallocate and no /dev/shm to fill.)
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(shm._fd, 0, _HEADER + capacity)  # type: ignore[attr-defined]
        except OSError as e:
            shm.close()
            _unlink(shm)
            raise ShmError(f"cannot reserve {_HEADER + capacity} bytes of shared memory: {e}") from e
        self.name: str = shm.name
        self.capacity: int = capacity
        #: the longest record :meth:`put` takes (an empty ring always has room for it)
        self.max_record: int = capacity // 2 - RECORD_HEADER
        assert shm.buf is not None
        self._seg = _Segment(shm.buf, capacity, shm.close, functools.partial(_unlink, shm))
        self._finalizer = weakref.finalize(self, self._seg.close)
        self._written = 0
        self._released = 0
        buf = self._seg.buf
        assert buf is not None
        # Magic last: a header with the magic is complete (the reader also only attaches
        # after the name reached it over ZeroMQ, i.e. after this constructor returned).
        _HEAD.pack_into(buf, 0, b"\0" * 8, _token_hash(token), capacity)
        buf[0:8] = _MAGIC

    def put(self, buffers: Sequence[Buffer]) -> tuple[int, int] | None:
        """Copy the concatenation of ``buffers`` into the ring as one record; return
        (offset, length) of its data, or None when it does not fit now (or ever: more
        than :attr:`max_record`), in which case the caller sends it inline. Never blocks."""
        data, written_v, released_v = self._seg.data, self._seg.written, self._seg.released
        if data is None or written_v is None or released_v is None:
            raise ShmError("shared-memory writer is closed")
        views = []
        for b in buffers:
            v = memoryview(b)
            # A byte view is what slice assignment copies with memcpy; a strided buffer
            # has none, so it pays one extra copy.
            views.append(v.cast("B") if v.c_contiguous else memoryview(v.tobytes()))
        n = sum(v.nbytes for v in views)
        cap = self.capacity
        if n > self.max_record:
            return None
        released = released_v[0]
        if not self._released <= released <= self._written:
            raise ShmError(f"shared-memory consumer counter is corrupt ({released}, expected "
                           f"{self._released}..{self._written})")
        self._released = released
        free = cap - (self._written - released)
        pos = self._written % cap
        size = RECORD_HEADER + n
        if pos + size <= cap:
            start, used = pos, size
        else:  # too little room at the tail: skip it, and the record pays for the gap
            start, used = 0, cap - pos + size
        if used > free:
            return None
        _RECORD.pack_into(data, start, self._written, n)
        offset = at = start + RECORD_HEADER
        for v in views:
            data[at:at + v.nbytes] = v
            at += v.nbytes
        self._written += used
        written_v[0] = self._written  # publish only after the bytes are in
        return offset, n

    def pending(self) -> int:
        """Bytes put and not yet taken by the reader (0 once it has taken everything)."""
        released_v = self._seg.released
        if released_v is None:
            return 0
        return self._written - int(released_v[0])

    def reader_needs_name(self) -> bool:
        """Whether unlinking now could cost the reader records: some wait and no reader has
        attached yet (a reader's mapping outlives the name, so once attached it can take
        and keep what it was sent)."""
        attached_v = self._seg.attached
        return attached_v is not None and not attached_v[0] and self.pending() > 0

    def close(self) -> None:
        """Unmap and unlink the segment (idempotent)."""
        self._finalizer()


def _attach(name: str) -> tuple[memoryview, Callable[[], None]]:
    """Map an existing segment without registering it with the resource tracker.

    SharedMemory(name) registers every attached segment, so the attaching process's
    tracker would unlink it (and warn about a "leak") when that process exits, under the
    writer's feet. Python 3.13 has track=False. On 3.11/3.12 unregistering afterwards is
    not enough: a multiprocessing child shares its parent's tracker, whose registry is a
    set, so the reader's unregister also erases the writer's registration (the writer's
    own unlink then makes the tracker print a KeyError traceback, and a crashed writer's
    segment is no longer cleaned up). So we open and map it ourselves, as SharedMemory
    does, minus the register call.
    """
    if sys.version_info >= (3, 13):
        shm = SharedMemory(name, track=False)  # type: ignore[call-arg,unused-ignore]
        return shm.buf, shm.close
    import _posixshmem  # the module SharedMemory itself uses (POSIX only)

    fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    try:
        mm = mmap.mmap(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return memoryview(mm), mm.close


class ShmReader:
    """The consumer side: attaches to a writer's segment; never unlinks it."""

    def __init__(self, name: str, token: bytes) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ShmError(f"not a reactorfed shared-memory segment name: {name!r}")
        try:
            buf, close = _attach(name)
        except (OSError, ValueError) as e:  # missing, no permission, empty (cannot map)
            raise ShmError(f"cannot attach shared-memory segment {name!r}: {e}") from e
        try:
            if buf.nbytes < _HEADER:
                raise ShmError(f"shared-memory segment {name!r} is too small ({buf.nbytes} bytes)")
            magic, digest, capacity = _HEAD.unpack_from(buf, 0)
            if magic != _MAGIC:
                raise ShmError(f"shared-memory segment {name!r} is not a reactorfed ring")
            if not hmac.compare_digest(digest, _token_hash(token)):
                raise ShmError(f"shared-memory segment {name!r} belongs to another federation (token mismatch)")
            if not _MIN_CAPACITY <= capacity <= buf.nbytes - _HEADER:
                raise ShmError(f"shared-memory segment {name!r} has a bad capacity {capacity} "
                               f"for its {buf.nbytes} bytes")
        except BaseException:
            buf.release()
            close()
            raise
        self.name: str = name
        self.capacity: int = capacity
        self._seg = _Segment(buf, capacity, close, None)
        self._finalizer = weakref.finalize(self, self._seg.close)
        released_v, attached_v = self._seg.released, self._seg.attached
        assert released_v is not None and attached_v is not None
        attached_v[0] = 1  # the writer may unlink the name from now on
        self._released: int = released_v[0]
        self._taken = self._released  # the reader's cursor: records before it are taken or lent
        # Lent records, oldest first: [end of the record's space, returned yet]. Space goes
        # back in order, so one record kept alive holds back those after it.
        self._lent: collections.deque[list[Any]] = collections.deque()
        self._lock = threading.RLock()  # a view may die (and return) on any thread

    def take(self, offset: int, length: int) -> bytearray:
        """Return a private copy of the next record and give its space back. Records are
        taken whole, as :meth:`ShmWriter.put` returned them, in the order they were put;
        anything else is a ShmError (nothing is read outside the ring, and a refused
        descriptor changes nothing)."""
        data, released_v = self._seg.data, self._seg.released
        used = self._check(offset, length)
        assert data is not None and released_v is not None
        out = bytearray(data[offset:offset + length])
        with self._lock:
            self._taken += used
            if not self._lent:
                self._released = self._taken
                released_v[0] = self._released  # only after the copy: the writer may reuse it now
            else:  # behind a lent record: its space comes back with that one's
                self._lent.append([self._taken, True])
        return out

    def lend(self, offset: int, length: int) -> np.ndarray:
        """The next record as a read-only uint8 array over the ring itself (no copy). Its
        space goes back once the array, and every array or view made from it, is gone;
        a receiver that keeps it for ever keeps that space (the writer then sends inline)."""
        data = self._seg.data
        used = self._check(offset, length)
        assert data is not None
        arr = np.frombuffer(data.toreadonly(), dtype=np.uint8, count=length, offset=offset)
        with self._lock:
            self._taken += used
            entry = [self._taken, False]
            self._lent.append(entry)
        weakref.finalize(arr, self._give_back, entry)
        return arr

    def lent(self) -> int:
        """Records lent and not yet given back (or waiting behind one that is not)."""
        return len(self._lent)

    def _give_back(self, entry: list[Any]) -> None:
        with self._lock:
            entry[1] = True
            lent, end = self._lent, None
            while lent and lent[0][1]:
                end = lent.popleft()[0]
            released_v = self._seg.released
            if end is not None and released_v is not None:
                self._released = end
                released_v[0] = end

    def _check(self, offset: int, length: int) -> int:
        """Validate the next record's descriptor; return the ring space it takes (the gap
        skipped before it, its header and its data)."""
        data, written_v, released_v = self._seg.data, self._seg.written, self._seg.released
        if data is None or written_v is None or released_v is None:
            raise ShmError("shared-memory reader is closed")
        if type(offset) is not int or type(length) is not int:  # exact: a bool is no offset
            raise ShmError(f"shared-memory record descriptor must be two ints, not {offset!r}, {length!r}")
        cap = self.capacity
        start = offset - RECORD_HEADER
        if not (start >= 0 and 0 <= length <= cap // 2 and offset + length <= cap):
            raise ShmError(f"shared-memory record ({offset}, {length}) is outside the {cap}-byte ring")
        expected = self._taken % cap
        if start == expected:
            gap = 0
        elif start == 0 and expected + RECORD_HEADER + length > cap:  # the writer skipped the tail
            gap = cap - expected
        else:
            raise ShmError(f"shared-memory record at {offset} is out of order "
                           f"(the next starts at {expected + RECORD_HEADER})")
        pending = written_v[0] - self._taken
        if not 0 <= pending <= cap or self._taken - self._released > cap:
            raise ShmError(f"shared-memory producer counter is corrupt ({pending} bytes pending)")
        used = gap + RECORD_HEADER + length
        if used > pending:
            raise ShmError(f"shared-memory record ({offset}, {length}) was never written")
        # Inside what was written (checked above): the header the writer put there.
        at, n = _RECORD.unpack_from(data, start)
        if at != self._taken or n != length:
            raise ShmError(f"shared-memory record ({offset}, {length}) is not a record that was put: the one "
                           f"there has {n} bytes and was put at {at} (the next one was put at {self._taken})")
        return used

    def close(self) -> None:
        """Unmap the segment (idempotent); the writer owns and unlinks it. While a lent
        array lives, the mapping stays (it goes with the process)."""
        with self._lock:
            if any(not returned for _, returned in self._lent):
                self._finalizer.detach()
                self._seg.data = self._seg.written = self._seg.released = None
                return
        self._finalizer()
