"""Execution: timeout, starvation, request_stop, fast and real-time modes."""

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    Reactor,
    SystemClock,
    Tag,
    Timer,
    ValidationError,
    VirtualClock,
    ms,
    reaction,
)

from .util import run


class Periodic(Reactor):
    """A timer every 10 ms; at each firing sends the count to ``out`` after 0 and
    schedules ``echo`` ``echo_delay`` later. Records every reaction with its tag."""

    t = Timer(0, ms(10))
    out = Output(int)
    echo = LogicalAction(int)

    def __init__(self, log, echo_delay=5_000_000):
        self.log = log
        self.echo_delay = echo_delay
        self.n = 0

    @reaction(triggers=[t], effects=[out, echo])
    def tick(self, out, echo):
        self.log.append(("tick", self.elapsed_tag(), self.n))
        out.set(self.n)
        echo.schedule(value=self.n, delay=self.echo_delay)
        self.n += 1

    @reaction(triggers=[echo])
    def echoed(self, echo):
        self.log.append(("echo", self.elapsed_tag(), echo.get()))

    @reaction(triggers=[SHUTDOWN])
    def bye(self):
        self.log.append(("shutdown", self.elapsed_tag(), self.n))


class Listener(Reactor):
    inp = Input(int)

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[inp])
    def got(self, inp):
        self.log.append(("got", self.elapsed_tag(), inp.get()))


def _periodic_with_listener(log, echo_delay=5_000_000):
    class Main(Reactor):
        def __init__(self):
            self.p = Periodic(log, echo_delay)
            self.l = Listener(log)
            self.connect(self.p.out, self.l.inp, after=0)

    return Main()


def test_timeout_last_tag_processes_its_events_and_drops_later_ones():
    log = []
    summary = run(_periodic_with_listener(log), timeout=ms(20))
    assert log == [
        ("tick", Tag(0), 0),
        ("got", Tag(0, 1), 0),
        ("echo", Tag(ms(5)), 0),
        ("tick", Tag(ms(10)), 1),
        ("got", Tag(ms(10), 1), 1),
        ("echo", Tag(ms(15)), 1),
        # The last tag: the timer's event there is processed with shutdown; the
        # after-0 delivery at (20 ms, 1) and the echo at 25 ms are past it: dropped.
        ("tick", Tag(ms(20)), 2),
        ("shutdown", Tag(ms(20)), 3),
    ]
    assert summary.last_tag == Tag(ms(20))
    assert summary.stop_reason == "timeout"
    assert summary.tags == 7


def test_starvation_stops_at_the_next_microstep_after_the_last_event():
    """As reactor-c: with an empty event queue (and no keepalive) the stop tag becomes
    the current tag plus one microstep; shutdown reactions run there."""
    log = []

    class Chain(Reactor):
        act = LogicalAction(int)

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            act.schedule(value=0, delay=ms(5))

        @reaction(triggers=[act], effects=[act])
        def step(self, act):
            log.append(("step", self.elapsed_tag(), act.get()))
            if act.get() < 2:
                act.schedule(value=act.get() + 1)

        @reaction(triggers=[SHUTDOWN])
        def bye(self):
            log.append(("shutdown", self.elapsed_tag()))

    summary = run(Chain())
    assert log == [
        ("step", Tag(ms(5), 0), 0),
        ("step", Tag(ms(5), 1), 1),
        ("step", Tag(ms(5), 2), 2),
        ("shutdown", Tag(ms(5), 3)),
    ]
    assert summary.last_tag == Tag(ms(5), 3)
    assert summary.stop_reason == "starvation"


def test_starvation_before_a_timeout_still_stops_early():
    log = []

    class Once(Reactor):
        @reaction(triggers=[STARTUP])
        def hi(self):
            log.append(self.elapsed_tag())

        @reaction(triggers=[SHUTDOWN])
        def bye(self):
            log.append(("shutdown", self.elapsed_tag()))

    summary = run(Once(), timeout=ms(100))
    assert log == [Tag(0), ("shutdown", Tag(0, 1))]
    assert summary.stop_reason == "starvation"


def test_request_stop_stops_at_the_next_microstep_and_drops_later_events():
    log = []

    class Stopper(Reactor):
        t = Timer(ms(10), ms(10))

        @reaction(triggers=[t])
        def stop(self):
            log.append(("stop", self.elapsed_tag()))
            self.request_stop()

    class Main(Reactor):
        def __init__(self):
            self.p = Periodic(log, echo_delay=0)  # echo at (t, 1): the stop tag
            self.l = Listener(log)
            self.connect(self.p.out, self.l.inp, after=0)
            self.s = Stopper()

    summary = run(Main(), timeout=ms(1000))
    assert log == [
        ("tick", Tag(0), 0),
        ("got", Tag(0, 1), 0),
        ("echo", Tag(0, 1), 0),
        ("tick", Tag(ms(10)), 1),
        ("stop", Tag(ms(10)), ),
        # Events at the stop tag (10 ms, 1) are processed, then shutdown; the timer's
        # 20 ms event is dropped.
        ("got", Tag(ms(10), 1), 1),
        ("echo", Tag(ms(10), 1), 1),
        ("shutdown", Tag(ms(10), 1), 2),
    ]
    assert summary.last_tag == Tag(ms(10), 1)
    assert summary.stop_reason == "stop requested"


def test_request_stop_at_startup_and_twice_keeps_the_earliest_stop_tag():
    log = []

    class Twice(Reactor):
        act = LogicalAction()

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            self.request_stop()
            act.schedule()  # at the stop tag (0, 1): still processed

        @reaction(triggers=[act])
        def again(self):
            log.append(("act", self.elapsed_tag()))
            self.request_stop()  # would be (0, 2): later than the stop tag already set

        @reaction(triggers=[SHUTDOWN])
        def bye(self):
            log.append(("shutdown", self.elapsed_tag()))

    summary = run(Twice())
    assert log == [("act", Tag(0, 1)), ("shutdown", Tag(0, 1))]
    assert summary.last_tag == Tag(0, 1)


def test_shutdown_reactions_may_not_produce_events_past_the_last_tag():
    log = []

    class Late(Reactor):
        act = LogicalAction()

        @reaction(triggers=[SHUTDOWN], effects=[act])
        def bye(self, act):
            log.append(("shutdown", self.elapsed_tag()))
            act.schedule()

        @reaction(triggers=[act])
        def never(self):
            log.append("never")

    summary = run(Late(), timeout=ms(1), keepalive=True)
    assert log == [("shutdown", Tag(ms(1)))]
    assert summary.last_tag == Tag(ms(1))


def test_real_time_on_the_virtual_clock_never_runs_ahead_of_physical_time():
    """Without fast mode each tag waits for the clock; on the virtual clock the wait
    jumps the clock to the tag, so physical time at a tag is exactly its time (plus any
    simulated work done before, which is never undone)."""
    clock = VirtualClock()
    seen = []

    class Watch(Reactor):
        t = Timer(ms(3), ms(7))
        act = LogicalAction()

        @reaction(triggers=[t], effects=[act])
        def tick(self, act):
            seen.append((self.elapsed_tag(), self.physical_time() - self.start_time()))
            act.schedule(delay=ms(1))
            if self.elapsed() == ms(10):
                clock.advance(ms(5))  # slow work: the next tags are already in the past

        @reaction(triggers=[act])
        def echo(self, act):
            seen.append((self.elapsed_tag(), self.physical_time() - self.start_time()))

    start = clock.now()
    summary = Environment(clock=clock, timeout=ms(20)).run(Watch())
    assert summary.start_time == start
    assert seen == [
        (Tag(ms(3)), ms(3)),
        (Tag(ms(4)), ms(4)),
        (Tag(ms(10)), ms(10)),
        (Tag(ms(11)), ms(15)),  # physical time was ahead: no wait, no going back
        (Tag(ms(17)), ms(17)),
        (Tag(ms(18)), ms(18)),
    ]
    for tag, phys in seen:
        assert phys >= tag.time
    # The timer's next event (24 ms) is past the timeout, so nothing is left: the
    # program starves at (18 ms, 1) as reactor-c would.
    assert summary.last_tag == Tag(ms(18), 1)
    assert clock.now() - start == ms(18)


def test_real_time_shutdown_at_the_timeout_waits_for_the_clock():
    clock = VirtualClock()
    start = clock.now()
    summary = Environment(clock=clock, timeout=ms(20), keepalive=True).run(Periodic([]))
    assert summary.last_tag == Tag(ms(20))
    assert clock.now() - start == ms(20)


def test_fast_mode_never_waits_for_the_clock():
    clock = VirtualClock()
    start = clock.now()
    log = []
    run(_periodic_with_listener(log), timeout=ms(1000), clock=clock)
    assert clock.now() == start
    assert log[-1] == ("shutdown", Tag(ms(1000)), 101)


@pytest.mark.timeout(20)
def test_real_time_on_the_system_clock_never_runs_ahead():
    seen = []

    class Watch(Reactor):
        t = Timer(0, ms(2))

        @reaction(triggers=[t])
        def tick(self):
            seen.append((self.logical_time(), self.physical_time()))

    Environment(clock=SystemClock(), timeout=ms(6)).run(Watch())
    assert len(seen) == 4
    for logical, physical in seen:
        assert physical >= logical


def test_elapsed_and_absolute_tags_agree():
    log = []

    class Where(Reactor):
        t = Timer(ms(2))

        @reaction(triggers=[t])
        def at(self):
            log.append((self.tag(), self.elapsed_tag(), self.elapsed(), self.microstep(), self.logical_time(), self.start_time()))

    clock = VirtualClock(start=5_000_000_000)
    run(Where(), clock=clock)
    tag, elapsed, el, micro, logical, start = log[0]
    assert start == 5_000_000_000
    assert tag == Tag(start + ms(2), 0)
    assert elapsed == Tag(ms(2), 0) == tag.relative_to(start)
    assert (el, micro, logical) == (ms(2), 0, start + ms(2))


def test_time_queries_outside_a_run_are_refused():
    class R(Reactor):
        pass

    with pytest.raises(ValidationError, match="the program is not running"):
        R().elapsed_tag()


def test_summary_counts_tags_and_reactions():
    log = []
    summary = run(_periodic_with_listener(log), timeout=ms(20))
    assert (summary.tags, summary.reactions) == (7, len(log))
    assert "7 tags, 8 reactions" in str(summary) and "(timeout)" in str(summary)


def test_environment_arguments_are_checked():
    with pytest.raises(ValidationError, match="timeout must be a whole number of ns"):
        Environment(timeout=1.5)
    with pytest.raises(ValidationError, match="workers must be an int >= 1"):
        Environment(workers=0)
    with pytest.raises(ValidationError, match="nothing to run"):
        Environment().run()


class Burner(Reactor):
    """At startup, keeps the CPU busy for ``cpu_ns`` of this process's CPU time; at
    shutdown, sleeps ``sleep_s`` (wall time without CPU)."""

    def __init__(self, cpu_ns: int, sleep_s: float) -> None:
        self.cpu_ns = cpu_ns
        self.sleep_s = sleep_s

    @reaction(triggers=[STARTUP])
    def burn(self) -> None:
        import time

        end = time.process_time_ns() + self.cpu_ns
        while time.process_time_ns() < end:
            pass

    @reaction(triggers=[SHUTDOWN])
    def rest(self) -> None:
        import time

        time.sleep(self.sleep_s)


def test_the_summary_reports_the_cpu_time_of_the_run():
    # What the run cost in CPU, beside its wall time: 80 ms burnt, 200 ms asleep.
    summary = Environment(fast=True).run(Burner(80_000_000, 0.2))
    assert 80_000_000 <= summary.cpu_ns < summary.wall_ns - 150_000_000, summary
    assert f"{summary.cpu_ns / 1e9:.3f} s CPU" in str(summary)
