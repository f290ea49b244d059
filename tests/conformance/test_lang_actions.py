"""Ports of LF's programs about actions and superdense time: scheduling logical actions
with delays and values, minimum delays and spacing (defer, drop, replace), microsteps,
self loops, a physical action scheduled by a reaction, and deadlines.

LF's Python target writes ``a.schedule(delay, value)``; the ports pass both by keyword."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    NEVER,
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Tag,
    Timer,
    VirtualClock,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# -- Schedule.lf ------------------------------------------------------------------------


class _Schedule2(Reactor):
    x = Input(int)
    a = LogicalAction()

    def __init__(self) -> None:
        self.triggered: list[int] = []

    @reaction(triggers=[x], effects=[a])
    def on_x(self, x: Any, a: Any) -> None:
        a.schedule(delay=ms(200))

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        elapsed_time = self.elapsed()
        self.triggered.append(elapsed_time)
        assert elapsed_time == 200_000_000, f"Expected action time to be 200 msec. It was {elapsed_time} nsec."


class _ScheduleMain(Reactor):
    t = Timer()

    def __init__(self) -> None:
        self.a = _Schedule2()

    @reaction(triggers=[t], effects=["a.x"])
    def kick(self, a: Any) -> None:
        a.x.set(1)


@lf_test("Schedule.lf")
def test_schedule() -> None:
    main = _ScheduleMain()
    run(main)
    assert main.a.triggered == [ms(200)]


# -- ScheduleLogicalAction.lf -----------------------------------------------------------


class _SLAFoo(Reactor):
    x = Input(int)
    y = Output(int)
    a = LogicalAction()

    @reaction(triggers=[x], effects=[y, a])
    def on_x(self, x: Any, y: Any, a: Any) -> None:
        y.set(2 * x.get())
        a.schedule(delay=ms(500))

    @reaction(triggers=[a], effects=[y])
    def on_a(self, a: Any, y: Any) -> None:
        y.set(-42)


class _SLAPrint(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.expected_time = 0
        self.results: list[int] = []

    @reaction(triggers=[x])
    def check(self, x: Any) -> None:
        elapsed_time = self.elapsed()
        self.results.append(x.get())
        assert elapsed_time == self.expected_time, f"ERROR: Expected logical time to be {self.expected_time}."
        self.expected_time += ms(500)


class _ScheduleLogicalActionMain(Reactor):
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.f = _SLAFoo()
        self.p = _SLAPrint()
        self.connect(self.f.y, self.p.x)

    @reaction(triggers=[t], effects=["f.x"])
    def kick(self, f: Any) -> None:
        f.x.set(42)


@lf_test("ScheduleLogicalAction.lf")
def test_schedule_logical_action() -> None:
    main = _ScheduleLogicalActionMain()
    run(main, timeout=sec(3), fast=True)
    assert main.p.results == [84, -42, 84, -42, 84, -42, 84]  # 0, 0.5, ..., 3 s


# -- ScheduleValue.lf -------------------------------------------------------------------


class _ScheduleValueMain(Reactor):
    a = LogicalAction(str)

    def __init__(self) -> None:
        self.received: list[str] = []

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        value = "Hello"
        a.schedule(delay=0, value=value)

    @reaction(triggers=[a])
    def got(self, a: Any) -> None:
        self.received.append(a.get())
        assert a.get() == "Hello", "FAILURE: Should have received 'Hello'"


@lf_test("ScheduleValue.lf")
def test_schedule_value() -> None:
    main = _ScheduleValueMain()
    run(main, timeout=sec(3))
    assert main.received == ["Hello"]


# -- SelfLoop.lf ------------------------------------------------------------------------


class _Self(Reactor):
    x = Input(int)
    y = Output(int)
    a = LogicalAction(int)

    def __init__(self) -> None:
        self.expected = 43

    @reaction(triggers=[a], effects=[y])
    def on_a(self, a: Any, y: Any) -> None:
        y.set(a.get() + 1)

    @reaction(triggers=[x], effects=[a])
    def on_x(self, x: Any, a: Any) -> None:
        assert x.get() == self.expected, f"Expected {self.expected}."
        self.expected += 1
        a.schedule(delay=ms(100), value=x.get())

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=0, value=42)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.expected > 43, "Received no data."


class _SelfLoopMain(Reactor):
    def __init__(self) -> None:
        self.u = _Self()
        self.connect(self.u.y, self.u.x)


@lf_test("SelfLoop.lf")
def test_self_loop() -> None:
    main = _SelfLoopMain()
    run(main, timeout=sec(1), fast=True)
    assert main.u.expected == 54  # 43 .. 53: at (0, 1), then every 100 ms to 1 s


# -- SetToken.lf ------------------------------------------------------------------------


class _STSource(Reactor):
    out = Output(int)
    a = LogicalAction(int)

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=ms(200), value=42)

    @reaction(triggers=[a], effects=[out])
    def relay(self, a: Any, out: Any) -> None:
        out.set(a.get())


class _STPrint(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: list[tuple[int, int]] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received.append((inp.get(), self.elapsed()))
        assert inp.get() == 42, "ERROR: Expected value to be 42."


class _SetTokenMain(Reactor):
    def __init__(self) -> None:
        self.s = _STSource()
        self.p = _STPrint()
        self.connect(self.s.out, self.p.inp)


@lf_test("SetToken.lf")
def test_set_token() -> None:
    main = _SetTokenMain()
    run(main)
    assert main.p.received == [(42, ms(200))]


# -- LastTimeDefer.lf, LastTimeDrop.lf, LastTimeReplace.lf ------------------------------


class _LastTimeDeferMain(Reactor):
    t = Timer(0, ms(100))
    a = LogicalAction(int, min_delay=ms(1), min_spacing=ms(300))

    def __init__(self) -> None:
        self.c = 0
        self.c2 = 0
        self.last = NEVER
        self.seen: list[tuple[int, int]] = []

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=0, value=self.c)
        self.c += 1

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        now = self.tag()
        self.seen.append((self.elapsed(), a.get()))
        assert now.time >= self.last + ms(300), "Minimum spacing of 300ms was violated."
        assert a.get() == self.c2, f"Expected value {self.c2}"
        self.c2 += 1
        self.last = now.time


@lf_test("LastTimeDefer.lf")
def test_last_time_defer() -> None:
    main = _LastTimeDeferMain()
    run(main, timeout=sec(1))
    # Each event deferred to the last one + 300 ms: 1, 301, 601, 901 ms carry 0, 1, 2, 3.
    assert main.seen == [(ms(1), 0), (ms(301), 1), (ms(601), 2), (ms(901), 3)]


class _LastTimeDropMain(Reactor):
    t = Timer(0, ms(100))
    a = LogicalAction(int, min_delay=ms(1), min_spacing=ms(300), policy="drop")

    def __init__(self) -> None:
        self.c = 0
        self.last = NEVER
        self.seen: list[tuple[int, int]] = []

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=0, value=self.c)
        self.c += 1

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        now = self.tag()
        self.seen.append((self.elapsed(), a.get()))
        assert now.time >= self.last + ms(300), "Minimum spacing of 300ms was violated."
        assert a.get() == self.c - 1, f"Expected value {self.c - 1}."
        self.last = now.time


@lf_test("LastTimeDrop.lf")
def test_last_time_drop() -> None:
    main = _LastTimeDropMain()
    run(main, timeout=sec(1))
    # Events closer than 300 ms to the last accepted one are dropped.
    assert main.seen == [(ms(1), 0), (ms(301), 3), (ms(601), 6), (ms(901), 9)]


class _LastTimeReplaceMain(Reactor):
    t = Timer(0, ms(100))
    a = LogicalAction(int, min_delay=ms(1), min_spacing=ms(300), policy="replace")

    def __init__(self) -> None:
        self.c = 0
        self.last = NEVER
        self.seen: list[tuple[int, int]] = []

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=0, value=self.c)
        self.c += 1

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        now = self.tag()
        self.seen.append((self.elapsed(), a.get()))
        assert now.time >= self.last + ms(300), "Minimum spacing of 300ms was violated."
        assert a.get() == self.c - 1, f"Expected value {self.c - 1}."
        self.last = now.time


@lf_test("LastTimeReplace.lf")
def test_last_time_replace() -> None:
    main = _LastTimeReplaceMain()
    run(main, timeout=sec(1))
    # A pending event's value is replaced; once it has fired, the next one is deferred.
    assert main.seen == [(ms(1), 0), (ms(301), 3), (ms(601), 6), (ms(901), 9)]


# -- SlowingClock.lf --------------------------------------------------------------------


class _SlowingClockMain(Reactor):
    a = LogicalAction(min_delay=ms(100))

    def __init__(self) -> None:
        self.interval = ms(100)
        self.expected_time = ms(100)
        self.seen: list[int] = []
        self.shutdown_checked = False

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=0)

    @reaction(triggers=[a], effects=[a])
    def on_a(self, a: Any) -> None:
        elapsed_logical_time = self.elapsed()
        self.seen.append(elapsed_logical_time)
        assert elapsed_logical_time == self.expected_time, f"ERROR: Expected time to be: {self.expected_time} nsec."
        a.schedule(delay=self.interval)
        self.expected_time += ms(100) + self.interval
        self.interval += ms(100)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.expected_time == ms(1500), (
            f"ERROR: Expected the next expected time to be: 1500000000 nsec. It was: {self.expected_time} nsec."
        )
        self.shutdown_checked = True


@lf_test("SlowingClock.lf")
def test_slowing_clock() -> None:
    main = _SlowingClockMain()
    run(main, timeout=sec(1), fast=True)
    assert main.seen == [ms(100), ms(300), ms(600), ms(1000)]
    assert main.shutdown_checked


# -- SlowingClockPhysical.lf ------------------------------------------------------------


class _SlowingClockPhysicalMain(Reactor):
    a = PhysicalAction(min_delay=ms(100), min_spacing=ms(100))

    def __init__(self) -> None:
        self.interval = ms(100)
        self.expected_time = ms(100)
        self.seen: list[int] = []
        self.shutdown_checked = False

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        self.expected_time = ms(100)
        a.schedule(delay=0)

    @reaction(triggers=[a], effects=[a])
    def on_a(self, a: Any) -> None:
        elapsed_logical_time = self.elapsed()
        self.seen.append(elapsed_logical_time)
        assert elapsed_logical_time >= self.expected_time, (
            f"ERROR: Expected logical time to be at least: {self.expected_time} nsec."
        )
        self.interval += ms(100)
        self.expected_time = ms(100) + self.interval
        a.schedule(delay=self.interval)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.expected_time >= ms(500), (
            f"ERROR: Expected the next expected time to be at least: 500000000 nsec. It was: {self.expected_time} nsec."
        )
        self.shutdown_checked = True


@lf_test("SlowingClockPhysical.lf")
def test_slowing_clock_physical() -> None:
    main = _SlowingClockPhysicalMain()
    run(main, timeout=ms(1500), keepalive=True)  # LF: physical actions keep the program alive
    # On the virtual clock physical time is logical time when a reaction schedules:
    # 100 ms, then + 100 ms min delay + 200, 300, 400 ms (the next, 1900 ms, is past the end).
    assert main.seen == [ms(100), ms(400), ms(800), ms(1300)]
    assert main.shutdown_checked


# -- ManualDelayedReaction.lf -----------------------------------------------------------


class _GeneratedDelay(Reactor):
    y_in = Input(int)
    y_out = Output(int)
    act = PhysicalAction(min_delay=0)

    def __init__(self) -> None:
        self.y_state = 0

    @reaction(triggers=[y_in], effects=[act])
    def store(self, y_in: Any, act: Any) -> None:
        self.y_state = y_in.get()
        act.schedule(delay=ms(100))

    @reaction(triggers=[act], effects=[y_out])
    def emit(self, act: Any, y_out: Any) -> None:
        y_out.set(self.y_state)


class _MDRSource(Reactor):
    out = Output(int)
    t = Timer()

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1)


class _MDRSink(Reactor):
    s_in = Input(int)

    def __init__(self) -> None:
        self.received: list[int] = []

    @reaction(triggers=[s_in], deadline=ms(200))
    def got(self, s_in: Any) -> None:
        elapsed_logical = self.elapsed()
        self.received.append(elapsed_logical)
        assert elapsed_logical >= ms(100), f"Expected {ms(100)} but got {elapsed_logical}."

    @got.deadline_handler
    def late(self, s_in: Any) -> None:
        pass


class _ManualDelayedReactionMain(Reactor):
    def __init__(self) -> None:
        self.source = _MDRSource()
        self.sink = _MDRSink()
        self.g = _GeneratedDelay()
        self.connect(self.source.out, self.g.y_in)
        self.connect(self.g.y_out, self.sink.s_in)


@lf_test("ManualDelayedReaction.lf")
def test_manual_delayed_reaction() -> None:
    main = _ManualDelayedReactionMain()
    summary = run(main, keepalive=False)
    assert main.sink.received == [ms(100)]
    assert summary.deadline_misses == 0


# -- PingPong.lf ------------------------------------------------------------------------


class _Ping(Reactor):
    receive = Input(int)
    send = Output(int)
    serve = LogicalAction()

    def __init__(self, count: int = 10) -> None:
        self.count = count
        self.pingsLeft = count

    @reaction(triggers=[STARTUP, serve], effects=[send])
    def ping(self, send: Any) -> None:
        send.set(self.pingsLeft)
        self.pingsLeft -= 1

    @reaction(triggers=[receive], effects=[serve])
    def on_receive(self, receive: Any, serve: Any) -> None:
        if self.pingsLeft > 0:
            serve.schedule(delay=0)
        else:
            self.request_stop()


class _Pong(Reactor):
    receive = Input(int)
    send = Output(int)

    def __init__(self, expected: int = 10) -> None:
        self.expected = expected
        self.count = 0
        self.shutdown_checked = False

    @reaction(triggers=[receive], effects=[send])
    def pong(self, receive: Any, send: Any) -> None:
        self.count += 1
        send.set(receive.get())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == self.expected, (
            f"ERROR: Pong expected to receive {self.expected} inputs, but it received {self.count}."
        )
        self.shutdown_checked = True


class _PingPongMain(Reactor):
    def __init__(self) -> None:
        self.ping = _Ping()
        self.pong = _Pong()
        self.connect(self.ping.send, self.pong.receive)
        self.connect(self.pong.send, self.ping.receive)


@lf_test("PingPong.lf")
def test_ping_pong() -> None:
    main = _PingPongMain()
    summary = run(main, fast=True)
    assert main.pong.shutdown_checked
    assert summary.last_tag == Tag(0, 10)  # the 10th ping at (0, 9); stop requested there


# -- GetMicroStep.lf --------------------------------------------------------------------


class _GetMicroStepMain(Reactor):
    l = LogicalAction()  # noqa: E741 (LF's name)

    def __init__(self) -> None:
        self.s = 1

    @reaction(triggers=[STARTUP], effects=[l])
    def start(self, l: Any) -> None:  # noqa: E741
        l.schedule(delay=0)

    @reaction(triggers=[l], effects=[l])
    def on_l(self, l: Any) -> None:  # noqa: E741
        microstep = self.tag().microstep
        assert microstep == self.s, f"expected microstep {self.s}, got {microstep} instead"
        self.s += 1
        if self.s < 10:
            l.schedule(delay=0)


@lf_test("GetMicroStep.lf")
def test_get_micro_step() -> None:
    main = _GetMicroStepMain()
    run(main)
    assert main.s == 10


# -- TagString.lf -----------------------------------------------------------------------


class _TagStringMain(Reactor):
    l = LogicalAction()  # noqa: E741 (LF's name)

    def __init__(self) -> None:
        self.s = 1

    @reaction(triggers=[STARTUP], effects=[l])
    def start(self, l: Any) -> None:  # noqa: E741
        l.schedule(delay=0)

    @reaction(triggers=[l], effects=[l])
    def on_l(self, l: Any) -> None:  # noqa: E741
        tag_str = str(self.tag())
        assert "Tag" in tag_str and "time=" in tag_str and "microstep=" in tag_str, (
            f"expected tag string representation: Tag(time=$time, microstep=$microstep), instead got: {tag_str}"
        )
        self.s += 1
        if self.s < 10:
            l.schedule(delay=0)


@lf_test("TagString.lf")
def test_tag_string() -> None:
    main = _TagStringMain()
    run(main)
    assert main.s == 10


# -- Microsteps.lf ----------------------------------------------------------------------


class _MSDestination(Reactor):
    x = Input(int)
    y = Input(int)

    def __init__(self) -> None:
        self.seen: list[Tag] = []

    @reaction(triggers=[x, y])
    def check(self, x: Any, y: Any) -> None:
        elapsed = self.elapsed()
        self.seen.append(self.elapsed_tag())
        assert elapsed == 0, f"Expected elapsed time to be 0, but it was {elapsed}."
        count = 0
        if x.is_present:
            count += 1
        if y.is_present:
            count += 1
        assert count == 1, f"Expected exactly one input to be present but got {count}."


class _MicrostepsMain(Reactor):
    start = Timer()
    repeat = LogicalAction()

    def __init__(self) -> None:
        self.d = _MSDestination()

    @reaction(triggers=[start], effects=["d.x", repeat])
    def go(self, d: Any, repeat: Any) -> None:
        d.x.set(1)
        repeat.schedule(delay=0)

    @reaction(triggers=[repeat], effects=["d.y"])
    def again(self, d: Any) -> None:
        d.y.set(1)


@lf_test("Microsteps.lf")
def test_microsteps() -> None:
    main = _MicrostepsMain()
    run(main)
    assert main.d.seen == [Tag(0, 0), Tag(0, 1)]


# -- SimpleDeadline.lf ------------------------------------------------------------------


def _simple_deadline(clock: VirtualClock) -> Any:
    # Classes built here: the main reactor's reaction advances this run's virtual clock.
    class _Deadline(Reactor):
        x = Input(int)
        deadlineViolation = Output(bool)

        def __init__(self, threshold: int = ms(100)) -> None:
            self.threshold = threshold

        @reaction(triggers=[x], effects=[deadlineViolation], deadline="threshold")
        def on_x(self, x: Any, deadlineViolation: Any) -> None:
            raise AssertionError("ERROR: Deadline violation was not detected!")

        @on_x.deadline_handler
        def late(self, x: Any, deadlineViolation: Any) -> None:
            deadlineViolation.set(True)

    class _Print(Reactor):
        inp = Input(bool)

        def __init__(self) -> None:
            self.printed: list[str] = []

        @reaction(triggers=[inp])
        def show(self, inp: Any) -> None:
            if inp.get() is True:
                self.printed.append("Output successfully produced by deadline handler.")

    class _SimpleDeadlineMain(Reactor):
        start = Timer()

        def __init__(self) -> None:
            self.d = _Deadline(threshold=ms(10))
            self.p = _Print()
            self.connect(self.d.deadlineViolation, self.p.inp)

        @reaction(triggers=[start], effects=["d.x"])
        def go(self, d: Any) -> None:
            clock.advance(ms(20))  # time.sleep(0.02)
            d.x.set(42)

    return _SimpleDeadlineMain()


@lf_test("SimpleDeadline.lf")
def test_simple_deadline() -> None:
    clock = VirtualClock()
    main = _simple_deadline(clock)
    run(main, clock=clock)
    assert main.p.printed == ["Output successfully produced by deadline handler."]
