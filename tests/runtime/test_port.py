"""Ports and connections: same-tag delivery, delays, presence, last write wins,
declared access only."""

import pytest

from reactorfed import (
    STARTUP,
    Input,
    LogicalAction,
    Output,
    ReactionFailed,
    Reactor,
    Tag,
    Timer,
    UndeclaredAccessError,
    ms,
    reaction,
)

from .util import run


class Source(Reactor):
    out = Output(int)

    def __init__(self, values=(1,)):
        self.values = list(values)

    @reaction(triggers=[STARTUP], effects=[out])
    def emit(self, out):
        out.set(self.values[0])


class Sink(Reactor):
    inp = Input(int)

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[inp])
    def got(self, inp):
        self.log.append((self.elapsed_tag(), inp.get()))


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp, out):
        out.set(inp.get() + 1)


def _pipe(log, after):
    class Main(Reactor):
        def __init__(self):
            self.src = Source([10])
            self.sink = Sink(log)
            self.connect(self.src.out, self.sink.inp, after=after)

    return Main()


def test_connection_without_delay_delivers_at_the_same_tag():
    log = []
    run(_pipe(log, None))
    assert log == [(Tag(0, 0), 10)]


def test_after_zero_delivers_at_the_next_microstep():
    log = []
    run(_pipe(log, 0))
    assert log == [(Tag(0, 1), 10)]


def test_after_10ms_delivers_10ms_later_at_microstep_zero():
    log = []
    run(_pipe(log, ms(10)))
    assert log == [(Tag(ms(10), 0), 10)]


def test_delays_compose_along_a_chain():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.src = Source([0])
            self.r = [Relay() for _ in range(4)]
            self.sink = Sink(log)
            self.connect(self.src.out, self.r[0].inp, after=0)
            self.connect(self.r[0].out, self.r[1].inp, after=0)
            self.connect(self.r[1].out, self.r[2].inp, after=ms(10))
            self.connect(self.r[2].out, self.r[3].inp)
            self.connect(self.r[3].out, self.sink.inp, after=0)

    run(Main())
    assert log == [(Tag(ms(10), 1), 4)]


def test_hierarchical_connections_pass_through_container_ports():
    log = []

    class Inner(Reactor):
        inp = Input(int)
        out = Output(int)

        def __init__(self):
            self.relay = Relay()
            self.connect(self.inp, self.relay.inp)
            self.connect(self.relay.out, self.out)

    class Main(Reactor):
        def __init__(self):
            self.src = Source([5])
            self.box = Inner()
            self.sink = Sink(log)
            self.connect(self.src.out, self.box.inp)
            self.connect(self.box.out, self.sink.inp, after=ms(1))

    run(Main())
    assert log == [(Tag(ms(1), 0), 6)]


def test_a_second_write_at_one_tag_keeps_the_last_value():
    log = []

    class Writer(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def first(self, out):
            out.set(1)
            out.set(2)

        @reaction(triggers=[STARTUP], effects=[out])
        def second(self, out):
            assert out.get() == 2  # an effect may read back what was written
            out.set(3)

    class Main(Reactor):
        def __init__(self):
            self.w = Writer()
            self.sink = Sink(log)
            self.connect(self.w.out, self.sink.inp)

    run(Main())
    assert log == [(Tag(0, 0), 3)]


def test_presence_is_cleared_at_every_tag_and_absent_inputs_read_none():
    """Input ``a`` is present only at startup; at the later tags it must read absent,
    never the stale value 1."""
    log = []

    class Two(Reactor):
        a = Output(int)
        b = Output(int)
        t = Timer(0, ms(10))

        @reaction(triggers=[t], effects=[a, b])
        def emit(self, a, b):
            n = self.elapsed() // ms(10)
            if n == 0:
                a.set(1)
            b.set(100 + n)

    class Reader(Reactor):
        a = Input(int)
        b = Input(int)

        @reaction(triggers=[b], sources=[a])
        def look(self, a, b):
            log.append((self.elapsed_tag(), a.is_present, a.get(), b.get()))

    class Main(Reactor):
        def __init__(self):
            self.two = Two()
            self.r = Reader()
            self.connect(self.two.a, self.r.a)
            self.connect(self.two.b, self.r.b)

    run(Main(), timeout=ms(20))
    assert log == [
        (Tag(0, 0), True, 1, 100),
        (Tag(ms(10), 0), False, None, 101),
        (Tag(ms(20), 0), False, None, 102),
    ]


def test_outputs_written_and_not_connected_are_cleared_too():
    seen = []

    class Self(Reactor):
        out = Output(int)
        again = LogicalAction()

        @reaction(triggers=[STARTUP], effects=[out, again])
        def first(self, out, again):
            out.set(7)
            again.schedule()

        @reaction(triggers=[again], effects=[out])
        def later(self, out):
            seen.append((self.elapsed_tag(), out.is_present, out.get()))

    run(Self())
    assert seen == [(Tag(0, 1), False, None)]


def test_a_reaction_triggered_by_one_of_two_inputs_sees_only_the_present_one():
    log = []

    class Both(Reactor):
        x = Input(int)
        y = Input(int)

        @reaction(triggers=[x, y])
        def r(self, x, y):
            log.append((self.elapsed_tag(), x.get() if x.is_present else "-", y.get() if y.is_present else "-"))

    class Main(Reactor):
        def __init__(self):
            self.s = Source([1])
            self.b = Both()
            self.connect(self.s.out, self.b.x)
            self.s2 = Source([2])
            self.connect(self.s2.out, self.b.y, after=0)

    run(Main())
    assert log == [(Tag(0, 0), 1, "-"), (Tag(0, 1), "-", 2)]


def test_writing_an_undeclared_port_is_refused_with_the_reaction_named():
    class Sneaky(Reactor):
        out = Output(int)
        other = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out):
            self.other.set(1)

    class Main(Reactor):
        def __init__(self):
            self.s = Sneaky()

    with pytest.raises(UndeclaredAccessError, match=r"reaction Main\.s\.go writes Main\.s\.other"):
        run(Main())


def test_reading_an_undeclared_port_is_refused_with_the_reaction_named():
    class Peek(Reactor):
        inp = Input(int)
        hidden = Input(int)

        @reaction(triggers=[inp])
        def go(self, inp):
            return self.hidden.get()

    class Main(Reactor):
        def __init__(self):
            self.src = Source([1])
            self.p = Peek()
            self.connect(self.src.out, self.p.inp)

    with pytest.raises(UndeclaredAccessError, match=r"reaction Main\.p\.go reads Main\.p\.hidden"):
        run(Main())
    with pytest.raises(UndeclaredAccessError, match="reads"):
        _ = Main().p.hidden.is_present


def test_writing_a_contained_reactors_input_without_declaring_it_is_refused():
    class Main(Reactor):
        def __init__(self):
            self.sink = Sink([])

        @reaction(triggers=[STARTUP])
        def go(self):
            self.sink.inp.set(1)

    with pytest.raises(UndeclaredAccessError, match=r"reaction Main\.go writes Main\.sink\.inp"):
        run(Main())


def test_check_types_refuses_a_wrong_value_type():
    class Bad(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out):
            out.set("not an int")

    with pytest.raises(ReactionFailed, match=r"reaction Bad\.go failed .*Bad\.out carries int, got str") as e:
        run(Bad(), check_types=True)
    assert isinstance(e.value.__cause__, TypeError)
    run(Bad())  # unchecked by default (speed)


def test_delays_on_connections_inside_a_container_apply_to_what_passes_through():
    log = []

    class Inner(Reactor):
        inp = Input(int)
        out = Output(int)

        def __init__(self):
            self.relay = Relay()
            self.connect(self.inp, self.relay.inp, after=ms(5))
            self.connect(self.relay.out, self.out, after=0)

    class Main(Reactor):
        def __init__(self):
            self.src = Source([1])
            self.box = Inner()
            self.sink = Sink(log)
            self.connect(self.src.out, self.box.inp)
            self.connect(self.box.out, self.sink.inp, after=0)

    run(Main())
    assert log == [(Tag(ms(5), 2), 2)]
