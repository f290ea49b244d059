"""CurveZMQ as an eavesdropper, an auditor or a stranger sees it (RFC 26, as libzmq 4.3
implements it: ``src/curve_client_tools.hpp``, ``src/curve_mechanism_base.cpp``), with the
libsodium that pyzmq's wheels carry, through ctypes: no cryptography of the test's own.

* :func:`frames` reads the ZMTP 3 frames of a recorded connection (after its 64-byte greeting).
* :func:`open_welcome` opens a recorded WELCOME with a server's long-term secret key, as
  someone who learned the federation's secret after the fact could.
* :class:`Stranger` makes the handshake commands of a client that knows a server's public
  key: a HELLO the server answers, then an INITIATE of its choosing.

Commands (the frame's body): HELLO = ``\\x05HELLO`` version(2) padding(72) C'(32) nonce(8)
Box[64 zeros](C'->S); WELCOME = ``\\x07WELCOME`` nonce(16) Box[S' + cookie](S->C');
INITIATE = ``\\x08INITIATE`` cookie(96) nonce(8) Box[C + vouch + metadata](C'->S'), the vouch
Box[C' + S](C->S'); READY = ``\\x05READY`` nonce(8) Box[metadata](S'->C'); a message
``\\x07MESSAGE`` nonce(8) Box[flags + body](C'->S' or S'->C'). Only the short-term keys
(C', S', made for one connection and never stored) box the messages: forward secrecy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

import zmq
from zmq.utils import z85

GREETING = 64
#: a ZMTP 3.0 client's greeting for CURVE (signature, version, mechanism, as-server 0, filler)
CURVE_GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\0") + b"\0" + bytes(31)
WELCOME_FRAME = 2 + 168  # a command frame's flags and short size, and the WELCOME
_MAC = 16

_lib: ctypes.CDLL | None = None


def sodium() -> ctypes.CDLL:
    """libsodium: the copy in pyzmq's wheel (the one libzmq uses), else the system's."""
    global _lib
    if _lib is None:
        bundled = sorted((Path(zmq.__file__).parent.parent / "pyzmq.libs").glob("libsodium*.so*"))
        path = str(bundled[0]) if bundled else ctypes.util.find_library("sodium")
        if path is None:
            raise RuntimeError("no libsodium: neither pyzmq's bundled copy nor a system one")
        lib = ctypes.CDLL(path)
        if lib.sodium_init() < 0:
            raise RuntimeError(f"sodium_init failed ({path})")
        _lib = lib
    return _lib


def box(plain: bytes, nonce: bytes, pk: bytes, sk: bytes) -> bytes:
    """crypto_box_easy: the MAC (16 bytes) and the ciphertext, as CurveZMQ puts them on the wire."""
    assert len(nonce) == 24 and len(pk) == len(sk) == 32
    out = ctypes.create_string_buffer(len(plain) + _MAC)
    assert sodium().crypto_box_easy(out, plain, ctypes.c_ulonglong(len(plain)), nonce, pk, sk) == 0
    return out.raw


def box_open(boxed: bytes, nonce: bytes, pk: bytes, sk: bytes) -> bytes | None:
    """crypto_box_open_easy: the plaintext, or None when the box does not open with these keys."""
    if len(boxed) < _MAC:
        return None
    out = ctypes.create_string_buffer(max(1, len(boxed) - _MAC))
    ok = sodium().crypto_box_open_easy(out, boxed, ctypes.c_ulonglong(len(boxed)), nonce, pk, sk) == 0
    return out.raw[: len(boxed) - _MAC] if ok else None


def keypair() -> tuple[bytes, bytes]:
    """A fresh Curve25519 keypair (public, secret), raw."""
    pk, sk = zmq.curve_keypair()
    return z85.decode(pk), z85.decode(sk)


def raw(z85_key: bytes) -> bytes:
    return z85.decode(z85_key)


def frames(stream: bytes) -> list[bytes]:
    """The bodies of the ZMTP frames of a recorded connection's stream (one direction),
    after its greeting; a frame cut short at the end is left out."""
    out, pos = [], GREETING
    while pos + 2 <= len(stream):
        long = stream[pos] & 0x02
        head = 9 if long else 2
        if pos + head > len(stream):
            break
        size = int.from_bytes(stream[pos + 1:pos + head], "big")
        if pos + head + size > len(stream):
            break
        out.append(bytes(stream[pos + head:pos + head + size]))
        pos += head + size
    return out


def command(body: bytes) -> bytes:
    """``body`` as a ZMTP command frame."""
    if len(body) < 256:
        return bytes([0x04, len(body)]) + body
    return b"\x06" + len(body).to_bytes(8, "big") + body


def data(body: bytes) -> bytes:
    """``body`` as a ZMTP data frame (libzmq sends its MESSAGE boxes so, not as commands)."""
    if len(body) < 256:
        return bytes([0x00, len(body)]) + body
    return b"\x02" + len(body).to_bytes(8, "big") + body


def hello_key(body: bytes) -> bytes:
    """The client's short-term public key C' in a HELLO."""
    assert body.startswith(b"\x05HELLO") and len(body) == 200, body[:8]
    return body[80:112]


def open_welcome(body: bytes, server_sk: bytes, client_short_pk: bytes) -> tuple[bytes, bytes] | None:
    """The server's short-term public key S' and its cookie, from a WELCOME (Box[S' +
    cookie](S->C')), opened with the server's long-term secret key; None if it does not open."""
    assert body.startswith(b"\x07WELCOME") and len(body) == 168, body[:8]
    plain = box_open(body[24:], b"WELCOME-" + body[8:24], client_short_pk, server_sk)
    return None if plain is None else (plain[:32], plain[32:128])


def messages(bodies: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(short nonce, box) of each MESSAGE among ``bodies``."""
    return [(b[8:16], b[16:]) for b in bodies if b.startswith(b"\x07MESSAGE")]


def metadata(socket_type: bytes = b"DEALER") -> bytes:
    """ZMTP metadata: the Socket-Type property."""
    return b"\x0bSocket-Type" + len(socket_type).to_bytes(4, "big") + socket_type


class Stranger:
    """A CurveZMQ client that knows the server's long-term public key ``server_pk`` (raw)
    and presents ``long_pk``/``long_sk`` as its own (default: a keypair of its own). Its
    HELLO is valid, so the server answers it; what it sends after that is the caller's."""

    def __init__(self, server_pk: bytes, long_pk: bytes | None = None, long_sk: bytes | None = None) -> None:
        self.server_pk = server_pk
        if long_pk is None or long_sk is None:
            long_pk, long_sk = keypair()
        self.long_pk, self.long_sk = long_pk, long_sk
        self.short_pk, self.short_sk = keypair()
        self.server_short_pk: bytes | None = None
        self.cookie: bytes | None = None

    def hello(self) -> bytes:
        """The greeting and a HELLO command frame."""
        nonce = (1).to_bytes(8, "big")
        sig = box(bytes(64), b"CurveZMQHELLO---" + nonce, self.server_pk, self.short_sk)
        body = b"\x05HELLO" + b"\x01\x00" + bytes(72) + self.short_pk + nonce + sig
        return CURVE_GREETING + command(body)

    def welcome(self, got: bytes) -> bool:
        """Read the server's greeting and WELCOME (``got``, the bytes it sent so far): did
        the WELCOME open (as only the holder of the server's secret key can make it)?"""
        if len(got) < GREETING + WELCOME_FRAME or got[GREETING] != 0x04 or got[GREETING + 1] != 168:
            return False
        body = got[GREETING + 2:GREETING + WELCOME_FRAME]
        if not body.startswith(b"\x07WELCOME"):
            return False
        plain = box_open(body[24:], b"WELCOME-" + body[8:24], self.server_pk, self.short_sk)
        if plain is None:
            return False
        self.server_short_pk, self.cookie = plain[:32], plain[32:128]
        return True

    def initiate(self, *, vouch_sk: bytes | None = None, cookie: bytes | None = None,
                 meta: bytes | None = None) -> bytes:
        """An INITIATE command frame (after :meth:`welcome`): well formed, unless the vouch
        is boxed with ``vouch_sk`` instead of the presented key's secret, or ``cookie``
        replaces the server's."""
        assert self.server_short_pk is not None and self.cookie is not None, "no WELCOME yet"
        vouch_nonce = os.urandom(16)
        vouch = box(self.short_pk + self.server_pk, b"VOUCH---" + vouch_nonce, self.server_short_pk,
                    vouch_sk or self.long_sk)
        nonce = (2).to_bytes(8, "big")
        plain = self.long_pk + vouch_nonce + vouch + (metadata() if meta is None else meta)
        sealed = box(plain, b"CurveZMQINITIATE" + nonce, self.server_short_pk, self.short_sk)
        return command(b"\x08INITIATE" + (cookie or self.cookie) + nonce + sealed)

    def open_ready(self, got: bytes) -> bytes | None:
        """The metadata of the server's READY among the frames it sent (``got``, from its
        greeting on), opened with this connection's short-term key; None if there is none."""
        assert self.server_short_pk is not None
        for body in frames(got):
            if body.startswith(b"\x05READY"):
                return box_open(body[14:], b"CurveZMQREADY---" + body[6:14], self.server_short_pk, self.short_sk)
        return None
