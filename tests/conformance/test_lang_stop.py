"""Ports of LF's programs about termination: timeouts (0 included), request_stop() at a
microstep, from shutdown, and starvation in superdense time."""

from __future__ import annotations

from typing import Any

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
from tests.conformance.harness import lf_test, run
from tests.conformance.test_lang_imports import LoopedActionSender


def _tag_compare(a: Tag, b: Tag) -> int:
    """lf.tag_compare: -1, 0 or 1."""
    return (a > b) - (a < b)


# -- RequestStop.lf ---------------------------------------------------------------------


class _RequestStopMain(Reactor):
    def __init__(self) -> None:
        self.shutdown_tags: list[Tag] = []

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        self.shutdown_tags.append(self.elapsed_tag())
        self.request_stop()  # should have no effect


@lf_test("RequestStop.lf")
def test_request_stop() -> None:
    main = _RequestStopMain()
    summary = run(main)
    assert main.shutdown_tags == [Tag(0, 1)]  # starvation after startup
    assert summary.last_tag == Tag(0, 1)


# -- Stop.lf ----------------------------------------------------------------------------


class _StopConsumer(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.reaction_invoked_correctly = False
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        current_tag = self.tag()
        start = self.start_time()
        if _tag_compare(current_tag, Tag(ms(10) + start, 9)) > 0:
            raise AssertionError("ERROR: Invoked reaction(inp) at tag bigger than shutdown.")
        elif _tag_compare(current_tag, Tag(ms(10) + start, 8)) == 0:
            self.request_stop()
        elif _tag_compare(current_tag, Tag(ms(10) + start, 9)) == 0:
            self.reaction_invoked_correctly = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        current_tag = self.tag()
        start = self.start_time()
        elapsed = current_tag.relative_to(start)
        if _tag_compare(current_tag, Tag(ms(10) + start, 9)) == 0 and self.reaction_invoked_correctly:
            self.shutdown_checked = True  # "SUCCESS: successfully enforced stop."
        elif _tag_compare(current_tag, Tag(ms(10) + start, 9)) > 0:
            raise AssertionError(f"ERROR: Shutdown invoked at tag {elapsed}. Failed to enforce timeout.")
        elif not self.reaction_invoked_correctly:
            raise AssertionError(f"ERROR: Failed to invoke reaction(inp) at tag {elapsed}.")


class _StopMain(Reactor):
    def __init__(self) -> None:
        self.consumer = _StopConsumer()
        self.producer = LoopedActionSender(break_interval=ms(1))
        self.connect(self.producer.out, self.consumer.inp)


@lf_test("Stop.lf")
def test_stop() -> None:
    main = _StopMain()
    summary = run(main, timeout=ms(11))
    assert main.consumer.shutdown_checked
    assert summary.last_tag == Tag(ms(10), 9)


# -- StopZero.lf ------------------------------------------------------------------------


class _SZSender(Reactor):
    out = Output(int)
    t = Timer(0, us(1))
    act = LogicalAction()

    def __init__(self) -> None:
        self.reaction_invoked_correctly = False
        self.shutdown_checked = False

    @reaction(triggers=[t], effects=[out, act])
    def send(self, out: Any, act: Any) -> None:
        out.set(42)
        act.schedule(delay=0)
        zero = Tag(self.start_time(), 0)
        one = Tag(self.start_time(), 1)
        if _tag_compare(self.tag(), zero) == 0:
            self.request_stop()
        elif _tag_compare(self.tag(), one) > 0:
            raise AssertionError(f"ERROR: Reaction called after shutdown at {self.elapsed_tag()}.")

    @reaction(triggers=[act])
    def on_act(self, act: Any) -> None:
        one = Tag(self.start_time(), 1)
        if _tag_compare(self.tag(), one) == 0:
            self.reaction_invoked_correctly = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.elapsed() == us(0) and self.microstep() == 1, (
            f"ERROR: Sender failed to stop the program in time. Stopping at {self.elapsed_tag()}."
        )
        assert self.reaction_invoked_correctly, (
            f"ERROR: Sender reaction(act) was not invoked. Stopping at {self.elapsed_tag()}."
        )
        self.shutdown_checked = True


class _SZReceiver(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: list[Tag] = []
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received.append(self.elapsed_tag())
        zero = Tag(self.start_time(), 0)
        if _tag_compare(self.tag(), zero) == 0:
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.elapsed() == us(0) and self.microstep() == 1, (
            f"ERROR: Receiver failed to stop the program in time. Stopping at {self.elapsed_tag()}."
        )
        self.shutdown_checked = True


class _StopZeroMain(Reactor):
    def __init__(self) -> None:
        self.sender = _SZSender()
        self.receiver = _SZReceiver()
        self.connect(self.sender.out, self.receiver.inp)


@lf_test("StopZero.lf")
def test_stop_zero() -> None:
    main = _StopZeroMain()
    run(main)
    assert main.sender.shutdown_checked and main.receiver.shutdown_checked
    assert main.receiver.received == [Tag(0, 0)]


# -- Starvation.lf ----------------------------------------------------------------------


class _SuperDenseSender(Reactor):
    loop = LogicalAction()
    out = Output(int)

    def __init__(self, number_of_iterations: int = 10) -> None:
        self.number_of_iterations = number_of_iterations
        self.iterator = 0
        self.shutdown_checked = False

    @reaction(triggers=[STARTUP, loop], effects=[out, loop])
    def send(self, out: Any, loop: Any) -> None:
        if self.iterator < self.number_of_iterations:
            loop.schedule(delay=0)
        self.iterator += 1
        out.set(42)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        current_tag = self.tag()
        assert current_tag.time == self.start_time() and current_tag.microstep == self.number_of_iterations + 1, (
            f"ERROR: Failed to properly enforce starvation at sender. Shutting down at tag {self.elapsed_tag()}."
        )
        self.shutdown_checked = True


class _SuperDenseReceiver(Reactor):
    inp = Input(int)

    def __init__(self, number_of_iterations: int = 10) -> None:
        self.number_of_iterations = number_of_iterations
        self.received: list[Tag] = []
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received.append(self.elapsed_tag())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        current_tag = self.tag()
        assert current_tag.time == self.start_time() and current_tag.microstep == self.number_of_iterations + 1, (
            f"ERROR: Failed to properly enforce starvation at receiver. Shutting down at tag {self.elapsed_tag()}."
        )
        self.shutdown_checked = True


class _StarvationMain(Reactor):
    def __init__(self) -> None:
        self.sender = _SuperDenseSender()
        self.receiver = _SuperDenseReceiver()
        self.connect(self.sender.out, self.receiver.inp)


@lf_test("Starvation.lf")
def test_starvation() -> None:
    main = _StarvationMain()
    run(main, timeout=sec(1))
    assert main.sender.shutdown_checked and main.receiver.shutdown_checked
    assert main.receiver.received == [Tag(0, m) for m in range(11)]


# -- Timeout.lf -------------------------------------------------------------------------


class _TimeoutConsumer(Reactor):
    inp = Input(int)

    def __init__(self, timeout: int) -> None:
        self.timeout = timeout  # the program's timeout (MSEC(11) in Timeout.lf, 0 in TimeoutZero.lf)
        self.success = False
        self.shutdown_checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        current_tag = self.tag()
        to_compare_tag = Tag(self.timeout + self.start_time(), 0)
        if _tag_compare(current_tag, to_compare_tag) > 0:
            raise AssertionError(f"ERROR: Tag {self.elapsed_tag()} received. Failed to enforce timeout.")
        elif _tag_compare(current_tag, to_compare_tag) == 0:
            self.success = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        current_tag = self.tag()
        to_compare_tag = Tag(self.timeout + self.start_time(), 0)
        assert _tag_compare(current_tag, to_compare_tag) == 0 and self.success, (
            f"ERROR: Shutdown invoked at tag {self.elapsed_tag()}. Failed to enforce timeout."
        )
        self.shutdown_checked = True


class _TimeoutMain(Reactor):
    def __init__(self, timeout: int) -> None:
        self.consumer = _TimeoutConsumer(timeout)
        self.producer = LoopedActionSender(break_interval=ms(1))
        self.connect(self.producer.out, self.consumer.inp)


@lf_test("Timeout.lf")
def test_timeout() -> None:
    main = _TimeoutMain(ms(11))
    summary = run(main, timeout=ms(11))
    assert main.consumer.shutdown_checked
    assert summary.last_tag == Tag(ms(11), 0)


@lf_test("TimeoutZero.lf")
def test_timeout_zero() -> None:
    main = _TimeoutMain(0)
    summary = run(main, timeout=0)
    assert main.consumer.shutdown_checked
    assert summary.last_tag == Tag(0, 0)


# -- TimeLimit.lf -----------------------------------------------------------------------


class _TLClock(Reactor):
    y = Output(int)
    t = Timer(offset="offset", period="period")  # timer t(offset, period)

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def tick(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class _TLDestination(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.s = 1
        self.shutdown_checked = False

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        assert x.get() == self.s, f"ERROR: Expected {self.s} and got {x.get()}."
        self.s += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s == 12, f"ERROR: Expected 12 but got {self.s}."
        self.shutdown_checked = True


class _TimeLimitMain(Reactor):
    stop = Timer(sec(10))

    def __init__(self, period: int = sec(1)) -> None:
        self.period = period
        self.c = _TLClock(period=period)
        self.d = _TLDestination()
        self.connect(self.c.y, self.d.x)

    @reaction(triggers=[stop])
    def on_stop(self) -> None:
        self.request_stop()


@lf_test("TimeLimit.lf")
def test_time_limit() -> None:
    main = _TimeLimitMain()
    summary = run(main, fast=True)
    assert main.d.shutdown_checked
    assert summary.last_tag == Tag(sec(10), 1)
