"""The poller (federation/io/transport.py) over real ZeroMQ sockets and Unix sockets: a
message is never missed, whatever was sent or received on a socket before the wait
(ZeroMQ's descriptor signals only changes it was not asked about), and a wait with
nothing to read lasts its timeout."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from reactorfed.federation.io import transport
from reactorfed.federation.io.local import LocalClient, LocalServer
from reactorfed.federation.io.transport import Client, Monitor, Poller, Server


@pytest.fixture()
def pair() -> Iterator[tuple[Server, Client]]:
    server = Server("tcp://127.0.0.1:0")
    client = Client(server.endpoint)
    yield server, client
    client.close()
    server.close()


def _peer(server: Server, client: Client) -> bytes:
    """Connect the pair (one message up) and return the client's id at the server."""
    client.send([b"hello"])
    poller = Poller(server)
    assert poller.wait(2000) == [server]
    got = server.recv()
    assert got is not None and bytes(got[1][0]) == b"hello"
    poller.close()
    return got[0]


def test_messages_are_seen_whatever_happened_on_the_socket_before(pair: tuple[Server, Client]) -> None:
    server, client = pair
    peer = _peer(server, client)
    poller = Poller(client)
    assert poller.wait(0) == []
    for i in range(200):
        # The reply is queued while the client sends: after a send, the descriptor may not
        # signal what arrived meanwhile. Every reply must still wake the wait.
        client.send([b"ping %d" % i])
        deadline = time.monotonic() + 2
        while server.recv() is None:
            assert time.monotonic() < deadline
        server.send(peer, [b"pong %d" % i])
        time.sleep(0.0005 if i % 2 else 0)
        assert poller.wait(2000) == [client], i
        frames = client.recv()
        assert frames is not None and bytes(frames[0]) == b"pong %d" % i
        assert client.recv() is None
    poller.close()


def test_several_queued_messages_read_one_per_wait(pair: tuple[Server, Client]) -> None:
    """A reader that takes one message per wakeup (as the join does) is woken for each."""
    server, client = pair
    peer = _peer(server, client)
    for i in range(5):
        server.send(peer, [b"m%d" % i])
    poller = Poller(client)
    got = []
    for _ in range(5):
        assert poller.wait(2000) == [client]
        frames = client.recv()
        assert frames is not None
        got.append(bytes(frames[0]))
    assert got == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    assert poller.wait(0) == []
    poller.close()


def test_a_message_from_another_thread_wakes_a_blocked_wait(pair: tuple[Server, Client]) -> None:
    server, client = pair
    peer = _peer(server, client)
    poller = Poller(client)
    assert poller.wait(0) == []  # the socket was asked about: only its descriptor can wake it now
    timer = threading.Timer(0.05, lambda: server.send(peer, [b"late"]))
    timer.start()
    t0 = time.monotonic()
    assert poller.wait(5000) == [client]
    assert time.monotonic() - t0 < 2
    timer.join()
    poller.close()


def test_an_idle_wait_lasts_its_timeout_and_a_new_poller_sees_what_another_left(pair: tuple[Server, Client]) -> None:
    server, client = pair
    peer = _peer(server, client)
    poller = Poller(client)
    t0 = time.monotonic()
    assert poller.wait(100) == []
    assert 0.09 <= time.monotonic() - t0 < 1
    server.send(peer, [b"x"])
    assert poller.wait(2000) == [client]
    poller.close()
    # Left unread by the first poller: a second one (the federate's, after the join's)
    # must not wait for a signal that already came.
    second = Poller(client)
    assert second.wait(0) == [client]
    second.close()


def test_zeromq_sockets_and_unix_sockets_together(pair: tuple[Server, Client]) -> None:
    server, client = pair
    peer = _peer(server, client)
    local = LocalServer(max_message=1 << 20)
    sender = LocalClient(local.path)
    poller = Poller(client, local)
    sender.send([b"over unix"])
    assert poller.wait(2000) == [local]
    deadline = time.monotonic() + 2
    while local.recv() is None:  # the first read may only accept the connection
        assert time.monotonic() < deadline
        poller.wait(100)
    server.send(peer, [b"over zmq"])
    sender.send([b"both"])
    deadline = time.monotonic() + 2
    seen: set[object] = set()
    while len(seen) < 2 and time.monotonic() < deadline:
        seen.update(poller.wait(100))
    assert seen == {client, local}
    poller.close()
    sender.close()
    local.close()


def test_the_poller_drains_a_sender_that_had_to_wait_and_then_stops_watching_it() -> None:
    """A send the socket did not take whole waits in the sender; the poller watches its
    socket for room from the next wait on and sends the rest as room comes (no flush by
    the caller), then stops watching it: an idle wait lasts its timeout again."""
    local = LocalServer(max_message=1 << 30)
    sender = LocalClient(local.path)
    poller = Poller(local)
    poller.add_sender(sender)
    payload = bytes(range(256)) * (64 << 10)  # 16 MiB: more than the socket takes at once
    sender.send([b"big", payload])
    assert sender.pending
    got = None
    deadline = time.monotonic() + 20
    while got is None:
        assert time.monotonic() < deadline, "the waiting output never left"
        poller.wait(100)
        got = local.recv()
    assert [bytes(f) for f in got[1]] == [b"big", payload]
    assert not sender.pending
    poller.wait(10)  # the look after the drain stops watching for room
    t0 = time.monotonic()
    assert poller.wait(200) == []
    assert time.monotonic() - t0 >= 0.15  # not woken again and again by a socket with room
    poller.close()
    sender.close()
    local.close()


def _open_connections_at(port: int) -> int:
    """Connections of this machine whose local end is ``port``, other than the listener."""
    n = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, _, state = line.split()[1:4]
        n += int(local.split(":")[1], 16) == port and state != "0A"  # 0A: LISTEN
    return n


_WEDGED: list[Any] = []  # contexts whose I/O thread hangs: never collected (their term would hang too)


class _Peers:
    """A server in a context of its own (whatever happens to that context's I/O thread),
    and peers from another context that connect, say something and go."""

    def __init__(self) -> None:
        self.server = Server("tcp://127.0.0.1:0")
        self.port = int(self.server.endpoint.rsplit(":", 1)[1])
        self.ctx = transport.context()
        self.other = zmq.Context()
        self.open: list[zmq.Socket[Any]] = []

    def say(self, text: bytes) -> None:
        peer = self.other.socket(zmq.DEALER)
        peer.setsockopt(zmq.LINGER, 0)
        peer.connect(self.server.endpoint)
        self.open.append(peer)
        peer.send(text)
        deadline = time.monotonic() + 5
        while (got := self.server.recv()) is None:
            assert time.monotonic() < deadline, f"{text!r} never arrived: the context's I/O thread hangs"
            time.sleep(0.0002)
        assert bytes(got[1][0]) == text

    def close(self) -> None:
        for p in self.open:
            p.close()
        self.server.close()
        for ctx in (self.ctx, self.other):
            t = threading.Thread(target=ctx.term, daemon=True)
            t.start()
            t.join(5)
            if t.is_alive():  # a wedged I/O thread: the term waits for it for ever
                _WEDGED.append(ctx)


@pytest.fixture()
def peers(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Peers]:
    monkeypatch.setattr(transport, "_ctx", None)
    p = _Peers()
    yield p
    p.close()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the kernel's connection table")
def test_closing_a_monitor_never_wedges_the_io_thread(peers: _Peers) -> None:
    """libzmq's I/O thread hands each monitor event over with a blocking send: once the
    monitor's reading end is closed, the next event (a peer disconnecting) blocks that
    thread for ever, and with it every socket of the context (libzmq issue 3575). The
    RTI then accepts no connection (a federate's HELLO goes unanswered). Closing a
    :class:`Monitor` stops the monitoring first."""
    monitor = Monitor(peers.server)
    peers.say(b"hello")
    monitor.close()  # as the RTI and a federate's heartbeat thread do when they end ...
    # ... while peers come and go. (The first disconnect may still find the closed end's
    # pipe in place, as the reaper closes it asynchronously: the later ones cannot.)
    for i in range(3):
        peers.open.pop().close()
        deadline = time.monotonic() + 5
        while _open_connections_at(peers.port):  # its end closes once the I/O thread handled the disconnect
            assert time.monotonic() < deadline, "the I/O thread never handled the disconnect: it hangs"
            time.sleep(0.005)
        peers.say(b"still served %d" % i)


def test_a_monitor_read_late_never_holds_up_the_io_thread(peers: _Peers) -> None:
    """Events wait for the monitor's reader without limit: with ZeroMQ's default limit
    (1000 each side), the 2001st disconnect not yet read blocked the I/O thread, and so
    every connection of the process, until the reader caught up (a flood of strangers'
    connections against a busy RTI)."""
    monitor = Monitor(peers.server)
    for i in range(2100):
        peers.say(b"%d" % i)
        peers.open.pop().close()
    assert len(monitor.disconnected()) == 2100
    monitor.close()


def test_a_connection_whose_syns_go_unanswered_is_made_afresh() -> None:
    """A SYN dropped on the way (here: a listener whose accept queue is full drops it) is
    retransmitted by the kernel for two minutes on the same connection, which stays
    dropped if the path is what drops it (a pod's first SYN to a Service sent before
    kube-proxy knew the Service). The client gives the attempt up after
    CONNECT_TIMEOUT_MS and connects afresh: a new attempt well within twice that."""
    import socket

    from zmq.utils.monitor import recv_monitor_message

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(2):  # the accept queue (of length backlog + 1) full: later SYNs are dropped
        f = socket.socket()
        f.setblocking(False)
        f.connect_ex(("127.0.0.1", port))
        fillers.append(f)
    time.sleep(0.2)
    client = Client(f"tcp://127.0.0.1:{port}")
    events = client._sock.get_monitor_socket(zmq.EVENT_CONNECT_RETRIED | zmq.EVENT_CONNECTED)
    try:
        t0 = time.monotonic()
        assert events.poll(2 * transport.CONNECT_TIMEOUT_MS + 1000), "no new attempt: the first SYN_SENT never ends"
        event = recv_monitor_message(events)
        assert event["event"] == zmq.EVENT_CONNECT_RETRIED, event
        assert time.monotonic() - t0 >= transport.CONNECT_TIMEOUT_MS / 1000 - 0.5
    finally:
        client._sock.disable_monitor()
        events.close(linger=0)
        client.close()
        for f in fillers:
            f.close()
        listener.close()
