"""Liveness: what a federate's two threads know of the RTI (one check, one message)."""

from __future__ import annotations

from reactorfed.federation.process.heartbeat import Liveness

MS = 1_000_000


def test_the_rti_is_lost_when_neither_connection_heard_from_it_within_the_silence_limit() -> None:
    live = Liveness("tcp://rti:1", 3_000 * MS, now=0, silence_ns=3_000 * MS)
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


def test_without_a_silence_limit_only_the_connection_or_an_abort_ends_it() -> None:
    """The default: a silent RTI program is not a lost RTI (it may be starved of CPU);
    its connection closing (the heartbeat thread's monitor) or an abort still end it."""
    live = Liveness("tcp://rti:1", 3_000 * MS, now=0)
    assert live.lost(3_600_000 * MS) is None
    live.abort_reason = "lost the RTI: the connection to tcp://rti:1 closed"
    assert live.lost(3_600_000 * MS) == "lost the RTI: the connection to tcp://rti:1 closed"
    assert Liveness("tcp://rti:1", 3_000 * MS, now=0, silence_ns=1_000 * MS).silence_ns == 3_000 * MS
