"""The RTI's handshake table under a flood of strangers (pure server logic, real socket)."""

from __future__ import annotations

import os

import pytest

from reactorfed import VirtualClock
from reactorfed.federation import RtiConfig, layout_of
from reactorfed.federation import protocol as P
from reactorfed.federation.rti_server import RtiServer

from .programs import Pipeline


@pytest.fixture
def rti() -> RtiServer:
    layout = layout_of(Pipeline())
    server = RtiServer(layout, RtiConfig("flood", b"0123456789abcdef", port=0), VirtualClock())
    server.bind()
    yield server
    assert server._server is not None
    server._server.close()


def _hello(rti: RtiServer, name: str) -> P.Hello:
    return P.Hello(P.PROTOCOL_VERSION, "flood", name, rti.layout.digest, "tcp://127.0.0.1:1", os.urandom(16))


def test_a_real_handshake_survives_a_flood_of_stranger_hellos(rti: RtiServer) -> None:
    name = rti.layout.names[0]
    rti._on_hello(b"real", _hello(rti, name))
    for i in range(2000):  # strangers who know the federation id, a name and the program
        rti._on_hello(f"stranger-{i}".encode(), _hello(rti, name))
    assert b"real" in rti._pending, "a flood of HELLOs pushed out a real federate's handshake"
    f, nonce, _ = rti._pending[b"real"]
    rti._on_proof(b"real", P.Proof(P.mac(rti.cfg.secret, "federate", nonce, "flood", name)))
    assert rti._ctl[b"real"] == f


def test_half_finished_handshakes_expire(rti: RtiServer) -> None:
    name = rti.layout.names[0]
    for i in range(10):
        rti._on_hello(f"idle-{i}".encode(), _hello(rti, name))
    assert len(rti._pending) == 10
    clock = rti.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(11_000_000_000)
    rti._on_hello(b"late", _hello(rti, name))
    assert list(rti._pending) == [b"late"]
    assert set(rti._endpoints_pending) == {b"late"}
