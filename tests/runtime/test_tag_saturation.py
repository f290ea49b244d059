"""The scheduler at the end of time: its tag arithmetic saturates at FOREVER_TAG, as
reactorfed.time.tag's does (and reactor-c's lf_delay_tag, which lf_schedule uses).

A behaviour change: a delay that took an event's time past FOREVER used to give a tag past
FOREVER_TAG (``(t + d, 0)`` unchecked), which the stop-tag check then dropped, so the
program starved and stopped at the next microstep. Now the event is at FOREVER_TAG, the
stop tag when none was set: the last tag, processed with the shutdown reactions (as in LF:
in real time that is a wait until FOREVER)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Tag,
    Timer,
    ms,
    reaction,
)
from reactorfed.time.tag import FOREVER, FOREVER_TAG

from .util import run


class Far(Reactor):
    """Schedules ``act`` ``delay`` ns after its start; logs what fires, with absolute tags."""

    act = LogicalAction()

    def __init__(self, delay: int) -> None:
        self.delay = delay
        self.log: list[tuple[str, Tag]] = []

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act: Any) -> None:
        act.schedule(delay=self.delay)

    @reaction(triggers=[act])
    def fired(self) -> None:
        self.log.append(("act", self.tag()))

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.log.append(("shutdown", self.tag()))


@pytest.mark.parametrize("fast", [True, False])  # the virtual clock waits until FOREVER at once
def test_a_delay_past_forever_schedules_at_forever_tag(fast: bool) -> None:
    main = Far(FOREVER)
    summary = run(main, fast=fast)
    assert main.log == [("act", FOREVER_TAG), ("shutdown", FOREVER_TAG)]
    assert summary.stop_reason != "starvation"


class Exactly(Far):
    """Schedules ``act`` for time FOREVER exactly."""

    @reaction(triggers=[STARTUP], effects=[Far.act])
    def start(self, act: Any) -> None:
        act.schedule(delay=FOREVER - self.logical_time())


def test_a_delay_reaching_forever_exactly_is_forever_tag() -> None:
    """It was (FOREVER, 0), a tag before FOREVER_TAG."""
    main = Exactly(0)
    run(main)
    assert main.log == [("act", FOREVER_TAG), ("shutdown", FOREVER_TAG)]


def test_a_delay_short_of_forever_is_ordinary() -> None:
    main = Far(ms(5))
    run(main)
    start = main.log[0][1].time - ms(5)
    assert main.log == [("act", Tag(start + ms(5), 0)), ("shutdown", Tag(start + ms(5), 1))]


class Ticker(Reactor):
    t = Timer(0, period=lambda r: r.period)

    def __init__(self, period: int) -> None:
        self.period = period
        self.log: list[Tag] = []

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.log.append(self.tag())


def test_a_timer_period_past_forever_fires_last_at_forever_tag() -> None:
    """It fired once (the next firing, past FOREVER_TAG, was dropped)."""
    main = Ticker(FOREVER)
    run(main)
    assert len(main.log) == 2 and main.log[1] == FOREVER_TAG


class Src(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def send(self, out: Any) -> None:
        out.set(1)


class Dst(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.log: list[Tag] = []

    @reaction(triggers=[inp])
    def got(self) -> None:
        self.log.append(self.tag())


class Linked(Reactor):
    def __init__(self) -> None:
        self.src = Src()
        self.dst = Dst()
        self.connect(self.src.out, self.dst.inp, after=FOREVER)


def test_a_connection_delay_past_forever_delivers_at_forever_tag() -> None:
    """It was dropped."""
    main = Linked()
    run(main)
    assert main.dst.log == [FOREVER_TAG]
