"""The transport: the one module that imports ZeroMQ.

Federation logic talks to :class:`Server` (accepts many peers, tells them apart),
:class:`Client` (one connection) and :class:`Poller`; nothing else of ZeroMQ leaks
out. Messages above ``max_message`` bytes are refused (ZeroMQ drops a connection whose
frame is too large; frames above :data:`.chunks.CHUNK` travel in pieces, see
:mod:`.chunks`, and are refused when whole), and sockets never linger at close, so a dead
peer cannot hang a process. Given a
:class:`~.curve.CurveKeys`, a connection is CurveZMQ: encrypted, and made only with a
client the server admits and a server holding the key the client expects (see :mod:`.curve`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import select
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import zmq

from .chunks import CHUNK, MAGIC, join, split, wire_limit
from .curve import (
    Admit,
    CurveKeys,
    handshake_reason,
    secure_client,
    secure_server,
    stop_zap,
    user_of,
)
from .parts import recv_parts, send_parts

__all__ = ["CONNECT_TIMEOUT_MS", "Admit", "Client", "CurveKeys", "Monitor", "Poller", "Server", "TransportError", "context", "shutdown"]

log = logging.getLogger("reactorfed.transport")
Frames = list[memoryview]
_ZERO_COPY_MIN = 64 * 1024
# plain ints: zmq's flags are an enum.IntFlag, whose operators run Python code
_POLLIN = int(zmq.POLLIN)
_NOBLOCK = int(zmq.NOBLOCK)
_READABLE = select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR
#: A TCP connection not made within this long is given up and made afresh (a new socket,
#: a new source port). Without it, a SYN sent into a black hole is retransmitted by the
#: kernel into the same hole for two minutes: a pod that connects to a Service before
#: kube-proxy on its node has the Service's rules sends its first SYN untranslated, and
#: conntrack then keeps every retransmission of that connection untranslated too (seen
#: in the kind suite: a federate stuck in SYN_SENT until its join timed out).
CONNECT_TIMEOUT_MS = 2000
#: How long a client's send may wait for a connection to take the message. With no
#: high-water mark, a send waits only while the socket has no connection to queue on at
#: all, which after its first connect means the connection was dropped (bytes that did
#: not decrypt, say); it used to wait for ever, and the process with it.
SEND_TIMEOUT_MS = 3000


class TransportError(OSError):
    """A socket could not be bound or connected, or its connection was dropped."""


_ctx: zmq.Context[Any] | None = None


def context() -> zmq.Context[Any]:
    global _ctx
    if _ctx is None or _ctx.closed:
        _ctx = zmq.Context()
    return _ctx


def shutdown(timeout_s: float) -> None:
    """End this process's context once its sockets are closed: messages still queued on
    sockets closed with a linger leave first. Waits at most ``timeout_s``, so neither a
    socket left open nor a peer that stopped reading can hang the process's exit."""
    global _ctx
    ctx, _ctx = _ctx, None
    if ctx is not None and not ctx.closed:
        stop_zap(ctx)  # its socket would keep the context from ending
        t = threading.Thread(target=ctx.term, daemon=True, name="reactorfed-zmq-shutdown")
        t.start()
        t.join(timeout_s)


class _Socket:
    def __init__(self, sock: zmq.Socket[Any]) -> None:
        self._sock = sock
        sock.setsockopt(zmq.LINGER, 0)
        #: sent or received on since a poller last asked ZeroMQ for its state: the socket's
        #: file descriptor only signals changes ZeroMQ has not yet been asked about
        self._dirty = True
        self._monitored = False  # a Monitor watches it (see there)

    def close(self, linger_ms: int = 0) -> None:
        """Close. With ``linger_ms`` > 0, messages still queued keep leaving for up to
        that long, while the process's context lives (see :func:`shutdown`)."""
        if not self._sock.closed:
            self._stop_monitor()
            self._sock.close(linger=linger_ms)

    def _stop_monitor(self) -> None:
        """No more events to a :class:`Monitor` of this socket (before either closes)."""
        if self._monitored and not self._sock.closed:
            self._monitored = False
            self._sock.monitor(None, 0)

    @property
    def closed(self) -> bool:
        return bool(self._sock.closed)


def _heartbeats(sock: zmq.Socket[Any], timeout_ms: int) -> None:
    """ZeroMQ's own heartbeats (ZMTP PING/PONG) on every connection of ``sock``: a peer
    that answers nothing for ``timeout_ms`` loses its connection. ZeroMQ's I/O thread
    sends and answers them, without the interpreter: a process busy in a long reaction
    (holding the GIL) still answers; a stopped or dead one does not."""
    sock.setsockopt(zmq.HEARTBEAT_IVL, max(100, min(1000, timeout_ms // 3)))
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, timeout_ms)
    # The TTL each PING carries makes the peer drop the connection when nothing followed
    # the PING for that long: a second check of the same silence, by the side that is not
    # pinging. libzmq runs a connection's timers before it reads what arrived, so every
    # check is also a chance that a starved I/O thread, woken late, drops a connection
    # whose answer is already waiting. The side that pings judges (its TIMEOUT); the TTL
    # is only a backstop, for a peer that stopped pinging (issue 18: at 256 busy federates
    # on 2 cores, twice a healthy federate lost only the connection that the RTI alone
    # pings, and kept the one it pings too).
    sock.setsockopt(zmq.HEARTBEAT_TTL, min(6_553_500, 3 * timeout_ms))


class Server(_Socket):
    """Binds an endpoint; receives ``(peer id, frames)`` and replies to a peer by id.

    With ``liveness_ms``, connections carry ZeroMQ's heartbeats (see :class:`Monitor` for
    the ones that close). :attr:`last_fd` is the descriptor of the connection the last
    message came over, so that a closed connection can be told whose it was, and
    :attr:`last_user` the member its client's key was issued to (``admit``, with ``curve``:
    which client keys are admitted, and as whom; None: only ``curve``'s own), asked again
    each time: a key withdrawn since the connection opened names no member."""

    def __init__(self, endpoint: str, *, max_message: int = -1, liveness_ms: int | None = None,
                 curve: CurveKeys | None = None, admit: Admit | None = None) -> None:
        sock = context().socket(zmq.ROUTER)
        sock.setsockopt(zmq.MAXMSGSIZE, wire_limit(max_message))
        self._max = max_message
        #: messages in pieces that were malformed or too large in all: dropped here, so
        #: that the owner counts them with what it refused itself
        self.dropped = 0
        sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        sock.setsockopt(zmq.RCVHWM, 0)
        # A federation's federates connect at once: beyond ZeroMQ's default backlog (100)
        # the kernel drops their SYNs, and each retries only after a second.
        sock.setsockopt(zmq.BACKLOG, 4096)
        if liveness_ms is not None:
            _heartbeats(sock, liveness_ms)
        if curve is not None:
            secure_server(sock, curve, admit)
        self.encrypted = curve is not None
        self._admit = admit if curve is not None else None
        self._last: Any = None  # the last message's first frame (its routing id)
        self._last_body: Any = None  # and its second (it carries the connection's metadata)
        super().__init__(sock)
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as e:
            self.close()
            raise TransportError(f"cannot listen on {endpoint}: {e}") from e
        self.endpoint: str = sock.getsockopt_string(zmq.LAST_ENDPOINT)

    def recv(self) -> tuple[bytes, Frames] | None:
        """One message without blocking, or None."""
        self._dirty = True
        while True:
            try:
                parts = recv_parts(self._sock, _NOBLOCK)
            except zmq.Again:
                return None
            if len(parts) < 2:
                return None
            self._last, self._last_body = parts[0], parts[1]
            frames = [p.buffer for p in parts[1:]]
            if len(frames) > 2 and frames[0][:4] == MAGIC:
                whole = join(frames, self._max)
                if whole is None:  # malformed, or too large in all: dropped, counted and said
                    self.dropped += 1
                    log.error("dropped a message in %d pieces, malformed or over the limit of %d bytes",
                              len(frames) - 1, self._max)
                    continue
                frames = whole
            return parts[0].bytes, frames

    @property
    def last_fd(self) -> int:
        """The descriptor of the connection the last message received came over (asked of
        ZeroMQ only when wanted: most messages never need it)."""
        return -1 if self._last is None else int(self._last.get(zmq.SRCFD))

    @property
    def last_user(self) -> str | None:
        """The member whose key the last message's connection was made with (the ZAP
        handler's answer; asked of ZeroMQ only when wanted), if the admission still admits
        that key as that member. None: plain text, no message, or a key withdrawn (or
        issued to another) since the connection opened."""
        if self._last_body is None or not self.encrypted:
            return None
        try:
            text = self._last_body.get("User-Id")
        except zmq.ZMQError:
            return None
        user = user_of(text) if isinstance(text, str) else None
        if user is None:
            return None
        member, key = user
        if self._admit is not None and self._admit(key) != member:
            return None
        return member

    def send(self, peer: bytes, frames: Sequence[Any]) -> None:
        # A full queue or a gone peer: drop; the peer's heartbeat will time out.
        self._dirty = True
        with contextlib.suppress(zmq.Again):
            send_parts(self._sock, [peer, *frames], _NOBLOCK, copy=False)


class Client(_Socket):
    """Connects to a :class:`Server` (with ``liveness_ms``: carrying ZeroMQ's heartbeats).
    With ``watch``, :attr:`monitor` watches the connection from before it is made (so no
    event is missed: whether its handshake succeeds). With ``curve``, the server must hold
    the secret key of ``server_key`` (Z85; None: ``curve``'s own, one keypair per federation)."""

    def __init__(self, endpoint: str, *, max_message: int = -1, liveness_ms: int | None = None,
                 curve: CurveKeys | None = None, server_key: bytes | None = None, watch: bool = False) -> None:
        sock = context().socket(zmq.DEALER)
        sock.setsockopt(zmq.MAXMSGSIZE, wire_limit(max_message))
        self._max = max_message
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)
        sock.setsockopt(zmq.CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS)
        if liveness_ms is not None:
            _heartbeats(sock, liveness_ms)
        if curve is not None:
            secure_client(sock, curve, server_key)
        self.encrypted = curve is not None
        super().__init__(sock)
        self.monitor: Monitor | None = Monitor(self) if watch else None
        try:
            sock.connect(endpoint)
        except zmq.ZMQError as e:
            if self.monitor is not None:
                self.monitor.close()
            self.close()
            raise TransportError(f"cannot connect to {endpoint}: {e}") from e
        self.endpoint = endpoint

    def reconnect(self) -> None:
        """Connect again to :attr:`endpoint`. libzmq gives up a connection whose handshake the
        server refused (a protocol error: no reconnection of its own), and with it what was
        queued for it: the caller sends again."""
        with contextlib.suppress(zmq.ZMQError):  # (already given up)
            self._sock.disconnect(self.endpoint)
        self._sock.connect(self.endpoint)

    def close(self, linger_ms: int = 0) -> None:
        if self.monitor is not None:  # its socket would keep the context from ending
            self.monitor.close()
            self.monitor = None
        super().close(linger_ms)

    def send(self, frames: Sequence[Any]) -> None:
        # Zero-copy only pays for large frames: for small ones pyzmq's Frame bookkeeping
        # costs more than the copy. Most large frames are below a piece: not cut.
        largest = max(memoryview(f).nbytes for f in frames)
        self._dirty = True
        try:
            if largest >= _ZERO_COPY_MIN:
                pieces = split(frames) if largest > CHUNK else None
                send_parts(self._sock, frames if pieces is None else pieces, copy=False)
            else:
                send_parts(self._sock, frames)
        except zmq.Again:
            raise TransportError(f"{self.endpoint}: no connection took a message for {SEND_TIMEOUT_MS} ms "
                                 "(the connection was dropped)") from None

    def poll(self, timeout_ms: int) -> bool:
        """Wait up to ``timeout_ms`` for a message to read (True), on this socket alone."""
        self._dirty = True
        if self._sock.closed:
            return False
        return bool(self._sock.poll(timeout_ms, zmq.POLLIN))

    def recv(self) -> Frames | None:
        self._dirty = True
        while True:
            try:
                parts = recv_parts(self._sock, _NOBLOCK)
            except zmq.Again:
                return None
            frames = [p.buffer for p in parts]
            if len(frames) > 2 and frames[0][:4] == MAGIC:
                whole = join(frames, self._max)
                if whole is None:
                    log.error("dropped a message in %d pieces, malformed or over the limit of %d bytes",
                              len(frames) - 1, self._max)
                    continue
                frames = whole
            return frames


class Monitor(_Socket):
    """The connections of a socket that closed: the peer's process ended (at once: the
    kernel closes its sockets), or answered none of ZeroMQ's heartbeats for the liveness
    time (a stopped process, a cut network). A poller can watch it like any socket.

    libzmq's I/O thread hands each event to this socket with a blocking send. So the
    monitoring stops before this end closes (whichever of the two is closed first): an
    event for a closed end would block that thread for ever, and with it every socket of
    the process's context (libzmq issue 3575). And the queue of events is unbounded (they
    are few, and read at every wait): a full one would block the I/O thread too, and
    stopping the monitoring would then wait for it, i.e. for this end to be read."""

    _ids = itertools.count()
    _EVENTS = (zmq.EVENT_DISCONNECTED | zmq.EVENT_ACCEPTED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
               | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_SUCCEEDED)

    def __init__(self, watched: _Socket) -> None:
        addr = f"inproc://reactorfed-monitor-{next(self._ids)}"
        watched._sock.monitor(addr, self._EVENTS)
        watched._monitored = True
        self._closed: list[int] = []
        self._refused: list[str] = []
        self._gone: dict[int, None] = {}  # descriptors closed and not (yet) reused, oldest first
        #: handshakes that succeeded and failed, since this monitor started; of the
        #: failures, those the peer's side explained (a key or protocol it refused) rather
        #: than a connection that closed (which a proxy with nothing behind it does too);
        #: of those, the ones where the server's ZAP handler refused this end's key
        self.handshakes = 0
        self.handshake_failures = 0
        self.explained_failures = 0
        self.key_refusals = 0
        self._watched = watched
        sock = watched._sock.context.socket(zmq.PAIR)
        sock.setsockopt(zmq.RCVHWM, 0)  # before connecting: an inproc pipe takes its limit then
        sock.connect(addr)
        super().__init__(sock)

    def close(self, linger_ms: int = 0) -> None:
        self._watched._stop_monitor()
        super().close(linger_ms)

    def disconnected(self) -> list[int]:
        """The descriptors of the connections closed since the last call (no waiting)."""
        self._read()
        out, self._closed = self._closed, []
        return out

    def was_closed(self, fd: int) -> bool:
        """Has the connection of descriptor ``fd`` closed (and no new one taken its number)?
        For a message read after its connection's close was: the close came first."""
        self._read()
        return fd in self._gone

    def refused(self) -> list[str]:
        """Why connections failed their CurveZMQ handshake, or later failed to decrypt
        (altered, injected or replayed bytes), since the last call (no waiting)."""
        self._read()
        out, self._refused = self._refused, []
        return out

    def _read(self) -> None:
        self._dirty = True
        while True:
            try:
                frames = self._sock.recv_multipart(flags=zmq.NOBLOCK)
            except zmq.Again:
                return
            event, value = struct.unpack_from("=Hi", frames[0])
            if event == zmq.EVENT_DISCONNECTED:
                self._closed.append(value)
                self._gone[value] = None
                if len(self._gone) > 4096:
                    del self._gone[next(iter(self._gone))]
            elif event == zmq.EVENT_ACCEPTED:
                self._gone.pop(value, None)
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.handshakes += 1
            else:
                reason = handshake_reason(event, value)
                if reason is not None:
                    self.handshake_failures += 1
                    self.explained_failures += event != zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                    self.key_refusals += event == zmq.EVENT_HANDSHAKE_FAILED_AUTH
                    if len(self._refused) < 64:  # a flood of strangers is counted, not kept
                        self._refused.append(reason)


class _FdSource(Protocol):
    """A source the poller watches by file descriptor (see :mod:`.local`)."""

    def fileno(self) -> int: ...
    def buffered(self) -> bool: ...


class _FdSink(Protocol):
    """A sender with output waiting for its socket to take it (see :mod:`.local`). It
    calls :attr:`notify` (set by the poller) when output starts waiting."""

    notify: Callable[[], None] | None

    def fileno(self) -> int: ...
    @property
    def pending(self) -> bool: ...
    def flush(self) -> None: ...


def _zmq_fd(s: _Socket) -> int:
    """The descriptor ZeroMQ signals changes of socket ``s`` on."""
    return int(s._sock.getsockopt(zmq.FD))


class Poller:
    """Waits until one of several sockets has a message. Also watches sources by file
    descriptor, and sends what waits on registered senders when their sockets take it.

    One ``epoll`` over every descriptor: a ZeroMQ socket's own (``ZMQ_FD``), which becomes
    readable when something changed for the socket, and the others'. Asking ZeroMQ a
    socket's state costs system calls (``zmq_poll`` with two sockets makes five a call),
    so it is asked only when that descriptor signals or the socket was used since it was
    last asked (a send or receive can leave a message to read without a signal: ZeroMQ's
    documented edge-triggered contract). A federate waiting for its peers' data then
    makes one system call a wait.
    """

    def __init__(self, *sockets: _Socket | _FdSource) -> None:
        self._ep = select.epoll()
        self._zsocks: list[_Socket] = []
        self._by_fd: dict[int, Any] = {}  # descriptor -> the ZeroMQ socket or source behind it
        self._fd_sources: list[_FdSource] = []
        self._sinks: dict[int, _FdSink] = {}
        self._sinks_polled: set[int] = set()  # senders watched for room (EPOLLOUT)
        self._sinks_waiting: set[int] = set()  # senders whose output started waiting since the last look
        for s in sockets:
            self.add(s)

    def add(self, s: _Socket | _FdSource) -> None:
        if isinstance(s, _Socket):
            fd = _zmq_fd(s)
            self._zsocks.append(s)
            s._dirty = True  # whatever another poller saw of it, look again
        else:
            fd = s.fileno()
            self._fd_sources.append(s)
        self._ep.register(fd, select.EPOLLIN)
        self._by_fd[fd] = s

    def add_sender(self, s: _FdSink) -> None:
        fd = s.fileno()
        self._sinks[fd] = s
        s.notify = functools.partial(self._sinks_waiting.add, fd)
        if s.pending:
            self._sinks_waiting.add(fd)

    def remove_sender(self, s: _FdSink) -> None:
        """Stop watching sender ``s`` (before it closes: its descriptor may be reused)."""
        fd = s.fileno()
        if self._sinks.get(fd) is not s:
            return
        del self._sinks[fd]
        self._sinks_waiting.discard(fd)
        if fd in self._sinks_polled:
            self._sinks_polled.discard(fd)
            self._ep.unregister(fd)

    def close(self) -> None:
        self._ep.close()

    def __enter__(self) -> Poller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait(self, timeout_ms: int) -> list[Any]:
        """The sockets and sources with something to read, after waiting up to
        ``timeout_ms`` ms for one (-1: forever). Senders with output waiting are flushed
        as their sockets take it."""
        if self._sinks_waiting or self._sinks_polled:
            self._watch_sinks()
        ready: list[Any] = []
        for z in self._zsocks:
            if z._dirty and self._readable(z):
                ready.append(z)
        for src in self._fd_sources:
            if src.buffered():  # read already, not taken yet (this wait does not block)
                ready.append(src)
        timeout = 0 if ready else -1 if timeout_ms < 0 else timeout_ms / 1000
        deadline = time.monotonic() + timeout if timeout > 0 else float("inf")
        while True:
            for fd, ev in self._ep.poll(timeout):
                s = self._by_fd.get(fd)
                if s is None:  # a sender's descriptor: its socket takes more
                    sink = self._sinks.get(fd)
                    if sink is not None:
                        sink.flush()
                elif s in ready:
                    pass
                elif isinstance(s, _Socket):
                    if self._readable(s):
                        ready.append(s)
                elif ev & _READABLE:
                    ready.append(s)
            if ready or timeout == 0:
                break
            # Woken for something else (a ZeroMQ socket connecting, a sender's socket
            # taking more): wait on, until the time is up.
            now = time.monotonic()
            if now >= deadline:
                break
            timeout = -1 if deadline == float("inf") else deadline - now
        return ready

    @staticmethod
    def _readable(z: _Socket) -> bool:
        z._dirty = False
        if z._sock.closed:
            return False
        return bool(int(z._sock.getsockopt(zmq.EVENTS)) & _POLLIN)

    def _watch_sinks(self) -> None:
        """Watch the senders with output waiting for room, and only those."""
        polled = self._sinks_polled
        for fd in self._sinks_waiting:
            if fd not in polled and self._sinks[fd].pending:
                self._ep.register(fd, select.EPOLLOUT)
                polled.add(fd)
        self._sinks_waiting.clear()
        for fd in [fd for fd in polled if not self._sinks[fd].pending]:
            self._ep.unregister(fd)
            polled.discard(fd)
