"""Logical and physical actions: delays, min_delay, min_spacing policies, threads."""

import threading

import pytest

from reactorfed import (
    STARTUP,
    Environment,
    LogicalAction,
    PhysicalAction,
    Reactor,
    SystemClock,
    Tag,
    Timer,
    UndeclaredAccessError,
    ValidationError,
    VirtualClock,
    ms,
    reaction,
)

from .util import run


class Scheduler(Reactor):
    """At startup schedules ``act`` once per (delay, value); records what fires."""

    act = LogicalAction(int)

    def __init__(self, plan, log):
        self.plan = plan
        self.log = log

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act):
        for delay, value in self.plan:
            act.schedule(value=value, delay=delay)

    @reaction(triggers=[act])
    def fired(self, act):
        self.log.append((self.elapsed_tag(), act.get()))


def test_zero_delay_fires_at_the_next_microstep():
    log = []
    run(Scheduler([(0, 5)], log))
    assert log == [(Tag(0, 1), 5)]


def test_positive_delay_fires_at_time_plus_delay_microstep_zero():
    log = []
    run(Scheduler([(ms(3), 5)], log))
    assert log == [(Tag(ms(3), 0), 5)]


def test_min_delay_adds_to_the_extra_delay():
    log = []

    class S(Scheduler):
        act = LogicalAction(int, min_delay=ms(2))

    run(S([(0, 1), (ms(5), 2)], log))
    assert log == [(Tag(ms(2), 0), 1), (Tag(ms(7), 0), 2)]


def test_two_schedules_for_one_tag_pile_up_in_superdense_time():
    """No min_spacing declared: the second event for an occupied tag goes to the next
    microstep; both are delivered, in the order scheduled (reactor-c's lf_schedule_trigger).
    This test used to pin the defect: the second value overwrote the first."""
    log = []
    run(Scheduler([(ms(1), 1), (ms(1), 2)], log))
    assert log == [(Tag(ms(1), 0), 1), (Tag(ms(1), 1), 2)]


def test_an_action_can_reschedule_itself_every_microstep():
    log = []

    class Count(Reactor):
        act = LogicalAction(int)

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            act.schedule(value=0)

        @reaction(triggers=[act], effects=[act])
        def step(self, act):
            log.append((self.elapsed_tag(), act.get()))
            if act.get() < 3:
                act.schedule(value=act.get() + 1)

    run(Count())
    assert log == [(Tag(0, 1), 0), (Tag(0, 2), 1), (Tag(0, 3), 2), (Tag(0, 4), 3)]


class Spaced(Scheduler):
    act = LogicalAction(int, min_spacing=ms(10))


def test_min_spacing_defer_moves_events_to_last_plus_spacing():
    """The example from the design: spacing 10 ms, scheduled at 100/99/101 ms, fires at
    100/110/120 ms."""
    log = []
    run(Spaced([(ms(100), 1), (ms(99), 2), (ms(101), 3)], log))
    assert log == [(Tag(ms(100), 0), 1), (Tag(ms(110), 0), 2), (Tag(ms(120), 0), 3)]


def test_min_spacing_drop_discards_events_too_close_to_the_last():
    log = []

    class S(Scheduler):
        act = LogicalAction(int, min_spacing=ms(10), policy="drop")

    run(S([(ms(100), 1), (ms(99), 2), (ms(101), 3), (ms(110), 4)], log))
    assert log == [(Tag(ms(100), 0), 1), (Tag(ms(110), 0), 4)]


def test_min_spacing_replace_replaces_the_pending_events_value_at_its_tag():
    log = []

    class S(Scheduler):
        act = LogicalAction(int, min_spacing=ms(10), policy="replace")

    run(S([(ms(100), 1), (ms(99), 2), (ms(101), 3)], log))
    assert log == [(Tag(ms(100), 0), 3)]


def test_min_spacing_replace_defers_when_the_last_event_already_happened():
    log = []

    class S(Reactor):
        act = LogicalAction(int, min_spacing=ms(10), policy="replace")

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            act.schedule(value=1, delay=ms(5))

        @reaction(triggers=[act], effects=[act])
        def fired(self, act):
            log.append((self.elapsed_tag(), act.get()))
            if act.get() == 1:
                act.schedule(value=2, delay=ms(1))  # 6 ms < 5 + 10 ms, and nothing is pending

    run(S())
    assert log == [(Tag(ms(5), 0), 1), (Tag(ms(15), 0), 2)]


def test_min_spacing_applies_across_tags():
    log = []

    class S(Reactor):
        act = LogicalAction(int, min_spacing=ms(10))

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            act.schedule(value=0)

        @reaction(triggers=[act], effects=[act])
        def fired(self, act):
            log.append((self.elapsed_tag(), act.get()))
            if act.get() < 2:
                act.schedule(value=act.get() + 1)  # next microstep wanted, deferred by spacing

    run(S())
    assert log == [(Tag(0, 1), 0), (Tag(ms(10), 0), 1), (Tag(ms(20), 0), 2)]


def test_bad_action_declarations_are_refused():
    with pytest.raises(ValidationError, match="policy must be one of defer, drop, replace, update"):
        LogicalAction(policy="sometimes")
    with pytest.raises(ValidationError, match="min_delay must be a whole number of ns"):
        LogicalAction(min_delay=0.5)
    with pytest.raises(ValidationError, match="min_spacing must be a whole number of ns"):
        PhysicalAction(min_spacing=-1)


@pytest.mark.parametrize("delay", [-1, 0.5])
def test_bad_schedule_delays_are_refused(delay):
    class S(Reactor):
        act = LogicalAction()

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            act.schedule(delay=delay)

    with pytest.raises(ValidationError, match=r"S\.act: delay must be a whole number of ns >= 0"):
        run(S())


def test_scheduling_an_undeclared_logical_action_is_refused_with_the_reaction_named():
    class S(Reactor):
        act = LogicalAction()

        @reaction(triggers=[STARTUP])
        def start(self):
            self.act.schedule(value=1)

    class Main(Reactor):
        def __init__(self):
            self.s = S()

    with pytest.raises(UndeclaredAccessError, match=r"reaction Main\.s\.start schedules Main\.s\.act"):
        run(Main())


def test_scheduling_a_physical_action_before_the_program_runs_is_refused():
    class P(Reactor):
        act = PhysicalAction()

    with pytest.raises(ValidationError, match="before the program runs"):
        P().act.schedule(value=1)


@pytest.mark.timeout(20)
def test_physical_actions_scheduled_from_another_thread():
    """A thread schedules three events on the real clock; each fires at a tag no earlier
    than physical time when it was scheduled plus min_delay, in order, and the
    program stops when the reaction asks."""
    log = []
    scheduled_at = []

    class Ext(Reactor):
        act = PhysicalAction(int, min_delay=ms(1))

        @reaction(triggers=[STARTUP])
        def start(self):
            clock = self._env.clock

            def feed():
                for i in range(3):
                    scheduled_at.append(clock.now())
                    self.act.schedule(value=i)

            threading.Thread(target=feed, daemon=True).start()

        @reaction(triggers=[act])
        def got(self, act):
            log.append((self.tag(), act.get(), self.physical_time()))
            if act.get() == 2:
                self.request_stop()

    summary = Environment(clock=SystemClock(), timeout=ms(10_000)).run(Ext())
    assert [v for _, v, _ in log] == [0, 1, 2]
    tags = [t for t, _, _ in log]
    assert tags == sorted(tags) and len(set(tags)) == 3
    for (tag, _, phys), t0 in zip(log, scheduled_at, strict=True):
        assert tag.time >= t0 + ms(1)
        assert phys >= tag.time  # never ran ahead of physical time
    assert summary.stop_reason == "stop requested"
    assert summary.last_tag.microstep == tags[-1].microstep + 1


@pytest.mark.timeout(20)
def test_a_keepalive_program_stops_when_asked_from_another_thread():
    class Idle(Reactor):
        act = PhysicalAction()

        @reaction(triggers=[act])
        def got(self, act):
            pass

    env = Environment(clock=SystemClock())
    timer = threading.Timer(0.05, env.request_stop)
    timer.start()
    summary = env.run(Idle())
    timer.join()
    assert summary.stop_reason == "stop requested from outside"


def test_reading_an_undeclared_action_or_timer_is_refused_with_the_reaction_named():
    class Peek(Reactor):
        act = LogicalAction(int)
        t = Timer()

        def __init__(self, what):
            self.what = what

        @reaction(triggers=[STARTUP])
        def look(self):
            if self.what == "get":
                self.act.get()
            elif self.what == "present":
                _ = self.act.is_present
            else:
                _ = self.t.is_present

    class Main(Reactor):
        def __init__(self, what):
            self.p = Peek(what)

    for what, name in (("get", "act"), ("present", "act"), ("timer", "t")):
        with pytest.raises(UndeclaredAccessError, match=rf"reaction Main\.p\.look reads Main\.p\.{name} without declaring it"):
            run(Main(what))


class _PhysicalFromReaction(Reactor):
    """At startup a reaction works 7 ms (virtual), then schedules its physical action
    through its handle; records the tags the action fires at."""

    act = PhysicalAction(int, min_delay=ms(1))

    def __init__(self, clock, work=7_000_000, delay=2_000_000):  # 7 ms, 2 ms
        self.clock, self.work, self.delay = clock, work, delay
        self.got = []

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act):
        self.clock.advance(self.work)
        act.schedule(delay=self.delay, value=1)
        act.schedule(delay=self.delay, value=2)  # the same tag: piles up at the next microstep

    @reaction(triggers=[act])
    def fired(self, act):
        t = self.elapsed_tag()
        self.got.append((t.time, t.microstep, act.get()))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_physical_action_scheduled_through_its_handle_takes_physical_time(workers):
    """reactor-c's lf_schedule_trigger: a physical action takes physical time + min_delay +
    delay, microstep 0, whoever schedules it (a reaction's handle included), not the
    logical tag + delay a logical action takes (which would be 3 ms here)."""
    clock = VirtualClock()
    main = _PhysicalFromReaction(clock)
    Environment(clock=clock, workers=workers, keepalive=False).run(main)
    assert main.got == [(ms(10), 0, 1), (ms(10), 1, 2)]


def test_a_physical_action_behind_logical_time_goes_to_the_next_microstep():
    """In fast mode logical time runs ahead of physical time: a physical event whose time
    is not after the current tag takes the current tag's next microstep (never the past)."""
    clock = VirtualClock()

    class Ahead(_PhysicalFromReaction):
        t = Timer(offset=ms(50))

        @reaction(triggers=[t], effects=[_PhysicalFromReaction.act])
        def late(self, act):
            act.schedule(value=3)  # physical time is still 7 ms after the start

    main = Ahead(clock, delay=0)
    Environment(clock=clock, fast=True, keepalive=False).run(main)
    assert main.got == [(ms(8), 0, 1), (ms(8), 1, 2), (ms(50), 1, 3)]


@pytest.mark.timeout(20)
def test_a_physical_action_handle_handed_to_a_thread_is_thread_safe_and_wakes_the_scheduler():
    """LF's pattern (concurrent/AsyncCallback.lf): a reaction hands the handle of the
    physical action it declared to a thread, which schedules it later. The event goes
    through the inbox and wakes the scheduler (keepalive, nothing else queued), stamped
    with the physical time of the call."""
    clock = VirtualClock()
    threads = []

    class Async(Reactor):
        act = PhysicalAction(int)

        def __init__(self):
            self.got = []

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act):
            def later():
                for i in range(3):
                    clock.advance(ms(5))
                    act.schedule(value=i)

            x = threading.Thread(target=later)
            threads.append(x)
            x.start()

        @reaction(triggers=[act])
        def fired(self, act):
            t = self.elapsed_tag()
            self.got.append((t.time, t.microstep, act.get()))
            if act.get() == 2:
                self.request_stop()

    main = Async()
    Environment(clock=clock).run(main)
    threads[0].join(5)
    assert main.got == [(ms(5), 0, 0), (ms(10), 0, 1), (ms(15), 0, 2)]
