"""Ports of LF's C-target ``concurrent/`` programs: the threaded variants of core programs
(reactor-c runs them on a pool of worker threads), run here with ``workers=4``, so that
reactions of one level run together on reactorfed's thread pool; and physical actions
scheduled from threads with the ``drop`` and ``replace`` policies.

Where a C reaction sleeps (``lf_sleep``) to miss a deadline or busy-loops to take time,
the port advances the virtual clock by the same amount: the same physical time passes,
in no wall time. The threads of ``AsyncCallback*`` sleep in real time, on the Python
suite's scaled clock (``test_lang_concurrent``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Timer,
    VirtualClock,
    bank,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.c_lib import Imported, LoopedActionSender
from tests.conformance.harness import lf_test, run
from tests.conformance.test_lang_concurrent import _ScaledClock, _sleep

pytestmark = pytest.mark.timeout(60)

WORKERS = 4

# -------------------------------------------------------------------- CompositionThreaded.lf


class _CSource(Reactor):
    y = Output(int)
    t = Timer(offset=sec(1), period="period")

    def __init__(self, period: int = sec(2)) -> None:
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def send(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class _CTest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        self.count += 1
        assert x.get() == self.count, f"FAILURE: Expected {self.count}"


class _CompositionThreaded(Reactor):
    def __init__(self) -> None:
        self.s = _CSource()
        self.d = _CTest()
        self.connect(self.s.y, self.d.x)


@lf_test("concurrent/CompositionThreaded.lf", suite="C")
def test_composition_threaded() -> None:
    main = _CompositionThreaded()
    run(main, timeout=sec(10), fast=True, workers=WORKERS)
    assert main.d.count == 5


# ------------------------------------------------------------ DeadlineHandledAboveThreaded.lf


class _Deadline(Reactor):
    x = Input(int)
    deadline_violation = Output(bool)

    def __init__(self, threshold: int = ms(100)) -> None:
        self.threshold = threshold

    @reaction(triggers=[x], effects=[deadline_violation], deadline="threshold")
    def got(self, x: Any, deadline_violation: Any) -> None:
        raise AssertionError("ERROR: Deadline violation was not detected!")

    @got.deadline_handler
    def late(self, x: Any, deadline_violation: Any) -> None:
        deadline_violation.set(True)


class _DeadlineHandledAboveThreaded(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.violation_detected = False
        self.d = _Deadline(threshold=ms(10))

    @reaction(triggers=[STARTUP], effects=["d.x"])
    def start(self, d: Any) -> None:
        self.clock.advance(ms(200))  # lf_sleep(MSEC(200))
        d.x.set(42)

    @reaction(triggers=["d.deadline_violation"])
    def handled(self, d: Any) -> None:
        if d.deadline_violation.get():
            self.violation_detected = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.violation_detected, "FAILURE. Container did not react to deadline violation."


@lf_test("concurrent/DeadlineHandledAboveThreaded.lf", suite="C")
def test_deadline_handled_above_threaded() -> None:
    """A deadline handler's output, handled by the container."""
    clock = VirtualClock()
    main = _DeadlineHandledAboveThreaded(clock)
    run(main, clock=clock, workers=WORKERS)
    assert main.violation_detected


# ----------------------------------------------------------------------- DeadlineThreaded.lf


class _DSource(Reactor):
    y = Output(int)
    t = Timer(0, "period")

    def __init__(self, clock: VirtualClock, period: int = ms(3000)) -> None:
        self.clock = clock
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def send(self, y: Any) -> None:
        if self.count % 2 != 0:
            # The count variable is odd. Take time to cause a deadline violation.
            self.clock.advance(ms(1100))  # lf_sleep(MSEC(1100))
        y.set(self.count)
        self.count += 1


class _DDestination(Reactor):
    x = Input(int)

    def __init__(self, timeout: int = sec(1)) -> None:
        self.timeout = timeout
        self.count = 0
        self.log: list[tuple[str, int]] = []

    @reaction(triggers=[x], deadline="timeout")
    def got(self, x: Any) -> None:
        self.log.append(("on time", x.get()))
        # An odd count means the deadline should have been violated.
        assert self.count % 2 == 0, "ERROR: Failed to detect deadline."
        self.count += 1

    @got.deadline_handler
    def late(self, x: Any) -> None:
        self.log.append(("late", x.get()))
        assert self.count % 2 != 0, "ERROR: Unexpected deadline violation."
        self.count += 1


class _DeadlineThreaded(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.s = _DSource(clock)
        self.d = _DDestination(timeout=sec(1))
        self.connect(self.s.y, self.d.x)


@lf_test("concurrent/DeadlineThreaded.lf", suite="C")
def test_deadline_threaded() -> None:
    """Even counts arrive on time, odd ones 1.1 s late for a 1 s deadline."""
    clock = VirtualClock()
    main = _DeadlineThreaded(clock)
    run(main, timeout=sec(6), clock=clock, workers=WORKERS)
    assert main.d.log == [("on time", 0), ("late", 1), ("on time", 2)]


# ----------------------------------------------------------------------- DelayIntThreaded.lf


class _Delay(Reactor):
    inp = Input(int)
    out = Output(int)
    a = LogicalAction(int)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[a], effects=[out])
    def emit(self, a: Any, out: Any) -> None:
        out.set(a.get())

    @reaction(triggers=[inp], effects=[a])
    def got(self, inp: Any, a: Any) -> None:
        a.schedule(delay=self.delay, value=inp.get())


class _DelayTest(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.start_time = 0
        self.received_value = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.start_time = self.logical_time()

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received_value = True
        elapsed = self.logical_time() - self.start_time
        assert elapsed == ms(100), f"ERROR: Expected elapsed time to be 100000000. It was {elapsed}."
        assert inp.get() == 42, f"ERROR: Expected input value to be 42. It was {inp.get()}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received_value, "ERROR: No communication occurred!"


class _DelayIntThreaded(Reactor):
    def __init__(self) -> None:
        self.d = _Delay()
        self.t = _DelayTest()
        self.connect(self.d.out, self.t.inp)

    @reaction(triggers=[STARTUP], effects=["d.inp"])
    def start(self, d: Any) -> None:
        d.inp.set(42)


@lf_test("concurrent/DelayIntThreaded.lf", suite="C")
def test_delay_int_threaded() -> None:
    main = _DelayIntThreaded()
    run(main, workers=WORKERS)
    assert main.t.received_value


# -------------------------------------------------------------------- DeterminismThreaded.lf


class _DetSource(Reactor):
    y = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[y])
    def send(self, y: Any) -> None:
        y.set(1)


class _DetDestination(Reactor):
    x = Input(int)
    y = Input(int)

    def __init__(self) -> None:
        self.sums: list[int] = []

    @reaction(triggers=[x, y])
    def got(self, x: Any, y: Any) -> None:
        total = 0
        if x.is_present:
            total += x.get()
        if y.is_present:
            total += y.get()
        self.sums.append(total)
        assert total == 2, f"FAILURE: Expected 2, received {total}."


class _Pass(Reactor):
    x = Input(int)
    y = Output(int)

    @reaction(triggers=[x], effects=[y])
    def through(self, x: Any, y: Any) -> None:
        y.set(x.get())


class _DeterminismThreaded(Reactor):
    def __init__(self) -> None:
        self.s = _DetSource()
        self.d = _DetDestination()
        self.p1 = _Pass()
        self.p2 = _Pass()
        self.connect(self.s.y, self.d.y)
        self.connect(self.s.y, self.p1.x)
        self.connect(self.p1.y, self.p2.x)
        self.connect(self.p2.y, self.d.x)


@lf_test("concurrent/DeterminismThreaded.lf", suite="C")
def test_determinism_threaded() -> None:
    """The destination runs once, after both paths (one direct, one through two passes)."""
    main = _DeterminismThreaded()
    run(main, workers=WORKERS)
    assert main.d.sums == [2]


# ----------------------------------------------------------------- DoubleReactionThreaded.lf


class _Clock(Reactor):
    y = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def send(self, y: Any) -> None:
        self.count += 1
        y.set(self.count)


class _DRDestination(Reactor):
    x = Input(int)
    w = Input(int)

    def __init__(self) -> None:
        self.s = 2

    @reaction(triggers=[x, w])
    def got(self, x: Any, w: Any) -> None:
        total = (x.get() if x.is_present else 0) + (w.get() if w.is_present else 0)
        assert total == self.s, f"FAILURE: Expected sum to be {self.s}, but it was {total}."
        self.s += 2


class _DoubleReactionThreaded(Reactor):
    def __init__(self) -> None:
        self.c1 = _Clock()
        self.c2 = _Clock()
        self.d = _DRDestination()
        self.connect(self.c1.y, self.d.x)
        self.connect(self.c2.y, self.d.w)


@lf_test("concurrent/DoubleReactionThreaded.lf", suite="C")
def test_double_reaction_threaded() -> None:
    """Two simultaneous inputs trigger one reaction once."""
    main = _DoubleReactionThreaded()
    run(main, timeout=sec(10), fast=True, workers=WORKERS)
    assert main.d.s == 24


# --------------------------------------------------------------------------- GainThreaded.lf


class _Scale(Reactor):
    x = Input(int)
    y = Output(int)

    def __init__(self, scale: int = 2) -> None:
        self.scale = scale

    @reaction(triggers=[x], effects=[y])
    def gain(self, x: Any, y: Any) -> None:
        y.set(x.get() * self.scale)


class _GainTest(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.received_value = False

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        self.received_value = True
        assert x.get() == 2, "ERROR: Expected 2!"


class _GainThreaded(Reactor):
    def __init__(self) -> None:
        self.g = _Scale()
        self.d = _GainTest()
        self.connect(self.g.y, self.d.x)

    @reaction(triggers=[STARTUP], effects=["g.x"])
    def start(self, g: Any) -> None:
        g.x.set(1)


@lf_test("concurrent/GainThreaded.lf", suite="C")
def test_gain_threaded() -> None:
    main = _GainThreaded()
    run(main, workers=WORKERS)
    assert main.d.received_value


# -------------------------------------------------------------------------- HelloThreaded.lf


class _Reschedule(Reactor):
    t = Timer(offset=sec(1), period="period")
    a = LogicalAction()

    def __init__(self, period: int = sec(2), message: str = "Hello C") -> None:
        self.period = period
        self.message = message
        self.count = 0
        self.previous_time = 0

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=ms(200))
        self.previous_time = self.logical_time()

    @reaction(triggers=[a])
    def fired(self, a: Any) -> None:
        self.count += 1
        assert a.get() is None, "FAILURE: Expected a->has_value to be false, but it was true."
        elapsed = self.logical_time() - self.previous_time
        assert elapsed == ms(200), f"FAILURE: Expected 200ms of logical time to elapse but got {elapsed} nanoseconds."


class _Inside(Reactor):
    def __init__(self, period: int = sec(1), message: str = "Composite default message.") -> None:
        self.third_instance = _Reschedule(period=period, message=message)


class _HelloThreaded(Reactor):
    def __init__(self) -> None:
        self.first_instance = _Reschedule(period=sec(4), message="Hello from first_instance.")
        self.second_instance = _Reschedule(message="Hello from second_instance.")
        self.composite_instance = _Inside(message="Hello from composite_instance.")


@lf_test("concurrent/HelloThreaded.lf", suite="C")
def test_hello_threaded() -> None:
    main = _HelloThreaded()
    run(main, timeout=sec(10), fast=True, workers=WORKERS)
    # ticks at 1 s + k * period, each followed 200 ms later by the action (before 10 s)
    assert main.first_instance.count == 3
    assert main.second_instance.count == 5
    assert main.composite_instance.third_instance.count == 9


# ------------------------------------------------------------------------- ImportThreaded.lf


class _ImportThreaded(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.a = Imported()

    @reaction(triggers=[t], effects=["a.x"])
    def send(self, a: Any) -> None:
        a.x.set(42)


@lf_test("concurrent/ImportThreaded.lf", suite="C")
def test_import_threaded() -> None:
    """A reactor (lib/Imported.lf) that contains another one (lib/ImportedAgain.lf)."""
    main = _ImportThreaded()
    run(main, workers=WORKERS)
    assert main.a.a.received == [42]


# ------------------------------------------------------------------------ MinimalThreaded.lf


class _MinimalThreaded(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.hello = 0

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.hello += 1  # printf("Hello World.\n")


@lf_test("concurrent/MinimalThreaded.lf", suite="C")
def test_minimal_threaded() -> None:
    main = _MinimalThreaded()
    run(main, workers=WORKERS)
    assert main.hello == 1


# ----------------------------------------------------------------------- PingPongThreaded.lf


class _Ping(Reactor):
    receive = Input(int)
    send = Output(int)
    serve = LogicalAction()

    def __init__(self, count: int = 10) -> None:
        self.count = count
        self.pings_left = count

    @reaction(triggers=[STARTUP, serve], effects=[send])
    def ping(self, send: Any) -> None:
        send.set(self.pings_left)
        self.pings_left -= 1

    @reaction(triggers=[receive], effects=[serve])
    def got(self, receive: Any, serve: Any) -> None:
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

    @reaction(triggers=[receive], effects=[send])
    def pong(self, receive: Any, send: Any) -> None:
        self.count += 1
        send.set(receive.get())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == self.expected, (
            f"Pong expected to receive {self.expected} inputs, but it received {self.count}.")


class _PingPongThreaded(Reactor):
    def __init__(self) -> None:
        self.ping = _Ping()
        self.pong = _Pong()
        self.connect(self.ping.send, self.pong.receive)
        self.connect(self.pong.send, self.ping.receive)


@lf_test("concurrent/PingPongThreaded.lf", suite="C")
def test_ping_pong_threaded() -> None:
    main = _PingPongThreaded()
    summary = run(main, fast=True, workers=WORKERS)
    assert main.pong.count == 10 and summary.stop_reason == "stop requested"


# ---------------------------------------------------------------- ScheduleTwice(Threaded).lf


class _ScheduleTwice(Reactor):
    a = LogicalAction(int)

    def __init__(self) -> None:
        self.rc_count = 0
        self.log: list[tuple[int, int, int]] = []

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=ms(100), value=42)
        a.schedule(delay=ms(100), value=84)

    @reaction(triggers=[a])
    def fired(self, a: Any) -> None:
        tag = self.elapsed_tag()
        self.log.append((tag.time, tag.microstep, a.get()))
        if tag.microstep == 0:
            assert a.get() == 42, "ERROR: Expected 42 at microstep 0."
        if tag.microstep == 1:
            assert a.get() == 84, "ERROR: Expected 84 at microstep 1."
        self.rc_count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.rc_count >= 2, "Didn't see two events."


@lf_test("concurrent/ScheduleTwice.lf", suite="C")
def test_schedule_twice() -> None:
    """Two events scheduled for one tag: the second at the next microstep (reactor-c)."""
    main = _ScheduleTwice()
    run(main, workers=WORKERS)
    assert main.log == [(ms(100), 0, 42), (ms(100), 1, 84)]


@lf_test("concurrent/ScheduleTwiceThreaded.lf", suite="C")
def test_schedule_twice_threaded() -> None:
    main = _ScheduleTwice()
    run(main, workers=WORKERS)
    assert main.log == [(ms(100), 0, 42), (ms(100), 1, 84)]


# ------------------------------------------------------------------ SendingInsideThreaded.lf


class _Printer(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        assert x.get() == self.count, f"FAILURE: Expected {self.count}."
        self.count += 1


class _SendingInsideThreaded(Reactor):
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.count = 0
        self.p = _Printer()

    @reaction(triggers=[t], effects=["p.x"])
    def send(self, p: Any) -> None:
        self.count += 1
        p.x.set(self.count)


@lf_test("concurrent/SendingInsideThreaded.lf", suite="C")
def test_sending_inside_threaded() -> None:
    main = _SendingInsideThreaded()
    run(main, timeout=sec(10), fast=True, workers=WORKERS)
    assert main.p.count == 12


# --------------------------------------------------------------------- StarvationThreaded.lf


class _SuperDenseSender(Reactor):
    loop = LogicalAction()
    out = Output(int)

    def __init__(self, number_of_iterations: int = 10) -> None:
        self.number_of_iterations = number_of_iterations
        self.iterator = 0
        self.shutdown_tag: tuple[int, int] | None = None

    @reaction(triggers=[STARTUP, loop], effects=[loop, out])
    def send(self, loop: Any, out: Any) -> None:
        if self.iterator < self.number_of_iterations:
            loop.schedule(delay=0)
        self.iterator += 1
        out.set(42)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        self.shutdown_tag = (tag.time, tag.microstep)
        assert self.shutdown_tag == (0, self.number_of_iterations + 1), (
            f"ERROR: Failed to properly enforce starvation at sender. Shutting down at tag {self.shutdown_tag}.")


class _SuperDenseReceiver(Reactor):
    inp = Input(int)

    def __init__(self, number_of_iterations: int = 10) -> None:
        self.number_of_iterations = number_of_iterations
        self.received = 0
        self.shutdown_tag: tuple[int, int] | None = None

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        self.shutdown_tag = (tag.time, tag.microstep)
        assert self.shutdown_tag == (0, self.number_of_iterations + 1), (
            f"ERROR: Failed to properly enforce starvation at receiver. Shutting down at tag {self.shutdown_tag}.")


class _StarvationThreaded(Reactor):
    def __init__(self) -> None:
        self.sender = bank(_SuperDenseSender, 8)
        self.receiver = bank(_SuperDenseReceiver, 8)
        self.connect(self.sender.out, self.receiver.inp)


@lf_test("concurrent/StarvationThreaded.lf", suite="C")
def test_starvation_threaded() -> None:
    """Starvation after eleven microsteps: shutdown at (0, 11) everywhere."""
    main = _StarvationThreaded()
    run(main, workers=WORKERS)
    assert [r.received for r in main.receiver] == [11] * 8
    assert all(r.shutdown_tag == (0, 11) for r in [*main.sender, *main.receiver])


# ---------------------------------------------------------------------------- StopThreaded.lf


class _StopConsumer(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.reaction_invoked_correctly = False
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        now = (tag.time, tag.microstep)
        assert now <= (ms(10), 9), f"Invoked reaction(in) at tag {now} which is bigger than shutdown."
        if now == (ms(10), 8):
            self.request_stop()  # at relative tag (10 msec, 8)
        elif now == (ms(10), 9):
            self.reaction_invoked_correctly = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        now = (tag.time, tag.microstep)
        assert now <= (ms(10), 9), f"Shutdown invoked at tag {now}. Failed to enforce timeout."
        assert self.reaction_invoked_correctly, f"Failed to invoke reaction(in) at tag {now}."
        assert now == (ms(10), 9)
        self.checked = True


class _StopThreaded(Reactor):
    def __init__(self) -> None:
        self.consumer = bank(_StopConsumer, 4)
        self.producer = bank(LoopedActionSender, 4, break_interval=ms(1))
        self.connect(self.producer.out, self.consumer.inp)


@lf_test("concurrent/StopThreaded.lf", suite="C")
def test_stop_threaded() -> None:
    """Four consumers each request a stop at (10 ms, 8): the program stops at (10 ms, 9),
    before its 11 ms timeout."""
    main = _StopThreaded()
    run(main, timeout=ms(11), workers=WORKERS)
    assert all(c.checked for c in main.consumer)


# ------------------------------------------------------------------------ StopZeroThreaded.lf


class _SZSender(Reactor):
    out = Output(int)
    t = Timer(0, us(1))
    act = LogicalAction()

    def __init__(self) -> None:
        self.reaction_invoked_correctly = False
        self.checked = False

    @reaction(triggers=[t], effects=[out, act])
    def tick(self, out: Any, act: Any) -> None:
        out.set(42)
        act.schedule(delay=0)
        tag = self.elapsed_tag()
        if (tag.time, tag.microstep) == (0, 0):
            self.request_stop()  # Request stop at (0,0)
        else:
            assert (tag.time, tag.microstep) <= (0, 1), f"ERROR: Reaction called after shutdown at {tag}."

    @reaction(triggers=[act])
    def fired(self) -> None:
        tag = self.elapsed_tag()
        if (tag.time, tag.microstep) == (0, 1):
            self.reaction_invoked_correctly = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        assert (tag.time, tag.microstep) == (0, 1), f"ERROR: Sender failed to stop the program in time. Stopping at {tag}."
        assert self.reaction_invoked_correctly, "ERROR: Sender reaction(act) was not invoked."
        self.checked = True


class _SZReceiver(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        if (tag.time, tag.microstep) == (0, 0):
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        # Shutdown events must occur at (0, 1) on the receiver.
        assert (tag.time, tag.microstep) == (0, 1), f"ERROR: Receiver failed to stop the program in time. Stopping at {tag}."
        self.checked = True


class _StopZeroThreaded(Reactor):
    def __init__(self) -> None:
        self.sender = bank(_SZSender, 4)
        self.receiver = bank(_SZReceiver, 4)
        self.connect(self.sender.out, self.receiver.inp)


@lf_test("concurrent/StopZeroThreaded.lf", suite="C")
def test_stop_zero_threaded() -> None:
    main = _StopZeroThreaded()
    run(main, workers=WORKERS)
    assert all(m.checked for m in [*main.sender, *main.receiver])


# ------------------------------------------------------- Threaded, ThreadedThreaded, ThreadedMultiport


_LOOP = 100_000_000  # the C programs' busy loop: `for (i = 0; i < 100000000; i++) offset++;`


class _TSource(Reactor):
    t = Timer(0, ms(200))
    out = Output(int)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.s)
        self.s += 1


class _TakeTime(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self, clock: VirtualClock, iterations: int = _LOOP) -> None:
        self.clock = clock
        self.iterations = iterations

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp: Any, out: Any) -> None:
        # the busy loop's result, its ~200 ms of work as virtual time
        self.clock.advance(ms(200))
        offset = self.iterations
        out.set(inp.get() + offset)


class _TDestination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.s = 400_000_000
        self.received = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        total = sum(p.get() for p in inp)
        assert total == self.s, f"ERROR: Sum of received: {total}. Expected {self.s}."
        self.s += len(inp)
        self.received += 1


class _Threaded(Reactor):
    def __init__(self, clock: VirtualClock, width: int = 4) -> None:
        self.width = width
        self.a = _TSource()
        self.t = bank(_TakeTime, width, clock)
        self.connect(self.a.out, self.t.inp, broadcast=True)  # (a.out)+ -> t.in
        self.b = _TDestination(width=width)
        self.connect(self.t.out, self.b.inp)


def _run_threaded() -> None:
    clock = VirtualClock()
    main = _Threaded(clock)
    run(main, timeout=sec(2), clock=clock, workers=WORKERS)
    assert main.b.received == 11


@lf_test("concurrent/Threaded.lf", suite="C")
def test_threaded() -> None:
    """A bank of four reactions of one level taking 200 ms each, every 200 ms: the sums
    check out however they are scheduled."""
    _run_threaded()


@lf_test("concurrent/ThreadedThreaded.lf", suite="C")
def test_threaded_threaded() -> None:
    _run_threaded()


class _MSource(Reactor):
    t = Timer(0, ms(200))
    out = Output(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for p in out:
            p.set(self.s)
        self.s += 1


class _MDestination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4, iterations: int = _LOOP) -> None:
        self.width = width
        self.iterations = iterations
        self.s = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        expected = self.iterations * self.width + self.s
        total = sum(p.get() for p in inp if p.is_present)
        assert total == expected, f"ERROR: Sum of received: {total}. Expected {expected}."
        self.s += self.width

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s != 0, "ERROR: Destination received no input!"


class _ThreadedMultiport(Reactor):
    def __init__(self, clock: VirtualClock, width: int = 4, iterations: int = _LOOP) -> None:
        self.width = width
        self.iterations = iterations
        self.a = _MSource(width=width)
        self.t = bank(_TakeTime, width, clock, iterations=iterations)
        self.b = _MDestination(width=width, iterations=iterations)
        self.connect(self.a.out, self.t.inp)
        self.connect(self.t.out, self.b.inp)


@lf_test("concurrent/ThreadedMultiport.lf", suite="C")
def test_threaded_multiport() -> None:
    clock = VirtualClock()
    main = _ThreadedMultiport(clock)
    run(main, timeout=sec(2), clock=clock, workers=WORKERS)
    assert main.b.s == 4 * 11


# ---------------------------------------------------------------------- TimeLimitThreaded.lf


class _TLDestination(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.s = 1

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        assert x.get() == self.s, f"Error: Expected {self.s} and got {x.get()}."
        self.s += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s == 12, f"ERROR: Expected 12 but got {self.s}."


class _TimeLimitThreaded(Reactor):
    stop = Timer(sec(10))

    def __init__(self, period: int = sec(1)) -> None:
        self.period = period
        self.c = _Clock(period=period)
        self.d = _TLDestination()
        self.connect(self.c.y, self.d.x)

    @reaction(triggers=[stop])
    def stop_(self) -> None:
        self.request_stop()


@lf_test("concurrent/TimeLimitThreaded.lf", suite="C")
def test_time_limit_threaded() -> None:
    main = _TimeLimitThreaded()
    run(main, fast=True, workers=WORKERS)
    assert main.d.s == 12


# ---------------------------------------------------------------- Timeout(Zero)Threaded.lf


class _TimeoutConsumer(Reactor):
    inp = Input(int)

    def __init__(self, timeout: int) -> None:
        self.timeout = timeout
        self.success = False
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        now = (tag.time, tag.microstep)
        assert now <= (self.timeout, 0), f"ERROR: Tag {now} received. Failed to enforce timeout."
        if now == (self.timeout, 0):
            self.success = True  # Successfully invoked the reaction at (timeout, 0)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        tag = self.elapsed_tag()
        now = (tag.time, tag.microstep)
        assert now == (self.timeout, 0) and self.success, (
            f"ERROR: Shutdown invoked at tag {now}. Failed to enforce timeout.")
        self.checked = True


class _TimeoutThreaded(Reactor):
    def __init__(self, timeout: int) -> None:
        self.consumer = bank(_TimeoutConsumer, 4, timeout=timeout)
        self.producer = bank(LoopedActionSender, 4, break_interval=ms(1))
        self.connect(self.producer.out, self.consumer.inp)


@lf_test("concurrent/TimeoutThreaded.lf", suite="C")
def test_timeout_threaded() -> None:
    main = _TimeoutThreaded(ms(11))
    run(main, timeout=ms(11), workers=WORKERS)
    assert all(c.checked for c in main.consumer)


@lf_test("concurrent/TimeoutZeroThreaded.lf", suite="C")
def test_timeout_zero_threaded() -> None:
    main = _TimeoutThreaded(0)
    run(main, timeout=0, workers=WORKERS)
    assert all(c.checked for c in main.consumer)


# ------------------------------------------------------------ AsyncCallback(Drop|Replace).lf


class _AsyncCallbackPolicy(Reactor):
    t = Timer(0, ms(200))

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.threads: list[threading.Thread] = []
        self.expected_time = ms(100)
        self.i = 0
        self.values: list[int] = []

    def callback(self, a: Any) -> None:
        # Schedule twice in rapid succession: the events are within the minimum spacing.
        a.schedule(delay=0, value=0)
        a.schedule(delay=0, value=1)

    def take_time(self, a: Any) -> None:
        _sleep(0.1)  # simulate time passing before a callback occurs
        self.callback(a)

    def start_thread(self, a: Any) -> None:
        x = threading.Thread(target=self.take_time, args=(a,))
        self.threads.append(x)
        x.start()

    def check(self, a: Any) -> None:
        elapsed_time = self.elapsed()
        self.i += 1
        self.values.append(a.get())
        assert elapsed_time > self.expected_time, f"ERROR: Expected logical time to be larger than {self.expected_time}."
        assert a.get() == self.expect, f"ERROR: Received: {a.get()}, expected {self.expect}."
        self.expected_time += ms(200)


class _AsyncCallbackDrop(_AsyncCallbackPolicy):
    a = PhysicalAction(int, min_delay=ms(100), min_spacing=ms(100), policy="drop")

    def __init__(self) -> None:
        super().__init__(expect=0)  # the second event is dropped

    @reaction(triggers=[_AsyncCallbackPolicy.t], effects=[a])
    def tick(self, a: Any) -> None:
        self.start_thread(a)

    @reaction(triggers=[a])
    def fired(self, a: Any) -> None:
        self.check(a)


class _AsyncCallbackReplace(_AsyncCallbackPolicy):
    a = PhysicalAction(int, min_delay=ms(100), min_spacing=ms(100), policy="replace")

    def __init__(self) -> None:
        super().__init__(expect=1)  # the second event's payload replaces the first's

    @reaction(triggers=[_AsyncCallbackPolicy.t], effects=[a])
    def tick(self, a: Any) -> None:
        self.start_thread(a)

    @reaction(triggers=[a])
    def fired(self, a: Any) -> None:
        self.check(a)


class _AsyncCallbackUpdate(_AsyncCallbackPolicy):
    a = PhysicalAction(int, min_delay=ms(100), min_spacing=ms(100), policy="update")

    def __init__(self) -> None:
        super().__init__(expect=1)  # the second event cancels the first, at its own (later) time

    @reaction(triggers=[_AsyncCallbackPolicy.t], effects=[a])
    def tick(self, a: Any) -> None:
        self.start_thread(a)

    @reaction(triggers=[a])
    def fired(self, a: Any) -> None:
        self.check(a)


def _run_async(main: _AsyncCallbackPolicy) -> None:
    try:
        run(main, timeout=sec(2), keepalive=True, clock=_ScaledClock(), workers=WORKERS)
    finally:
        for x in main.threads:
            x.join(10)
    # the callbacks of the ticks at 0 .. 1.6 s land before the 2 s timeout, one event each
    assert main.i >= 2 and len(main.values) == main.i


@lf_test("concurrent/AsyncCallbackDrop.lf", suite="C")
def test_async_callback_drop() -> None:
    """Two schedules of a physical action within its minimum spacing: ``drop`` keeps the
    first."""
    _run_async(_AsyncCallbackDrop())


@lf_test("concurrent/AsyncCallbackReplace.lf", suite="C")
def test_async_callback_replace() -> None:
    """The same with ``replace``: the second's value replaces the first's."""
    _run_async(_AsyncCallbackReplace())


@lf_test("concurrent/AsyncCallbackUpdate.lf", suite="C")
def test_async_callback_update() -> None:
    """The same with ``update``: the second schedule cancels the first, still pending, and
    its event (value 1) comes at its own physical time, one event per callback."""
    _run_async(_AsyncCallbackUpdate())
