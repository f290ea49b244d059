"""Ports of LF's federated stop programs: ``request_stop()`` in a federation agrees on one
stop tag for every federate (``federated/DistributedStop*.lf``, ``StopAtShutdown.lf``)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Tag,
    Timer,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(60)

# -- DistributedStop.lf (and its decentralized and containerized variants) ---------------------


class _Sender(Reactor):
    out = Output(int)
    t = Timer(0, us(1))
    act = LogicalAction()

    def __init__(self) -> None:
        self.reaction_invoked_correctly = False
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[t, act], effects=[out, act])
    def send(self, out: Any, act: Any) -> None:
        tag = self.elapsed_tag()
        out.set(42)
        if tag.microstep == 0:
            # The same reaction is triggered by act: request_stop() is called both at
            # (1 usec, 0) and at (1 usec, 1).
            act.schedule(delay=0)
        if self.elapsed() == us(1):
            self.request_stop()
        one_usec_one = (us(1), 1)
        if (tag.time, tag.microstep) == one_usec_one:
            self.reaction_invoked_correctly = True
        assert (tag.time, tag.microstep) <= one_usec_one, (
            "ERROR: Invoked reaction(t, act) at tag bigger than shutdown."
        )

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.elapsed_tag()
        self.shutdown_tag = tag
        assert tag.time == us(1) and tag.microstep == 1, (
            f"ERROR: Sender failed to stop the federation in time. Stopping at ({tag.time}, {tag.microstep})."
        )
        assert self.reaction_invoked_correctly, (
            f"ERROR: Sender reaction(t, act) was not invoked at (1 usec, 1). Stopping at ({tag.time}, {tag.microstep})."
        )


class _Receiver(Reactor):
    inp = Input(int)

    def __init__(self, stp_offset: int = ms(10)) -> None:  # used in the decentralized variant
        self.stp_offset = stp_offset
        self.reaction_invoked_correctly = False
        self.received = 0
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received += 1
        tag = self.elapsed_tag()
        if tag.time == us(1):
            self.request_stop()
            # The receiver should receive a message at (1 usec, 1) and react to it.
            self.reaction_invoked_correctly = True
        if (tag.time, tag.microstep) > (us(1), 1):
            self.reaction_invoked_correctly = False

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.elapsed_tag()
        self.shutdown_tag = tag
        assert tag.time == us(1) and tag.microstep == 1, (
            f"Error: Receiver failed to stop the federation at the right time. Stopping at ({tag.time}, {tag.microstep})."
        )
        assert self.reaction_invoked_correctly, (
            "Error: Receiver reaction(in) was not invoked the correct number of times. "
            f"Stopping at ({tag.time}, {tag.microstep})."
        )


class _DistributedStop(Reactor):
    def __init__(self) -> None:
        self.sender = _Sender()
        self.receiver = _Receiver()
        self.connect(self.sender.out, self.receiver.inp)


def _check_stop(sender: _Sender, receiver: _Receiver) -> None:
    assert sender.shutdown_tag == Tag(us(1), 1) and receiver.shutdown_tag == Tag(us(1), 1)
    assert receiver.received == 4  # (0, 0), (0, 1), (1 us, 0), (1 us, 1)


def _run_stop(coordinations: tuple[str, ...] = ("centralized",)) -> None:
    main = _DistributedStop()
    run_local(main)
    _check_stop(main.sender, main.receiver)
    for coordination in coordinations:
        progs = run_federated(_DistributedStop, coordination=coordination)
        _check_stop(progs["sender"].sender, progs["receiver"].receiver)  # type: ignore[attr-defined]


@lf_test("federated/DistributedStop.lf", federated=True)
def test_distributed_stop() -> None:
    """Both federates ask to stop at (1 us, 0) (the sender once more at (1 us, 1)); the
    federation stops at (1 us, 1) everywhere."""
    _run_stop()


@lf_test("federated/DistributedStopDecentralized.lf", federated=True)
def test_distributed_stop_decentralized() -> None:
    """DistributedStop's Sender and Receiver, decentralized as in LF (maxwait forever: the
    receiver waits for the sender's word; the RTI still agrees on the stop tag). The
    checks (the stop tag (1 us, 1) on both sides, the receiver's reaction at it) hold
    under centralized coordination as well, also checked."""
    _run_stop(("decentralized", "centralized"))


@lf_test("docker/federated/failing/DistributedStopDecentralizedContainerized.lf", federated=True)
def test_distributed_stop_decentralized_containerized() -> None:
    """DistributedStopDecentralized in Docker containers (LF lists it as failing): the
    containers are LF's deployment; the program is DistributedStopDecentralized's, run
    decentralized."""
    _run_stop(("decentralized",))


# -- DistributedStopZero.lf --------------------------------------------------------------------


class _SenderZero(Reactor):
    out = Output(int)
    t = Timer(0, us(1))

    def __init__(self) -> None:
        self.startup_logical_time = 0
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.startup_logical_time = self.logical_time()

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(42)
        if self.tag() == Tag(self.startup_logical_time, 0):
            self.request_stop()  # at (0, 0)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.tag()
        self.shutdown_tag = self.elapsed_tag()
        assert tag.time == self.startup_logical_time and tag.microstep == 1, (
            f"ERROR: Sender failed to stop the federation in time. Stopping at ({tag.time}, {tag.microstep})."
        )


class _ReceiverZero(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.startup_logical_time = 0
        self.received = 0
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.startup_logical_time = self.logical_time()

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received += 1
        if self.tag() == Tag(self.startup_logical_time, 0):
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        tag = self.tag()
        self.shutdown_tag = self.elapsed_tag()
        assert tag.time == self.startup_logical_time and tag.microstep == 1, (
            f"ERROR: Receiver failed to stop the federation in time. Stopping at ({tag.time}, {tag.microstep})."
        )


class _DistributedStopZero(Reactor):
    def __init__(self) -> None:
        self.sender = _SenderZero()
        self.receiver = _ReceiverZero()
        self.connect(self.sender.out, self.receiver.inp)


@lf_test("federated/DistributedStopZero.lf", federated=True)
def test_distributed_stop_zero() -> None:
    """A stop requested at (0, 0) by both federates: both stop at (0, 1)."""
    main = _DistributedStopZero()
    run_local(main)
    assert main.sender.shutdown_tag == Tag(0, 1) and main.receiver.shutdown_tag == Tag(0, 1)
    assert main.receiver.received == 1
    progs = run_federated(_DistributedStopZero)
    s, r = progs["sender"].sender, progs["receiver"].receiver  # type: ignore[attr-defined]
    assert s.shutdown_tag == Tag(0, 1) and r.shutdown_tag == Tag(0, 1) and r.received == 1


# -- StopAtShutdown.lf ---------------------------------------------------------------------------


class _A(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.started = False
        self.got = 0
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        self.started = True  # "Hello World!"

    @reaction(triggers=[inp])
    def got_it(self, inp: Any) -> None:
        self.got += 1  # "Got it"

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.shutdown_tag = self.elapsed_tag()
        self.request_stop()


class _B(Reactor):
    out = Output(int)
    t = Timer(sec(1))

    def __init__(self) -> None:
        self.shutdown_tag: Tag | None = None

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(1)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.shutdown_tag = self.elapsed_tag()
        self.request_stop()


class _StopAtShutdown(Reactor):
    def __init__(self) -> None:
        self.a = _A()
        self.b = _B()
        self.connect(self.b.out, self.a.inp)


@lf_test("federated/StopAtShutdown.lf", federated=True)
def test_stop_at_shutdown() -> None:
    """request_stop() in shutdown reactions (at the timeout's tag) changes nothing: both
    federates end at (2 s, 0) after the input at 1 s; nothing hangs or fails."""
    main = _StopAtShutdown()
    run_local(main, timeout=sec(2))
    assert main.a.started and main.a.got == 1
    assert main.a.shutdown_tag == Tag(sec(2), 0) and main.b.shutdown_tag == Tag(sec(2), 0)
    progs = run_federated(_StopAtShutdown, timeout=sec(2))
    a, b = progs["a"].a, progs["b"].b  # type: ignore[attr-defined]
    assert a.started and a.got == 1
    assert a.shutdown_tag == Tag(sec(2), 0) and b.shutdown_tag == Tag(sec(2), 0)
