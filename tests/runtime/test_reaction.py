"""Reactions: declaration order, handles bound by parameter name, deadlines, failures."""

import logging

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    ReactionFailed,
    Reactor,
    Tag,
    Timer,
    ValidationError,
    VirtualClock,
    ms,
    reaction,
)

from .util import run


def test_reactions_of_one_reactor_run_in_declaration_order():
    log = []

    class Ordered(Reactor):
        t = Timer(0, ms(1))

        @reaction(triggers=[t])
        def c(self):
            log.append("c")

        @reaction(triggers=[STARTUP, t])
        def a(self):
            log.append("a")

        @reaction(triggers=[STARTUP])
        def b(self):
            log.append("b")

    run(Ordered(), timeout=ms(1))
    assert log == ["c", "a", "b", "c", "a"]


def test_a_subclass_appends_reactions_and_an_override_keeps_its_place():
    log = []

    class Base(Reactor):
        @reaction(triggers=[STARTUP])
        def one(self):
            log.append("base.one")

        @reaction(triggers=[STARTUP])
        def two(self):
            log.append("base.two")

    class Derived(Base):
        @reaction(triggers=[STARTUP])
        def three(self):
            log.append("derived.three")

        @reaction(triggers=[STARTUP])
        def one(self):
            log.append("derived.one")

    run(Derived())
    assert log == ["derived.one", "base.two", "derived.three"]


def test_a_downstream_reaction_runs_after_its_upstream_even_if_declared_first():
    log = []

    class Producer(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def make(self, out):
            log.append("make")
            out.set(1)

    class Consumer(Reactor):
        inp = Input(int)

        @reaction(triggers=[inp])
        def use(self, inp):
            log.append("use")

    class Main(Reactor):
        def __init__(self):
            self.c = Consumer()  # declared (and assembled) first
            self.p = Producer()
            self.connect(self.p.out, self.c.inp)

    run(Main())
    assert log == ["make", "use"]


def test_handles_are_bound_by_parameter_name_in_any_order_and_strings_work():
    log = []

    class R(Reactor):
        a = Output(int)
        b = Output(int)
        act = LogicalAction(int)

        @reaction(triggers=[STARTUP], effects=["a", b, act])
        def go(self, act, b, a):
            a.set(1)
            b.set(2)
            act.schedule(value=3)

        @reaction(triggers=[act], sources=[])
        def later(self, act):
            log.append((self.elapsed_tag(), act.get()))

    run(R())
    assert log == [(Tag(0, 1), 3)]


def test_a_reaction_may_take_fewer_parameters_than_it_declares():
    log = []

    class R(Reactor):
        t = Timer()

        @reaction(triggers=[STARTUP, t])
        def go(self):
            log.append(self.elapsed_tag())

    run(R())
    assert log == [Tag(0)]


def test_a_parameter_naming_nothing_declared_is_refused_when_the_class_is_defined():
    with pytest.raises(ValidationError, match=r"reaction Bad\.go: parameter 'inp' names no declared trigger, source or effect \(declared: t\)"):

        class Bad(Reactor):
            t = Timer()
            inp = Input(int)

            @reaction(triggers=[t])
            def go(self, inp):
                pass


def test_a_reaction_needs_a_trigger():
    with pytest.raises(ValidationError, match="reaction go declares no trigger"):

        class Bad(Reactor):
            @reaction(triggers=[])
            def go(self):
                pass


def test_startup_cannot_be_an_effect():
    class Bad(Reactor):
        @reaction(triggers=[STARTUP], effects=[SHUTDOWN])
        def go(self):
            pass

    with pytest.raises(ValidationError, match=r"reaction Bad\.go: SHUTDOWN cannot be an effect"):
        run(Bad())


def test_startup_and_shutdown_tell_whether_they_are_present():
    # LF's startup.is_present / shutdown.is_present: a trigger or a source, by parameter name
    class Both(Reactor):
        t = Timer(0, 5)

        def __init__(self) -> None:
            self.seen: list[tuple[int, bool, bool, bool]] = []

        @reaction(triggers=[STARTUP, t, SHUTDOWN])
        def go(self, startup, t, shutdown):
            self.seen.append((self.elapsed_tag().time, startup.is_present, t.is_present, shutdown.is_present))

        @reaction(triggers=[t], sources=[STARTUP, SHUTDOWN])
        def reads(self, t, startup, shutdown):
            assert startup.is_present == (self.elapsed_tag().time == 0)
            assert not shutdown.is_present or self.elapsed_tag().time == 10

    b = Both()
    run(b, timeout=10)
    assert b.seen == [(0, True, True, False), (5, False, True, False), (10, False, True, True)]


def test_a_string_naming_nothing_is_refused_at_assembly():
    class Bad(Reactor):
        @reaction(triggers=[STARTUP], effects=["nowhere"])
        def go(self, nowhere):
            pass

    with pytest.raises(ValidationError, match=r"reaction Bad\.go: 'nowhere' names nothing in Bad"):
        run(Bad())


def test_an_element_of_another_class_is_refused():
    class Other(Reactor):
        out = Output(int)

    class Bad(Reactor):
        @reaction(triggers=[STARTUP], effects=[Other.out])
        def go(self, out):
            pass

    with pytest.raises(ValidationError, match=r"reaction Bad\.go: Output\(int, name='out'\) is not an element of Bad"):
        run(Bad())


def test_reactions_cannot_write_their_own_inputs_or_timers():
    class WritesInput(Reactor):
        inp = Input(int)

        @reaction(triggers=[STARTUP], effects=[inp])
        def go(self, inp):
            pass

    class WritesTimer(Reactor):
        t = Timer()

        @reaction(triggers=[STARTUP], effects=[t])
        def go(self, t):
            pass

    with pytest.raises(ValidationError, match=r"WritesInput\.go: cannot write its own input WritesInput\.inp"):
        run(WritesInput())
    with pytest.raises(ValidationError, match=r"a timer \(WritesTimer\.t\) cannot be an effect"):
        run(WritesTimer())


def test_a_failing_reaction_stops_the_program_naming_the_reaction_and_tag():
    class Boom(Reactor):
        t = Timer(ms(5))

        @reaction(triggers=[t])
        def explode(self):
            raise KeyError("x")

    class Main(Reactor):
        def __init__(self):
            self.boom = Boom()

    with pytest.raises(ReactionFailed, match=r"reaction Main\.boom\.explode failed at tag \(5000000 ns, 0\) after start: KeyError") as e:
        run(Main())
    assert isinstance(e.value.__cause__, KeyError)


# -- deadlines ----------------------------------------------------------------------


class Slow(Reactor):
    """Simulates slow work by advancing the virtual clock before producing its output."""

    out = Output(int)
    t = Timer(0, ms(100))

    def __init__(self, clock, work):
        self.clock = clock
        self.work = work  # ns of simulated work, per firing

    @reaction(triggers=[t], effects=[out])
    def compute(self, out):
        n = self.elapsed() // ms(100)
        self.clock.advance(self.work[n])
        out.set(n)


class Urgent(Reactor):
    inp = Input(int)

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[inp], deadline=ms(10))
    def act(self, inp):
        self.log.append(("on time", self.elapsed_tag(), inp.get()))

    @act.deadline_handler
    def act_late(self, inp):
        lag = self.physical_time() - self.logical_time()
        self.log.append(("late", self.elapsed_tag(), inp.get(), lag))


def test_a_deadline_violation_runs_the_handler_instead_of_the_body():
    """On the virtual clock, logical time waits for physical time; the producer's
    simulated work makes the consumer 3, 20 and 10 ms late at 0, 100 and 200 ms."""
    log = []
    clock = VirtualClock()

    class Main(Reactor):
        def __init__(self):
            self.slow = Slow(clock, [ms(3), ms(20), ms(10)])
            self.urgent = Urgent(log)
            self.connect(self.slow.out, self.urgent.inp)

    summary = Environment(clock=clock, timeout=ms(200)).run(Main())
    # Exactly 10 ms late is still on time: a deadline is missed when physical time
    # *exceeds* logical time + deadline.
    assert log == [("on time", Tag(0), 0), ("late", Tag(ms(100)), 1, ms(20)), ("on time", Tag(ms(200)), 2)]
    assert summary.deadline_misses == 1


def test_in_fast_mode_logical_time_runs_ahead_so_the_same_work_misses_nothing():
    log = []
    clock = VirtualClock()

    class Main(Reactor):
        def __init__(self):
            self.slow = Slow(clock, [ms(3), ms(20), ms(10)])
            self.urgent = Urgent(log)
            self.connect(self.slow.out, self.urgent.inp)

    summary = Environment(clock=clock, fast=True, timeout=ms(200)).run(Main())
    assert [entry[0] for entry in log] == ["on time"] * 3
    assert summary.deadline_misses == 0


def test_a_missed_deadline_without_handler_runs_the_body_and_is_counted(caplog):
    caplog.set_level(logging.WARNING, logger="reactorfed.execution.scheduler")
    log = []
    clock = VirtualClock()

    class Lax(Reactor):
        inp = Input(int)

        @reaction(triggers=[inp], deadline=ms(1))
        def act(self, inp):
            log.append(inp.get())

    class Main(Reactor):
        def __init__(self):
            self.slow = Slow(clock, [ms(5)])
            self.lax = Lax()
            self.connect(self.slow.out, self.lax.inp)

    summary = Environment(clock=clock, timeout=0).run(Main())
    assert log == [0]
    assert summary.deadline_misses == 1
    assert "deadline of Main.lax.act missed" in caplog.text


def test_deadline_declarations_are_checked():
    with pytest.raises(ValidationError, match="deadline must be a whole number of ns >= 0"):
        reaction(triggers=[STARTUP], deadline=0.5)(lambda self: None)
    decl = reaction(triggers=[STARTUP])(lambda self: None)
    with pytest.raises(ValidationError, match="has a deadline handler but no deadline"):
        decl.deadline_handler(lambda self: None)


@pytest.mark.parametrize("fast", [False, True])
def test_a_deadline_of_0_is_always_missed(fast):
    """reactor-c: ``deadline == 0 || physical > logical + deadline``. On the virtual clock
    physical time equals the tag's time exactly (no lag at all), and the handler still
    runs; a 1 ns deadline is met then."""
    clock = VirtualClock()
    log = []

    class Zero(Reactor):
        t = Timer(0, ms(10))

        @reaction(triggers=[t], deadline=0)
        def at_once(self):
            log.append(("zero", "body"))

        @at_once.deadline_handler
        def at_once_late(self):
            log.append(("zero", "handler"))

        @reaction(triggers=[t], deadline=1)
        def almost(self):
            log.append(("one", "body"))

        @almost.deadline_handler
        def almost_late(self):
            log.append(("one", "handler"))

    summary = Environment(clock=clock, fast=fast, timeout=ms(10)).run(Zero())
    assert log == [("zero", "handler"), ("one", "body")] * 2
    assert summary.deadline_misses == 2


# -- check_deadline / update_deadline inside a reaction (LF's self.check_deadline, self.update_deadline)


class Anytime(Reactor):
    t = Timer(0, ms(100))

    def __init__(self, clock, log):
        self.clock = clock
        self.log = log

    @reaction(triggers=[t], deadline=ms(10))
    def work(self):
        self.log.append(("start", self.elapsed(), self.check_deadline()))
        self.clock.advance(ms(8))
        self.log.append(("8 ms", self.check_deadline(invoke_handler=False)))
        self.clock.advance(ms(4))
        self.log.append(("12 ms, no handler", self.check_deadline(False)))
        self.log.append(("12 ms", self.check_deadline()))
        if self.elapsed() == 0:
            self.update_deadline(ms(50))  # this invocation and the later ones
            self.log.append(("50 ms now", self.check_deadline()))

    @work.deadline_handler
    def work_late(self):
        self.log.append(("handler", self.elapsed()))


@pytest.mark.parametrize("workers", [1, 2])
def test_check_deadline_and_update_deadline_inside_a_reaction(workers):
    """reactor-c's lf_check_deadline: physical time past the tag + the reaction's current
    deadline; the handler runs then and there when asked (LF Python's default). An update
    (lf_update_deadline) holds for the rest of the invocation and every later one: at
    100 ms, 12 ms of work stays within 50 ms."""
    clock = VirtualClock()
    log = []
    summary = Environment(clock=clock, workers=workers, timeout=ms(100)).run(Anytime(clock, log))
    assert log == [
        ("start", 0, False), ("8 ms", False), ("12 ms, no handler", True), ("handler", 0), ("12 ms", True),
        ("50 ms now", False),
        ("start", ms(100), False), ("8 ms", False), ("12 ms, no handler", False), ("12 ms", False),
    ]
    assert summary.deadline_misses == 1  # a miss is counted when a handler runs


def test_check_deadline_without_a_deadline_is_false_and_update_is_refused():
    clock = VirtualClock()
    seen = []

    class NoDeadline(Reactor):
        t = Timer(0)

        @reaction(triggers=[t])
        def plain(self):
            clock.advance(ms(1000))
            seen.append(self.check_deadline())
            self.update_deadline(ms(5))

    with pytest.raises(ValidationError, match=r"Main\.plain: update_deadline\(\) on a reaction without a deadline"):
        Environment(clock=clock).run(NoDeadline(name="Main"))
    assert seen == [False]


def test_update_deadline_takes_a_duration():
    class Bad(Reactor):
        t = Timer(0)

        @reaction(triggers=[t], deadline=ms(1))
        def r(self):
            self.update_deadline(0.5)

        @r.deadline_handler
        def r_late(self):
            pass

    with pytest.raises(ValidationError, match=r"Bad\.r: deadline must be a whole number of ns"):
        run(Bad())


def test_check_deadline_outside_a_reaction_of_the_reactor_is_refused():
    class Other(Reactor):
        t = Timer(0)

        @reaction(triggers=[t], deadline=ms(1))
        def r(self):
            pass

        @r.deadline_handler
        def r_late(self):
            pass

    class Peeker(Reactor):
        t = Timer(0)

        @reaction(triggers=[t])
        def peek(self):
            self._parent.other.check_deadline()

    class Main(Reactor):
        def __init__(self):
            self.other = Other()
            self.peeker = Peeker()

    with pytest.raises(ValidationError, match=r"Main\.other\.check_deadline\(\) can only be called inside a reaction of "
                                             r"Main\.other \(called from Main\.peeker\.peek\)"):
        run(Main())
    lone = Other()
    run(lone)
    with pytest.raises(ValidationError, match="the program is not running"):
        lone.check_deadline()
