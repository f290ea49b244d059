"""The federation's CurveZMQ keys (federation/io/curve.py) and encrypted links between
real ZeroMQ sockets: a holder of the federation's secret gets through, and everything
else is refused with a reason on both sides; a TCP proxy in between sees no plaintext."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import zmq
from bench.ports import free_port
from zmq.utils import z85

from reactorfed.federation.io import curve, transport
from reactorfed.federation.io.curve import federation_keys, handshake_reason, plaintext_opted_out
from reactorfed.federation.io.transport import Client, Monitor, Server

pytestmark = pytest.mark.timeout(60)

SECRET = b"0123456789abcdef0123456789abcdef"
MARKER = b"PLAINTEXT-MARKER-5be1c0de"


# -- keys (pure) ---------------------------------------------------------------------------
def test_keys_are_derived_from_the_secret_and_the_federation() -> None:
    k = federation_keys(SECRET, "rl.pong")
    assert k == federation_keys(bytes(SECRET), "rl.pong")  # deterministic: every process derives the same
    assert len(k.public) == len(k.secret) == 40 and len(z85.decode(k.secret)) == 32
    assert zmq.curve_public(k.secret) == k.public  # a real Curve25519 keypair
    others = [federation_keys(SECRET, "rl.other"), federation_keys(SECRET[:-1] + b"!", "rl.pong"),
              federation_keys(b"x" * 32, "rl.pong")]  # fmt: skip
    assert len({o.public for o in [k, *others]}) == 4  # another federation or secret: other keys
    assert len({o.domain for o in [k, *others]}) == 4
    assert k.domain.startswith("reactorfed-") and k.secret.decode() not in repr(k)


def test_the_opt_out_is_explicit() -> None:
    assert not plaintext_opted_out({})
    assert not plaintext_opted_out({"REACTORFED_INSECURE_PLAINTEXT_TCP": "0"})
    assert plaintext_opted_out({"REACTORFED_INSECURE_PLAINTEXT_TCP": "1"})
    assert plaintext_opted_out({"REACTORFED_INSECURE_PLAINTEXT_TCP": " yes "})


def test_handshake_reasons_name_the_cause() -> None:
    assert "not this federation's" in str(handshake_reason(zmq.EVENT_HANDSHAKE_FAILED_AUTH, 400))
    crypto = handshake_reason(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
    assert crypto is not None and "wrong secret" in crypto and "altered" in crypto
    mismatch = handshake_reason(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    assert mismatch is not None and "does not speak CurveZMQ" in mismatch
    seq = handshake_reason(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, zmq.PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE)
    assert seq is not None and "replayed" in seq
    assert "malformed" in str(handshake_reason(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, 0x10000001))
    assert handshake_reason(zmq.EVENT_DISCONNECTED, 7) is None


def test_refusals_for_good_or_for_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal the server explained is final; closed connections are only once a
    CurveZMQ server is seen to answer there and handshakes still fail after that."""
    answers: list[bool] = []
    monkeypatch.setattr(curve, "curve_server_at", lambda endpoint: answers.pop(0))
    assert curve.Refusals("tcp://h:1").for_good(1, 1, 0)  # explained: at once
    assert not curve.Refusals("tcp://h:1").for_good(9, 1, 1)  # but one succeeded: fine
    r = curve.Refusals("tcp://h:1")
    assert not r.for_good(1, 0, 0) and not r.for_good(2, 0, 0)  # too few to ask
    answers += [False, False]
    assert not r.for_good(3, 0, 0) and not r.for_good(4, 0, 0)  # nothing behind the proxy yet
    answers += [True]
    assert not r.for_good(5, 0, 0)  # a server now: the failures so far may have been the proxy's
    assert not r.for_good(6, 0, 0)  # one more may have been on its way
    assert r.for_good(7, 0, 0)  # two after the server answered: its key is another
    assert answers == []


def test_a_refused_member_key_may_yet_come_but_no_other_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a key per member, the server's refusal of the client's key is for now (its
    table may not have caught up with a key just issued): connect again. Any other reason
    the server gives stays final, and so does a key refusal with one key per federation."""
    monkeypatch.setattr(curve, "curve_server_at", lambda endpoint: pytest.fail("not asked: the server explained"))
    keyed = curve.Refusals("tcp://h:1", key_may_come=True)
    assert not keyed.for_good(3, 3, 0, key_refused=3) and keyed.key_refused(3, 0)
    assert keyed.for_good(2, 2, 0, key_refused=1) and keyed.key_refused(1, 0)  # and a protocol error: final
    assert not keyed.key_refused(0, 0) and not keyed.key_refused(2, 1)  # nothing refused, or one got through
    shared = curve.Refusals("tcp://h:1")
    assert shared.for_good(1, 1, 0, key_refused=1) and not shared.key_refused(1, 0)


# -- real sockets ------------------------------------------------------------------------------
def _until(pred: Callable[[], Any], what: str, timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := pred()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)
    return got


@pytest.fixture()
def server() -> Iterator[tuple[Server, Monitor]]:
    s = Server("tcp://127.0.0.1:0", curve=federation_keys(SECRET, "fed"))
    m = Monitor(s)
    yield s, m
    m.close()
    s.close()


def test_holders_of_the_key_talk_both_ways(server: tuple[Server, Monitor]) -> None:
    srv, mon = server
    assert srv.encrypted
    c = Client(srv.endpoint, curve=federation_keys(SECRET, "fed"), watch=True)
    try:
        c.send([MARKER, b"x" * 200_000])  # a large frame too
        peer, frames = _until(srv.recv, "the message")
        assert [bytes(f) for f in frames] == [MARKER, b"x" * 200_000]
        srv.send(peer, [b"back"])
        assert bytes(_until(c.recv, "the reply")[0]) == b"back"
        assert c.monitor is not None and _until(lambda: c.monitor.refused() or c.monitor.handshakes, "ok") == 1
        assert mon.refused() == [] and mon.handshakes == 1
    finally:
        c.close()


@pytest.mark.parametrize("who", ["wrong secret", "other federation", "plaintext", "stranger with the server key"])
def test_everyone_else_is_refused_with_a_reason(server: tuple[Server, Monitor], who: str) -> None:
    srv, mon = server
    expected = {
        "wrong secret": ("closed or timed out during the handshake", "do not open with this federation's key"),
        "other federation": ("closed or timed out during the handshake", "do not open with this federation's key"),
        "plaintext": ("does not speak CurveZMQ", "does not speak CurveZMQ"),
        "stranger with the server key": ("its key is not this federation's", "its key is not this federation's"),
    }[who]
    sock = transport.context().socket(zmq.DEALER)
    if who == "stranger with the server key":  # knows the public key, not the secret one
        pub, sec = zmq.curve_keypair()
        sock.setsockopt(zmq.CURVE_SERVERKEY, federation_keys(SECRET, "fed").public)
        sock.setsockopt(zmq.CURVE_PUBLICKEY, pub)
        sock.setsockopt(zmq.CURVE_SECRETKEY, sec)
    elif who != "plaintext":
        curve.secure_client(sock, federation_keys(b"y" * 32, "fed") if who == "wrong secret"
                            else federation_keys(SECRET, "other"))  # fmt: skip
    client = transport._Socket(sock)
    watch = Monitor(client)  # before it connects: no event missed
    sock.connect(srv.endpoint)
    try:
        sock.send(MARKER)
        client_side = _until(watch.refused, "the client to see the refusal")
        server_side = _until(mon.refused, "the server to see the refusal")
        assert expected[0] in client_side[0], (client_side, server_side)
        assert expected[1] in server_side[0], server_side
        # the client knows it for sure when the server said why; a closed connection alone
        # could be a proxy with nothing behind it
        assert bool(watch.explained_failures) is (who != "wrong secret" and who != "other federation")
        time.sleep(0.2)
        assert srv.recv() is None  # nothing got through
        assert mon.handshakes == 0 and mon.handshake_failures >= 1
    finally:
        watch.close()
        client.close()


class _Proxy:
    """A TCP proxy recording every byte it forwards (client -> server)."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("tcp://").rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.seen = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with self.listener:
            conn, _ = self.listener.accept()
            up = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(conn, up, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(up, conn, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        while data := src.recv(65536):
            if record:
                with self.lock:
                    self.seen += data
            dst.sendall(data)


@pytest.mark.parametrize("encrypted", [True, False])
def test_a_proxy_in_between_sees_no_plaintext(encrypted: bool) -> None:
    keys = federation_keys(SECRET, "fed") if encrypted else None
    srv = Server("tcp://127.0.0.1:0", curve=keys)
    proxy = _Proxy(srv.endpoint)
    c = Client(proxy.endpoint, curve=keys)
    try:
        for i in range(20):
            c.send([MARKER + b" %d" % i])
        for _ in range(20):
            _until(srv.recv, "a message through the proxy")
        with proxy.lock:
            seen = bytes(proxy.seen)
        assert len(seen) > 20 * len(MARKER)
        # The test can fail: in plain text the marker is there (the opt-out's meaning).
        assert (MARKER in seen) is not encrypted
    finally:
        c.close()
        srv.close()


def test_a_curve_server_is_told_from_a_proxy_with_nothing_behind(server: tuple[Server, Monitor]) -> None:
    srv, _ = server
    assert curve.curve_server_at(srv.endpoint)
    plain = Server("tcp://127.0.0.1:0")
    nothing = socket.create_server(("127.0.0.1", 0))  # accepts, then closes: a proxy without upstream
    port = nothing.getsockname()[1]

    def accept_and_close() -> None:
        with nothing:
            conn, _ = nothing.accept()
            conn.close()

    t = threading.Thread(target=accept_and_close, daemon=True)
    t.start()
    try:
        assert not curve.curve_server_at(plain.endpoint)  # a ZeroMQ server, without CurveZMQ
        assert not curve.curve_server_at(f"tcp://127.0.0.1:{port}")
        assert not curve.curve_server_at(f"tcp://127.0.0.1:{free_port()}")  # nothing listens
    finally:
        t.join(5)
        plain.close()


def test_the_zap_handler_ends_with_the_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """shutdown() stops the ZAP thread first: its socket would hold the context's term."""
    monkeypatch.setattr(transport, "_ctx", None)
    srv = Server("tcp://127.0.0.1:0", curve=federation_keys(SECRET, "fed"))
    handler = curve.zap(transport.context())
    assert handler.is_alive()
    srv.close()
    t0 = time.monotonic()
    transport.shutdown(5)
    assert time.monotonic() - t0 < 1.0 and not handler.is_alive()
