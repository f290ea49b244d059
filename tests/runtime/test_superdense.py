"""Superdense time loses nothing (issue 16): events for one slot at one tag pile up at
the following microsteps, in the order they were scheduled or sent, in one process.
(Across federates: tests/federation/test_superdense.py.)"""

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
    VirtualClock,
    ms,
    reaction,
)

from .util import run


class Plan(Reactor):
    """At startup schedules ``act`` once per (delay, value) of ``plan``; logs what fires."""

    act = LogicalAction(int)

    def __init__(self, plan: list[tuple[int, int]]) -> None:
        self.plan = plan
        self.log: list[tuple[Tag, Any]] = []

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act: Any) -> None:
        for delay, value in self.plan:
            act.schedule(value=value, delay=delay)

    @reaction(triggers=[act])
    def fired(self, act: Any) -> None:
        self.log.append((self.elapsed_tag(), act.get()))


def test_three_events_for_one_tag_take_three_microsteps_in_order() -> None:
    p = Plan([(ms(1), 10), (ms(1), 11), (ms(1), 12)])
    run(p)
    assert p.log == [(Tag(ms(1), 0), 10), (Tag(ms(1), 1), 11), (Tag(ms(1), 2), 12)]


def test_zero_delay_events_pile_up_after_the_next_microstep() -> None:
    p = Plan([(0, 1), (0, 2), (0, 3)])
    run(p)
    assert p.log == [(Tag(0, 1), 1), (Tag(0, 2), 2), (Tag(0, 3), 3)]


def test_only_an_occupied_tag_moves_an_event() -> None:
    """10 ms, then 5 ms, then 10 ms again: only the third collides."""
    p = Plan([(ms(10), 1), (ms(5), 2), (ms(10), 3)])
    run(p)
    assert p.log == [(Tag(ms(5), 0), 2), (Tag(ms(10), 0), 1), (Tag(ms(10), 1), 3)]


def test_the_pile_up_is_per_action_not_per_tag() -> None:
    """Another action's event at the same tag does not move this one."""

    class Two(Reactor):
        a = LogicalAction(int)
        b = LogicalAction(int)

        def __init__(self) -> None:
            self.log: list[tuple[str, Tag, Any]] = []

        @reaction(triggers=[STARTUP], effects=[a, b])
        def start(self, a: Any, b: Any) -> None:
            a.schedule(value=1, delay=ms(1))
            b.schedule(value=2, delay=ms(1))
            a.schedule(value=3, delay=ms(1))

        @reaction(triggers=[a])
        def on_a(self, a: Any) -> None:
            self.log.append(("a", self.elapsed_tag(), a.get()))

        @reaction(triggers=[b])
        def on_b(self, b: Any) -> None:
            self.log.append(("b", self.elapsed_tag(), b.get()))

    m = Two()
    run(m)
    assert m.log == [("a", Tag(ms(1), 0), 1), ("b", Tag(ms(1), 0), 2), ("a", Tag(ms(1), 1), 3)]


def test_an_event_piled_up_past_the_stop_tag_is_dropped() -> None:
    """LF's rule (reactor-c drops an event whose tag, after the pile-up, is past the stop
    tag): with the last tag at 1 ms, only the first of three events for 1 ms fires."""
    p = Plan([(ms(1), 1), (ms(1), 2), (ms(1), 3)])
    summary = run(p, timeout=ms(1))
    assert p.log == [(Tag(ms(1), 0), 1)]
    assert summary.last_tag == Tag(ms(1), 0)


class Burst(Reactor):
    """Every ``period`` (three times) sends ``n`` values: at (t, 0), (t, 1), ..., (t, n-1)."""

    out = Output(int)
    tick = Timer(offset=0, period=ms(10))
    again = LogicalAction(int)

    def __init__(self, n: int = 3, ticks: int = 3) -> None:
        self.n = n
        self.ticks = ticks
        self.i = 0

    @reaction(triggers=[tick, again], effects=[out, again])
    def emit(self, tick: Any, again: Any, out: Any) -> None:
        if tick.is_present:
            self.i += 1
            k = 0
        else:
            k = again.get()
        if self.i > self.ticks:
            return
        out.set(100 * self.i + k)
        if k + 1 < self.n:
            again.schedule(value=k + 1)


class Sink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.log: list[tuple[Tag, Any]] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.log.append((self.elapsed_tag(), inp.get()))


class Wire(Reactor):
    def __init__(self, after: int | None) -> None:
        self.src = Burst()
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp, after=after)


def _expected(after: int | None, ticks: int = 3, n: int = 3) -> list[tuple[Tag, int]]:
    out = []
    for i in range(1, ticks + 1):
        t = (i - 1) * ms(10)
        for k in range(n):
            sent = Tag(t, k)
            out.append((sent if after is None else sent.delayed(after) if after == 0 else Tag(t + after, k), 100 * i + k))
    return out


@pytest.mark.parametrize("after", [None, 0, ms(3)], ids=["no delay", "after 0", "after 3 ms"])
def test_a_burst_crosses_a_connection_whole(after: int | None) -> None:
    """A burst sent at (t, 0), (t, 1), (t, 2): without delay it arrives at those tags;
    after 0 at (t, 1), (t, 2), (t, 3); after d at (t+d, 0), (t+d, 1), (t+d, 2)."""
    w = Wire(after)
    run(w, timeout=ms(40))
    assert w.sink.log == _expected(after)
    assert len(w.sink.log) == 9


def test_a_burst_after_d_cut_by_the_stop_tag_keeps_what_is_not_past_it() -> None:
    w = Wire(ms(3))
    run(w, timeout=ms(23))  # the last burst would arrive at (23 ms, 0..2)
    assert w.sink.log == _expected(ms(3))[:7]


def test_two_delayed_connections_from_one_output_pile_up_each_on_its_own() -> None:

    class Fan(Reactor):
        def __init__(self) -> None:
            self.src = Burst()
            self.a = Sink()
            self.b = Sink()
            self.connect(self.src.out, self.a.inp, after=ms(3))
            self.connect(self.src.out, self.b.inp, after=ms(1))

    f = Fan()
    run(f, timeout=ms(5))
    assert f.a.log == [(Tag(ms(3), k), 100 + k) for k in range(3)]
    assert f.b.log == [(Tag(ms(1), k), 100 + k) for k in range(3)]


def test_physical_actions_scheduled_for_one_instant_pile_up() -> None:
    """On a virtual clock that does not move, three physical events get one timestamp."""

    class Phys(Reactor):
        act = PhysicalAction(int)

        def __init__(self) -> None:
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            for i in range(3):
                self.act.schedule(value=i)

        @reaction(triggers=[act])
        def got(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))
            if len(self.log) == 3:
                self.request_stop()

    p = Phys()
    run(p, timeout=ms(1))
    assert p.log == [(Tag(0, 1), 0), (Tag(0, 2), 1), (Tag(0, 3), 2)]


def test_a_remote_event_is_never_piled_up_nor_overwritten() -> None:
    """post_remote (a federate's network input) posts at exactly the tag it is given and
    says False for a second event of one slot at one tag: the sender already piled up."""
    w = Wire(ms(3))
    sched = Environment(fast=True, clock=VirtualClock()).assemble(w)
    slot = sched.program.slot_of(w.sink.inp)
    assert sched.post_remote((5, 0), slot, 1) is True
    assert sched.post_remote((5, 0), slot, 2) is False
    assert sched.queue.events[(5, 0)][slot] == 1
    assert (5, 1) not in sched.queue.events
