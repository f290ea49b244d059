"""Ports of LF's programs on logical actions: delays, presence, payloads, tags."""

from __future__ import annotations

from typing import Any

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
    ns,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# --------------------------------------------------------------------------- ActionDelay.lf


class _GeneratedDelay(Reactor):
    y_in = Input(int)
    y_out = Output(int)
    act = LogicalAction(min_delay=ms(100))

    def __init__(self) -> None:
        self.y_state = 0

    @reaction(triggers=[y_in], effects=[act])
    def store(self, y_in: Any, act: Any) -> None:
        self.y_state = y_in.get()
        act.schedule(delay=ms(0))

    @reaction(triggers=[act], effects=[y_out])
    def emit(self, y_out: Any) -> None:
        y_out.set(self.y_state)


class _ADSource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(1)


class _ADSink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        elapsed_logical = self.elapsed()
        assert elapsed_logical == ms(100), f"FAILURE: Expected {ms(100)} but got {elapsed_logical}."


class _ActionDelay(Reactor):
    def __init__(self) -> None:
        self.source = _ADSource()
        self.sink = _ADSink()
        self.g = _GeneratedDelay()
        self.connect(self.source.out, self.g.y_in)
        self.connect(self.g.y_out, self.sink.inp)


@lf_test("ActionDelay.lf")
def test_action_delay() -> None:
    main = _ActionDelay()
    run(main)
    assert main.sink.received == 1


# ----------------------------------------------------------------------- ActionIsPresent.lf


class _ActionIsPresent(Reactor):
    a = LogicalAction(object)

    def __init__(self, offset: int = ns(1), period: int = ms(500)) -> None:
        self.offset = offset
        self.period = period
        self.first_time = True
        self.success = False

    @reaction(triggers=[STARTUP, a], effects=[a])
    def react(self, a: Any) -> None:
        # The is_present field should be initially False
        if a.is_present is not True:
            if self.offset == 0:
                self.success = True  # "Hello World!"
            else:
                a.schedule(delay=self.offset)
                self.first_time = False
        else:
            # "Hello World 2!"
            if self.first_time is not True:
                self.success = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.success is True, "Failed to print 'Hello World'"


@lf_test("ActionIsPresent.lf")
def test_action_is_present() -> None:
    main = _ActionIsPresent()
    summary = run(main)
    assert main.success
    assert summary.last_tag == Tag(ns(1), 1)  # starvation: shutdown one microstep after the last event


# ------------------------------------------------------------------ ActionIsPresentReset.lf


class _ActionIsPresentReset(Reactor):
    a = LogicalAction(object)
    b = LogicalAction(object)

    def __init__(self) -> None:
        self.trace: list[tuple[int, str]] = []

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=ms(1))

    @reaction(triggers=[a, b], effects=[a, b])
    def react(self, a: Any, b: Any) -> None:
        if a.is_present:
            self.trace.append((self.elapsed(), "A"))
            b.schedule(delay=ms(2))
        if b.is_present:
            self.trace.append((self.elapsed(), "B"))
            a.schedule(delay=ms(1))
        assert not (a.is_present and b.is_present), "Both triggers should not be present"


@lf_test("ActionIsPresentReset.lf")
def test_action_is_present_reset() -> None:
    main = _ActionIsPresentReset()
    run(main, timeout=ms(7), fast=True)
    assert main.trace == [(ms(1), "A"), (ms(3), "B"), (ms(4), "A"), (ms(6), "B"), (ms(7), "A")]


# ------------------------------------------------------------------ ActionWithNoReaction.lf


class _AWNRFoo(Reactor):
    x = Input(int)
    y = Output(int)
    a = LogicalAction(object)  # no reaction is triggered by it

    @reaction(triggers=[x], effects=[y, a])
    def double(self, x: Any, y: Any, a: Any) -> None:
        y.set(2 * x.get())
        a.schedule(delay=ms(500))


class _AWNRPrint(Reactor):
    x = Input(int)

    def __init__(self) -> None:
        self.results: list[tuple[int, int]] = []

    @reaction(triggers=[x])
    def show(self, x: Any) -> None:
        self.results.append((x.get(), self.elapsed()))


class _ActionWithNoReaction(Reactor):
    t = Timer(offset=0, period=sec(1))

    def __init__(self) -> None:
        self.f = _AWNRFoo()
        self.p = _AWNRPrint()
        self.connect(self.f.y, self.p.x, after=ms(10))

    @reaction(triggers=[t], effects=["f.x"])
    def kick(self, f: Any) -> None:
        f.x.set(42)


@lf_test("ActionWithNoReaction.lf")
def test_action_with_no_reaction() -> None:
    # LF's program passes by running at all; the port also checks what Print received.
    main = _ActionWithNoReaction()
    run(main, timeout=sec(3), fast=True)
    assert main.p.results == [(84, ms(10)), (84, sec(1) + ms(10)), (84, sec(2) + ms(10))]


# ----------------------------------------------------------------------------- CountSelf.lf


class _CountSelf2(Reactor):
    out = Output(int)
    a = LogicalAction(int)

    def __init__(self, delay: int = ms(100)) -> None:
        self.delay = delay

    @reaction(triggers=[STARTUP], effects=[a, out])
    def start(self, a: Any, out: Any) -> None:
        out.set(0)
        a.schedule(value=1, delay=self.delay)

    @reaction(triggers=[a], effects=[a, out])
    def again(self, a: Any, out: Any) -> None:
        out.set(a.get())
        a.schedule(value=a.get() + 1, delay=self.delay)


class _CSTest(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == self.count, f"ERROR: Expected {self.count}."
        self.count += 1


class _CountSelf(Reactor):
    def __init__(self) -> None:
        self.d = _CountSelf2()
        self.t = _CSTest()
        self.connect(self.d.out, self.t.inp)


@lf_test("CountSelf.lf")
def test_count_self() -> None:
    main = _CountSelf()
    run(main, timeout=sec(1), fast=True)
    assert main.t.count == 11  # 0 at startup, then 1..10 every 100 ms up to the timeout


# ---------------------------------------------------------------------------- CompareTags.lf


def _tag_compare(a: Tag, b: Tag) -> int:
    """LF's ``lf.tag_compare``: -1, 0 or 1."""
    return (a > b) - (a < b)


class _CompareTags(Reactor):
    t = Timer(offset=0, period=ms(1))
    l = LogicalAction(object)  # noqa: E741 (LF's name)

    def __init__(self) -> None:
        self.compared = 0

    @reaction(triggers=[t], effects=[l])
    def first(self, l: Any) -> None:  # noqa: E741
        tag1 = self.tag()
        tag2 = self.tag()
        assert not (_tag_compare(tag1, tag2) != 0 or not tag1 == tag2 or tag1 != tag2), "Tags should be equal"  # noqa: SIM201
        l.schedule(value=tag1, delay=0)

    @reaction(triggers=[l])
    def second(self, l: Any) -> None:  # noqa: E741
        tag3 = self.tag()
        tag1 = l.get()
        assert not (_tag_compare(tag1, tag3) != -1 or not tag1 < tag3 or tag1 >= tag3), "tag1 should be lesser than tag3"
        assert not (_tag_compare(tag3, tag1) != 1 or not tag3 > tag1 or tag3 <= tag1), "tag3 should be greater than tag1"
        self.compared += 1


@lf_test("CompareTags.lf")
def test_compare_tags() -> None:
    main = _CompareTags()
    run(main, timeout=ms(10), fast=False)
    # The timer fires at 0..10 ms; the action of the 10 ms tick falls after the timeout.
    assert main.compared == 10


# -------------------------------------------------------------------------- DelayedAction.lf


class _DelayedAction(Reactor):
    t = Timer(offset=0, period=sec(1))
    a = LogicalAction(object)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=ms(100))

    @reaction(triggers=[a])
    def check(self) -> None:
        elapsed = self.elapsed()
        expected = self.count * 1000000000 + 100000000
        self.count += 1
        assert elapsed == expected, f"Expected {expected} but got {elapsed}."


@lf_test("DelayedAction.lf")
def test_delayed_action() -> None:
    main = _DelayedAction()
    run(main, timeout=sec(5), fast=True)
    assert main.count == 5  # 0.1 s .. 4.1 s
