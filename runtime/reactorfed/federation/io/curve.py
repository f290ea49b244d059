"""The federation's CurveZMQ keys, and the ZAP handler that admits only them.

Every TCP link of a federation (RTI <-> federate, federate <-> federate) is a CurveZMQ
connection: encrypted and authenticated both ways (Curve25519, XSalsa20-Poly1305; each
connection's short-term keys give forward secrecy, a per-message nonce that must grow
refuses replays and reordering). libzmq does the cryptography (libsodium, in pyzmq's
wheels); this module decides which keys.

One keypair per federation, derived from the federation's secret and its id (HMAC-SHA256
as the KDF): every process that holds the secret (the RTI, each federate) holds the
keypair, nothing else has to be distributed, and a user's own Secret works as it is.
Servers hold it as their long-term key; clients present it as theirs and expect it of the
server; each server's ZAP handler accepts a client only if its long-term key is the
federation's. So a connection is made only between two holders of this federation's
secret: the same trust as the HMAC challenge, which stays, now inside the encryption.
Another federation (another secret, or the same secret under another id) has other keys.

The opt-out, for a trusted single host only, is the flag ``--insecure-plaintext-tcp`` of
``reactorfed launch``, ``rti`` and ``federate``, or ``REACTORFED_INSECURE_PLAINTEXT_TCP=1``;
a process that runs so says it in a warning (:func:`warn_plaintext`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import itertools
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import zmq
from zmq.utils import z85

__all__ = [
    "HANDSHAKE_MS", "OPT_OUT_ENV", "CurveKeys", "Refusals", "curve_server_at", "federation_keys", "handshake_reason",
    "plaintext_opted_out",
    "secure_client", "secure_server", "stop_zap", "warn_plaintext", "zap",
]

log = logging.getLogger("reactorfed.security")

#: names what it does: links in plain text, for a single host whose users are all trusted
OPT_OUT_ENV = "REACTORFED_INSECURE_PLAINTEXT_TCP"
_KDF_LABEL = b"reactorfed/curve25519/v1\x00"
_ZAP_ENDPOINT = "inproc://zeromq.zap.01"  # fixed by the ZAP specification (RFC 27)
#: a connection that has not finished its handshake within this long is closed: an
#: unauthenticated peer holds its buffers only that long (a real handshake takes ms)
HANDSHAKE_MS = 5000


@dataclass(frozen=True, slots=True)
class CurveKeys:
    """A federation's Curve25519 keypair (Z85 text, as libzmq takes it) and the ZAP
    domain its servers name, so that one handler serves every federation of a process."""

    public: bytes
    secret: bytes
    domain: str

    def __repr__(self) -> str:  # never print the secret key
        return f"CurveKeys(domain={self.domain!r})"


@functools.lru_cache(maxsize=16)
def federation_keys(secret: bytes, federation_id: str) -> CurveKeys:
    """The keypair of federation ``federation_id`` whose shared secret is ``secret``."""
    assert secret, "a federation's secret is never empty"
    raw = hmac.new(secret, _KDF_LABEL + federation_id.encode(), hashlib.sha256).digest()
    sk = z85.encode(raw)  # libsodium clamps the scalar: any 32 bytes are a secret key
    pk = zmq.curve_public(sk)
    return CurveKeys(pk, sk, "reactorfed-" + hashlib.sha256(pk).hexdigest()[:16])


def plaintext_opted_out(env: dict[str, str] | None = None) -> bool:
    """Did the user opt out of encryption (``REACTORFED_INSECURE_PLAINTEXT_TCP=1``)?"""
    value = (os.environ if env is None else env).get(OPT_OUT_ENV, "")
    return value.strip().lower() in ("1", "true", "yes")


def warn_plaintext(who: str) -> None:
    """Say, as a warning, that ``who`` (a process of the federation) runs its TCP links in
    plain text: the opt-out must never pass unnoticed in a log."""
    log.warning("%s: TCP links in PLAIN TEXT (--insecure-plaintext-tcp or %s=1): not encrypted, not "
                "authenticated; anyone on the network path can read and alter them. For a trusted single host only",
                who, OPT_OUT_ENV)


_PROTOCOL_REASONS: dict[int, str] = {
    int(zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH): "it does not speak CurveZMQ (a plaintext client: "
    f"{OPT_OUT_ENV} on one side only, or a stranger)",
    int(zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC): "its bytes do not open with this federation's key (a wrong secret or "
    "federation id, or bytes altered on the way)",
    int(zmq.PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE): "a message out of sequence (replayed or reordered on the way)",
    int(zmq.PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE): "a failed key exchange",
}


def handshake_reason(event: int, value: int) -> str | None:
    """Why a connection was refused, from a ZeroMQ monitor event; None for other events."""
    if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
        return f"its key is not this federation's (refused with status {value})"
    if event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
        return _PROTOCOL_REASONS.get(value, f"malformed CurveZMQ traffic (ZMTP error {value:#x})")
    if event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        return f"the connection closed or timed out during the handshake ({os.strerror(value) if value else 'no detail'})"
    return None


def _greeting() -> bytes:
    """A ZMTP 3.0 client's greeting for the CURVE mechanism (signature, version,
    mechanism, as-server 0, filler)."""
    return b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\0") + b"\0" + bytes(31)


def curve_server_at(endpoint: str, timeout_s: float = 1.0) -> bool:
    """Does a ZeroMQ server speaking CurveZMQ answer at ``endpoint`` (``tcp://host:port``)?

    A client whose handshakes keep ending with the connection closed cannot tell a server
    that refused its key from a proxy with nothing behind it yet (an RTI still starting):
    this asks the server for its greeting alone, which it gives before any key is used."""
    host, _, port = endpoint.removeprefix("tcp://").rpartition(":")
    got = b""
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as s:
            s.sendall(_greeting())
            while len(got) < 64:
                chunk = s.recv(64 - len(got))
                if not chunk:
                    return False
                got += chunk
    except (OSError, ValueError):
        return False
    return got[0] == 0xFF and bool(got[9] & 0x01) and got[12:17] == b"CURVE"


class Refusals:
    """Whether a client's handshakes with the server at ``endpoint`` are refused for good
    (a server that holds another key: give up, saying why) or perhaps only for now (a
    proxy or Service in front of a server still starting closes connections too).

    For good when the server said why (a key or protocol it refused), or when, after a
    few closed handshakes, a CurveZMQ server answers at ``endpoint`` and handshakes still
    fail after that (twice: one may have been on its way already)."""

    TRIES = 3

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._server_seen_at: int | None = None  # failures counted when a server answered

    def for_good(self, failures: int, explained: int, succeeded: int) -> bool:
        if succeeded:
            return False
        if explained:
            return True
        if self._server_seen_at is not None:
            return failures >= self._server_seen_at + 2
        if failures >= self.TRIES and curve_server_at(self.endpoint):
            self._server_seen_at = failures
        return False


class _Zap(threading.Thread):
    """The ZAP handler of one ZeroMQ context: answers a CURVE server's question "may
    this client key in?" with yes only for the key registered for the server's domain.

    Its socket is bound on creation, in the caller's thread, so that it exists before any
    server of the context binds: a CURVE server with no handler would admit any client
    that knows its public key (libzmq's default), one whose handler is late waits for it."""

    _ids = itertools.count()

    def __init__(self, ctx: zmq.Context[Any]) -> None:
        super().__init__(name="reactorfed-zap", daemon=True)
        self.ctx = ctx
        self.allowed: dict[str, bytes] = {}  # domain -> the one client key it admits (raw)
        self.denied = 0
        self._sock = ctx.socket(zmq.REP)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.bind(_ZAP_ENDPOINT)
        stop = f"inproc://reactorfed-zap-stop-{next(self._ids)}"
        self._stop_r = ctx.socket(zmq.PAIR)
        self._stop_r.bind(stop)
        self._stop_w = ctx.socket(zmq.PAIR)
        self._stop_w.setsockopt(zmq.LINGER, 0)
        self._stop_w.connect(stop)
        self._next_log = 0

    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self._sock, zmq.POLLIN)
        poller.register(self._stop_r, zmq.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self._stop_r in ready:
                    return
                if self._sock in ready:
                    request = self._sock.recv_multipart()
                    try:
                        reply = self._answer(request)
                    except Exception:  # a request it cannot read is refused; the handler lives on
                        log.exception("malformed ZAP request")
                        reply = [b"1.0", request[1] if len(request) > 1 else b"", b"500", b"error", b"", b""]
                    self._sock.send_multipart(reply)
        except zmq.ContextTerminated:
            return
        finally:
            self._sock.close(linger=0)
            self._stop_r.close(linger=0)

    def _answer(self, req: list[bytes]) -> list[bytes]:
        """RFC 27: version, request id, domain, address, identity, mechanism, credentials."""
        if len(req) < 6 or req[0] != b"1.0":
            return [b"1.0", req[1] if len(req) > 1 else b"", b"500", b"bad ZAP request", b"", b""]
        request_id, domain, address, mechanism = req[1], req[2].decode(errors="replace"), req[3], req[5]
        key = req[6] if len(req) > 6 else b""
        expected = self.allowed.get(domain)
        if mechanism == b"CURVE" and expected is not None and hmac.compare_digest(key, expected):
            return [b"1.0", request_id, b"200", b"OK", b"federation", b""]
        self.denied += 1
        now = time.monotonic_ns()
        if now >= self._next_log:  # strangers must not flood the log
            self._next_log = now + 1_000_000_000
            log.warning("refused a connection from %s: its key is not this federation's",
                        address.decode(errors="replace") or "?")
        return [b"1.0", request_id, b"400", b"not this federation's key", b"", b""]

    def stop(self) -> None:
        """End the thread and close its sockets (before the context terminates)."""
        if self.is_alive():
            self._stop_w.send(b"")
            self.join(2)
        self._stop_w.close(linger=0)


def secure_server(sock: zmq.Socket[Any], keys: CurveKeys) -> None:
    """Make ``sock`` (before it binds) serve with the federation's keypair; the context's
    ZAP handler (started first) admits only clients that present it."""
    zap(sock.context, keys)
    sock.setsockopt(zmq.ZAP_DOMAIN, keys.domain.encode())
    sock.setsockopt(zmq.CURVE_SERVER, 1)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, keys.public)
    sock.setsockopt(zmq.CURVE_SECRETKEY, keys.secret)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)


def secure_client(sock: zmq.Socket[Any], keys: CurveKeys) -> None:
    """Make ``sock`` (before it connects) present the federation's keypair, to a server
    that must hold it too."""
    sock.setsockopt(zmq.CURVE_SERVERKEY, keys.public)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, keys.public)
    sock.setsockopt(zmq.CURVE_SECRETKEY, keys.secret)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)


_zap_lock = threading.Lock()
_zaps: dict[int, _Zap] = {}  # id of a context -> its handler


def zap(ctx: zmq.Context[Any], keys: CurveKeys | None = None) -> _Zap:
    """The ZAP handler of ``ctx`` (started on first use), admitting ``keys``' public key
    on servers of ``keys``' domain."""
    with _zap_lock:
        handler = _zaps.get(id(ctx))
        if handler is None or handler.ctx is not ctx or not handler.is_alive():
            handler = _zaps[id(ctx)] = _Zap(ctx)
            handler.start()
        if keys is not None:
            handler.allowed[keys.domain] = z85.decode(keys.public)
        return handler


def stop_zap(ctx: zmq.Context[Any]) -> None:
    """Stop ``ctx``'s ZAP handler, if it has one (the context is about to end)."""
    with _zap_lock:
        handler = _zaps.pop(id(ctx), None)
        if handler is not None and handler.ctx is ctx:
            handler.stop()
