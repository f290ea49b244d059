"""Liveness: what a federate's two threads know of the RTI (one check, one message)."""

from __future__ import annotations

from reactorfed.federation.process.heartbeat import Liveness

MS = 1_000_000


def test_the_rti_is_lost_when_neither_connection_heard_from_it_within_the_limit() -> None:
    live = Liveness("tcp://rti:1", 3_000 * MS, now=0)
    assert live.lost(3_000 * MS) is None
    live.heard_hb = 2_000 * MS  # the heartbeat's connection heard it later
    assert live.lost(4_000 * MS) is None
    live.heard_data = 4_500 * MS  # and then the coordination connection
    assert live.lost(7_000 * MS) is None
    assert live.lost(7_500 * MS + 1) == "lost the RTI: nothing heard from tcp://rti:1 for 3000 ms"


def test_an_abort_is_the_reason_whatever_was_heard() -> None:
    live = Liveness("tcp://rti:1", 3_000 * MS, now=0)
    live.abort_reason = "the federation was aborted: federate a failed"
    assert live.lost(0) == "the federation was aborted: federate a failed"
