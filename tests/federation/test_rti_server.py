"""The RTI's door (Admission: handshakes, joins, heartbeat connections) and its verdict on
closed connections (Departures), pure; and the server's use of the verdict."""

from __future__ import annotations

import os
from typing import Any

import pytest

from reactorfed import VirtualClock
from reactorfed.federation import RtiConfig, layout_of
from reactorfed.federation.coordination.admission import Admission, Departures, PeerKind
from reactorfed.federation.errors import FederationError
from reactorfed.federation.process.rti_server import RtiPhase, RtiServer
from reactorfed.federation.wire import protocol as P

from .programs import Pipeline

SECRET = b"0123456789abcdef"


@pytest.fixture
def door() -> Admission:
    return Admission(layout_of(Pipeline()), "flood", SECRET)


def _hello(door: Admission, name: str) -> P.Hello:
    return P.Hello(P.PROTOCOL_VERSION, "flood", name, door.layout.digest, "tcp://127.0.0.1:1", os.urandom(16))


def _proof(door: Admission, peer: bytes, name: str) -> P.Proof:
    nonce = door.challenge_nonce(peer)
    assert nonce is not None
    return P.Proof(P.mac(SECRET, "federate", nonce, "flood", name))


def test_a_real_handshake_survives_a_flood_of_stranger_hellos(door: Admission) -> None:
    name = door.layout.names[0]
    assert isinstance(door.hello(b"real", _hello(door, name), 0, os.urandom(16), open_=True), P.Challenge)
    for i in range(2000):  # strangers who know the federation id, a name and the program
        door.hello(f"stranger-{i}".encode(), _hello(door, name), 0, os.urandom(16), open_=True)
    assert b"real" in door.pending, "a flood of HELLOs pushed out a real federate's handshake"
    assert door.proof(b"real", _proof(door, b"real", name)) == 0
    assert door.control[b"real"] == 0 and door.kind(b"real") is PeerKind.CONTROL


def test_the_pending_handshakes_are_bounded_oldest_out_first() -> None:
    door = Admission(layout_of(Pipeline()), "flood", SECRET, max_pending=3)
    for i in range(5):
        door.hello(bytes([i]), _hello(door, "src"), i, os.urandom(16), open_=True)
    assert door.pending == [bytes([2]), bytes([3]), bytes([4])]
    assert door.kind(bytes([0])) is PeerKind.STRANGER


def test_half_finished_handshakes_expire(door: Admission) -> None:
    name = door.layout.names[0]
    for i in range(10):
        door.hello(f"idle-{i}".encode(), _hello(door, name), 0, os.urandom(16), open_=True)
    assert len(door.pending) == 10
    door.hello(b"late", _hello(door, name), 11_000_000_000, os.urandom(16), open_=True)
    assert door.pending == [b"late"]


def test_a_second_hello_on_one_connection_restarts_its_handshake(door: Admission) -> None:
    door.hello(b"a", _hello(door, "src"), 0, b"1" * 16, open_=True)
    door.hello(b"b", _hello(door, "src"), 5, b"2" * 16, open_=True)
    door.hello(b"a", _hello(door, "sink"), 9, b"3" * 16, open_=True)
    assert door.pending == [b"b", b"a"] and door.pending_federate(b"a") == door.layout.index("sink")
    assert door.challenge_nonce(b"a") == b"3" * 16


@pytest.mark.parametrize(("change", "reason"), [
    ({"version": P.PROTOCOL_VERSION + 1}, "protocol version"),
    ({"federation_id": "other"}, "wrong federation 'other'"),
    ({"name": "nobody"}, "no federate 'nobody' in this federation"),
    ({"digest": "0" * 16}, "runs a different program"),
    ({"endpoint": "ipc:///tmp/x"}, "bad data endpoint"),
])
def test_a_hello_that_cannot_join_gets_its_reason(door: Admission, change: dict[str, Any], reason: str) -> None:
    reply = door.hello(b"x", _hello(door, "src")._replace(**change), 0, os.urandom(16), open_=True)
    assert isinstance(reply, P.Reject) and reason in reply.reason
    assert door.pending == []


def test_no_one_joins_twice_or_after_the_start_or_with_a_wrong_proof(door: Admission) -> None:
    door.hello(b"a", _hello(door, "src"), 0, os.urandom(16), open_=True)
    door.hello(b"b", _hello(door, "src"), 0, os.urandom(16), open_=True)
    wrong = door.proof(b"b", P.Proof(os.urandom(32)))
    assert isinstance(wrong, P.Reject) and "failed authentication" in wrong.reason
    assert door.pending == [b"a"], "a wrong proof forgets its peer"
    assert door.proof(b"a", _proof(door, b"a", "src")) == door.layout.index("src")
    again = door.hello(b"c", _hello(door, "src"), 0, os.urandom(16), open_=True)
    assert isinstance(again, P.Reject) and "duplicate federate 'src'" in again.reason
    late = door.hello(b"d", _hello(door, "sink"), 0, os.urandom(16), open_=False)
    assert isinstance(late, P.Reject) and "already started" in late.reason
    assert door.missing() == [n for n in door.layout.names if n != "src"] and not door.complete


def test_a_heartbeat_connection_is_admitted_once_per_nonce_and_only_while_running(door: Admission) -> None:
    session, nonce = os.urandom(16), os.urandom(16)
    hello = P.HbHello("flood", "relay", nonce, P.mac(SECRET, "hb", session, "relay", nonce))
    assert door.heartbeat_hello(b"h", hello, session, running=False) is None
    assert door.heartbeat_hello(b"h", hello, session, running=True) == door.layout.index("relay")
    assert door.heartbeat_hello(b"h2", hello, session, running=True) is None, "a replayed nonce"
    forged = hello._replace(nonce=os.urandom(16))
    assert door.heartbeat_hello(b"h3", forged, session, running=True) is None
    assert door.kind(b"h") is PeerKind.HEARTBEAT and door.peers() == [b"h"]


def test_a_closed_connection_is_judged_once_the_backlog_is_read() -> None:
    """A federate whose connection closed is dead only if its RESIGN did not come: while
    messages received before the close may still wait unread (a backlog), the verdict
    waits too, up to 10 graces; with everything read, one grace (1 s) decides."""
    second = 1_000_000_000
    gone = Departures(liveness_ns=5 * second)
    resigned: set[int] = set()
    gone.closed(0, 0)
    assert gone.judge(5 * second, False, resigned.__contains__) is None, "judged while its RESIGN may still be queued"
    resigned.add(0)  # the RESIGN read from the backlog
    assert gone.judge(6 * second, False, resigned.__contains__) is None and 0 not in gone and not gone
    gone.closed(1, 0)  # another one, gone without a word, the queue never empty
    assert gone.judge(9 * second, False, resigned.__contains__) is None
    assert gone.judge(10 * second, False, resigned.__contains__) == 1


def test_a_closed_connection_with_nothing_left_to_read_fails_after_the_grace() -> None:
    gone = Departures(liveness_ns=5_000_000_000)
    gone.closed(2, 0)
    gone.closed(2, 500_000_000)  # its second connection: the first close counts
    assert gone.judge(999_000_000, True, lambda f: False) is None
    assert gone.judge(1_000_000_000, True, lambda f: False) == 2
    short = Departures(liveness_ns=300_000_000)  # the grace is never longer than liveness
    short.closed(0, 0)
    assert short.judge(300_000_000, True, lambda f: False) == 0


def test_the_server_fails_the_federation_naming_a_departed_federate() -> None:
    """The server's part: a verdict from Departures ends the federation with the name."""
    layout = layout_of(Pipeline())
    server = RtiServer(layout, RtiConfig("flood", SECRET, port=0), VirtualClock())
    server.bind()
    try:
        server.phase = RtiPhase.RUNNING
        server.departures.closed(1, 0)
        server._check_departures(999_000_000)
        assert server.phase == RtiPhase.RUNNING
        with pytest.raises(FederationError, match=rf"{layout.names[1]} stopped responding"):
            server._check_departures(1_000_000_000)
        assert server.phase == RtiPhase.FAILED
    finally:
        server.close()
