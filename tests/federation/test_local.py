"""Same-host data links over Unix sockets (federation/io/local.py): framing, partial writes,
large messages, endpoints; malformed and hostile input to a RUNNING federation's Unix
sockets (property-based): the connection is dropped, nothing else is affected."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactorfed import Input, Output, Reactor, Timer, ms, reaction, sec
from reactorfed.federation.io.local import (
    SOCKET_NAME,
    LocalClient,
    LocalServer,
    split_endpoint,
    with_local,
)
from reactorfed.federation.wire import protocol as P

from .harness import Federation, reference, wait_until
from .programs import Pipeline
from .test_hostile import DATA_MAX, MULTI, examples, one_frame, truncations
from .test_protocol import kind_of

pytestmark = pytest.mark.timeout(120)


def drain(server: LocalServer, n: int, timeout: float = 5.0) -> list[tuple[bytes, list[bytes]]]:
    """``n`` messages from ``server`` (as bytes), waiting at most ``timeout`` s."""
    out: list[tuple[bytes, list[bytes]]] = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        got = server.recv()
        if got is None:
            assert time.monotonic() < deadline, f"got {len(out)} of {n} messages"
            time.sleep(0.001)
            continue
        out.append((got[0], [bytes(f) for f in got[1]]))
    return out


@pytest.fixture
def server() -> Iterator[LocalServer]:
    s = LocalServer(max_message=1 << 20)
    yield s
    s.close()


def test_messages_arrive_whole_and_in_order(server: LocalServer) -> None:
    c = LocalClient(server.path)
    msgs = [[b"a"], [b"", b"x" * 3], [bytes(range(256)) * 40, b"", b"tail"], [np.arange(1000, dtype=np.float64)]]
    for m in msgs:
        c.send(m)
    got = drain(server, len(msgs))
    assert {peer for peer, _ in got} == {got[0][0]}  # one connection, one peer id
    assert [f for _, f in got] == [[bytes(memoryview(x).cast("B")) for x in m] for m in msgs]
    c.close()


def test_received_takes_one_read_and_later_messages_wake_the_poller(server: LocalServer) -> None:
    """What the federate's pump uses: one read of every connection, no second look; what
    comes after leaves the server's descriptor readable."""
    c = LocalClient(server.path)
    for i in range(5):
        c.send([b"m%d" % i])
    wait_until(lambda: bool(select.select([server.fileno()], [], [], 0)[0]))
    got: list[bytes] = []
    deadline = time.monotonic() + 5
    while len(got) < 5 and time.monotonic() < deadline:  # the accept, then the messages
        q = server.received()
        while q:
            got.append(bytes(q.popleft()[1][0]))
    assert got == [b"m%d" % i for i in range(5)]
    assert not server.received() and not server.buffered()
    c.send([b"later"])
    assert select.select([server.fileno()], [], [], 5)[0]
    q = server.received()
    assert [bytes(f[0]) for _, f in q] == [b"later"]
    c.close()


def test_out_of_descriptors_a_pending_connection_is_refused_not_spun_on() -> None:
    """A connection that cannot be accepted (no descriptor left) would keep the listener
    readable, and the federate's poll returning at once: the spare descriptor takes it.
    In a process of its own: nothing else of the test run may meet the lowered limit."""
    script = textwrap.dedent("""
        import contextlib, os, resource, select, socket
        from reactorfed.federation.io.local import LocalClient, LocalServer
        server = LocalServer(max_message=1 << 20)
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # made while there are descriptors
        client.settimeout(5)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
        held = []
        with contextlib.suppress(OSError):
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        client.connect(server.path)  # takes no descriptor on this side
        assert select.select([server.fileno()], [], [], 5)[0]
        assert not server.received()
        assert server.dropped == 1, server.dropped
        assert not select.select([server.fileno()], [], [], 0)[0], "the listener stays readable"
        assert client.recv(1) == b""  # the peer sees its connection closed
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        c = LocalClient(server.path)  # descriptors again: connections are accepted again
        c.send([b"after"])
        assert select.select([server.fileno()], [], [], 5)[0]
        got = []
        for _ in range(100):
            q = server.received()
            got += [bytes(f[0]) for _, f in q]
            q.clear()
            if got:
                break
            select.select([server.fileno()], [], [], 0.05)
        assert got == [b"after"], got
        server.close()
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_a_socket_path_too_long_is_an_os_error_and_leaves_nothing(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deep TMPDIR makes the path longer than a Unix socket's (108 bytes): the federate
    catches the OSError and sends over TCP, so it must be one."""
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with pytest.raises(OSError):
        LocalServer(max_message=1 << 20)
    assert list(deep.iterdir()) == []  # its private directory is gone


def test_each_connection_is_a_peer_of_its_own(server: LocalServer) -> None:
    a, b = LocalClient(server.path), LocalClient(server.path)
    a.send([b"from a"])
    b.send([b"from b"])
    got = dict((f[0], peer) for peer, f in drain(server, 2))
    assert got[b"from a"] != got[b"from b"]


def test_received_frames_are_read_only_and_survive_later_messages(server: LocalServer) -> None:
    c = LocalClient(server.path)
    c.send([b"first" * 10])
    got = None
    while got is None:
        got = server.recv()
    frame = got[1][0]
    assert frame.readonly
    arr = np.frombuffer(frame, dtype=np.uint8)
    for _ in range(50):  # later messages must not overwrite what a reaction still holds
        c.send([b"z" * 50])
    drain(server, 50)
    assert bytes(arr) == b"first" * 10


def test_a_large_message_through_a_full_socket() -> None:
    """The socket takes part; the rest waits and leaves in order as the receiver reads.
    Small frames sent meanwhile are copied (the caller may reuse its buffer at once);
    large ones are kept by reference, as ZeroMQ's zero-copy sends are."""
    server = LocalServer(max_message=1 << 30)
    c = LocalClient(server.path)
    payload = os.urandom(1 << 20) * 40  # more than any socket buffer takes at once
    c.send([b"big", payload])
    assert c.pending
    small = bytearray(b"s" * 1000)
    c.send([b"after", small])
    small[:] = b"\0" * len(small)  # reused at once
    got: list[tuple[bytes, list[bytes]]] = []
    deadline = time.monotonic() + 10
    while len(got) < 2:
        c.flush()
        m = server.recv()
        if m is not None:
            got.append((m[0], [bytes(f) for f in m[1]]))
        assert time.monotonic() < deadline
    assert got[0][1] == [b"big", payload]
    assert got[1][1] == [b"after", b"s" * 1000]
    assert not c.pending
    server.close()


def test_close_with_linger_delivers_what_waits() -> None:
    server = LocalServer(max_message=1 << 30)
    try:
        c = LocalClient(server.path)
        c.send([b"\1" * 40_000_000])
        assert c.pending  # more than any socket buffer takes at once
        got: list[Any] = []
        reader = threading.Thread(target=lambda: got.extend(drain(server, 1, timeout=10)))
        reader.start()
        c.close(linger_ms=5000)
        reader.join(10)
        assert got and got[0][1] == [b"\1" * 40_000_000]
    finally:
        server.close()


def test_a_gone_receiver_loses_messages_without_errors(server: LocalServer) -> None:
    c = LocalClient(server.path)
    c.send([b"x"])
    server.close()
    for _ in range(100):  # as with ZeroMQ: dropped; the peer's heartbeat reports the death
        c.send([b"y" * 1000])
    c.close(linger_ms=100)


def test_the_socket_is_private() -> None:
    s = LocalServer(max_message=1024)
    try:
        mode = os.stat(os.path.dirname(s.path)).st_mode
        assert stat.S_IMODE(mode) == 0o700
        assert os.path.basename(s.path) == SOCKET_NAME
    finally:
        s.close()
    assert not os.path.exists(os.path.dirname(s.path))


def test_endpoints() -> None:
    path = f"/tmp/reactorfed-abc/{SOCKET_NAME}"
    assert split_endpoint(with_local("tcp://10.0.0.1:5000", path)) == ("tcp://10.0.0.1:5000", path)
    assert split_endpoint("tcp://10.0.0.1:5000") == ("tcp://10.0.0.1:5000", None)
    # only an absolute path to a federate's socket is ever connected to
    for bad in ("/var/run/docker.sock", "relative/" + SOCKET_NAME, f"/tmp/x\0/{SOCKET_NAME}", ""):
        assert split_endpoint(with_local("tcp://h:1", bad)) == ("tcp://h:1", None)


def _raw(path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def test_malformed_framing_drops_that_connection_only() -> None:
    server = LocalServer(max_message=1024)
    try:
        good = LocalClient(server.path)
        bads = [
            struct.pack("<I", 0),  # no frames
            struct.pack("<I", 5000),  # too many frames
            struct.pack("<IQ", 1, 4096),  # a message over max_message
            struct.pack("<IQQ", 2, 1 << 63, 1 << 63),  # lengths that overflow
        ]
        socks = [_raw(server.path) for _ in bads]
        for s, b in zip(socks, bads, strict=True):
            s.sendall(b)
        good.send([b"still here"])
        got = drain(server, 1)
        assert got[0][1] == [b"still here"]
        wait_until(lambda: server.recv() is None and server.dropped == len(bads), timeout=5,
                   what="the malformed connections to be dropped")
        for s in socks:  # the server closed them
            s.settimeout(2)
            assert s.recv(10) == b""
        good.send([b"and here"])
        assert drain(server, 1)[0][1] == [b"and here"]
    finally:
        server.close()


def test_too_many_connections_are_refused() -> None:
    server = LocalServer(max_message=1024, max_connections=3)
    try:
        socks = [_raw(server.path) for _ in range(5)]
        for s in socks:
            s.sendall(struct.pack("<IQ", 1, 1) + b"x")
        got = drain(server, 3)
        assert len({peer for peer, _ in got}) == 3
        wait_until(lambda: server.recv() is None and server.dropped == 2, timeout=5, what="2 refusals")
    finally:
        server.close()


# -- a running federation ----------------------------------------------------------------

def _frame(frames: list[bytes]) -> bytes:
    return struct.pack("<I", len(frames)) + b"".join(struct.pack("<Q", len(f)) for f in frames) + b"".join(frames)


def test_hostile_input_to_a_running_federations_unix_sockets() -> None:
    expected = reference(Pipeline, timeout=sec(60)).sink.trace  # type: ignore[attr-defined]
    captured: list[list[bytes]] = []
    orig = LocalClient.send

    def send(self: LocalClient, frames: Any) -> None:
        if len(captured) < 40:
            captured.append([bytes(memoryview(f).cast("B")) for f in frames])
        orig(self, frames)

    LocalClient.send = send  # type: ignore[method-assign]
    try:
        fed = Federation(Pipeline)
        fed.start_all(fast=False, timeout=sec(60), max_message=DATA_MAX)
        wait_until(fed.running, what="the federation to start")
        wait_until(lambda: len(captured) >= 10, what="data to flow over the Unix sockets")
    finally:
        LocalClient.send = orig  # type: ignore[method-assign]
    sinks = {n: fed.coords[n] for n in ("relay", "sink")}
    paths = {}
    for n, c in sinks.items():
        assert c.data_port is not None and c.data_port.local is not None
        paths[n] = c.data_port.local.path
    assert all(c.unix_links == 1 for n, c in fed.coords.items() if n != "sink")
    rejected0 = {n: c.rejected_messages for n, c in sinks.items()}
    opened: list[socket.socket] = []

    def fresh(name: str) -> socket.socket:
        s = _raw(paths[name])
        s.setblocking(False)
        opened.append(s)
        if len(opened) > 100:  # keep below the server's connection limit
            opened.pop(0).close()
        return s

    def alive() -> None:
        assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
        assert fed.server.phase == "running"

    def put(s: socket.socket, data: bytes) -> None:
        # the federate may already have dropped this connection, or read it later
        with contextlib.suppress(BlockingIOError, BrokenPipeError, ConnectionResetError):
            s.sendall(data)

    # data in both forms: compact (a value and a promise) and batches
    replays = [m for m in captured if kind_of(m[0]) in (P.COMPACT, P.AUTH, P.BATCH)]
    assert any(kind_of(m[0]) == P.AUTH for m in replays)
    assert any(P.is_compact(m[0]) for m in replays)
    try:
        # 1. raw bytes: garbage, and framing with anything inside
        @examples(500)
        @given(st.sampled_from(sorted(sinks)), st.binary(max_size=400))
        def raw_bytes(name: str, data: bytes) -> None:
            put(fresh(name), data)

        raw_bytes()
        alive()

        # 2. well-framed junk messages of every kind, one frame or several
        @examples(800)
        @given(st.sampled_from(sorted(sinks)), one_frame() | MULTI)
        def framed_junk(name: str, frames: list[bytes]) -> None:
            put(fresh(name), _frame(frames))

        framed_junk()
        alive()

        # 3. the real connections' messages replayed and mangled, AUTH first, on new connections
        @examples(300)
        @given(st.sampled_from(sorted(sinks)),
               st.lists(st.sampled_from(replays) | truncations(replays), min_size=1, max_size=4))
        def replayed(name: str, msgs: list[list[bytes]]) -> None:
            s = fresh(name)
            for m in msgs:
                put(s, _frame(m))

        replayed()
        alive()

        # 4. a message over the size limit, and one cut short by a closed connection
        for name in sinks:
            put(fresh(name), _frame([replays[0][0], b"\0" * (DATA_MAX + 1)]))
            s = fresh(name)
            put(s, _frame([b"x" * 1000])[:500])
            s.close()
            opened.remove(s)
        time.sleep(0.3)
        alive()
        for n, c in sinks.items():
            wait_until(lambda c=c, n=n: c.rejected_messages > rejected0[n], what=f"{n} to refuse something")
    finally:
        for s in opened:
            s.close()
    fed.schedulers["src"].request_stop()
    fed.wait(30)
    assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
    for name, c in sinks.items():  # only the real upstream peer authenticated
        assert c.authenticated_upstream == sorted(c.layout.direct_upstream(c.me)), name
    trace = fed.programs["sink"].sink.trace  # type: ignore[attr-defined]
    assert len(trace) >= 50
    assert trace == expected[: len(trace)]


def test_a_federate_without_the_peers_socket_falls_back_to_tcp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another pod's path does not exist here: the link goes over TCP, same output."""
    from reactorfed.federation.process import links as F

    real = F.split_endpoint

    def elsewhere(ep: str) -> tuple[str, str | None]:
        tcp, path = real(ep)
        return tcp, None if path is None else f"/nonexistent-{os.getpid()}/{SOCKET_NAME}"

    monkeypatch.setattr(F, "split_endpoint", elsewhere)
    expected = reference(Pipeline, timeout=sec(1)).sink.trace  # type: ignore[attr-defined]
    fed = Federation(Pipeline)
    fed.start_all(fast=True, timeout=sec(1))
    fed.wait(30)
    assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
    assert all(c.unix_links == 0 for c in fed.coords.values())
    assert fed.programs["sink"].sink.trace == expected  # type: ignore[attr-defined]


def test_a_second_connection_is_accepted_while_the_first_streams(server: LocalServer) -> None:
    """With one connection the server reads it without asking its epoll set; a peer that
    connects meanwhile is still accepted (a full look at least every 64 reads) and its
    messages delivered, while the first keeps sending."""
    first = LocalClient(server.path)
    first.send([b"hello"])
    assert drain(server, 1)[0][1] == [b"hello"]
    second = LocalClient(server.path)
    second.send([b"from the second"])
    seen: list[bytes] = []
    for i in range(200):  # the first one never pauses
        first.send([b"stream %d" % i])
        q = server.received()
        while q:
            seen.append(bytes(q.popleft()[1][0]))
        if b"from the second" in seen:
            break
    assert b"from the second" in seen, f"not accepted after {i + 1} reads"
    assert i < 100
    streamed = [m for m in seen if m.startswith(b"stream")]
    assert streamed == [b"stream %d" % k for k in range(len(streamed))]  # in order, none lost
    first.close()
    second.close()


class _OddSource(Reactor):
    """Each tag a small value whose size changes (so does the batch frame's) and a 6 KB
    array: a DATA item whose payload frame follows the batch in the same message."""

    small = Output(object)
    big = Output(object)
    tick = Timer(offset=0, period=ms(1))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[tick], effects=[small, big])
    def emit(self, small: Any, big: Any) -> None:
        self.i += 1
        if self.i <= 24:
            small.set(b"x" * self.i)
            big.set(np.arange(750, dtype=np.float64) + self.i)


class _AlignedSink(Reactor):
    small = Input(object)
    big = Input(object)

    def __init__(self) -> None:
        self.seen: list[tuple[bool, float]] = []

    @reaction(triggers=[big])
    def record(self, big: Any) -> None:
        a = big.get()
        self.seen.append((bool(a.flags.aligned), float(a.sum())))


class _OddPair(Reactor):
    def __init__(self) -> None:
        self.src = _OddSource()
        self.sink = _AlignedSink()
        self.connect(self.src.small, self.sink.small)
        self.connect(self.src.big, self.sink.big)


def test_arrays_after_a_batch_arrive_aligned() -> None:
    """Over a Unix socket a payload frame sits in the message after the batch frame, at
    whatever offset that frame's length puts it: an array there is copied when it is not
    aligned (numpy's reductions may round differently on unaligned data), so every
    received array is aligned and holds what was sent."""
    fed = Federation(_OddPair)
    fed.start_all(fast=True, timeout=ms(40))
    fed.wait(60)
    assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
    assert fed.coords["sink"].unix_links == 0 and fed.coords["src"].unix_links == 1  # (over the Unix socket)
    seen = fed.programs["sink"].sink.seen  # type: ignore[attr-defined]
    assert seen == [(True, float((np.arange(750, dtype=np.float64) + i).sum())) for i in range(1, 25)]
