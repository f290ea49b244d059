"""The federation's CurveZMQ keys, and the ZAP handler that admits only them.

Every TCP link of a federation (RTI <-> federate, federate <-> federate) is a CurveZMQ
connection: encrypted and authenticated both ways (Curve25519, XSalsa20-Poly1305; each
connection's short-term keys give forward secrecy, a per-message nonce that must grow
refuses replays and reordering). libzmq does the cryptography (libsodium, in pyzmq's
wheels); this module decides which keys.

Two ways to key a federation:

- **A keypair per member** (:func:`new_keys`; ``reactorfed launch`` issues them): the RTI
  and each federate hold their own secret key and nothing else's. A server says, per
  connection, which client keys it admits and as whom (:data:`Admit`: a key's raw 32 bytes
  -> the member it was issued to, or None); the ZAP handler asks it at each handshake and
  the member's name and the key travel with every message of the connection (ZeroMQ's
  ``User-Id`` property, :func:`user_id`), so that a server asks its admission again when a
  message matters (:attr:`.transport.Server.last_user`: a key withdrawn since the
  connection opened no longer names its member). A client names the server's public key
  it expects (``server_key``).
- **One keypair per federation** (:func:`federation_keys`, for a deployment that still
  shares one secret: derived from the secret and the federation id, HMAC-SHA256 as the
  KDF): every holder of the secret holds the keypair; servers admit only it.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq
from zmq.utils import z85

__all__ = [
    "HANDSHAKE_MS", "OPT_OUT_ENV", "Admit", "CurveKeys", "Refusals", "curve_server_at", "federation_keys",
    "handshake_reason", "keys_of", "new_keys", "plaintext_opted_out", "raw_key",
    "secure_client", "secure_server", "stop_zap", "user_id", "user_of", "warn_plaintext", "zap",
]

log = logging.getLogger("reactorfed.security")

#: names what it does: links in plain text, for a single host whose users are all trusted
OPT_OUT_ENV = "REACTORFED_INSECURE_PLAINTEXT_TCP"
_KDF_LABEL = b"reactorfed/curve25519/v1\x00"
_ZAP_ENDPOINT = "inproc://zeromq.zap.01"  # fixed by the ZAP specification (RFC 27)
#: a connection that has not finished its handshake within this long is closed: an
#: unauthenticated peer holds its buffers only that long (a real handshake takes ms)
HANDSHAKE_MS = 5000
#: a server's admission: a client's long-term public key (32 raw bytes) -> the member it
#: was issued to (ZeroMQ's User-Id of the connection's messages), or None: refused
Admit = Callable[[bytes], str | None]


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
    return _keys(pk, sk)


def _keys(pk: bytes, sk: bytes) -> CurveKeys:
    # The ZAP domain names the server's key: one handler serves every server of a process
    # (a federation's threads share one context), each with its own admission.
    return CurveKeys(pk, sk, "reactorfed-" + hashlib.sha256(pk).hexdigest()[:16])


def new_keys() -> CurveKeys:
    """A fresh Curve25519 keypair (from the operating system's random source, by libsodium)."""
    pk, sk = zmq.curve_keypair()
    return _keys(pk, sk)


def _z85_key(key: bytes | str, what: str) -> tuple[bytes, bytes]:
    """A Curve25519 key's Z85 text (40 characters) and its 32 raw bytes; ``what`` names it
    in the error ("secret key", "public key")."""
    text = key.encode() if isinstance(key, str) else bytes(key)
    if len(text) != 40:
        raise ValueError(f"a Curve25519 {what} is 40 characters of Z85, got {len(text)}")
    try:
        return text, bytes(z85.decode(text))
    except (ValueError, KeyError) as e:
        raise ValueError(f"not a Z85 Curve25519 {what}: {e}") from None


def keys_of(secret_key: bytes | str) -> CurveKeys:
    """The keypair whose secret key is ``secret_key`` (Z85 text, 40 characters)."""
    sk, _ = _z85_key(secret_key, "secret key")
    try:
        pk = zmq.curve_public(sk)
    except zmq.ZMQError as e:
        raise ValueError(f"not a Z85 Curve25519 secret key: {e}") from None
    return _keys(pk, sk)


def raw_key(public: bytes | str) -> bytes:
    """A public key's 32 raw bytes, from its Z85 text (40 characters)."""
    return _z85_key(public, "public key")[1]


def user_id(member: str, key: bytes) -> str:
    """A connection's ZAP User-Id: the member its client's key (32 raw bytes) was issued
    to, and that key (Z85; its alphabet has no ``|``)."""
    return f"{member}|{z85.encode(key).decode()}"


def user_of(text: str) -> tuple[str, bytes] | None:
    """:func:`user_id`'s member and raw key (None: not one)."""
    member, sep, key = text.rpartition("|")
    if not sep or len(key) != 40:
        return None
    try:
        return member, bytes(z85.decode(key.encode()))
    except (ValueError, KeyError):
        return None


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
        return (f"its key is not this federation's, or not admitted here (a stranger's, a member's not linked "
                f"here, or withdrawn; refused with status {value})")
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
    fail after that (twice: one may have been on its way already).

    ``key_may_come``: a member's key the server refused is perhaps refused only for now:
    its issuer has just made it, and the server's table of keys has not caught up yet (a
    ConfigMap reaches a pod's volume with a lag). Such refusals are :meth:`key_refused`,
    not for good; the client connects again until its own deadline."""

    TRIES = 3

    def __init__(self, endpoint: str, key_may_come: bool = False) -> None:
        self.endpoint = endpoint
        self.key_may_come = key_may_come
        self._server_seen_at: int | None = None  # closed handshakes counted when a server answered

    def for_good(self, failures: int, explained: int, succeeded: int, key_refused: int = 0) -> bool:
        """``failures`` handshakes failed, ``explained`` of them with the server's reason,
        ``key_refused`` of those because it refused this client's key; ``succeeded`` did not."""
        if succeeded:
            return False
        if explained > (key_refused if self.key_may_come else 0):
            return True
        closed = failures - explained
        if self._server_seen_at is not None:
            return closed >= self._server_seen_at + 2
        if closed >= self.TRIES and curve_server_at(self.endpoint):
            self._server_seen_at = closed
        return False

    def key_refused(self, key_refused: int, succeeded: int) -> bool:
        """Did the server refuse this client's key, which may yet be admitted (connect again)?"""
        return self.key_may_come and key_refused > 0 and not succeeded


class _Zap(threading.Thread):
    """The ZAP handler of one ZeroMQ context: answers a CURVE server's question "may
    this client key in?" with the admission registered for the server's domain (the
    member the key was issued to becomes the connection's User-Id).

    Its socket is bound on creation, in the caller's thread, so that it exists before any
    server of the context binds: a CURVE server with no handler would admit any client
    that knows its public key (libzmq's default), one whose handler is late waits for it."""

    _ids = itertools.count()

    def __init__(self, ctx: zmq.Context[Any]) -> None:
        super().__init__(name="reactorfed-zap", daemon=True)
        self.ctx = ctx
        self.allowed: dict[str, Admit] = {}  # domain -> its server's admission
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
        admit = self.allowed.get(domain)
        member = admit(bytes(key)) if mechanism == b"CURVE" and admit is not None and len(key) == 32 else None
        if member is not None:
            return [b"1.0", request_id, b"200", b"OK", user_id(member, bytes(key)).encode(), b""]
        self.denied += 1
        now = time.monotonic_ns()
        if now >= self._next_log:  # strangers must not flood the log
            self._next_log = now + 1_000_000_000
            log.warning("refused a connection from %s: its key is not one this server admits (a stranger, "
                        "another federation, a member not linked here, or a withdrawn key)",
                        address.decode(errors="replace") or "?")
        return [b"1.0", request_id, b"400", b"key not admitted", b"", b""]

    def stop(self) -> None:
        """End the thread and close its sockets (before the context terminates)."""
        if self.is_alive():
            self._stop_w.send(b"")
            self.join(2)
        self._stop_w.close(linger=0)


def secure_server(sock: zmq.Socket[Any], keys: CurveKeys, admit: Admit | None = None) -> None:
    """Make ``sock`` (before it binds) serve with ``keys``; the context's ZAP handler
    (started first) admits the clients ``admit`` names (None: only those presenting
    ``keys`` themselves, one keypair per federation)."""
    zap(sock.context, keys, admit)
    sock.setsockopt(zmq.ZAP_DOMAIN, keys.domain.encode())
    sock.setsockopt(zmq.CURVE_SERVER, 1)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, keys.public)
    sock.setsockopt(zmq.CURVE_SECRETKEY, keys.secret)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)


def secure_client(sock: zmq.Socket[Any], keys: CurveKeys, server_key: bytes | None = None) -> None:
    """Make ``sock`` (before it connects) present ``keys``, to a server that must hold the
    secret key of ``server_key`` (Z85; None: ``keys`` too, one keypair per federation)."""
    sock.setsockopt(zmq.CURVE_SERVERKEY, keys.public if server_key is None else server_key)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, keys.public)
    sock.setsockopt(zmq.CURVE_SECRETKEY, keys.secret)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)


_zap_lock = threading.Lock()
_zaps: dict[int, _Zap] = {}  # id of a context -> its handler


def zap(ctx: zmq.Context[Any], keys: CurveKeys | None = None, admit: Admit | None = None) -> _Zap:
    """The ZAP handler of ``ctx`` (started on first use), answering for servers of
    ``keys``' domain with ``admit`` (None: ``keys``' own public key alone, as "federation")."""
    with _zap_lock:
        handler = _zaps.get(id(ctx))
        if handler is None or handler.ctx is not ctx or not handler.is_alive():
            handler = _zaps[id(ctx)] = _Zap(ctx)
            handler.start()
        if keys is not None:
            handler.allowed[keys.domain] = _only(bytes(z85.decode(keys.public))) if admit is None else admit
        return handler


def _only(key: bytes) -> Admit:
    def admit(client: bytes) -> str | None:
        return "federation" if hmac.compare_digest(client, key) else None

    return admit


def stop_zap(ctx: zmq.Context[Any]) -> None:
    """Stop ``ctx``'s ZAP handler, if it has one (the context is about to end)."""
    with _zap_lock:
        handler = _zaps.pop(id(ctx), None)
        if handler is not None and handler.ctx is ctx:
            handler.stop()
