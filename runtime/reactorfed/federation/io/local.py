"""Same-host data links: Unix domain stream sockets, written and read by the federate's
own thread.

ZeroMQ moves every message through a background I/O thread on each side: one message
wakes the sender's I/O thread, the receiver's, and then the receiver. In a closed loop
(a collector and its samplers exchanging one small batch each way per round) those
wakeups, not the bytes, are most of a round's cost. A federate therefore also listens on
a Unix socket in a private directory (mode 0700) and advertises its path with its TCP
address; a peer on the same host sends there, straight from its own thread: one wakeup
per message. Peers on other hosts (other pods) cannot reach the path and use TCP.

The link carries the same messages as the TCP data port (the first is the peer's AUTH,
checked by :class:`~reactorfed.federation.process.inbound.Inbound` as on TCP): each as a frame
count, the frames' lengths and the frames. A connection that sends a malformed header, a
message over ``max_message`` or too many frames is closed; the others go on.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import select
import shutil
import socket
import struct
import tempfile
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["SOCKET_NAME", "LocalClient", "LocalServer", "split_endpoint", "with_local"]

Frames = list[memoryview]

#: the file name of every federate's socket (a peer connects to no other name)
SOCKET_NAME = "reactorfed-data.sock"
_COUNT = struct.Struct("<I")
_LEN = struct.Struct("<Q")
_ONE = struct.Struct("<IQ")  # the header of a one-frame message (12 bytes)
_MAX_FRAMES = 1024  # below the kernel's IOV_MAX, so one sendmsg takes a whole message
_READ = 256 << 10  # bytes read from one connection per call (its buffer): a flood cannot hold the reader
_BIG = 64 << 10  # bodies at least this large are read into their own buffer (no extra copy)
_SNDBUF = 4 << 20
_DIRECT_READS = 64
_TAG = "#unix="


def with_local(endpoint: str, path: str) -> str:
    """``endpoint`` (tcp://host:port) with the Unix socket ``path`` attached."""
    return f"{endpoint}{_TAG}{path}"


def split_endpoint(endpoint: str) -> tuple[str, str | None]:
    """A peer's advertised endpoint: its TCP address, and its Unix socket path if it has one
    (absolute and named :data:`SOCKET_NAME`; anything else is ignored)."""
    tcp, _, path = endpoint.partition(_TAG)
    if not path or not os.path.isabs(path) or os.path.basename(path) != SOCKET_NAME or "\0" in path:
        return tcp, None
    return tcp, path


class LocalServer:
    """Listens on a Unix socket; receives ``(connection id, frames)`` like the TCP
    :class:`~reactorfed.federation.io.transport.Server`. :meth:`fileno` is readable when
    something arrived (an epoll set of the listener and every connection)."""

    def __init__(self, *, max_message: int, max_connections: int = 256) -> None:
        self._dir = tempfile.mkdtemp(prefix="reactorfed-")  # 0700: only this user can connect
        self.path = os.path.join(self._dir, SOCKET_NAME)
        self._max_message = max_message if max_message > 0 else 1 << 62
        self._max_connections = max_connections
        self._conns: dict[int, _Reader] = {}
        self._solo: _Reader | None = None  # the connection, when there is exactly one
        self._direct = 0  # reads of it since the last full look
        self._ready: deque[tuple[bytes, Frames]] = deque()
        self._next_id = 0
        self.dropped = 0  # connections closed for sending what is not a message, or refused
        # A descriptor held in reserve: out of descriptors, a pending connection cannot be
        # accepted and keeps the listener readable (the poll would return at once, again
        # and again); freeing this one lets it be accepted and closed.
        self._spare = _spare_fd()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._epoll = select.epoll()
        try:
            self._listener.bind(self.path)
            self._listener.listen(64)
        except OSError:
            self.close()
            raise
        self._listener.setblocking(False)
        self._epoll.register(self._listener.fileno(), select.EPOLLIN)

    def fileno(self) -> int:
        return self._epoll.fileno()

    def buffered(self) -> bool:
        """Messages already read, waiting for :meth:`recv` (the poller must not sleep)."""
        return bool(self._ready)

    def recv(self) -> tuple[bytes, Frames] | None:
        """One message without blocking, or None."""
        q = self.received()
        return q.popleft() if q else None

    def received(self) -> deque[tuple[bytes, Frames]]:
        """The messages read and not yet taken, after one read of every connection with
        something to read if there were none (the caller pops them from the left; what
        arrives later makes :meth:`fileno` readable again). One read per connection is
        bounded (``_READ`` bytes): a flood cannot hold the reader. Unlike :meth:`recv` in
        a loop, no second look at the connections after the last message."""
        if not self._ready:
            solo = self._solo
            if solo is not None and self._direct < _DIRECT_READS:
                # One connection (the usual: one upstream peer): read it without asking
                # the epoll set first; when it has nothing, or every _DIRECT_READS reads
                # (a connection waiting to be accepted), the full look below.
                self._direct += 1
                self._read_one(solo.sock.fileno(), solo)
                if self._ready:
                    return self._ready
            self._direct = 0
            self._read()
        return self._ready

    def _read(self) -> None:
        for fd, _ in self._epoll.poll(0):
            if fd == self._listener.fileno():
                self._accept()
                continue
            r = self._conns.get(fd)
            if r is not None:
                self._read_one(fd, r)

    def _read_one(self, fd: int, r: _Reader) -> None:
        try:
            alive = r.read(self._ready)
        except _Malformed:
            self.dropped += 1
            alive = False
        if not alive:
            self._drop(fd)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE) and self._refuse_one():
                    continue
                return
            if len(self._conns) >= self._max_connections:
                conn.close()
                self.dropped += 1
                continue
            conn.setblocking(False)
            self._next_id += 1
            self._conns[conn.fileno()] = _Reader(conn, b"unix:%d" % self._next_id, self._max_message)
            self._epoll.register(conn.fileno(), select.EPOLLIN)
            self._solo = next(iter(self._conns.values())) if len(self._conns) == 1 else None

    def _drop(self, fd: int) -> None:
        r = self._conns.pop(fd)
        self._solo = next(iter(self._conns.values())) if len(self._conns) == 1 else None
        with contextlib.suppress(OSError):
            self._epoll.unregister(fd)
        r.sock.close()

    def _refuse_one(self) -> bool:
        """Out of descriptors: accept one pending connection with the spare one and close
        it (the peer sees its connection closed, as at the connection limit). False if
        there was none (accept fails for want of a descriptor before it looks)."""
        if self._spare < 0:
            return False
        os.close(self._spare)
        self._spare = -1
        try:
            conn, _ = self._listener.accept()
        except OSError:
            refused = False
        else:
            conn.close()
            self.dropped += 1
            refused = True
        self._spare = _spare_fd()
        return refused

    def close(self) -> None:
        for fd in list(self._conns):
            self._drop(fd)
        if self._spare >= 0:
            os.close(self._spare)
            self._spare = -1
        self._listener.close()
        self._epoll.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    @property
    def closed(self) -> bool:
        return self._epoll.closed


def _spare_fd() -> int:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1


class _Malformed(Exception):
    pass


class _Reader:
    """One accepted connection: bytes in, whole messages out. Reads into one buffer of
    its own; a message's body is copied out once (small ones) or read straight into a
    buffer of the message's own (large ones)."""

    __slots__ = ("_body", "_buf", "_end", "_filled", "_lens", "_max", "_start", "_view", "peer", "sock")

    def __init__(self, sock: socket.socket, peer: bytes, max_message: int) -> None:
        self.sock = sock
        self.peer = peer
        self._max = max_message
        self._buf = bytearray(_READ)  # bytes read and not yet part of a message: [_start, _end)
        self._view = memoryview(self._buf)
        self._start = self._end = 0
        self._lens: list[int] | None = None  # the frame lengths of the message being read
        self._body: bytearray | None = None  # a large message's own buffer, being filled
        self._filled = 0

    def read(self, out: deque[tuple[bytes, Frames]]) -> bool:
        """Read what is there (at most ``_READ`` bytes); append whole messages to ``out``.
        False when the peer closed the connection."""
        body = self._body
        try:
            if body is not None:
                n = self.sock.recv_into(memoryview(body)[self._filled:], min(_READ, len(body) - self._filled))
                if n == 0:
                    return False
                self._filled += n
                if self._filled == len(body):
                    self._emit(out, body)
                return True
            if self._start == self._end:
                self._start = self._end = 0
            elif self._end > _READ // 2:
                # Keep room to read: move the unparsed rest (a header, or a small body's
                # start: less than _BIG + a header) to the front.
                rest = self._end - self._start
                self._buf[:rest] = self._view[self._start:self._end]
                self._start, self._end = 0, rest
            n = self.sock.recv_into(self._view[self._end:])
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if n == 0:
            return False
        self._end += n
        self._parse(out)
        return True

    def _parse(self, out: deque[tuple[bytes, Frames]]) -> None:
        buf, view = self._buf, self._view
        pos, end = self._start, self._end
        while self._lens is None and end - pos >= 12:
            n, total = _ONE.unpack_from(buf, pos)
            if n != 1 or total > self._max or end - pos - 12 < total:
                break
            # the usual case: a whole one-frame message (a batch) is here
            pos += 12
            out.append((self.peer, [memoryview(bytes(view[pos:pos + total]))]))  # its own buffer
            pos += total
        if pos == end:
            self._start = pos
            return
        while True:
            lens = self._lens
            if lens is None:
                if end - pos < _COUNT.size:
                    break
                (n,) = _COUNT.unpack_from(buf, pos)
                if not 1 <= n <= _MAX_FRAMES:
                    raise _Malformed(f"{n} frames")
                head_end = pos + _COUNT.size + n * _LEN.size
                if end < head_end:
                    break
                if n == 1:  # the usual batch
                    lens = [_ONE.unpack_from(buf, pos)[1]]
                else:
                    lens = [_LEN.unpack_from(buf, pos + _COUNT.size + i * _LEN.size)[0] for i in range(n)]
                total = sum(lens)
                if total > self._max:
                    raise _Malformed(f"a message of {total} bytes")
                self._lens = lens
                pos = head_end
            else:
                total = sum(lens)
            have = end - pos
            if have >= total:
                body = bytes(view[pos:pos + total])  # its own buffer: the receiver may keep views
                pos += total
                self._emit(out, body)
                continue
            if total >= _BIG:
                # Read the rest straight into the message's own buffer.
                big = bytearray(total)
                big[:have] = view[pos:end]
                pos = end
                self._body, self._filled = big, have
            break
        self._start = pos

    def _emit(self, out: deque[tuple[bytes, Frames]], body: bytes | bytearray) -> None:
        lens = self._lens
        assert lens is not None
        view = memoryview(body).toreadonly()  # a large body is a bytearray
        if len(lens) == 1:
            frames = [view]
        else:
            frames, at = [], 0
            for n in lens:
                frames.append(view[at:at + n])
                at += n
        out.append((self.peer, frames))
        self._lens, self._body, self._filled = None, None, 0


class LocalClient:
    """Connects to a :class:`LocalServer`; sends messages without blocking: what the socket
    does not take at once waits in :attr:`pending` (in order) until :meth:`flush`."""

    def __init__(self, path: str) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SNDBUF)
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self._sock = sock
        self.endpoint = path
        self._pending: deque[bytes | memoryview] = deque()  # what the socket has not taken, in order
        self._broken = False
        self.notify: Callable[[], None] | None = None  # called when output starts waiting (see transport.Poller)

    def fileno(self) -> int:
        return self._sock.fileno()

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def send(self, frames: Sequence[Any]) -> None:
        if self._broken:
            return  # the peer is gone: drop, as ZeroMQ does; its heartbeat times out
        behind = bool(self._pending)
        if len(frames) == 1 and type(frames[0]) is bytes:  # the usual message: one frame (a batch)
            views: list[Any] = [frames[0]]
            size = len(frames[0])
            head = _ONE.pack(1, size)
        else:
            views = [memoryview(f).cast("B") for f in frames]
            size = sum(v.nbytes for v in views)
            if len(views) == 1:
                head = _ONE.pack(1, size)
            elif not 1 <= len(views) <= _MAX_FRAMES:
                raise ValueError(f"a message has 1 to {_MAX_FRAMES} frames, not {len(views)}")
            else:
                head = _COUNT.pack(len(views)) + b"".join(_LEN.pack(v.nbytes) for v in views)
        if behind:
            sent = 0  # behind what waits: all of it waits
        else:
            try:
                sent = self._sock.sendmsg([head, *views])
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._broken = True
                return
            if sent == len(head) + size:
                return  # the usual case: the socket took it all
        # What the socket did not take waits. Small parts are copied (the caller may reuse
        # its buffers once send returns); large ones are kept by reference, as ZeroMQ's
        # zero-copy sends do: a value sent is not to be changed (in one process its
        # receivers share it too).
        for part in (memoryview(head), *(memoryview(v) for v in views)):
            if sent >= part.nbytes:
                sent -= part.nbytes
            else:
                rest = part[sent:]
                self._pending.append(rest if rest.nbytes >= _BIG else rest.tobytes())
                sent = 0
        if behind:
            self.flush()
        if self._pending and self.notify is not None:
            self.notify()

    def flush(self) -> None:
        """Send what waits, as far as the socket takes it."""
        pending = self._pending
        while pending and not self._broken:
            try:
                n = self._sock.sendmsg(list(itertools.islice(pending, 64)))
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._broken = True
                pending.clear()
                return
            while n:
                first = pending[0]
                size = len(first) if isinstance(first, bytes) else first.nbytes
                if n >= size:
                    n -= size
                    pending.popleft()
                else:
                    pending[0] = memoryview(first)[n:]  # the rest of one chunk, not a copy of all that waits
                    n = 0

    def close(self, linger_ms: int = 0) -> None:
        """Close; with ``linger_ms`` > 0, what waits keeps leaving for up to that long."""
        if self._sock.fileno() < 0:
            return
        idle = linger_ms // 10  # 10 ms waits without progress allowed
        while self._pending and not self._broken and idle > 0:
            self.flush()
            if self._pending and not select.select([], [self._sock], [], 0.01)[1]:
                idle -= 1
        self._sock.close()

    @property
    def closed(self) -> bool:
        return self._sock.fileno() < 0
