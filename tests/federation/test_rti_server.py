"""The RTI's handshake table under a flood of strangers (pure server logic, real socket)."""

from __future__ import annotations

import os

import pytest

from reactorfed import VirtualClock
from reactorfed.federation import RtiConfig, layout_of
from reactorfed.federation.errors import FederationError
from reactorfed.federation.process.rti_server import RtiServer
from reactorfed.federation.wire import protocol as P

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


def test_a_closed_connection_is_judged_once_the_backlog_is_read(rti: RtiServer) -> None:
    """A federate whose connection closed is dead only if its RESIGN did not come: while
    messages received before the close may still wait unread (a backlog), the verdict
    waits too, up to 10 graces; with everything read, one grace (1 s) decides."""
    from reactorfed.federation.process.rti_server import RtiPhase

    rti.phase = RtiPhase.RUNNING
    second = 1_000_000_000
    rti._closing[0] = 0
    rti._drained = False
    rti._check_closing(5 * second)
    assert rti.phase == RtiPhase.RUNNING and 0 in rti._closing, "failed while its RESIGN may still be queued"
    rti.core.feds[0].resigned = True  # the RESIGN read from the backlog
    rti._check_closing(6 * second)
    assert rti.phase == RtiPhase.RUNNING and 0 not in rti._closing
    rti._closing[1] = 0  # another one, gone without a word, the queue never empty
    rti._check_closing(9 * second)
    assert rti.phase == RtiPhase.RUNNING
    with pytest.raises(FederationError, match=rf"{rti.layout.names[1]} stopped responding"):
        rti._check_closing(10 * second)
    assert rti.phase == RtiPhase.FAILED


def test_a_closed_connection_with_nothing_left_to_read_fails_after_the_grace(rti: RtiServer) -> None:
    from reactorfed.federation.process.rti_server import RtiPhase

    rti.phase = RtiPhase.RUNNING
    rti._closing[2] = 0
    rti._drained = True
    rti._check_closing(999_000_000)
    assert rti.phase == RtiPhase.RUNNING
    with pytest.raises(FederationError, match=rf"{rti.layout.names[2]} stopped responding"):
        rti._check_closing(1_000_000_000)
