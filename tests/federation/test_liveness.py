"""Liveness: what a federate's two threads know of the RTI (one check, one message)."""

from __future__ import annotations

import time

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


def test_a_heartbeat_stops_at_once_whatever_its_period() -> None:
    """Its thread waits on its sockets for up to a period (1 s by default); a stop ends that
    wait at once, so that a federate's exit never waits out a beat. Real sockets."""
    from reactorfed.federation.io.transport import Server
    from reactorfed.federation.process.heartbeat import Heartbeat
    from reactorfed.time.clock import SystemClock

    rti = Server("tcp://127.0.0.1:0")
    clock = SystemClock()
    try:
        hb = Heartbeat("a", 600_000 * MS, Liveness(rti.endpoint, 3_000 * MS, now=clock.now()), clock)
        hb.begin(b"hello")
        for _ in range(10_000):  # until the HB_HELLO arrived: the thread then waits for its next beat
            if (got := rti.recv()) is not None:
                break
            time.sleep(0.001)
        assert got is not None and got[1][0] == b"hello"
        hb.stop()  # (joins for up to 2 s)
        assert not hb.is_alive()
    finally:
        rti.close()
