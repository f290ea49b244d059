"""What the keys open, checked on the bytes real processes exchanged (``reactorfed rti`` and
two ``reactorfed federate``, every TCP link through a recording proxy, :mod:`.mitm`), with
libsodium itself (:mod:`.curvezmq`):

* Forward secrecy: someone who recorded a session and later learns the federation's secret
  (so its long-term key) opens the handshake's WELCOME, and with it learns the server's
  short-term public key, but no message: every message is boxed between the connection's
  two short-term keys, made for that connection and never stored. A control opens the
  RTI's answer on a connection the test makes itself, with its own short-term key: the
  same kind of box, opened the way the recorded ones would be if the keys allowed it.
* One federation's keys never open another's: two federations running side by side on one
  host under the same federation id, with different secrets; a recorded handshake of one
  opens with its own key only, and each one's processes are refused by the other's ports.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Callable

import pytest

from reactorfed.federation.io.curve import federation_keys
from reactorfed.federation.io.transport import Client
from reactorfed.federation.wire import protocol as P

from . import curvezmq as cz
from .mitm import TappedFederation
from .secure_programs import MARKER
from .test_secure_links import PROGRAM, federation, reference  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _sessions(fed: TappedFederation) -> list[tuple[str, list[bytes], list[bytes]]]:
    """Every recorded connection that got through a handshake: (tap, the client's frames,
    the server's frames)."""
    out = []
    for name, tap in fed.taps.items():
        with tap.lock:
            pairs = [(bytes(s), bytes(g)) for s, g in zip(tap.sent, tap.got, strict=True)]
        for sent, got in pairs:
            client, server = cz.frames(sent), cz.frames(got)
            if client and server and client[0].startswith(b"\x05HELLO") and server[0].startswith(b"\x07WELCOME"):
                out.append((name, client, server))
    return out


def _ask_the_rti(fed: TappedFederation) -> bytes | None:
    """As a holder of the federation's key: a CurveZMQ handshake with the RTI, a HELLO for
    ``sink`` in a MESSAGE, and the RTI's answer (a MESSAGE boxed S'->C') opened with this
    connection's short-term key. None if it does not open."""
    keys = federation_keys(fed.secret.encode(), fed.fid)
    me = cz.Stranger(cz.raw(keys.public), cz.raw(keys.public), cz.raw(keys.secret))
    hello = P.pack(P.HELLO, P.PROTOCOL_VERSION, fed.fid, "sink", "digest?", "tcp://127.0.0.1:9", os.urandom(16))
    with socket.create_connection(("127.0.0.1", fed.rti_port), timeout=5) as s:
        s.sendall(me.hello())
        got = _read_until(s, b"", cz.GREETING + cz.WELCOME_FRAME)
        assert me.welcome(got), got[:80]
        s.sendall(me.initiate())
        nonce = (3).to_bytes(8, "big")
        assert me.server_short_pk is not None
        sealed = cz.box(b"\x00" + hello, b"CurveZMQMESSAGEC" + nonce, me.server_short_pk, me.short_sk)
        s.sendall(cz.data(b"\x07MESSAGE" + nonce + sealed))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for n8, boxed in cz.messages(cz.frames(got)):
                plain = cz.box_open(boxed, b"CurveZMQMESSAGES" + n8, me.server_short_pk, me.short_sk)
                if plain is None:
                    return None
                if not plain[0] & 0x02:  # its first byte: libzmq's flags (2: a command, its heartbeat PING)
                    return plain[1:]
            got = _read_until(s, got, len(got) + 1)
    raise AssertionError("the RTI never answered the HELLO")


def _read_until(s: socket.socket, got: bytes, n: int) -> bytes:
    s.settimeout(5)
    while len(got) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_a_recorded_session_stays_closed_to_the_federations_own_key(
        federation: Callable[..., TappedFederation], reference: Callable[[str], str]) -> None:  # noqa: F811
    fed = federation(args=["--timeout", "3s"])
    fed.wait_for(r"received 10", "sink", timeout=30)
    # the control: a box of the kind every message travels in, opened with the right key
    answer = _ask_the_rti(fed)
    assert answer is not None and isinstance(P.parse(answer), P.Reject), answer
    codes = fed.end(60, ["rti", *fed.names])
    assert all(c == 0 for c in codes.values()), (codes, fed.output)
    assert reference("3s") in fed.out_of("sink"), fed.output

    # the eavesdropper, who now holds the federation's secret, hence its one keypair
    keys = federation_keys(fed.secret.encode(), fed.fid)
    long_pk, long_sk = cz.raw(keys.public), cz.raw(keys.secret)
    sessions = _sessions(fed)
    # both of each federate's links to the RTI (control, heartbeat) and src's data link
    assert {n for n, _, _ in sessions} == {"rti-src", "rti-sink", "data-sink"}, [n for n, _, _ in sessions]
    short_keys: list[bytes] = []
    boxes = 0
    for name, client, server in sessions:
        c_short = cz.hello_key(client[0])
        opened = cz.open_welcome(server[0], long_sk, c_short)
        assert opened is not None, f"{name}: the long-term key opens the WELCOME (what it may open)"
        s_short = opened[0]
        short_keys += [c_short, s_short]
        assert long_pk not in (c_short, s_short), name
        for direction, frames in (("C", client), ("S", server)):
            for n8, boxed in cz.messages(frames):
                boxes += 1
                for pk in (long_pk, c_short, s_short):
                    assert cz.box_open(boxed, b"CurveZMQMESSAGE" + direction.encode() + n8, pk, long_sk) is None, name
        initiate = next(f for f in client if f.startswith(b"\x08INITIATE"))
        for pk in (long_pk, c_short, s_short):
            assert cz.box_open(initiate[113:], b"CurveZMQINITIATE" + initiate[105:113], pk, long_sk) is None, name
    assert boxes > 100, boxes  # the data link alone carried 150 values
    assert len(set(short_keys)) == len(short_keys), "a short-term key was used twice"
    assert not any(MARKER.encode() in f for _, c, s in sessions for f in (*c, *s))
    print(f"\n{len(sessions)} recorded sessions, {boxes} messages: the long-term key opened each WELCOME and no message")


def test_one_federations_keys_never_open_anothers(
        federation: Callable[..., TappedFederation], reference: Callable[[str], str]) -> None:  # noqa: F811
    fid = f"same-id-{os.getpid()}"  # two federations whose users both kept one id
    a = federation(args=["--timeout", "6s"], fid=fid)
    b = federation(args=["--timeout", "6s"], fid=fid)
    assert a.secret != b.secret
    for fed in (a, b):
        fed.wait_for(r"received 10", "sink", timeout=60)
    key = {fed: federation_keys(fed.secret.encode(), fid) for fed in (a, b)}

    # a recorded handshake of each opens with its own federation's key, not the other's,
    # nor with its own secret under another id
    for fed, other in ((a, b), (b, a)):
        _, client, server = next(s for s in _sessions(fed) if s[0] == "data-sink")
        c_short = cz.hello_key(client[0])
        assert cz.open_welcome(server[0], cz.raw(key[fed].secret), c_short) is not None
        assert cz.open_welcome(server[0], cz.raw(key[other].secret), c_short) is None
        elsewhere = federation_keys(fed.secret.encode(), fid + "-2")
        assert cz.open_welcome(server[0], cz.raw(elsewhere.secret), c_short) is None

    # b's sink, started again against a's RTI, is refused and says why
    argv = b.federate_argv("sink", a.rti_port, b.taps["data-sink"].port)
    argv[argv.index("--data-port") + 1] = "0"
    b.spawn("b-at-a", argv, b.env)
    assert b.end(30, ["b-at-a"])["b-at-a"] != 0, b.output
    said = b.out_of("b-at-a")
    assert re.search(r"do not share a secret: the encrypted handshake failed \d+ times", said), said
    a.wait_for(r"refused a connection to the RTI: ", "rti")
    # and a client with b's key, at a's data port
    c = Client(f"tcp://127.0.0.1:{a.data_ports['sink']}", curve=key[b], watch=True)
    try:
        c.send([b"from b"])
        deadline = time.monotonic() + 10
        while not (refused := c.monitor.refused() if c.monitor else []):
            assert time.monotonic() < deadline, "the data port never refused b's key"
            time.sleep(0.05)
        assert "closed or timed out during the handshake" in refused[0], refused
    finally:
        c.close()
    a.wait_for(r"refused a connection to the data port: its bytes do not open with this federation's key", "sink")
    # both federations ran to their one-process result, side by side
    for fed in (a, b):
        codes = fed.end(60, ["rti", *fed.names])
        assert all(c == 0 for c in codes.values()), (codes, fed.output)
        assert reference("6s") in fed.out_of("sink"), fed.output
