"""Ports of LF's federated programs about decentralized coordination's late messages:
``DistributedCountDecentralizedLate*.lf`` (tardy handlers, formerly ``STAA``, in the
receiving reactor, down a chain of reactions, down the hierarchy) and
``DistributedLoopedActionDecentralized*.lf`` (a tardy handler raising its federate's
maxwait at run time, ``lf.set_fed_maxwait``).

They run decentralized, as LF runs them (``run_federated(..., coordination=
"decentralized")``, see :mod:`reactorfed.federation.coordination.federate_maxwait`).
LF's maxwait defaults to forever since 2026: a receiver then waits for its upstream's
word at every tag and no message is tardy. The ``Late`` programs were written when it
defaulted to 0, and their checks allow both (on-time + tardy = all messages); each runs
with LF's current default (fast: logical outcomes only) and, where it fits in a couple of
seconds, with maxwait 0 in real time, as LF ran it, where messages do come late.
"""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import FOREVER, SHUTDOWN, Input, Reactor, Timer, maxwait, ms, reaction, sec, us
from tests.conformance.harness import lf_test, run_federated, run_local
from tests.conformance.test_fed_count import count
from tests.conformance.test_fed_loops import _LoopedReceiver, _LoopedSender

pytestmark = pytest.mark.timeout(60)


# -- DistributedCountDecentralizedLate.lf -----------------------------------------------------


class _LatePrint(Reactor):
    """DistributedCountDecentralizedLate.lf's Print: counts the messages on time (at the
    tag of their count) and the tardy ones (its ``STAA(0)`` handler)."""

    inp = Input(int)
    t = Timer(0, ms(100))  # forces logical time to advance without messages

    def __init__(self) -> None:
        self.success = 0
        self.success_stp_violation = 0
        self.c = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        if self.tag() == inp.intended_tag and self.elapsed() == sec(1) * self.c and self.microstep() == 0:
            self.success += 1  # on time
        self.c += 1

    @got.tardy_handler
    def got_late(self, inp: Any) -> None:
        assert self.tag().time >= inp.intended_tag.time  # "violated the STP offset by ..."
        self.success_stp_violation += 1
        self.c += 1

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.success + self.success_stp_violation == 5, (
            f"Failed to detect STP violations: {self.success} on time, {self.success_stp_violation} late.")
        self.checked = True


class _Late(Reactor):
    def __init__(self, mw: int = FOREVER) -> None:
        self.c = count()
        self.p = _LatePrint()
        maxwait(self.p, mw)
        self.connect(self.c.out, self.p.inp)


@lf_test("federated/DistributedCountDecentralizedLate.lf", federated=True)
def test_distributed_count_decentralized_late() -> None:
    """Count every 1 s for 4.9 s; the receiver's 100 ms timer makes it advance between
    messages. With maxwait forever it waits for the count's word: all 5 on time."""
    main = _Late()
    run_local(main, timeout=ms(4900))
    assert main.p.checked and main.p.success == 5
    p = run_federated(_Late, timeout=ms(4900), coordination="decentralized")["p"].p  # type: ignore[attr-defined]
    assert p.checked and (p.success, p.success_stp_violation) == (5, 0)


# -- DistributedCountDecentralizedLateDownstream.lf and ...LateHierarchy.lf -----------------------


class _ImportantActuator(Reactor):
    """Counts messages on time (at their count's tag: anything else is an error) and the
    tardy ones, which reach it as a violation passed down to its handler."""

    inp = Input(int)
    t = Timer(0, ms(100))

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.success = 0
        self.success_stp_violation = 0
        self.c = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert self.elapsed() == sec(1) * self.c and self.microstep() == 0, (
            "Normal reaction was invoked, but current tag doesn't match expected tag.")
        self.success += 1
        self.c += 1

    @got.tardy_handler
    def got_late(self, inp: Any) -> None:
        self.success_stp_violation += 1
        self.c += 1

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.success + self.success_stp_violation == self.expect, "Failed to detect STP violation in messages."
        self.checked = True


class _DownstreamPrint(Reactor):
    """LateDownstream's Print: prints what it gets (no handler: a tardy value runs its body)."""

    inp = Input(int)

    def __init__(self) -> None:
        self.got_values: list[int] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.got_values.append(inp.get())


class _DownstreamReceiver(Reactor):
    """LateDownstream's Receiver: its reaction (no handler) forwards value + 1 to both."""

    inp = Input(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.p = _DownstreamPrint()
        self.a = _ImportantActuator(expect=2)

    @reaction(triggers=[inp], effects=["p.inp", "a.inp"])
    def fwd(self, inp: Any, p: Any, a: Any) -> None:
        p.inp.set(inp.get() + 1)
        a.inp.set(inp.get() + 1)

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass


class _LateDownstream(Reactor):
    def __init__(self, mw: int = FOREVER) -> None:
        self.c = count()
        self.r = _DownstreamReceiver()
        maxwait(self.r, mw)
        self.connect(self.c.out, self.r.inp)


@lf_test("federated/DistributedCountDecentralizedLateDownstream.lf", federated=True)
def test_distributed_count_decentralized_late_downstream() -> None:
    """Count every 1 s for 1.9 s: 2 messages, forwarded by a reaction without a tardy
    handler to an actuator with one. With maxwait forever both are on time; with maxwait
    0, in real time as LF ran it, a late one's violation passes down the forwarding
    reaction (whose body runs) to the actuator's handler. Either way 2 in all."""
    main = _LateDownstream()
    run_local(main, timeout=ms(1900))
    assert main.r.a.checked and main.r.a.success == 2 and main.r.p.got_values == [2, 3]
    r = run_federated(_LateDownstream, timeout=ms(1900), coordination="decentralized")["r"].r  # type: ignore[attr-defined]
    assert r.a.checked and (r.a.success, r.a.success_stp_violation) == (2, 0) and r.p.got_values == [2, 3]
    r = run_federated(lambda: _LateDownstream(0), timeout=ms(1900), coordination="decentralized",
                      fast=False)["r"].r  # type: ignore[attr-defined]
    assert r.a.checked and r.p.got_values == [2, 3]


class _HierarchyReceiver(Reactor):
    """LateHierarchy's Receiver: its input goes straight to both contained reactors."""

    inp = Input(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.p = _DownstreamPrint()
        self.a = _ImportantActuator(expect=5)
        self.connect(self.inp, self.p.inp)
        self.connect(self.inp, self.a.inp)

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass


class _LateHierarchy(Reactor):
    def __init__(self) -> None:
        self.c = count()
        self.r = _HierarchyReceiver()
        self.connect(self.c.out, self.r.inp)


@lf_test("federated/DistributedCountDecentralizedLateHierarchy.lf", federated=True)
def test_distributed_count_decentralized_late_hierarchy() -> None:
    """Count every 1 s for 4.9 s into a receiver that passes its input down the hierarchy
    to an actuator with a tardy handler: 5 messages (all on time with maxwait forever)."""
    main = _LateHierarchy()
    run_local(main, timeout=ms(4900))
    assert main.r.a.checked and main.r.a.success == 5
    r = run_federated(_LateHierarchy, timeout=ms(4900), coordination="decentralized")["r"].r  # type: ignore[attr-defined]
    assert r.a.checked and (r.a.success, r.a.success_stp_violation) == (5, 0) and r.p.got_values == [1, 2, 3, 4, 5]


# -- DistributedLoopedActionDecentralized.lf ---------------------------------------------------


class _MaxwaitReceiver(Reactor):
    """Forwards to DistributedLoopedAction's Receiver; on a tardy message, forwards it too
    and raises its federate's maxwait by 10 ms (once per time step)."""

    inp = Input(int)
    t = Timer(0, ms(1))  # forces logical time to advance

    def __init__(self) -> None:
        self.r = _LoopedReceiver()
        self.last_time_updated_maxwait = 0
        self.tardy = 0

    @reaction(triggers=[inp], effects=["r.inp"])
    def got(self, inp: Any, r: Any) -> None:
        r.inp.set(inp.get())

    @got.tardy_handler
    def got_late(self, inp: Any, r: Any) -> None:
        self.tardy += 1
        r.inp.set(inp.get())
        t = self.tag().time
        if t != self.last_time_updated_maxwait:
            self.set_fed_maxwait(self.fed_maxwait() + ms(10))
            self.last_time_updated_maxwait = t

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass


class _LoopedActionDecentralized(Reactor):
    def __init__(self) -> None:
        self.sender = _LoopedSender()
        self.maxwait_receiver = _MaxwaitReceiver()
        maxwait(self.maxwait_receiver, 0)
        self.connect(self.sender.out, self.maxwait_receiver.inp)


@lf_test("federated/DistributedLoopedActionDecentralized.lf", federated=True)
def test_distributed_looped_action_decentralized() -> None:
    """Ten messages in consecutive microsteps every 400 ms to a receiver with maxwait 0
    (and a 1 ms timer), in real time: messages that come late are handled (forwarded) at a
    later microstep and raise the maxwait; the inner receiver still gets all 30 in order
    in 3 breaks by 1 s (its "incorrect time" prints, which LF does not treat as errors,
    come from tardy ones)."""
    main = _LoopedActionDecentralized()
    run_local(main, timeout=sec(1))
    assert main.maxwait_receiver.r.checked and main.maxwait_receiver.r.errors == []
    progs = run_federated(_LoopedActionDecentralized, timeout=sec(1), coordination="decentralized", fast=False)
    m = progs["maxwait_receiver"].maxwait_receiver  # type: ignore[attr-defined]
    assert m.r.checked
    assert not any("out of order" in e for e in m.r.errors)


# -- DistributedLoopedActionDecentralizedMW.lf ---------------------------------------------------


class _InnerReceiver(Reactor):
    """MW's inner Receiver: strict order, and a tardy handler that must never run (the
    violation is handled by the enclosing reactor, whose outputs are on time)."""

    inp = Input(int)

    def __init__(self, take_a_break_after: int = 10, break_interval: int = ms(400)) -> None:
        self.take_a_break_after = take_a_break_after
        self.break_interval = break_interval
        self.received_messages = 0
        self.total_received_messages = 0
        self.breaks = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.total_received_messages += 1
        assert inp.get() == self.received_messages, (
            f"ERROR: Skipped expected value {self.received_messages}. Received value {inp.get()}.")
        self.received_messages += 1
        if self.received_messages == self.take_a_break_after:
            self.breaks += 1
            self.received_messages = 0

    @got.tardy_handler
    def got_late(self, inp: Any) -> None:
        raise AssertionError("ERROR: STP violation should have been handled by the enclosing reactor and not passed down!")

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        expected = (sec(1) // self.break_interval + 1) * self.take_a_break_after
        assert self.breaks == 3 and self.total_received_messages == expected, (
            f"ERROR: Test failed. Breaks: {self.breaks}, Messages: {self.total_received_messages}.")
        self.checked = True


class _STPReceiver(Reactor):
    inp = Input(int)
    t = Timer(0, ms(10))

    def __init__(self) -> None:
        self.receiver = _InnerReceiver()
        self.last_time_updated_stp = 0
        self.tardy = 0

    @reaction(triggers=[inp], effects=["receiver.inp"])
    def got(self, inp: Any, receiver: Any) -> None:
        receiver.inp.set(inp.get())  # "received {} on time"

    @got.tardy_handler
    def got_late(self, inp: Any, receiver: Any) -> None:
        self.tardy += 1
        receiver.inp.set(inp.get())  # "received {} LATE. Intended tag is ..."
        t = self.tag().time
        if t != self.last_time_updated_stp:
            self.set_fed_maxwait(self.fed_maxwait() + ms(100))
            self.last_time_updated_stp = t

    @reaction(triggers=[t])
    def tick(self) -> None:
        pass


class _LoopedActionDecentralizedMW(Reactor):
    def __init__(self) -> None:
        self.sender = _LoopedSender()
        self.stp_receiver = _STPReceiver()
        maxwait(self.stp_receiver, 0)  # "Initial maxwait is too small."
        self.connect(self.sender.out, self.stp_receiver.inp)


@lf_test("federated/DistributedLoopedActionDecentralizedMW.lf", federated=True)
def test_distributed_looped_action_decentralized_mw() -> None:
    """As DistributedLoopedActionDecentralized, with the tardy handler in the federate's
    top reactor raising maxwait by 100 ms: the inner receiver gets every value in order
    (30 in 3 breaks) and its own tardy handler never runs."""
    main = _LoopedActionDecentralizedMW()
    run_local(main, timeout=sec(1))
    assert main.stp_receiver.receiver.checked
    progs = run_federated(_LoopedActionDecentralizedMW, timeout=sec(1), coordination="decentralized", fast=False)
    assert progs["stp_receiver"].stp_receiver.receiver.checked  # type: ignore[attr-defined]


# -- PhysicalSTP.lf -----------------------------------------------------------------------------


class _PhysicalSTPPrint(Reactor):
    """Judges each message by its physical time of arrival: every one must come after its
    tag's time + ``STP_offset`` (1 us) of physical time; its ``STAA(STP_offset)`` handler
    (a tardy handler, LF's legacy absent_after of 1 us on the connection) must never run:
    the count is its only source, and maxwait is forever."""

    inp = Input(int)

    def __init__(self, STP_offset: int = 0) -> None:
        self.STP_offset = STP_offset
        self.c = 1
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert inp.get() == self.c, f"Expected to receive {self.c}."
        discrepancy = self.logical_time() + self.STP_offset - inp.physical_time_of_arrival
        assert discrepancy < 0, f"Message arrived {discrepancy} early."
        self.c += 1  # "The message has violated the STP offset by ... in physical time."

    @got.tardy_handler
    def got_late(self, inp: Any) -> None:
        raise AssertionError("Logical STP violation was detected. Only physical STP violations are possible.")

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.c == 3, f"Expected to receive 2 items but got {self.c - 1}."
        self.checked = True


class _PhysicalSTP(Reactor):
    def __init__(self) -> None:
        self.c = count(offset=ms(1), period=sec(1))
        self.p = _PhysicalSTPPrint(STP_offset=us(1))
        self.connect(self.c.out, self.p.inp, absent_after=us(1))


@lf_test("federated/PhysicalSTP.lf", federated=True)
def test_physical_stp() -> None:
    """Count at 1 ms and 1.001 s, in real time as LF runs it (a message cannot arrive
    before its sender's physical time reaches its tag): both arrive after their tag's
    time + 1 us, physical time, and none is tardy. In one process there is no network
    arrival (NEVER): only the federated run makes the physical check."""
    progs = run_federated(_PhysicalSTP, timeout=ms(1900), coordination="decentralized", fast=False)
    assert progs["p"].p.checked  # type: ignore[attr-defined]
