"""Timers, startup and shutdown."""

import pytest

from reactorfed import SHUTDOWN, STARTUP, Reactor, Tag, Timer, ValidationError, ms, reaction

from .util import run


class Ticks(Reactor):
    t = Timer(offset=ms(5), period=ms(10))

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[t])
    def tick(self, t):
        assert t.is_present and t.get() is None
        self.log.append(self.elapsed_tag())


def test_timer_fires_at_offset_then_every_period():
    log = []
    run(Ticks(log), timeout=ms(40))
    assert log == [Tag(ms(5)), Tag(ms(15)), Tag(ms(25)), Tag(ms(35))]


def test_timer_firing_exactly_at_the_timeout_is_processed():
    log = []
    run(Ticks(log), timeout=ms(35))
    assert log == [Tag(ms(5)), Tag(ms(15)), Tag(ms(25)), Tag(ms(35))]


def test_timer_with_period_zero_fires_once():
    log = []

    class Once(Ticks):
        t = Timer(offset=ms(7))

    summary = run(Once(log))
    assert log == [Tag(ms(7))]
    # Nothing else to do: starvation ends the program at the next microstep.
    assert summary.last_tag == Tag(ms(7), 1)
    assert summary.stop_reason == "starvation"


def test_timer_with_zero_offset_fires_at_startup_tag_after_startup_reactions():
    log = []

    class Both(Reactor):
        t = Timer(0, ms(10))

        @reaction(triggers=[t])
        def tick(self):
            log.append(("timer", self.elapsed_tag()))

        @reaction(triggers=[STARTUP])
        def start(self):
            log.append(("startup", self.elapsed_tag()))

    run(Both(), timeout=ms(10))
    # Same tag, declaration order.
    assert log == [("timer", Tag(0)), ("startup", Tag(0)), ("timer", Tag(ms(10)))]


def test_timer_offset_beyond_the_timeout_never_fires():
    """As in reactor-c, an event past the stop tag is never queued; with nothing else
    queued the program starves right after startup instead of idling to the timeout."""
    log = []

    class Late(Ticks):
        t = Timer(offset=ms(50), period=ms(10))

    summary = run(Late(log), timeout=ms(20))
    assert log == []
    assert summary.last_tag == Tag(0, 1)
    assert summary.stop_reason == "starvation"


def test_keepalive_runs_to_the_timeout_even_with_nothing_to_do():
    log = []

    class Late(Ticks):
        t = Timer(offset=ms(50), period=ms(10))

    summary = run(Late(log), timeout=ms(20), keepalive=True)
    assert log == []
    assert summary.last_tag == Tag(ms(20))
    assert summary.stop_reason == "timeout"


def test_startup_at_the_start_tag_and_shutdown_at_the_last_tag():
    log = []

    class Life(Reactor):
        t = Timer(ms(1), ms(1))

        @reaction(triggers=[STARTUP])
        def hello(self):
            log.append(("startup", self.elapsed_tag(), self.tag().time - self.start_time()))

        @reaction(triggers=[SHUTDOWN])
        def bye(self):
            log.append(("shutdown", self.elapsed_tag()))

    summary = run(Life(), timeout=ms(3))
    assert log == [("startup", Tag(0), 0), ("shutdown", Tag(ms(3)))]
    assert summary.last_tag == Tag(ms(3))
    assert summary.stop_reason == "timeout"


def test_startup_and_shutdown_at_one_tag_with_timeout_zero():
    log = []

    class Life(Reactor):
        @reaction(triggers=[STARTUP, SHUTDOWN])
        def both(self):
            log.append(self.elapsed_tag())

    summary = run(Life(), timeout=0)
    assert log == [Tag(0)]
    assert summary.tags == 1


@pytest.mark.parametrize(("offset", "period"), [(0.5, 0), (0, 1.5), (-1, 0), (0, -5)])
def test_timer_times_must_be_whole_non_negative_ns(offset, period):
    with pytest.raises(ValidationError, match=r"timer .* must be a whole number of ns >= 0"):
        Timer(offset, period)
