"""Ports of LF's federated programs whose connections between federates are physical
(``~>``: ``connect(..., physical=True)``). The receiving federate stamps each message
with its own physical time at arrival, plus the connection's delay; no grant orders the
link (the RTI does not make the receiver wait for the sender).

Each runs in one process on a clock that moves 1 us at every read (physical time must
pass for a physical connection's tag to move past the sender's), and federated in real
time (``fast=False``: the receiver's stamps are its physical clock's, so logical time
must follow physical time, as LF's federates do). The two that LF runs under
``coordination: decentralized`` run decentralized here too, and centralized as well: a
physical link takes no part in either, so their checks hold under both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.harness import lf_test, run, run_federated

pytestmark = pytest.mark.timeout(60)


class _TickingClock(VirtualClock):
    """A virtual clock that moves 1 us at every read: physical time passes as a program
    runs, without costing wall time."""

    def now(self) -> int:
        self.advance(us(1))
        return super().now()


def _run_local(main: Reactor, *, timeout: int | None) -> None:
    run(main, timeout=timeout, keepalive=True, clock=_TickingClock())


# -- DistributedCountPhysical.lf, ...AfterDelay.lf, ...Decentralized.lf -------------------


class _Count(Reactor):
    """DistributedCountPhysical.lf's Count: 0, 1, 2, ... on a timer (200 ms, 1 s)."""

    out = Output(int)
    t = Timer(ms(200), sec(1))

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.s)
        self.s += 1


class _Print(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.c = 0
        self.at: list[int] = []
        self.done = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        elapsed_time = self.elapsed()
        self.at.append(elapsed_time)
        assert inp.get() == self.c, f"ERROR: Expected to receive {self.c}."
        assert elapsed_time > sec(1) * self.c + ms(200), (
            f"ERROR: Expected received time to be strictly greater than {ms(200) * self.c}. Got {elapsed_time}.")
        self.c += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.c == 1, f"ERROR: Expected to receive 1 item. Received {self.c}."
        self.done = True


def _count_physical(after: int | None) -> Callable[[], Reactor]:
    class _DistributedCountPhysical(Reactor):
        def __init__(self) -> None:
            self.c = _Count()
            self.p = _Print()
            self.connect(self.c.out, self.p.inp, physical=True, after=after)  # c.out ~> p.inp

    return _DistributedCountPhysical


def _run_count_physical(after: int | None, coordinations: tuple[str, ...] = ("centralized",)) -> None:
    factory = _count_physical(after)
    main = factory()
    _run_local(main, timeout=sec(1))
    p = main.p  # type: ignore[attr-defined]
    assert p.done and p.c == 1
    for coordination in coordinations:
        progs = run_federated(factory, timeout=sec(1), fast=False, coordination=coordination)
        p = progs["p"].p  # type: ignore[attr-defined]
        assert p.done and p.c == 1
        # stamped on arrival: after the send at 200 ms (plus the delay), well before the timeout
        assert ms(200) + (after or 0) < p.at[0] < sec(1)


@lf_test("federated/DistributedCountPhysical.lf", federated=True)
def test_distributed_count_physical() -> None:
    _run_count_physical(None)


@lf_test("federated/DistributedCountPhysicalAfterDelay.lf", federated=True)
def test_distributed_count_physical_after_delay() -> None:
    """``c.out ~> p.inp after 400 msec``: stamped at arrival plus 400 ms."""
    _run_count_physical(ms(400))


@lf_test("federated/DistributedCountPhysicalDecentralized.lf", federated=True)
def test_distributed_count_physical_decentralized() -> None:
    """LF runs it under decentralized coordination: here both ways (a physical connection
    takes no part in coordination, so its checks hold under both)."""
    _run_count_physical(None, ("decentralized", "centralized"))


# -- PingPongDistributed.lf ---------------------------------------------------------------


class _Ping(Reactor):
    receive = Input(int)
    send = Output(int)
    serve = LogicalAction()

    def __init__(self, count: int = 10) -> None:
        self.pings_left = count

    @reaction(triggers=[STARTUP, serve], effects=[send])
    def ping(self, send: Any) -> None:
        send.set(self.pings_left)
        self.pings_left -= 1

    @reaction(triggers=[receive], effects=[serve])
    def back(self, receive: Any, serve: Any) -> None:
        if self.pings_left > 0:
            serve.schedule(delay=0)
        else:
            self.request_stop()


class _Pong(Reactor):
    receive = Input(int)
    send = Output(int)

    def __init__(self, expected: int = 10) -> None:
        self.expected = expected
        self.count = 0
        self.done = False

    @reaction(triggers=[receive], effects=[send])
    def pong(self, receive: Any, send: Any) -> None:
        self.count += 1
        send.set(receive.get())
        if self.count == self.expected:
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count == self.expected, (
            f"Pong expected to receive {self.expected} inputs, but it received {self.count}.")
        self.done = True


class _PingPongDistributed(Reactor):
    def __init__(self, count: int = 10) -> None:
        self.ping = _Ping(count=count)
        self.pong = _Pong(expected=count)
        self.connect(self.ping.send, self.pong.receive, physical=True)  # ~>
        self.connect(self.pong.send, self.ping.receive, physical=True)  # ~>


@lf_test("federated/PingPongDistributed.lf", federated=True)
def test_ping_pong_distributed() -> None:
    """Physical connections both ways: each ping and pong is stamped at its arrival."""
    main = _PingPongDistributed()
    _run_local(main, timeout=None)
    assert main.pong.done and main.pong.count == 10
    progs = run_federated(_PingPongDistributed, fast=False)
    pong = progs["pong"].pong  # type: ignore[attr-defined]
    assert pong.done and pong.count == 10


# -- DecentralizedP2PUnbalancedTimeoutPhysical.lf ------------------------------------------


class _Clock(Reactor):
    y = Output(int)
    t = Timer(0, us(10))  # Clock(offset=0, period=10 usec), as the federated reactor passes

    def __init__(self) -> None:
        self.count = 0
        self.done = False

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.done = True  # "SUCCESS: the source exited successfully."


class _Destination(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.s = 1
        self.done = False

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        assert x.get() == self.s, f"Expected {self.s} and got {x.get()}."
        self.s += 1

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.done = True


class _UnbalancedTimeoutPhysical(Reactor):
    def __init__(self) -> None:
        self.c = _Clock()
        self.d = _Destination()
        self.connect(self.c.y, self.d.x, physical=True)  # c.y ~> d.x


@lf_test("federated/DecentralizedP2PUnbalancedTimeoutPhysical.lf", federated=True)
def test_decentralized_p2p_unbalanced_timeout_physical() -> None:
    """A source ticking every 10 us for 1 ms, physically connected to a destination that
    may reach its timeout first and stop listening: the federation must still exit
    cleanly, and what arrives arrives in order. LF runs it under decentralized
    coordination, as it runs here (and centralized too: the link is physical)."""
    main = _UnbalancedTimeoutPhysical()
    _run_local(main, timeout=ms(1))
    assert main.c.done and main.d.done and main.c.count == 101
    for coordination in ("decentralized", "centralized"):
        progs = run_federated(_UnbalancedTimeoutPhysical, timeout=ms(1), fast=False, coordination=coordination)
        c, d = progs["c"].c, progs["d"].d  # type: ignore[attr-defined]
        assert c.done and d.done and c.count == 101 and d.s <= 102
