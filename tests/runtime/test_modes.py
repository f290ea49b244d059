"""Modes (LF's modal reactors): invalid programs refused with the element named, and the
semantics LF's modal_models programs (tests/conformance/test_modal_models.py) leave out."""

import pytest

from reactorfed import (
    RESET,
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Mode,
    Output,
    Reactor,
    ResetState,
    Tag,
    Timer,
    UndeclaredAccessError,
    ValidationError,
    history,
    ms,
    reaction,
    reset,
)

from .util import run

# -- invalid programs ------------------------------------------------------------------------


def test_two_initial_modes_are_refused():
    with pytest.raises(ValidationError, match=r"reactor Twice: of its modes A, B, 2 are initial \(A, B\)"):
        class Twice(Reactor):
            A = Mode(initial=True)
            B = Mode(initial=True)


def test_no_initial_mode_is_refused():
    with pytest.raises(ValidationError, match="reactor NoStart: of its modes A, B, none is initial"):
        class NoStart(Reactor):
            A = Mode()
            B = Mode()


def test_a_transition_to_a_mode_of_another_reactor_is_refused():
    class Other(Reactor):
        Far = Mode(initial=True)

    with pytest.raises(ValidationError, match=r"reaction Here.jump: reset\(Far\) goes to a mode that is not Here's"):
        class Here(Reactor):
            Near = Mode(initial=True)

            @reaction(triggers=[STARTUP], effects=[reset(Other.Far)])
            def jump(self, Far):
                Far.set()


def test_a_reaction_naming_a_mode_it_did_not_declare_is_refused():
    with pytest.raises(ValidationError, match=r"reaction Sly\.sneak: parameter 'B' names no declared trigger"):
        class Sly(Reactor):
            A = Mode(initial=True)
            B = Mode()

            with A:
                @reaction(triggers=[STARTUP])
                def sneak(self, B):
                    B.set()


def test_a_reaction_setting_a_mode_it_did_not_declare_fails_naming_both():
    class Sly(Reactor):
        A = Mode(initial=True)
        B = Mode()

        with A:
            @reaction(triggers=[STARTUP])
            def sneak(self):
                self.B.set()  # not through a declared reset(B) or history(B)

    # As an undeclared read or write of a port: the runtime's error for undeclared access.
    with pytest.raises(UndeclaredAccessError, match=r"reaction Sly.sneak sets the mode Sly.B without declaring reset\(B\)"):
        run(Sly())


def test_a_transition_as_a_trigger_is_refused():
    with pytest.raises(ValidationError, match=r"reaction Odd.r: history\(A\) is an effect"):
        class Odd(Reactor):
            A = Mode(initial=True)

            @reaction(triggers=[history(A)])
            def r(self):
                pass


def test_a_transition_to_something_not_a_mode_is_refused():
    with pytest.raises(ValidationError, match=r"reset\('A'\): a transition goes to a Mode"):
        reset("A")  # type: ignore[arg-type]


def test_an_element_in_the_mode_of_another_class_is_refused():
    class Other(Reactor):
        Far = Mode(initial=True)

    with pytest.raises(ValidationError, match=r"Stray\.t is declared in the mode Far of another reactor class"):
        class Stray(Reactor):
            Near = Mode(initial=True)
            with Other.Far:
                t = Timer(0)


class _Out(Reactor):
    out = Output(int)


class _Sink(Reactor):
    inp = Input(int)


def test_two_connections_into_one_port_in_one_mode_are_refused():
    class Two(Reactor):
        A = Mode(initial=True)

        def __init__(self):
            self.s = _Sink()
            with self.A:
                self.a, self.b = _Out(), _Out()
                self.connect(self.a.out, self.s.inp)
                self.connect(self.b.out, self.s.inp)

    with pytest.raises(ValidationError, match=r"Two: Two.s.inp is already connected from Two.a.out"):
        run(Two())


def test_a_connection_outside_modes_and_one_in_a_mode_into_one_port_are_refused():
    class Mixed(Reactor):
        A = Mode(initial=True)

        def __init__(self):
            self.s = _Sink()
            self.a, self.b = _Out(), _Out()
            self.connect(self.a.out, self.s.inp)
            with self.A:
                self.connect(self.b.out, self.s.inp)

    with pytest.raises(ValidationError, match=r"Mixed.s.inp is already connected from Mixed.a.out"):
        run(Mixed())


def test_a_port_connected_and_written_in_one_mode_is_refused():
    class Both(Reactor):
        out = Output(int)
        A = Mode(initial=True)

        def __init__(self):
            with self.A:
                self.a = _Out()
                self.connect(self.a.out, self.out)

        with A:
            @reaction(triggers=[STARTUP], effects=[out])
            def write(self, out):
                out.set(1)

    with pytest.raises(ValidationError, match=r"Both.out has two sources: it is connected from Both.a.out and written by Both.write"):
        run(Both())


# -- semantics -----------------------------------------------------------------------------


def test_a_program_without_modes_has_no_mode_machinery():
    class Plain(Reactor):
        t = Timer(0)

        @reaction(triggers=[t])
        def r(self):
            pass

    env = Environment(fast=True)
    sched = env.assemble(Plain())
    assert sched.program.modes is None and sched.modes is None
    env.run()
    assert sched.tag_hooks == []


class _Ticker(Reactor):
    """A modal reactor whose mode Fast ticks every 10 ms (from an offset of 5 ms)."""

    Fast = Mode(initial=True)
    Idle = Mode()

    def __init__(self):
        self.log = []

    with Fast:
        t = Timer(ms(5), ms(10))

        @reaction(triggers=[t])
        def tick(self):
            self.log.append(self.elapsed_tag())


class _Outer(Reactor):
    """Mode On contains a _Ticker; Off contains nothing: leaving On suspends the ticker's
    own mode, two levels down."""

    On = Mode(initial=True)
    Off = Mode()
    off_at = Timer(ms(12))
    on_at = Timer(ms(40))

    def __init__(self):
        with self.On:
            self.ticker = _Ticker()

    with On:
        @reaction(triggers=[off_at], effects=[reset(Off)])
        def leave(self, Off):
            Off.set()

    with Off:
        @reaction(triggers=[on_at], effects=[history(On)])
        def come_back(self, On):
            On.set()


def test_history_resumes_the_events_of_a_modal_reactor_inside_the_mode():
    # Left at 12 ms with the ticker's next tick at 15 ms (3 ms left); back at 40 ms
    # (history): the tick comes 3 ms later, at 43 ms, then every 10 ms. (reactor-c resumes
    # only the named mode's own events, so its ticker would never tick again.)
    main = _Outer()
    run(main, timeout=ms(60))
    assert main.ticker.log == [Tag(ms(5)), Tag(ms(43)), Tag(ms(53))]


class _NestedReset(Reactor):
    Idle = Mode(initial=True)
    Busy = Mode()
    go = Timer(ms(1))

    def __init__(self):
        with self.Busy:
            self.inner = _Inner()

    with Idle:
        @reaction(triggers=[go], effects=[reset(Busy)])
        def start(self, Busy):
            Busy.set()


class _Inner(Reactor):
    A = Mode(initial=True)
    B = Mode()

    def __init__(self, n=3):
        self.n = n
        self.log = []

    with A:
        count = ResetState(factory=lambda r: r.n)  # from a parameter, as LF's reset state x = n

        @reaction(triggers=[STARTUP])
        def first(self):
            self.log.append(("startup A", self.elapsed_tag(), self.count))

        @reaction(triggers=[RESET])
        def again(self):
            self.log.append(("reset A", self.elapsed_tag(), self.count))


def test_startup_and_reset_reactions_run_when_the_mode_is_first_entered():
    # _Inner is in Busy, entered with a reset at 1 ms: its initial mode A is entered with a
    # reset too (a hierarchical reset), at the next microstep, for the first time.
    main = _NestedReset()
    run(main)
    assert main.inner.log == [("startup A", Tag(ms(1), 1), 3), ("reset A", Tag(ms(1), 1), 3)]


class _Delays(Reactor):
    A = Mode(initial=True)
    B = Mode()
    t = Timer(0, ms(10))

    def __init__(self):
        self.log = []
        self.count = 0

    with A:
        a = LogicalAction(int, min_delay=ms(4))

        @reaction(triggers=[STARTUP], effects=[a])
        def first(self, a):
            a.schedule(value=1)

        @reaction(triggers=[a], effects=[a])
        def fired(self, a):
            self.log.append((self.elapsed_tag(), a.get()))
            a.schedule(value=a.get() + 1)

    @reaction(triggers=[t], effects=[reset(B), history(A)])
    def toggle(self, B, A):
        self.count += 1
        (B if self.count % 2 else A).set()


def test_history_keeps_an_actions_remaining_delay_and_value():
    # The action would fire every 4 ms from 4 ms, but at 0 the toggle asks for B: B from
    # (0, 1) on, and A's first event (at 4 ms: 4 ms left) is held; back in A at (10, 1)
    # (history): it fires 4 ms later, at 14 ms, with its value, then at 18; at 20 A is left
    # again (its event at 22 held to the end).
    main = _Delays()
    run(main, timeout=ms(25))
    assert main.log == [(Tag(ms(14)), 1), (Tag(ms(18)), 2)]


def test_modes_give_the_same_results_with_workers():
    from tests.conformance.test_modal_models import _Count3ModesMain

    for workers in (1, 2):
        main = _Count3ModesMain()
        run(main, timeout=ms(2000), workers=workers)
        assert main.printed == [1, 2, 3] * 3


class _Feed(Reactor):
    out = Output(int)
    t = Timer(0, ms(1))

    def __init__(self, value=1):
        self.value = value

    @reaction(triggers=[t], effects=[out])
    def tick(self, out):
        out.set(self.value)


def test_a_port_fed_from_two_modes_passes_on_the_active_ones_value():
    class Switch(Reactor):
        out = Output(int)
        A = Mode(initial=True)
        B = Mode()

        def __init__(self):
            with self.A:
                self.a = _Feed()
                self.connect(self.a.out, self.out)
            with self.B:
                self.b = _Feed(2)
                self.connect(self.b.out, self.out)

        with A:
            @reaction(triggers=[STARTUP], effects=[reset(B)])
            def go(self, B):
                B.set()

    class Main(Reactor):
        def __init__(self):
            self.s = Switch()
            self.got = []

        @reaction(triggers=["s.out"])
        def r(self, s):
            self.got.append((self.elapsed_tag(), s.out.get()))

    main = Main()
    run(main, timeout=ms(2))
    # A's at 0; B's timer restarts (its offset 0) at the microstep B is entered, then every 1 ms
    assert main.got == [(Tag(0), 1), (Tag(0, 1), 2), (Tag(ms(1)), 2), (Tag(ms(2)), 2)]


def test_reading_a_port_upstream_of_one_fed_from_two_modes_is_refused():
    class Switch(Reactor):
        out = Output(int)
        A = Mode(initial=True)
        B = Mode()

        def __init__(self):
            with self.A:
                self.a = _Feed()
                self.connect(self.a.out, self.out)
            with self.B:
                self.b = _Feed()
                self.connect(self.b.out, self.out)

        @reaction(triggers=["b.out"])  # would see a's values too: the two chains share one slot
        def peek(self, b):
            pass

    with pytest.raises(ValidationError, match=r"Switch.b.out is read by Switch.peek, but it is upstream of Switch.out"):
        run(Switch())
