"""Flow control on data links: the sender's window and the receiver's credits (pure logic),
then the sender's wait over real ZeroMQ sockets, then a running federation whose source
outruns its sink over TCP: the source stays within a window of what the sink processed,
and the sink receives everything, in order."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from reactorfed import STARTUP, Input, LogicalAction, Output, Reactor, reaction
from reactorfed.federation.coordination.flow import (
    CREDIT_STEP,
    FLOW_MIN,
    WINDOW,
    CreditLedger,
    SendWindow,
)
from reactorfed.federation.io.transport import Client, Server
from reactorfed.federation.process.outbound import Outbound
from reactorfed.federation.wire import protocol as P
from reactorfed.federation.wire.codec import NUMPY
from reactorfed.time.clock import SystemClock

from .harness import Federation

MB = 1 << 20


# -- the sender's window ---------------------------------------------------------------------

def test_a_window_blocks_only_on_what_was_sent_for_earlier_tags() -> None:
    w = SendWindow()
    for t in range(16):
        assert not w.blocks((t, 0))
        w.sent((t, 0), MB)
    assert w.full()
    assert w.blocks((16, 0))  # 16 MB sent for earlier tags, none processed
    assert not w.blocks((15, 0))  # (what is sent for the latest tag does not count against it)
    assert not w.blocks((3, 0))  # an earlier tag (another link's delay): 3 MB before it
    w.sent((15, 0), MB)  # one tag's messages may go past the window
    assert w.outstanding == 17 * MB and w.blocks((16, 0))


def test_a_credit_drops_every_tag_up_to_its_own() -> None:
    w = SendWindow()
    for t in (5, 1, 3, 2, 9):  # sent out of tag order (links with different delays)
        w.sent((t, 0), 4 * MB)
    w.credit((3, 0))
    assert w.outstanding == 8 * MB  # tags 5 and 9 left
    w.credit((2, 0))  # (an older credit: nothing more)
    assert w.outstanding == 8 * MB
    w.credit((9, 0))
    assert w.outstanding == 0 and not w.full()
    w.sent((10, 0), MB)
    assert not w.blocks((11, 0))


def test_a_wait_always_ends_when_the_receiver_processes_what_it_holds() -> None:
    """Whatever the sizes, a receiver that processes everything it was sent for earlier
    tags sends the credits that unblock its sender (no wait for a credit never due)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        w, ledger = SendWindow(), CreditLedger()
        sizes = rng.integers(FLOW_MIN, 3 * MB, size=int(rng.integers(1, 40)))
        for t, n in enumerate(sizes):
            w.sent((t, 0), int(n))
            ledger.received(7, (t, 0), int(n))
        nxt = (len(sizes), 0)
        for t in range(len(sizes)):
            for peer in ledger.processed((t, 0)):
                assert peer == 7
                w.credit((t, 0))
        assert not w.blocks(nxt)
        assert w.outstanding < CREDIT_STEP


def test_the_ledger_credits_a_peer_per_step_of_what_it_processed() -> None:
    ledger = CreditLedger()
    assert not ledger.holding and ledger.processed((0, 0)) == []
    ledger.received(1, (0, 0), CREDIT_STEP // 2)
    ledger.received(2, (0, 0), CREDIT_STEP)
    ledger.received(1, (1, 0), CREDIT_STEP // 2)
    assert ledger.holding
    assert ledger.processed((0, 0)) == [2]  # peer 1: half a step so far
    assert ledger.holding
    assert ledger.processed((1, 0)) == [1]
    assert not ledger.holding
    ledger.received(1, (2, 0), CREDIT_STEP - 1)
    ledger.forget(1)  # its process was replaced: nothing it sent is credited to the next
    assert ledger.processed((2, 0)) == []


def test_the_window_is_never_smaller_than_a_credit_step() -> None:
    assert WINDOW >= CREDIT_STEP
    with pytest.raises(AssertionError):
        SendWindow(window=CREDIT_STEP - 1)


# -- the sender's wait, over real sockets ----------------------------------------------------

class _Receiver(threading.Thread):
    """A data port's stand-in: reads what the sender sends, and after ``after`` messages
    sends back a message that is not a credit, then a credit for every tag read."""

    def __init__(self, server: Server, after: int | None) -> None:
        super().__init__(daemon=True)
        self.server, self.after = server, after
        self.got = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            m = self.server.recv()
            if m is None:
                time.sleep(0.001)
                continue
            self.got += 1
            if self.after is not None and self.got == self.after:
                conn = m[0]
                self.server.send(conn, [b"\x93\x01\x02\x03"])  # not a credit: counted, ignored
                self.server.send(conn, [P.Credit((1 << 40, 0)).pack()])


def _outbound(client: Client, waits: list[int]) -> Outbound:
    return Outbound({1: client}, [1], ["src", "sink"], SystemClock(), shm_bytes=0, shm_min=1 << 30,
                    before_wait=lambda: waits.append(1))


@pytest.mark.timeout(60)
def test_a_sender_waits_for_a_credit_and_reports_first() -> None:
    server = Server("tcp://127.0.0.1:0")
    client = Client(server.endpoint)
    rx = _Receiver(server, after=16)
    rx.start()
    waits: list[int] = []
    out = _outbound(client, waits)
    payload = np.zeros(MB, np.uint8)
    try:
        for t in range(17):  # the 17th waits: 16 MB sent for earlier tags
            out.post_value(1, 0, (t, 0), NUMPY, None, [payload], MB)
            out.flush()
        assert out.flow_waits == 1 and waits == [1]  # the held-back report went out first
        assert out.rejected == 1  # the message that was not a credit
        assert rx.got >= 16
    finally:
        rx.stop.set()
        rx.join()
        client.close()
        server.close()


@pytest.mark.timeout(60)
def test_a_sender_that_gets_no_credit_goes_on_past_its_window(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("tcp://127.0.0.1:0")
    client = Client(server.endpoint)
    rx = _Receiver(server, after=None)  # an older peer: never credits
    rx.start()
    out = _outbound(client, [])
    payload = np.zeros(MB, np.uint8)
    try:
        t0 = time.monotonic()
        with caplog.at_level("INFO", logger="reactorfed.federate"):
            for t in range(40):
                out.post_value(1, 0, (t, 0), NUMPY, None, [payload], MB)
                out.flush()
        assert out.flow_waits == 1  # waited its patience once, then not again
        assert 1.9 < time.monotonic() - t0 < 10
        assert "payloads go past the window" in caplog.text
    finally:
        rx.stop.set()
        rx.join()
        client.close()
        server.close()


# -- a federation whose source outruns its sink ----------------------------------------------

N = 160
SIZE = 256 * 1024
_progress: dict[str, int] = {}  # the sink's last processed index (the federates are threads)


class FastSource(Reactor):
    out = Output(object)
    again = LogicalAction(int)

    def __init__(self) -> None:
        self.lead = 0  # the furthest this source got ahead of the sink, in messages

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: Any) -> None:
        again.schedule(value=0)

    @reaction(triggers=[again], effects=[again, out])
    def tick(self, again: Any, out: Any) -> None:
        i = again.get()
        self.lead = max(self.lead, i - _progress.get("sink", -1))
        frame = np.full(SIZE, i % 251, np.uint8)
        frame[:8] = np.frombuffer(np.int64(i).tobytes(), np.uint8)
        out.set(frame)
        if i + 1 < N:
            again.schedule(value=i + 1, delay=1000)


class SlowSink(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.intact = True

    @reaction(triggers=[inp])
    def take(self, inp: Any) -> None:
        v = inp.get()
        i = int(np.frombuffer(bytes(v[:8]), np.int64)[0])
        self.intact = self.intact and bool((v[8:] == i % 251).all())
        self.seen.append(i)
        time.sleep(0.004)
        _progress["sink"] = i


class Outrun(Reactor):
    def __init__(self) -> None:
        self.src = FastSource()
        self.sink = SlowSink()
        self.connect(self.src.out, self.sink.inp)


@pytest.mark.timeout(120)
def test_a_source_that_outruns_its_sink_stays_within_its_window() -> None:
    _progress.clear()
    fed = Federation(Outrun)
    fed.start_all(unix_sockets=False, shm_bytes=0)
    fed.wait(90)
    assert not fed.errors and fed.rti_error is None
    sink = fed.programs["sink"].sink  # type: ignore[attr-defined]
    assert sink.seen == list(range(N)) and sink.intact
    src = fed.programs["src"].src  # type: ignore[attr-defined]
    window_msgs, step_msgs = WINDOW // SIZE, CREDIT_STEP // SIZE
    assert fed.coords["src"].flow_waits > 0
    # Ahead by a window at most (and the message being sent, and the one the sink is on);
    # and by a window less the credit not yet due at least (the sink is far slower).
    assert window_msgs - step_msgs <= src.lead <= window_msgs + 2, src.lead
