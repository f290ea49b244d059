"""Hostile input (property-based) to the RTI's port and to federates' data ports of a
RUNNING federation: random bytes, truncated frames, valid msgpack of the wrong shape,
messages of the wrong type for the sender's state, frames above the size limit,
replayed handshakes captured from the real one, multi-frame garbage. Nothing crashes,
nothing joins, and the federation's output is the single-process output.

The sprayers here hold the federation's CurveZMQ keys: they get through the encryption
and test what the RTI and the federates make of what arrives. What a peer without the
keys can send (bytes before and during the encrypted handshake) is test_preauth.py's."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactorfed import sec
from reactorfed.federation.io import transport
from reactorfed.federation.io.chunks import MAGIC
from reactorfed.federation.io.curve import CurveKeys, federation_keys, secure_client
from reactorfed.federation.wire import kinds as K
from reactorfed.federation.wire import protocol as P

from .harness import Federation, reference, wait_until
from .programs import Pipeline
from .test_protocol import kind_of, valid_message

pytestmark = pytest.mark.timeout(120)

DATA_MAX = 256 * 1024  # the federates' max_message in these tests (default 1 GiB)
RTI_MAX = 64 * 1024  # RtiConfig.max_message


class Captured:
    """Frames the federation's own clients sent, by message type (first few of each)."""

    def __init__(self) -> None:
        self.by_kind: dict[int, list[tuple[str, list[bytes]]]] = {}
        self.lock = threading.Lock()

    def record(self, endpoint: str, frames: list[Any]) -> None:
        raw = [bytes(memoryview(f).cast("B")) for f in frames]
        try:
            kind = kind_of(raw[0])
        except P.ProtocolError:
            return
        with self.lock:
            lst = self.by_kind.setdefault(kind, [])
            if len(lst) < 20:
                lst.append((endpoint, raw))

    def frames(self, kind: int) -> list[list[bytes]]:
        with self.lock:
            return [f for _, f in self.by_kind.get(kind, [])]


@contextlib.contextmanager
def capturing() -> Iterator[Captured]:
    cap = Captured()
    orig = transport.Client.send

    def send(self: transport.Client, frames: Any) -> None:
        frames = list(frames)
        cap.record(self.endpoint, frames)
        orig(self, frames)

    transport.Client.send = send  # type: ignore[method-assign]
    try:
        yield cap
    finally:
        transport.Client.send = orig  # type: ignore[method-assign]


class Sprayer:
    """Raw DEALER sockets to one endpoint, holding the federation's keys; a fresh one
    whenever asked (a new peer)."""

    def __init__(self, endpoint: str, keys: CurveKeys) -> None:
        self.endpoint = endpoint
        self.keys = keys
        self.ctx = zmq.Context.instance()
        self.socks: list[zmq.Socket[Any]] = []
        self.sock = self.fresh()
        self.sent = 0

    def fresh(self) -> zmq.Socket[Any]:
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDTIMEO, 5000)
        s.setsockopt(zmq.RCVTIMEO, 2000)
        secure_client(s, self.keys)
        s.connect(self.endpoint)
        self.socks.append(s)
        return s

    def send(self, frames: list[bytes], sock: zmq.Socket[Any] | None = None) -> None:
        (sock or self.sock).send_multipart(frames)
        self.sent += 1

    def drain(self) -> list[list[bytes]]:
        out = []
        for s in self.socks:
            while True:
                try:
                    out.append(s.recv_multipart(zmq.NOBLOCK))
                except zmq.Again:
                    break
        return out

    def close(self) -> None:
        for s in self.socks:
            s.close(linger=0)


# -- strategies ------------------------------------------------------------------------

GARBAGE = st.binary(max_size=300)
MSGPACK_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=20) | st.binary(max_size=40),
    lambda c: st.lists(c, max_size=6) | st.dictionaries(st.integers(-5, 50) | st.text(max_size=4), c, max_size=4),
    max_leaves=15,
).map(lambda v: msgpack.packb(v, use_bin_type=True))


@st.composite
def typed_junk(draw: Any) -> bytes:
    """A known message type with fields of random types and number."""
    kind = draw(st.sampled_from(sorted(K.SCHEMA)))
    fields = draw(st.lists(st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10) | st.binary(max_size=40)
                           | st.dictionaries(st.integers(-3, 10), st.integers(-3, 10), max_size=3), max_size=8))
    return P.pack(kind, *fields)


def one_frame(extra: st.SearchStrategy[bytes] | None = None) -> st.SearchStrategy[list[bytes]]:
    base = GARBAGE | MSGPACK_JUNK | typed_junk() | valid_message().map(lambda m: P.pack(*m))
    return (base | extra if extra is not None else base).map(lambda b: [b])


MULTI = st.lists(GARBAGE | MSGPACK_JUNK | valid_message().map(lambda m: P.pack(*m)), min_size=0, max_size=5).map(
    lambda fs: fs or [b""]
)


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def truncations(frames: list[list[bytes]]) -> st.SearchStrategy[list[bytes]]:
    """A captured message cut short, or with a byte changed."""

    @st.composite
    def cut(draw: Any) -> list[bytes]:
        msg = draw(st.sampled_from(frames))
        f = msg[0]
        if draw(st.booleans()):
            return [f[: draw(st.integers(0, len(f) - 1))], *msg[1:]]
        b = bytearray(f)
        i = draw(st.integers(0, len(b) - 1))
        b[i] ^= draw(st.integers(1, 255))
        return [bytes(b), *msg[1:]]

    return cut()


# -- the test --------------------------------------------------------------------------


def test_hostile_input_to_a_running_federation() -> None:
    expected = reference(Pipeline, timeout=sec(60)).sink.trace  # type: ignore[attr-defined]
    with capturing() as cap:
        fed = Federation(Pipeline)
        # Data over TCP, to the ports sprayed here (the Unix sockets: test_local.py).
        fed.start_all(fast=False, timeout=sec(60), max_message=DATA_MAX, unix_sockets=False)
        wait_until(fed.running, what="the federation to start")
        # (the heartbeat's HELLO comes from its own thread, which may start after data flows)
        wait_until(lambda: P.COMPACT in cap.by_kind and P.LTC in cap.by_kind and P.HB_HELLO in cap.by_kind,
                   what="data to flow")
    server = fed.server
    sinks = {n: fed.coords[n] for n in ("relay", "sink")}  # federates with a data port in use

    def alive() -> None:
        assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
        assert server.phase == "running"

    keys = federation_keys(fed.secret, fed.fid)
    rti = Sprayer(fed.endpoint, keys)
    data = {n: Sprayer(fed.data_endpoint(n), keys) for n in sinks}
    rejected0 = server.rejected
    data_rejected0 = {n: c.rejected_messages for n, c in sinks.items()}
    try:
        # 1. junk of every kind, one frame or several, at the RTI
        @examples(1500)
        @given(one_frame() | MULTI)
        def junk_to_rti(frames: list[bytes]) -> None:
            rti.send(frames)

        junk_to_rti()
        alive()

        # 2. the same at the federates' data ports (strangers: only AUTH is read)
        @examples(1200)
        @given(st.sampled_from(sorted(sinks)), one_frame() | MULTI)
        def junk_to_data(name: str, frames: list[bytes]) -> None:
            data[name].send(frames)

        junk_to_data()
        alive()

        # 3. captured frames of the real federation, replayed and mangled, from new peers
        replays_rti = [f for k in (P.HELLO, P.PROOF, P.HB_HELLO, P.LTC, P.HEARTBEAT) for f in cap.frames(k)]
        # (a value and a promise each tag: the compact form; a batch when more is due at once)
        replays_data = [f for k in (P.AUTH, P.BATCH, P.COMPACT) for f in cap.frames(k)]
        assert cap.frames(P.HELLO) and cap.frames(P.PROOF) and cap.frames(P.HB_HELLO) and cap.frames(P.AUTH)

        @examples(400)
        @given(st.sampled_from(replays_rti) | truncations(replays_rti), st.booleans())
        def replay_to_rti(frames: list[bytes], new_peer: bool) -> None:
            rti.send(frames, rti.fresh() if new_peer else None)

        replay_to_rti()

        # the whole handshake replayed in order on one new connection, several times
        for _ in range(5):
            s = rti.fresh()
            for kind in (P.HELLO, P.PROOF, P.HB_HELLO):
                for f in cap.frames(kind):
                    rti.send(f, s)

        @examples(300)
        @given(st.sampled_from(sorted(sinks)), st.lists(st.sampled_from(replays_data) | truncations(replays_data), min_size=1, max_size=4))
        def replay_to_data(name: str, msgs: list[list[bytes]]) -> None:
            s = data[name].fresh()  # AUTH then DATA on one connection: a replayed session
            for m in msgs:
                data[name].send(m, s)

        replay_to_data()
        alive()

        # 4. frames above the size limits (ZeroMQ drops such a connection; the RTI's
        # limit is its 64 KiB and a CurveZMQ box: RTI_MAX + 1 arrives and is refused)
        for size in (RTI_MAX + 1, 4 * RTI_MAX, 2 * 1024 * 1024):
            rti.send([P.pack(P.HELLO, 1, fed.fid, "relay", "x", "tcp://h:1", b"n" * 16) + b"\0" * size], rti.fresh())
        for name in sinks:
            for size in (DATA_MAX + 1, 4 * DATA_MAX):
                big = cap.frames(P.AUTH)[0][0]
                data[name].send([big, b"\0" * size], data[name].fresh())
        time.sleep(0.3)
        alive()

        # every message reached the RTI and was refused (oversized ones never arrive)
        sent_rti = rti.sent - 3
        wait_until(lambda: server.rejected - rejected0 >= sent_rti, timeout=30,
                   what=f"the RTI to refuse {sent_rti} messages (so far {server.rejected - rejected0})")
        answers = rti.drain()
        assert all(isinstance(P.parse(a[0]), (P.Reject, P.Challenge)) for a in answers)
        assert not any(isinstance(P.parse(a[0]), P.Start) for a in answers)
    finally:
        for s in (rti, *data.values()):
            s.close()
    # stop the federation (agreed on a tag across all three) and let it end
    fed.schedulers["src"].request_stop()
    fed.wait(30)

    # nothing joined: exactly the real federates, each authenticated once
    assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)
    assert fed.summary is not None and fed.summary.federates == 3
    assert sorted(server.admission.control.values()) == [0, 1, 2]
    assert sorted(server.admission.heartbeat.values()) == [0, 1, 2]
    for name, c in sinks.items():
        assert c.authenticated_upstream == sorted(c.layout.direct_upstream(c.me)), name
        assert c.rejected_messages > data_rejected0[name]
    # the output is the single-process output, tag for tag, up to the agreed stop
    trace = fed.programs["sink"].sink.trace  # type: ignore[attr-defined]
    assert len(trace) >= 50
    assert trace == expected[: len(trace)]



def test_hostile_input_while_joining() -> None:
    """Strangers half-way through the handshake (HELLO answered, no PROOF) send anything
    but a PROOF, or a wrong one: none of them joins and the real federates still do."""
    expected = reference(Pipeline, timeout=sec(1)).sink.trace  # type: ignore[attr-defined]
    fed = Federation(Pipeline)
    server = fed.server
    rti = Sprayer(fed.endpoint, federation_keys(fed.secret, fed.fid))
    try:
        half_open = []
        for name in ("src", "relay", "sink", "src"):
            s = rti.fresh()
            rti.send([P.pack(P.HELLO, P.PROTOCOL_VERSION, fed.fid, name, fed.layout.digest, "tcp://127.0.0.1:9", os.urandom(16))], s)
            assert isinstance(P.parse(s.recv_multipart()[0]), P.Challenge)
            half_open.append(s)
        sent0, rejected0 = rti.sent, server.rejected

        @examples(600)
        @given(st.integers(0, len(half_open) - 1), one_frame() | MULTI)
        def junk_from_half_open(i: int, frames: list[bytes]) -> None:
            if len(frames) == 1 and frames[0][:2] == P.pack(P.PROOF, b"x" * 32)[:2]:
                return  # a well-formed PROOF ends the handshake: tested below
            rti.send(frames, half_open[i])

        junk_from_half_open()
        # Pieces that do not make a message (a chunk header that lies) are dropped by the
        # transport and counted with the rest (Hypothesis finds the header too: it draws
        # on the constants of the code under test)
        rti.send([MAGIC + b"\xff\xff\xff", b"x", b"y"], half_open[0])
        n = rti.sent - sent0
        wait_until(lambda: server.rejected - rejected0 >= n, timeout=20, what="the RTI to refuse the junk")
        for s in half_open:  # a wrong proof: rejected, and the peer is forgotten
            rti.send([P.pack(P.PROOF, os.urandom(32))], s)
            reply = P.parse(s.recv_multipart()[0])
            assert isinstance(reply, P.Reject) and "failed authentication" in reply.reason
        assert not server.admission.control and not server.admission.pending and server.phase == "joining"
    finally:
        rti.close()
    fed.start_all(timeout=sec(1))
    fed.wait(30)
    assert fed.rti_error is None and not fed.errors
    assert fed.programs["sink"].sink.trace == expected  # type: ignore[attr-defined]
