"""Durations from constructor parameters, where Lingua Franca allows them (issue 16):
timer offsets and periods, action min_delay and min_spacing, deadlines. As a multiport's
``width=``: an int, the name of an attribute ``__init__`` sets, or a function of the
reactor; resolved per instance at assembly; a bad value is a ValidationError naming the
element's full name."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Tag,
    Timer,
    ValidationError,
    VirtualClock,
    bank,
    each,
    ms,
    reaction,
)

from .util import run


class Ticker(Reactor):
    """LF: ``reactor Ticker(offset: time = 0, period: time = 10 ms) { timer t(offset, period) }``"""

    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = ms(10)) -> None:
        self.offset = offset
        self.period = period
        self.log: list[Tag] = []

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.log.append(self.elapsed_tag())


def test_timer_offset_and_period_from_parameters_per_instance() -> None:
    class Main(Reactor):
        def __init__(self) -> None:
            self.a = Ticker()
            self.b = Ticker(offset=ms(3), period=ms(7))
            self.once = Ticker(offset=ms(5), period=0)

    m = Main()
    run(m, timeout=ms(20))
    assert m.a.log == [Tag(0), Tag(ms(10)), Tag(ms(20))]
    assert m.b.log == [Tag(ms(3)), Tag(ms(10)), Tag(ms(17))]
    assert m.once.log == [Tag(ms(5))]


def test_timer_parameters_from_a_function_and_in_a_bank() -> None:
    class Fn(Reactor):
        t = Timer(period=lambda r: r.every * 2)

        def __init__(self, every: int) -> None:
            self.every = every
            self.n = 0

        @reaction(triggers=[t])
        def tick(self) -> None:
            self.n += 1

    class Main(Reactor):
        def __init__(self) -> None:
            self.fn = Fn(ms(5))
            self.tickers = bank(Ticker, 3, period=each(lambda i: ms(5) * (i + 1)))

    m = Main()
    run(m, timeout=ms(30))
    assert m.fn.n == 4  # 0, 10, 20, 30 ms
    assert [len(t.log) for t in m.tickers] == [7, 4, 3]


class Delayed(Reactor):
    """LF: ``logical action a(min_delay, min_spacing, "drop")`` with parameters."""

    act = LogicalAction(int, min_delay="min_delay", min_spacing="spacing", policy="drop")

    def __init__(self, min_delay: int, spacing: int) -> None:
        self.min_delay = min_delay
        self.spacing = spacing
        self.log: list[tuple[Tag, Any]] = []

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act: Any) -> None:
        for i in range(3):
            act.schedule(value=i, delay=ms(i))  # at min_delay + 0, 1, 2 ms

    @reaction(triggers=[act])
    def got(self, act: Any) -> None:
        self.log.append((self.elapsed_tag(), act.get()))


def test_action_min_delay_and_min_spacing_from_parameters_per_instance() -> None:
    class Main(Reactor):
        def __init__(self) -> None:
            self.tight = Delayed(ms(1), 0)
            self.spaced = Delayed(ms(2), ms(2))

    m = Main()
    run(m)
    assert m.tight.log == [(Tag(ms(1)), 0), (Tag(ms(2)), 1), (Tag(ms(3)), 2)]
    assert m.spaced.log == [(Tag(ms(2)), 0), (Tag(ms(4)), 2)]  # 3 ms is 1 ms after 2 ms: dropped


def test_a_min_spacing_parameter_of_none_leaves_it_undeclared() -> None:
    class Maybe(Reactor):
        act = LogicalAction(int, min_spacing="spacing")

        def __init__(self, spacing: int | None) -> None:
            self.spacing = spacing
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act: Any) -> None:
            act.schedule(value=1, delay=ms(10))
            act.schedule(value=2, delay=ms(5))

        @reaction(triggers=[act])
        def got(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))

    undeclared, zero = Maybe(None), Maybe(0)
    run(undeclared)
    run(zero)
    assert undeclared.log == [(Tag(ms(5)), 2), (Tag(ms(10)), 1)]
    assert zero.log == [(Tag(ms(10)), 1), (Tag(ms(10), 1), 2)]  # defer at spacing 0: after the previous


def test_physical_action_min_delay_from_a_parameter() -> None:
    class P(Reactor):
        act = PhysicalAction(int, min_delay="d")

        def __init__(self) -> None:
            self.d = ms(4)
            self.log: list[Tag] = []

        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            self.act.schedule(value=1)

        @reaction(triggers=[act])
        def got(self) -> None:
            self.log.append(self.elapsed_tag())

    p = P()
    run(p, timeout=ms(10))
    assert p.log == [Tag(ms(4))]


class Slow(Reactor):
    out = Output(int)
    t = Timer(0, ms(100))

    def __init__(self, clock: VirtualClock, work: list[int]) -> None:
        self.clock = clock
        self.work = work

    @reaction(triggers=[t], effects=[out])
    def compute(self, out: Any) -> None:
        n = self.elapsed() // ms(100)
        self.clock.advance(self.work[n])
        out.set(n)


class Urgent(Reactor):
    """LF: ``reaction(inp) {= ... =} deadline(d) {= late =}`` with a parameter ``d``."""

    inp = Input(int)

    def __init__(self, d: int) -> None:
        self.d = d
        self.log: list[tuple[str, int]] = []

    @reaction(triggers=[inp], deadline="d")
    def act(self, inp: Any) -> None:
        self.log.append(("on time", inp.get()))

    @act.deadline_handler
    def late(self, inp: Any) -> None:
        self.log.append(("late", inp.get()))


def test_a_deadline_from_a_parameter_per_instance() -> None:
    """The work makes the consumers 3, 20 and 10 ms late: a 10 ms deadline misses the
    second; a 25 ms one nothing."""
    clock = VirtualClock()

    class Main(Reactor):
        def __init__(self) -> None:
            self.slow = Slow(clock, [ms(3), ms(20), ms(10)])
            self.strict = Urgent(ms(10))
            self.lax = Urgent(ms(25))
            self.connect(self.slow.out, self.strict.inp)
            self.connect(self.slow.out, self.lax.inp)

    m = Main()
    summary = Environment(clock=clock, timeout=ms(200)).run(m)
    assert m.strict.log == [("on time", 0), ("late", 1), ("on time", 2)]
    assert m.lax.log == [("on time", 0), ("on time", 1), ("on time", 2)]
    assert summary.deadline_misses == 1


# -- errors name the element's full name -----------------------------------------------


def _in_main(child: Any) -> Reactor:
    class Main(Reactor):
        def __init__(self) -> None:
            self.inner = child()

    return Main()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0.5, r"Main\.inner\.t: timer period must be a whole number of ns >= 0 \(time is never a float\), got 0\.5"),
        (-1, r"Main\.inner\.t: timer period must be a whole number of ns >= 0 .*got -1"),
        (True, r"Main\.inner\.t: timer period must be .*got True"),
    ],
)
def test_a_bad_timer_parameter_names_the_timer(value: Any, message: str) -> None:
    class T(Ticker):
        def __init__(self) -> None:
            super().__init__(period=value)

    with pytest.raises(ValidationError, match=message):
        run(_in_main(T))


def test_a_missing_parameter_names_the_element_and_the_attribute() -> None:
    class T(Reactor):
        t = Timer(offset="start_at")

        @reaction(triggers=[t])
        def tick(self) -> None:
            pass

    with pytest.raises(ValidationError, match=r"Main\.inner\.t: timer offset is the parameter 'start_at', but "
                                              r"Main\.inner has no attribute 'start_at' \(set it in __init__\)"):
        run(_in_main(T))


def test_bad_action_parameters_name_the_action() -> None:
    class Neg(Delayed):
        def __init__(self) -> None:
            super().__init__(-5, 0)

    with pytest.raises(ValidationError, match=r"Main\.inner\.act: action min_delay must be a whole number .*got -5"):
        run(_in_main(Neg))

    class NoSpacing(Delayed):
        def __init__(self) -> None:
            super().__init__(0, None)  # type: ignore[arg-type]

    with pytest.raises(ValidationError, match=r"Main\.inner\.act: action min_spacing is None \(not declared\), but "
                                              r"the action declares the policy 'drop'"):
        run(_in_main(NoSpacing))


def test_a_bad_deadline_parameter_names_the_reaction() -> None:
    class U(Urgent):
        def __init__(self) -> None:
            super().__init__(ms(1) / 2)  # type: ignore[arg-type]

    with pytest.raises(ValidationError, match=r"Main\.inner\.act: deadline must be a whole number of ns >= 0 .*got 500000\.0"):
        run(_in_main(U))


def test_a_parameter_name_must_be_an_identifier() -> None:
    with pytest.raises(ValidationError, match=r"timer period: '10 ms' is not the name of a parameter"):
        Timer(period="10 ms")
    with pytest.raises(ValidationError, match=r"action min_spacing: 'a-b' is not the name of a parameter"):
        LogicalAction(min_spacing="a-b")
    with pytest.raises(ValidationError, match=r"deadline must be a whole number"):
        reaction(triggers=[STARTUP], deadline=1.5)(lambda self: None)
