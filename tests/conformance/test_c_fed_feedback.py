"""Ports of LF's C-target federated feedback programs (``test/C/src/federated/FeedbackDelay*.lf``):
two coupled cycles between federates, zero-delay ones and ones with a microstep delay,
where a federate must process a tag it has no event at, to announce its outputs absent
there (reactor-c's provisional grants to upstream federates). They hung federated before
the RTI and federates followed reactor-c's two rules for that."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction, sec
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(90)


class _PhysicalPlant(Reactor):
    control = Input(float)
    sensor = Output(float)
    t = Timer(0, ms(100))

    def __init__(self, expected: int = 10) -> None:
        self.expected = expected
        self.count = 0
        self.controls: list[tuple[int, int, float]] = []

    @reaction(triggers=[t], effects=[sensor])
    def sense(self, sensor: Any) -> None:
        sensor.set(42.0)

    @reaction(triggers=[control])
    def actuate(self, control: Any) -> None:
        self.count += 1
        tag = self.elapsed_tag()
        self.controls.append((tag.time, tag.microstep, control.get()))

    @reaction(triggers=[SHUTDOWN])
    def check(self) -> None:
        assert self.count == self.expected, f"Received only {self.count} inputs."


class _Controller(Reactor):
    """FeedbackDelay.lf's Controller: the planning reaction first."""

    sensor = Input(float)
    planning = Input(float)
    control = Output(float)
    request_for_planning = Output(float)

    def __init__(self) -> None:
        self.latest_control = 0.0
        self.first = True

    @reaction(triggers=[planning])
    def plan(self, planning: Any) -> None:
        self.latest_control = planning.get()

    @reaction(triggers=[sensor], effects=[control, request_for_planning])
    def sense(self, sensor: Any, control: Any, request_for_planning: Any) -> None:
        if not self.first:
            control.set(self.latest_control)
        self.first = False
        request_for_planning.set(sensor.get())


class _ControllerSensorFirst(Reactor):
    """FeedbackDelay3.lf's Controller: the sensor reaction first."""

    sensor = Input(float)
    planning = Input(float)
    control = Output(float)
    request_for_planning = Output(float)

    def __init__(self) -> None:
        self.latest_control = 0.0
        self.first = True

    @reaction(triggers=[sensor], effects=[control, request_for_planning])
    def sense(self, sensor: Any, control: Any, request_for_planning: Any) -> None:
        if not self.first:
            control.set(self.latest_control)
        self.first = False
        request_for_planning.set(sensor.get())

    @reaction(triggers=[planning])
    def plan(self, planning: Any) -> None:
        self.latest_control = planning.get()


class _Planner(Reactor):
    request = Input(float)
    response = Output(float)

    @reaction(triggers=[request], effects=[response])
    def respond(self, request: Any, response: Any) -> None:
        time.sleep(0.01)  # LF: lf_sleep(MSEC(10)), physical time
        response.set(request.get())


class _Planner2(_Planner):
    """FeedbackDelay6.lf's Planner2: a Planner with an extra input."""

    inp = Input(int)

    @reaction(triggers=[inp], effects=[_Planner.response])
    def forward(self, inp: Any, response: Any) -> None:
        response.set(float(inp.get()))


class _Source(Reactor):
    out = Output(int)
    t = Timer(0, ms(100))

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(0)


class _FeedbackDelay(Reactor):
    """``variant``: where the microstep delay is (1: on the planner's response, entering the
    zero-delay cycle; 2: on the request, leaving it; 3: none; 4: as 2 with a second planner
    in the cycle; 6: as 2 with a source feeding the planner)."""

    def __init__(self, variant: int = 1) -> None:
        self.p = _PhysicalPlant()
        self.c = _ControllerSensorFirst() if variant == 3 else _Controller()
        self.pl = _Planner2() if variant == 6 else _Planner()
        self.connect(self.p.sensor, self.c.sensor)
        self.connect(self.c.control, self.p.control)
        if variant == 1:
            self.connect(self.c.request_for_planning, self.pl.request)
            self.connect(self.pl.response, self.c.planning, after=0)
        elif variant == 3:
            self.connect(self.c.request_for_planning, self.pl.request)
            self.connect(self.pl.response, self.c.planning)
        elif variant == 4:
            self.p2 = _Planner()
            self.connect(self.c.request_for_planning, self.pl.request, after=0)
            self.connect(self.pl.response, self.p2.request)
            self.connect(self.p2.response, self.c.planning)
        else:
            self.connect(self.c.request_for_planning, self.pl.request, after=0)
            self.connect(self.pl.response, self.c.planning)
        if variant == 6:
            self.s = _Source()
            self.connect(self.s.out, self.pl.inp)  # type: ignore[attr-defined]


def _both_ways(factory: Callable[[], Reactor], timeout: int) -> None:
    """Run in one process and federated: the plant's controls (tags and values) agree."""
    main = factory()
    run_local(main, timeout=timeout, fast=True)
    want = main.p.controls  # type: ignore[attr-defined]
    progs = run_federated(factory, timeout=timeout)
    assert progs["p"].p.controls == want  # type: ignore[attr-defined]


@lf_test("federated/FeedbackDelay.lf", federated=True, suite="C")
def test_feedback_delay() -> None:
    """A zero-delay cycle (plant, controller) coupled to one with a microstep delay on the
    connection entering it (the planner's response)."""
    _both_ways(lambda: _FeedbackDelay(1), sec(1))


@lf_test("federated/FeedbackDelay2.lf", federated=True, suite="C")
def test_feedback_delay2() -> None:
    """The microstep delay on the connection leaving the zero-delay cycle: the planner's
    response comes a microstep later, when the plant has no event of its own."""
    _both_ways(lambda: _FeedbackDelay(2), sec(1))


@lf_test("federated/FeedbackDelay3.lf", federated=True, suite="C")
def test_feedback_delay3() -> None:
    """Both cycles without delay."""
    _both_ways(lambda: _FeedbackDelay(3), sec(1))


@lf_test("federated/FeedbackDelay4.lf", federated=True, suite="C")
def test_feedback_delay4() -> None:
    """As FeedbackDelay2, with a second planner in the cycle: the provisional grant must
    reach upstream federates transitively."""
    _both_ways(lambda: _FeedbackDelay(4), sec(1))


class _Controller5(Reactor):
    """FeedbackDelay5.lf's Controller."""

    inp = Input(float)
    sensor = Input(float)
    planning = Input(float)
    control = Output(float)
    request_for_planning = Output(float)

    def __init__(self) -> None:
        self.latest_control = 0.0

    @reaction(triggers=[inp, planning])
    def plan(self, inp: Any, planning: Any) -> None:
        # LF reads planning->value whatever triggered it: the latest value, as .value here
        self.latest_control = planning.value if planning.value is not None else 0.0

    @reaction(triggers=[sensor], effects=[control, request_for_planning])
    def sense(self, sensor: Any, control: Any, request_for_planning: Any) -> None:
        control.set(self.latest_control)
        request_for_planning.set(sensor.get())


class _Planner5(Reactor):
    request = Input(float)
    response = Output(float)
    out = Output(float)
    t = Timer(0, ms(100))

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(0.0)

    @reaction(triggers=[request], effects=[response])
    def respond(self, request: Any, response: Any) -> None:
        time.sleep(0.01)
        response.set(request.get())


class _FeedbackDelay5(Reactor):
    def __init__(self) -> None:
        self.p = _PhysicalPlant()
        self.c = _Controller5()
        self.pl = _Planner5()
        self.connect(self.p.sensor, self.c.sensor)
        self.connect(self.c.request_for_planning, self.pl.request)
        self.connect(self.pl.response, self.c.planning, after=0)
        self.connect(self.c.control, self.p.control)
        self.connect(self.pl.out, self.c.inp)


@lf_test("federated/FeedbackDelay5.lf", federated=True, suite="C")
def test_feedback_delay5() -> None:
    """Two zero-delay cycles, one with a superposed microstep-delay cycle (timeout 900 ms:
    ten sensor readings, a control for each)."""
    _both_ways(_FeedbackDelay5, ms(900))


@lf_test("federated/FeedbackDelay6.lf", federated=True, suite="C")
def test_feedback_delay6() -> None:
    """As FeedbackDelay2, with a source outside the cycles feeding the planner: events
    entering the zero-delay cycle do not all come from the cycle itself."""
    _both_ways(lambda: _FeedbackDelay(6), sec(1))


class _Loop(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert inp.get() == self.count, f"Expected {self.count}. Got {inp.get()}."
        self.count += 1

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)

    @reaction(triggers=[SHUTDOWN])
    def check(self) -> None:
        assert self.count == 11, f"Expected 11 messages. Got {self.count}."


class _FeedbackDelaySimple(Reactor):
    def __init__(self) -> None:
        self.l = _Loop()
        self.connect(self.l.out, self.l.inp, after=0)


@lf_test("federated/FeedbackDelaySimple.lf", federated=True, suite="C")
def test_feedback_delay_simple() -> None:
    """One federate feeding itself a microstep later."""
    main = _FeedbackDelaySimple()
    run_local(main, timeout=sec(1), fast=True)
    assert main.l.count == 11
    progs = run_federated(_FeedbackDelaySimple, timeout=sec(1))
    assert progs["l"].l.count == 11  # type: ignore[attr-defined]
