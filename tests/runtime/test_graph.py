"""Assembly: precedence graph, levels, causality loops and invalid programs."""

import pytest

from reactorfed import (
    STARTUP,
    CausalityLoopError,
    Input,
    Output,
    Reactor,
    Tag,
    ValidationError,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble

from .util import run


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp, out):
        out.set(inp.get() + 1)


class Source(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def emit(self, out):
        out.set(0)


class Sink(Reactor):
    inp = Input(int)

    def __init__(self, log=None):
        self.log = [] if log is None else log

    @reaction(triggers=[inp])
    def got(self, inp):
        self.log.append((self.elapsed_tag(), inp.get()))


def _ring(after):
    class Ring(Reactor):
        def __init__(self):
            self.a = Relay()
            self.b = Relay()
            self.connect(self.a.out, self.b.inp)
            self.connect(self.b.out, self.a.inp, after=after)

    return Ring()


def test_a_zero_delay_cycle_is_refused_naming_the_reactions():
    with pytest.raises(CausalityLoopError) as e:
        assemble(_ring(None))
    assert str(e.value) == "causality loop (a cycle without delay): Ring.a.fwd -> Ring.b.fwd -> Ring.a.fwd"
    assert e.value.cycle == ["Ring.a.fwd", "Ring.b.fwd"]
    assert isinstance(e.value, ValidationError)


def test_a_cycle_through_declaration_order_is_a_causality_loop():
    """r1 reads ``inp``; r2 (declared after r1, so after it) writes ``out``, which is
    connected back to ``inp``: r2 must run before r1 and after it."""

    class Loopy(Reactor):
        inp = Input(int)
        out = Output(int)

        @reaction(triggers=[inp])
        def r1(self, inp):
            pass

        @reaction(triggers=[STARTUP], effects=[out])
        def r2(self, out):
            out.set(1)

    class Main(Reactor):
        def __init__(self):
            self.x = Loopy()
            self.connect(self.x.out, self.x.inp)

    with pytest.raises(CausalityLoopError, match=r"Main\.x\.r1 -> Main\.x\.r2 -> Main\.x\.r1"):
        assemble(Main())


@pytest.mark.parametrize("after", [0, ms(1)])
def test_a_delay_breaks_the_cycle(after):
    prog = assemble(_ring(after))
    assert {r.fqn: r.level for r in prog.reactions} == {"Ring.a.fwd": 0, "Ring.b.fwd": 1}


def test_levels_are_the_longest_path_from_a_source():
    class Main(Reactor):
        def __init__(self):
            self.src = Source()
            self.r1 = Relay()
            self.r2 = Relay()
            self.sink = Sink()
            self.side = Sink()
            self.connect(self.src.out, self.r1.inp)
            self.connect(self.r1.out, self.r2.inp)
            self.connect(self.r2.out, self.sink.inp)
            self.connect(self.src.out, self.side.inp)  # fan-out: one upstream, two readers

    prog = assemble(Main())
    levels = {r.fqn: r.level for r in prog.reactions}
    assert levels == {"Main.src.emit": 0, "Main.r1.fwd": 1, "Main.r2.fwd": 2, "Main.sink.got": 3, "Main.side.got": 1}
    assert prog.max_level == 3
    assert [r.rank for r in prog.reactions] == list(range(5))


def test_connecting_in_the_wrong_direction_is_refused():
    class Main(Reactor):
        def __init__(self):
            self.a = Relay()
            self.b = Relay()
            self.connect(self.b.inp, self.a.out)

    with pytest.raises(ValidationError, match=r"Main: cannot connect from Main\.b\.inp: a connection's source must be an output"):
        assemble(Main())


def test_connecting_to_an_output_of_a_sibling_is_refused():
    class Main(Reactor):
        def __init__(self):
            self.a = Relay()
            self.b = Relay()
            self.connect(self.a.out, self.b.out)

    with pytest.raises(ValidationError, match=r"cannot connect to Main\.b\.out: a connection's destination must be an input"):
        assemble(Main())


def test_connecting_across_the_hierarchy_is_refused():
    class Box(Reactor):
        def __init__(self):
            self.inner = Relay()

    class Main(Reactor):
        def __init__(self):
            self.src = Source()
            self.box = Box()
            self.connect(self.src.out, self.box.inner.inp)  # skips a level

    with pytest.raises(ValidationError, match=r"cannot connect to Main\.box\.inner\.inp"):
        assemble(Main())


def test_two_upstreams_for_one_input_are_refused():
    class Main(Reactor):
        def __init__(self):
            self.a = Source()
            self.b = Source()
            self.sink = Sink()
            self.connect(self.a.out, self.sink.inp)
            self.connect(self.b.out, self.sink.inp)

    with pytest.raises(ValidationError, match=r"Main\.sink\.inp is already connected from Main\.a\.out; a port has one upstream"):
        assemble(Main())


def test_an_output_both_connected_and_written_by_a_reaction_is_refused():
    class Box(Reactor):
        out = Output(int)

        def __init__(self):
            self.src = Source()
            self.connect(self.src.out, self.out)

        @reaction(triggers=[STARTUP], effects=[out])
        def also(self, out):
            out.set(1)

    class Main(Reactor):
        def __init__(self):
            self.box = Box()

    with pytest.raises(ValidationError, match=r"Main\.box\.out has two sources: it is connected from Main\.box\.src\.out and written by Main\.box\.also"):
        assemble(Main())


@pytest.mark.parametrize("after", [0.5, -1, True])
def test_connection_delays_must_be_whole_non_negative_ns(after):
    class Main(Reactor):
        def __init__(self):
            self.a = Source()
            self.b = Sink()
            self.connect(self.a.out, self.b.inp, after=after)

    with pytest.raises(ValidationError, match="connection delay must be a whole number of ns >= 0"):
        Main()


def test_connecting_something_that_is_not_a_port_is_refused():
    class Main(Reactor):
        def __init__(self):
            self.b = Sink()
            self.connect(42, self.b.inp)

    with pytest.raises(ValidationError, match="cannot connect 42: expected a port"):
        assemble(Main())


def test_incompatible_port_types_are_refused():
    class StrSink(Reactor):
        inp = Input(str)

    class Main(Reactor):
        def __init__(self):
            self.a = Source()
            self.b = StrSink()
            self.connect(self.a.out, self.b.inp)

    with pytest.raises(ValidationError, match=r"Main\.a\.out carries int but Main\.b\.inp expects str"):
        assemble(Main())


def test_a_contained_reactor_cannot_be_run_on_its_own():
    class Main(Reactor):
        def __init__(self):
            self.a = Source()

    with pytest.raises(ValidationError, match=r"Main\.a is contained in Main; run the top-level reactor"):
        assemble(Main().a)


def test_a_program_cannot_run_twice_at_once_or_be_shared():
    class Main(Reactor):
        def __init__(self):
            self.src = Source()

        @reaction(triggers=[STARTUP])
        def again(self):
            assemble(self)

    with pytest.raises(ValidationError, match="already part of a running program"):
        run(Main())


def test_children_are_named_by_attribute_and_duplicates_are_numbered():
    log_a, log_b = [], []

    class Main(Reactor):
        def __init__(self):
            self.src = Source()
            self.first = Sink(log_a)
            Sink(log_b)  # not assigned: named after its class
            self.connect(self.src.out, self.first.inp)
            self.relays = [Relay(), Relay(name="named")]

    m = Main()
    assemble(m)
    assert [c.fqn for c in m.children] == ["Main.src", "Main.first", "Main.Sink", "Main.relays[0]", "Main.named"]
    assert Tag(0) == Tag(0, 0)
