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

    with pytest.raises(ValidationError, match=r"reaction Bad\.go: SHUTDOWN can only be a trigger"):
        run(Bad())


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
    caplog.set_level(logging.WARNING, logger="reactorfed.scheduler")
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
