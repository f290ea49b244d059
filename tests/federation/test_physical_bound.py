"""A federate whose outputs a physical action reaches promises no further than physical
time allows (reactor-c's bounded NET): the least delay from a physical action to an
output (:func:`physical_output_delay`), the bound in the core's reports and promises,
and, end to end, the two ways an event stamped by the clock could come before a promise
already made: a physical action scheduled during a long reaction, and a thread that read
the clock and was held up before it queued the event."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Timer,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble
from reactorfed.assembly.physical_paths import physical_output_delay
from reactorfed.federation.coordination.federate_core import FederateCore
from reactorfed.federation.wire.protocol import Ltc, Promise
from reactorfed.time.clock import SystemClock
from reactorfed.time.tag import FOREVER_T

from .harness import Federation
from .programs import Relay
from .test_layout import lay

MS = 1_000_000


# -- the least delay from a physical action to an output ---------------------------------
class _Paths(Reactor):
    """A physical action (min_delay ``pd``) reaching ``out`` three ways: through logical
    actions of 10 ms, ``short`` and 5 ms."""

    out = Output(int)
    a = PhysicalAction(int, min_delay="pd")
    b = LogicalAction(int, min_delay=ms(10))
    c = LogicalAction(int, min_delay="short")
    d = LogicalAction(int, min_delay=ms(5))

    def __init__(self, pd: int = 0, short: int = 0) -> None:
        self.pd = pd
        self.short = short

    @reaction(triggers=[a], effects=[b, c, d])
    def fire(self, a: Any, b: Any, c: Any, d: Any) -> None:
        pass

    @reaction(triggers=[b, c, d], effects=[out])
    def forward(self, b: Any, c: Any, d: Any, out: Any) -> None:
        pass


class _Sink(Reactor):
    inp = Input(int)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        pass


class _ParallelPaths(Reactor):
    def __init__(self, pd: int = 0, short: int = 0) -> None:
        self.r = _Paths(pd=pd, short=short)
        self.p = _Sink()
        self.connect(self.r.out, self.p.inp)


class _Inner(Reactor):
    """A physical action of 2 ms in a contained reactor, then an ``after`` of 3 ms on
    the way out of the federate."""

    out = Output(int)

    def __init__(self) -> None:
        self.src = _Source()
        self.relay = Relay()
        self.connect(self.src.out, self.relay.inp, after=ms(3))
        self.connect(self.relay.out, self.out)


class _Source(Reactor):
    out = Output(int)
    a = PhysicalAction(int, min_delay=ms(2))
    t = Timer(0)

    @reaction(triggers=[a], effects=[out])
    def fwd(self, a: Any, out: Any) -> None:
        pass


class _Nested(Reactor):
    def __init__(self) -> None:
        self.r = _Inner()
        self.p = _Sink()
        self.connect(self.r.out, self.p.inp)


class _Unreached(Reactor):
    """Its physical action reaches no output (a timer drives the output)."""

    out = Output(int)
    a = PhysicalAction(int)
    t = Timer(0, ms(10))

    @reaction(triggers=[a])
    def seen(self, a: Any) -> None:
        pass

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        pass


class _NoPath(Reactor):
    def __init__(self) -> None:
        self.r = _Unreached()
        self.p = _Sink()
        self.connect(self.r.out, self.p.inp)


class _Forwarder(Reactor):
    """Between a physical link (``~>`` after 4 ms) and a coordinated one."""

    def __init__(self) -> None:
        self.a = Relay()
        self.b = Relay()
        self.c = _Sink()
        self.connect(self.a.out, self.b.inp, physical=True, after=ms(4))
        self.connect(self.b.out, self.c.inp)


def test_the_least_delay_over_parallel_paths() -> None:
    assert physical_output_delay(assemble(_ParallelPaths(), "r")) == 0  # through c: microsteps only
    assert physical_output_delay(assemble(_ParallelPaths(short=ms(7)), "r")) == ms(5)  # through d
    assert physical_output_delay(assemble(_ParallelPaths(pd=ms(1), short=ms(7)), "r")) == ms(6)
    assert physical_output_delay(assemble(_ParallelPaths(), "p")) is None  # no physical action, no output


def test_the_delay_counts_contained_reactors_and_connection_delays() -> None:
    assert physical_output_delay(assemble(_Nested(), "r")) == ms(5)


def test_no_path_from_a_physical_action_to_an_output() -> None:
    assert physical_output_delay(assemble(_NoPath(), "r")) is None
    assert physical_output_delay(assemble(_NoPath())) is None  # not a federate


def test_an_arrival_on_a_physical_link_counts_as_a_physical_action() -> None:
    assert physical_output_delay(assemble(_Forwarder(), "b")) == ms(4)
    assert physical_output_delay(assemble(_Forwarder(), "a")) is None  # its only output is physical


# -- the bound in the core's reports and promises -----------------------------------------
START = 1_000 * MS


def _core(delay: int, interval: int = 10 * MS) -> FederateCore:
    c = FederateCore(lay(2, (0, 1, None)), 0, fast=False)
    c.begin(START)
    c.reports.bound_by_clock(delay, interval)
    return c


def _take(c: FederateCore) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    out = list(c.outbox)
    c.outbox.clear()
    return [m.tag for m in out if isinstance(m, Promise)], [m.net for m in out if isinstance(m, Ltc)]


def test_reports_and_promises_go_no_further_than_physical_time() -> None:
    c = _core(ms(5))
    # Its next event is the stop, far ahead: it promises physical time + 5 ms, on the grid.
    c.completed((START, 0), None, (START + 1_000 * MS, 0), START + 23 * MS)
    promised, nets = _take(c)
    assert promised == [(START + 20 * MS, 0)]  # 23 + 5 = 28 ms, on the 10 ms grid
    assert nets == [(START + 20 * MS, 0)]
    assert c.reports.floor == START + 23 * MS  # the scheduler stamps no physical action before it
    # A queued event before the bound is what it reports.
    c.completed((START + 30 * MS, 0), (START + 31 * MS, 0), FOREVER_T, START + 40 * MS)
    promised, _ = _take(c)
    assert promised == [(START + 31 * MS, 0)]


def test_waiting_renews_the_bound_once_an_interval() -> None:
    c = _core(0)
    c.completed((START, 0), None, FOREVER_T, START + 1 * MS)
    assert _take(c)[0] == [(START, 1)]  # (the bound is before the next tag: the tag after the last)
    for now in (3, 7, 9):
        c.reports.waiting(None, FOREVER_T, START + now * MS)
        assert _take(c)[0] == []  # on the same interval: no news
    c.reports.waiting(None, FOREVER_T, START + 12 * MS)
    assert _take(c)[0] == [(START + 10 * MS, 0)]
    c.reports.waiting(None, FOREVER_T, START + 35 * MS)
    assert _take(c)[0] == [(START + 30 * MS, 0)]
    c.reports.waiting((START + 32 * MS, 0), FOREVER_T, START + 60 * MS)  # an event queued meanwhile
    assert _take(c)[0] == [(START + 32 * MS, 0)]


def test_a_federate_without_physical_paths_reports_its_next_event() -> None:
    c = FederateCore(lay(2, (0, 1, None)), 0, fast=False)
    c.begin(START)
    c.completed((START, 0), None, (START + 1_000 * MS, 0), START + 23 * MS)
    assert _take(c)[0] == [(START + 1_000 * MS, 0)]
    sink = FederateCore(lay(2, (0, 1, None)), 1, fast=False)
    sink.reports.bound_by_clock(0, 10 * MS)
    assert sink.reports.by_clock is None  # no downstream peer: nobody waits on its promises


def test_the_advance_interval_must_be_a_whole_millisecond_or_more() -> None:
    with pytest.raises(ValueError, match="advance_message_interval_ns must be at least 1 ms"):
        Federation(_ParallelPaths).config(advance_message_interval_ns=500_000)


# -- end to end: an event stamped by the clock never comes before a promise ----------------
class _Stamped(Reactor):
    """Records each input's and each tick's tag (elapsed, microstep), in processing order."""

    inp = Input(int)
    t = Timer(0, ms(50))

    def __init__(self) -> None:
        self.seen: list[tuple[str, tuple[int, int]]] = []

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.seen.append(("tick", (self.elapsed(), self.tag()[1])))

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.seen.append(("in", (self.elapsed(), self.tag()[1])))


class _BusySensor(Reactor):
    """At 100 ms a reaction starts a thread that schedules the physical action, and is busy
    for 200 ms: the event waits in the inbox while the tag completes."""

    out = Output(int)
    a = PhysicalAction(int)
    t = Timer(ms(100))

    @reaction(triggers=[t])
    def busy(self) -> None:
        threading.Thread(target=self.a.schedule, kwargs={"value": 1}, daemon=True).start()
        time.sleep(0.2)

    @reaction(triggers=[a], effects=[out])
    def fwd(self, a: Any, out: Any) -> None:
        out.set(a.get())


class _HeldSensor(Reactor):
    """At start a thread named ``held`` sleeps 200 ms, then schedules the physical action
    (its clock stalls after reading: see _HeldClock)."""

    out = Output(int)
    a = PhysicalAction(int)

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        def later() -> None:
            time.sleep(0.2)
            self.a.schedule(value=1)

        threading.Thread(target=later, name="held", daemon=True).start()

    @reaction(triggers=[a], effects=[out])
    def fwd(self, a: Any, out: Any) -> None:
        out.set(a.get())


class _HeldClock(SystemClock):
    """The system clock, but a read on the thread named ``held`` returns 150 ms late: the
    thread is held up between reading the clock and queuing the event (as on a loaded
    machine), while the federate goes on promising as physical time passes."""

    def now(self) -> int:
        t = super().now()
        if threading.current_thread().name == "held":
            time.sleep(0.15)
        return t


def _run(sensor: type[Reactor], clock: SystemClock) -> list[tuple[str, tuple[int, int]]]:
    class Main(Reactor):
        def __init__(self) -> None:
            self.s = sensor()
            self.p = _Stamped()
            self.connect(self.s.out, self.p.inp)

    fed = Federation(Main)
    fed.start("s", fast=False, timeout=ms(600), clock=clock)
    fed.start("p", fast=False, timeout=ms(600))
    fed.wait(30)
    assert fed.rti_error is None and not fed.errors, (fed.rti_error, fed.errors)  # no coordination violation
    seen: list[tuple[str, tuple[int, int]]] = fed.programs["p"].p.seen  # type: ignore[attr-defined]
    assert [k for k, _ in seen].count("tick") == 13, seen  # 0 to 600 ms: none held back for good
    assert [tag for _, tag in seen] == sorted(tag for _, tag in seen), seen  # in tag order
    return seen


@pytest.mark.slow
def test_an_event_scheduled_during_a_long_reaction_keeps_its_clock_reading() -> None:
    """The federate reports its next event only after placing what other threads
    scheduled: the event keeps the time the clock read (during the reaction), and the
    downstream federate waits for it rather than running past it."""
    seen = _run(_BusySensor, SystemClock())
    got = [tag for k, tag in seen if k == "in"]
    assert len(got) == 1 and ms(100) < got[0][0] < ms(300), seen


@pytest.mark.slow
def test_an_event_queued_late_comes_no_earlier_than_what_was_promised() -> None:
    """The thread read the clock at about 200 ms and queued the event 150 ms later; the
    federate had promised, meanwhile, up to about 340 ms: the event is stamped no earlier
    than the physical time of that promise, and the downstream federate, which went on to
    its ticks at 250 and 300 ms, gets it after them."""
    seen = _run(_HeldSensor, _HeldClock())
    got = [tag for k, tag in seen if k == "in"]
    assert len(got) == 1 and got[0][0] > ms(300), seen
