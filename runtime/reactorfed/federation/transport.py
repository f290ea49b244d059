"""The transport: the one module that imports ZeroMQ.

Federation logic talks to :class:`Server` (accepts many peers, tells them apart),
:class:`Client` (one connection) and :class:`Poller`; nothing else of ZeroMQ leaks
out. Servers refuse frames above ``max_message`` bytes (ZeroMQ drops the connection),
and sockets never linger at close, so a dead peer cannot hang a process.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import zmq

__all__ = ["Client", "Poller", "Server", "TransportError", "context", "shutdown"]

Frames = list[memoryview]
_ZERO_COPY_MIN = 64 * 1024
# plain ints: zmq's flags are an enum.IntFlag, whose operators run Python code
_POLLIN = int(zmq.POLLIN)
_POLLOUT = int(zmq.POLLOUT)


class TransportError(OSError):
    """A socket could not be bound or connected."""


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
        t = threading.Thread(target=ctx.term, daemon=True, name="reactorfed-zmq-shutdown")
        t.start()
        t.join(timeout_s)


class _Socket:
    def __init__(self, sock: zmq.Socket[Any]) -> None:
        self._sock = sock
        sock.setsockopt(zmq.LINGER, 0)

    def close(self, linger_ms: int = 0) -> None:
        """Close. With ``linger_ms`` > 0, messages still queued keep leaving for up to
        that long, while the process's context lives (see :func:`shutdown`)."""
        if not self._sock.closed:
            self._sock.close(linger=linger_ms)

    @property
    def closed(self) -> bool:
        return bool(self._sock.closed)


class Server(_Socket):
    """Binds an endpoint; receives ``(peer id, frames)`` and replies to a peer by id."""

    def __init__(self, endpoint: str, *, max_message: int = -1) -> None:
        sock = context().socket(zmq.ROUTER)
        sock.setsockopt(zmq.MAXMSGSIZE, max_message)
        sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        sock.setsockopt(zmq.RCVHWM, 0)
        super().__init__(sock)
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as e:
            self.close()
            raise TransportError(f"cannot listen on {endpoint}: {e}") from e
        self.endpoint: str = sock.getsockopt_string(zmq.LAST_ENDPOINT)

    def recv(self) -> tuple[bytes, Frames] | None:
        """One message without blocking, or None."""
        try:
            parts = self._sock.recv_multipart(flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return None
        if len(parts) < 2:
            return None
        return parts[0].bytes, [p.buffer for p in parts[1:]]

    def send(self, peer: bytes, frames: Sequence[Any]) -> None:
        # A full queue or a gone peer: drop; the peer's heartbeat will time out.
        with contextlib.suppress(zmq.Again):
            self._sock.send_multipart([peer, *frames], flags=zmq.NOBLOCK, copy=False)


class Client(_Socket):
    """Connects to a :class:`Server`."""

    def __init__(self, endpoint: str, *, max_message: int = -1) -> None:
        sock = context().socket(zmq.DEALER)
        sock.setsockopt(zmq.MAXMSGSIZE, max_message)
        sock.setsockopt(zmq.SNDHWM, 0)
        super().__init__(sock)
        try:
            sock.connect(endpoint)
        except zmq.ZMQError as e:
            self.close()
            raise TransportError(f"cannot connect to {endpoint}: {e}") from e
        self.endpoint = endpoint

    def send(self, frames: Sequence[Any]) -> None:
        # Zero-copy only pays for large frames: for small ones pyzmq's Frame bookkeeping
        # costs more than the copy.
        big = any(memoryview(f).nbytes >= _ZERO_COPY_MIN for f in frames) if len(frames) > 1 else False
        self._sock.send_multipart(list(frames), copy=not big)

    def recv(self) -> Frames | None:
        try:
            parts = self._sock.recv_multipart(flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return None
        return [p.buffer for p in parts]


class _FdSource(Protocol):
    """A source the poller watches by file descriptor (see :mod:`.local`)."""

    def fileno(self) -> int: ...
    def buffered(self) -> bool: ...


class _FdSink(Protocol):
    """A sender with output waiting for its socket to take it (see :mod:`.local`)."""

    def fileno(self) -> int: ...
    @property
    def pending(self) -> bool: ...
    def flush(self) -> None: ...


class Poller:
    """Waits until one of several sockets has a message. Also watches sources by file
    descriptor, and sends what waits on registered senders when their sockets take it."""

    def __init__(self, *sockets: _Socket | _FdSource) -> None:
        self._poller = zmq.Poller()
        self._socks: dict[Any, Any] = {}
        self._fd_sources: list[_FdSource] = []
        self._sinks: dict[int, _FdSink] = {}
        self._sinks_polled: set[int] = set()
        for s in sockets:
            self.add(s)

    def add(self, s: _Socket | _FdSource) -> None:
        if isinstance(s, _Socket):
            self._poller.register(s._sock, zmq.POLLIN)
            self._socks[s._sock] = s
        else:
            self._poller.register(s.fileno(), zmq.POLLIN)
            self._socks[s.fileno()] = s
            self._fd_sources.append(s)

    def remove(self, s: _Socket) -> None:
        self._poller.unregister(s._sock)
        self._socks.pop(s._sock, None)

    def add_sender(self, s: _FdSink) -> None:
        self._sinks[s.fileno()] = s

    def wait(self, timeout_ms: int) -> list[Any]:
        """The sources with a message, after at most ``timeout_ms`` ms (-1: forever).
        Senders with output waiting are flushed as their sockets take it."""
        polled = self._sinks_polled
        for fd, sink in self._sinks.items():
            want = sink.pending
            if want != (fd in polled):
                if want:
                    self._poller.register(fd, _POLLOUT)
                    polled.add(fd)
                else:
                    self._poller.unregister(fd)
                    polled.discard(fd)
        if timeout_ms:
            for src in self._fd_sources:
                if src.buffered():
                    timeout_ms = 0
                    break
        ready = []
        for s, ev in self._poller.poll(timeout_ms):
            if ev & _POLLOUT and s in self._sinks_polled:
                self._sinks[s].flush()
            if ev & _POLLIN:
                ready.append(self._socks[s])
        for src in self._fd_sources:
            if src.buffered() and src not in ready:
                ready.append(src)
        return ready
