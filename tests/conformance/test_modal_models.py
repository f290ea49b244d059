"""Ports of LF's modal-model programs (``modal_models/``, and ``ImportInstanceInMode`` with
``lib/InstanceInMode.lf``): modes, ``reset``/``history`` transitions, mode-local timers,
actions, state, contained reactors and connections (see :mod:`reactorfed.model.mode`).

LF's ``mode M { ... }`` is a ``Mode`` in the class body with what it holds in a ``with M:``
block (reactions, timers, actions, reset state), and ``with self.M:`` in ``__init__`` for
the reactors it contains and the connections it makes. Most of these programs check
themselves with ``util/TraceTesting.lf`` (ported here as :class:`TraceTesting`): the
expected trace of (time since its last reaction, then presence and value of each input)
is the original's, number for number. LF's TraceTesting does not check that the whole
trace was seen; the tests here check that too.
"""

from __future__ import annotations

from typing import Any

from reactorfed import (
    RESET,
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Mode,
    Output,
    Reactor,
    ResetState,
    Timer,
    bank,
    history,
    ms,
    reaction,
    reset,
    sec,
)
from tests.conformance.harness import lf_test, run

# -- util/TraceTesting.lf -------------------------------------------------------------------


class TraceTesting(Reactor):
    """Records or checks a trace of (delay since the previous reaction, then each event's
    presence and value)."""

    events = Input(width="events_size")

    def __init__(self, events_size: int = 0, trace: list[Any] | None = None, training: bool = False) -> None:
        self.events_size = events_size
        self.trace = list(trace or [])
        self.training = training
        self.last_reaction_time = 0
        self.trace_idx = 0
        self.recorded_events: list[Any] = []

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.last_reaction_time = self.logical_time()

    @reaction(triggers=[events])
    def check(self, events: Any) -> None:
        curr_reaction_delay = self.logical_time() - self.last_reaction_time
        if self.training:
            self.recorded_events.append(curr_reaction_delay)
        else:
            assert self.trace_idx < len(self.trace), "ERROR: Trace Error: Current execution exceeds given trace."
            trace_reaction_delay = self.trace[self.trace_idx]
            self.trace_idx += 1
            assert curr_reaction_delay == trace_reaction_delay, (
                f"ERROR: Trace Mismatch: Unexpected reaction timing. (delay: {curr_reaction_delay}, "
                f"expected: {trace_reaction_delay}) at {self.elapsed_tag()}")
        for i in range(self.events_size):
            curr_present = events[i].is_present
            curr_value = events[i].value
            if self.training:
                self.recorded_events += [curr_present, curr_value]
            else:
                trace_present = self.trace[self.trace_idx]
                trace_value = self.trace[self.trace_idx + 1]
                self.trace_idx += 2
                assert trace_present == curr_present, (
                    f"ERROR: Trace Mismatch: Unexpected event presence. (event: {i}, presence: {curr_present}, "
                    f"expected: {trace_present}) at {self.elapsed_tag()}")
                assert not curr_present or trace_value == curr_value, (
                    f"ERROR: Trace Mismatch: Unexpected event value. (event: {i}, value: {curr_value}, "
                    f"expected: {trace_value}) at {self.elapsed_tag()}")
        self.last_reaction_time = self.logical_time()

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        if self.training:
            print(f"Recorded event trace ({len(self.recorded_events)}):")
            print(self.recorded_events)


def _check_whole_trace(test: TraceTesting) -> None:
    assert test.trace_idx == len(test.trace), f"only {test.trace_idx} of the trace's {len(test.trace)} entries were seen"


class _Stepped(Reactor):
    """A main reactor with a ``stepper`` timer that sets ``modal.next``, and a TraceTesting
    reading ``outputs`` of ``modal`` (the shape of most programs here)."""

    def __init__(self, modal: type[Reactor], outputs: list[str], trace: list[Any]) -> None:
        self.modal = modal()
        self.test = TraceTesting(events_size=len(outputs), trace=trace)
        self.connect([getattr(self.modal, o) for o in outputs], self.test.events)


# -- Count3Modes.lf -----------------------------------------------------------------------


class CounterCycle(Reactor):
    next = Input(bool)
    count = Output(int)

    One = Mode(initial=True)
    Two = Mode()
    Three = Mode()

    with One:
        @reaction(triggers=[next], effects=[count, reset(Two)])
        def one(self, next: Any, count: Any, Two: Any) -> None:
            count.set(1)
            Two.set()

    with Two:
        @reaction(triggers=[next], effects=[count, reset(Three)])
        def two(self, next: Any, count: Any, Three: Any) -> None:
            count.set(2)
            Three.set()

    with Three:
        @reaction(triggers=[next], effects=[count, reset(One)])
        def three(self, next: Any, count: Any, One: Any) -> None:
            count.set(3)
            One.set()


class _Count3ModesMain(Reactor):
    stepper = Timer(0, ms(250))

    def __init__(self) -> None:
        self.counter = CounterCycle()
        self.expected_value = 1
        self.printed: list[int] = []

    @reaction(triggers=[stepper], effects=["counter.next"])
    def trigger(self, counter: Any) -> None:
        counter.next.set(True)

    @reaction(triggers=[stepper], sources=["counter.count"])
    def check(self, counter: Any) -> None:
        self.printed.append(counter.count.value)
        assert counter.count.is_present, "ERROR: Missing mode change."
        assert counter.count.value == self.expected_value, "ERROR: Wrong mode."
        self.expected_value = 1 if self.expected_value == 3 else self.expected_value + 1


@lf_test("modal_models/Count3Modes.lf")
def test_count3_modes() -> None:
    main = _Count3ModesMain()
    run(main, timeout=sec(2))
    assert main.printed == [1, 2, 3] * 3


# -- BanksCount3ModesSimple.lf ---------------------------------------------------------------


class _BanksSimpleMain(Reactor):
    stepper = Timer(0, ms(250))

    def __init__(self) -> None:
        self.counters = bank(CounterCycle, 3)
        self.test = TraceTesting(events_size=3, trace=[
            0, 1, 1, 1, 1, 1, 1,
            250000000, 1, 2, 1, 2, 1, 2,
            250000000, 1, 3, 1, 3, 1, 3,
            250000000, 1, 1, 1, 1, 1, 1,
            250000000, 1, 2, 1, 2, 1, 2,
            250000000, 1, 3, 1, 3, 1, 3,
            250000000, 1, 1, 1, 1, 1, 1,
            250000000, 1, 2, 1, 2, 1, 2,
            250000000, 1, 3, 1, 3, 1, 3,
        ])
        # (a bank is a Sequence: bank.count is Sequence.count, so the members' ports are listed)
        self.connect([m.count for m in self.counters], self.test.events)

    @reaction(triggers=[stepper], effects=["counters.next"])
    def trigger(self, counters: Any) -> None:
        for p in counters.next:
            p.set(True)


@lf_test("modal_models/BanksCount3ModesSimple.lf")
def test_banks_count3_modes_simple() -> None:
    main = _BanksSimpleMain()
    run(main, timeout=sec(2))
    _check_whole_trace(main.test)


# -- BanksCount3ModesComplex.lf --------------------------------------------------------------


class _MetaCounter(Reactor):
    next = Input(bool)
    always = Output(int, width=2)
    mode1 = Output(int, width=2)
    mode2 = Output(int, width=2)
    neverp = Output(int, width=2)

    One = Mode(initial=True)
    Two = Mode()
    Three = Mode()

    def __init__(self) -> None:
        self.outer_counters = bank(CounterCycle, 2)
        self.connect(self.next, self.outer_counters.next, broadcast=True)  # (next)+ -> outer_counters.next
        self.connect([m.count for m in self.outer_counters], self.always)  # (bank.count: Sequence.count)
        with self.One:
            self.mode1_counters = bank(CounterCycle, 2)
            self.connect(self.next, self.mode1_counters.next, broadcast=True)
            self.connect([m.count for m in self.mode1_counters], self.mode1)
        with self.Two:
            self.mode2_counters = bank(CounterCycle, 2)
            self.connect(self.next, self.mode2_counters.next, broadcast=True)
            self.connect([m.count for m in self.mode2_counters], self.mode2)
        with self.Three:
            self.mode3_counters = bank(CounterCycle, 2)
            self.connect(self.next, self.mode3_counters.next, broadcast=True)
            self.connect([m.count for m in self.mode3_counters], self.neverp)

    with One:
        t1 = Timer(ms(500), ms(250))

        @reaction(triggers=[t1], effects=[reset(Two)])
        def to_two(self, Two: Any) -> None:
            Two.set()

    with Two:
        t2 = Timer(ms(500), ms(250))

        @reaction(triggers=[t2], effects=[history(One)])
        def to_one(self, One: Any) -> None:
            One.set()


class _BanksComplexMain(Reactor):
    stepper = Timer(0, ms(250))

    def __init__(self) -> None:
        self.counters = bank(_MetaCounter, 2)
        self.test = TraceTesting(events_size=16, trace=[
            0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 3, 0, 3, 0, 3, 0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 2, 1, 2, 1, 2, 1, 2, 0, 3, 0, 3, 0, 3, 0, 3, 1, 2, 1, 2, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 3, 1, 3, 1, 3, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 2, 1, 2, 1, 2, 1, 2, 0, 1, 0, 1, 0, 1, 0, 1, 1, 2, 1, 2, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 3, 1, 3, 1, 3, 1, 3, 1, 2, 1, 2, 1, 2, 1, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 2, 0, 2, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 2, 1, 2, 1, 2, 1, 2, 0, 2, 0, 2, 0, 2, 0, 2, 1, 2, 1, 2, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 0, 2, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
            250000000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 3, 0, 3, 0, 3, 0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        ])
        c = self.counters
        self.connect([c.always, c.mode1, c.mode2, c.neverp], self.test.events)

    @reaction(triggers=[stepper], effects=["counters.next"])
    def trigger(self, counters: Any) -> None:
        for p in counters.next:
            p.set(True)


@lf_test("modal_models/BanksCount3ModesComplex.lf")
def test_banks_count3_modes_complex() -> None:
    main = _BanksComplexMain()
    run(main, timeout=sec(3))
    _check_whole_trace(main.test)


# -- ModalStateReset.lf, ModalStateResetAuto.lf, BanksModalStateReset.lf -------------------------


class ModalResetReaction(Reactor):
    """ModalStateReset.lf's Modal: mode-local state reset by RESET reactions."""

    next = Input(bool)
    mode_switch = Output(int)
    count0 = Output(int)
    count1 = Output(int)
    count2 = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    def __init__(self) -> None:
        self.counter0 = 0
        self.counter1 = 0
        self.counter2 = -2

    @reaction(triggers=[next], effects=[count0])
    def on_next(self, next: Any, count0: Any) -> None:
        count0.set(self.counter0)
        self.counter0 += 1

    with One:
        T1 = Timer(0, ms(250))

        @reaction(triggers=[RESET])
        def reset1(self) -> None:
            self.counter1 = 0

        @reaction(triggers=[T1], effects=[count1])
        def tick1(self, count1: Any) -> None:
            count1.set(self.counter1)
            self.counter1 += 1

        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            Two.set()

    with Two:
        T2 = Timer(0, ms(250))

        @reaction(triggers=[RESET])
        def reset2(self) -> None:
            self.counter2 = -2

        @reaction(triggers=[T2], effects=[count2])
        def tick2(self, count2: Any) -> None:
            count2.set(self.counter2)
            self.counter2 += 1

        @reaction(triggers=[next], effects=[history(One), mode_switch])
        def to_one(self, next: Any, One: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            One.set()


class ModalAutoReset(Reactor):
    """ModalStateResetAuto.lf's Modal: ``reset state counter2 = -2`` in mode Two."""

    next = Input(bool)
    mode_switch = Output(int)
    count0 = Output(int)
    count1 = Output(int)
    count2 = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    def __init__(self) -> None:
        self.counter0 = 0
        self.counter1 = 0

    @reaction(triggers=[next], effects=[count0])
    def on_next(self, next: Any, count0: Any) -> None:
        count0.set(self.counter0)
        self.counter0 += 1

    with One:
        T1 = Timer(0, ms(250))

        @reaction(triggers=[T1], effects=[count1])
        def tick1(self, count1: Any) -> None:
            count1.set(self.counter1)
            self.counter1 += 1

        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            Two.set()

    with Two:
        counter2 = ResetState(-2)
        T2 = Timer(0, ms(250))

        @reaction(triggers=[T2], effects=[count2])
        def tick2(self, count2: Any) -> None:
            count2.set(self.counter2)
            self.counter2 += 1

        @reaction(triggers=[next], effects=[history(One), mode_switch])
        def to_one(self, next: Any, One: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            One.set()


_STATE_RESET_TRACE = [
    0, 0, 0, 0, 0, 1, 0, 0, 0,
    250000000, 0, 0, 0, 0, 1, 1, 0, 0,
    250000000, 0, 0, 0, 0, 1, 2, 0, 0,
    250000000, 0, 0, 0, 0, 1, 3, 0, 0,
    250000000, 1, 1, 1, 0, 1, 4, 0, 0,
    0, 0, 1, 0, 0, 0, 4, 1, -2,
    250000000, 0, 1, 0, 0, 0, 4, 1, -1,
    250000000, 0, 1, 0, 0, 0, 4, 1, 0,
    250000000, 0, 1, 0, 0, 0, 4, 1, 1,
    250000000, 1, 1, 1, 1, 0, 4, 1, 2,
    250000000, 0, 1, 0, 1, 1, 5, 0, 2,
    250000000, 0, 1, 0, 1, 1, 6, 0, 2,
    250000000, 0, 1, 0, 1, 1, 7, 0, 2,
    250000000, 1, 1, 1, 2, 1, 8, 0, 2,
    0, 0, 1, 0, 2, 0, 8, 1, -2,
    250000000, 0, 1, 0, 2, 0, 8, 1, -1,
    250000000, 0, 1, 0, 2, 0, 8, 1, 0,
    250000000, 0, 1, 0, 2, 0, 8, 1, 1,
    250000000, 1, 1, 1, 3, 0, 8, 1, 2,
]
_COUNTS = ["mode_switch", "count0", "count1", "count2"]


class _StateResetMain(_Stepped):
    stepper = Timer(sec(1), sec(1))

    @reaction(triggers=[stepper], effects=["modal.next"])
    def trigger(self, modal: Any) -> None:
        modal.next.set(True)


@lf_test("modal_models/ModalStateReset.lf")
def test_modal_state_reset() -> None:
    main = _StateResetMain(ModalResetReaction, _COUNTS, _STATE_RESET_TRACE)
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)


@lf_test("modal_models/ModalStateResetAuto.lf")
def test_modal_state_reset_auto() -> None:
    main = _StateResetMain(ModalAutoReset, _COUNTS, _STATE_RESET_TRACE)
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)


class _BanksStateResetMain(Reactor):
    stepper = Timer(sec(1), sec(1))

    def __init__(self) -> None:
        self.reset1 = bank(ModalResetReaction, 2)
        self.reset2 = bank(ModalAutoReset, 2)
        self.test = TraceTesting(events_size=16, trace=[
            0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0,
            250000000, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
            250000000, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 0, 0, 0, 0,
            250000000, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 1, 3, 0, 0, 0, 0,
            250000000, 1, 1, 1, 1, 1, 0, 1, 0, 1, 4, 1, 4, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 4, 1, 4, 0, 0, 0, 0,
            0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, -2, 1, -2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, -2, 1, -2,
            250000000, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, -1, 1, -1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, -1, 1, -1,
            250000000, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, 0, 1, 0,
            250000000, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 4, 1, 1, 1, 1,
            250000000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 4, 0, 4, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 4, 0, 4, 1, 2, 1, 2,
            250000000, 0, 1, 0, 1, 0, 1, 0, 1, 1, 5, 1, 5, 0, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 1, 5, 1, 5, 0, 2, 0, 2,
            250000000, 0, 1, 0, 1, 0, 1, 0, 1, 1, 6, 1, 6, 0, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 1, 6, 1, 6, 0, 2, 0, 2,
            250000000, 0, 1, 0, 1, 0, 1, 0, 1, 1, 7, 1, 7, 0, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 1, 7, 1, 7, 0, 2, 0, 2,
            250000000, 1, 1, 1, 1, 1, 2, 1, 2, 1, 8, 1, 8, 0, 2, 0, 2, 1, 1, 1, 1, 1, 2, 1, 2, 1, 8, 1, 8, 0, 2, 0, 2,
            0, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, -2, 1, -2, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, -2, 1, -2,
            250000000, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, -1, 1, -1, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, -1, 1, -1,
            250000000, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, 0, 1, 0, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, 0, 1, 0,
            250000000, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, 1, 1, 1, 0, 1, 0, 1, 0, 2, 0, 2, 0, 8, 0, 8, 1, 1, 1, 1,
            250000000, 1, 1, 1, 1, 1, 3, 1, 3, 0, 8, 0, 8, 1, 2, 1, 2, 1, 1, 1, 1, 1, 3, 1, 3, 0, 8, 0, 8, 1, 2, 1, 2,
        ])
        r1, r2 = self.reset1, self.reset2
        self.connect([r1.mode_switch, r1.count0, r1.count1, r1.count2,
                      r2.mode_switch, r2.count0, r2.count1, r2.count2], self.test.events)

    # Trigger mode change (separately because of LF issue #1278)
    @reaction(triggers=[stepper], effects=["reset1.next"])
    def trigger1(self, reset1: Any) -> None:
        for p in reset1.next:
            p.set(True)

    @reaction(triggers=[stepper], effects=["reset2.next"])
    def trigger2(self, reset2: Any) -> None:
        for p in reset2.next:
            p.set(True)


@lf_test("modal_models/BanksModalStateReset.lf")
def test_banks_modal_state_reset() -> None:
    main = _BanksStateResetMain()
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)


# -- ModalTimers.lf -------------------------------------------------------------------------


class _TimersModal(Reactor):
    next = Input(bool)
    mode_switch = Output(int)
    timer1 = Output(int)
    timer2 = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    def __init__(self) -> None:
        self.printed: list[str] = []

    with One:
        T1 = Timer(0, ms(750))

        @reaction(triggers=[T1], effects=[timer1])
        def tick1(self, timer1: Any) -> None:
            self.printed.append(f"T1: at tag ({self.elapsed()}, {self.microstep()})")
            timer1.set(1)

        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            Two.set()

    with Two:
        T2 = Timer(0, ms(750))

        @reaction(triggers=[T2], effects=[timer2])
        def tick2(self, timer2: Any) -> None:
            self.printed.append(f"T2: at tag ({self.elapsed()}, {self.microstep()})")
            timer2.set(1)

        @reaction(triggers=[next], effects=[history(One), mode_switch])
        def to_one(self, next: Any, One: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            One.set()


@lf_test("modal_models/ModalTimers.lf")
def test_modal_timers() -> None:
    main = _StateResetMain(_TimersModal, ["mode_switch", "timer1", "timer2"], [
        0, 0, 0, 1, 1, 0, 0,
        750000000, 0, 0, 1, 1, 0, 0,
        250000000, 1, 1, 0, 1, 0, 0,
        0, 0, 1, 0, 1, 1, 1,
        750000000, 0, 1, 0, 1, 1, 1,
        250000000, 1, 1, 0, 1, 0, 1,
        500000000, 0, 1, 1, 1, 0, 1,
        500000000, 1, 1, 0, 1, 0, 1,
        0, 0, 1, 0, 1, 1, 1,
        750000000, 0, 1, 0, 1, 1, 1,
        250000000, 1, 1, 0, 1, 0, 1,
    ])
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)
    assert main.modal.printed[:4] == ["T1: at tag (0, 0)", f"T1: at tag ({ms(750)}, 0)", f"T2: at tag ({sec(1)}, 1)",
                                      f"T2: at tag ({ms(1750)}, 0)"]


# -- ModalActions.lf ------------------------------------------------------------------------


class _ActionsModal(Reactor):
    next = Input(bool)
    mode_switch = Output(int)
    action1_sched = Output(int)
    action1_exec = Output(int)
    action2_sched = Output(int)
    action2_exec = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    with One:
        T1 = Timer(0, ms(750))
        delay1 = LogicalAction(min_delay=ms(500))

        @reaction(triggers=[T1], effects=[delay1, action1_sched])
        def sched1(self, delay1: Any, action1_sched: Any) -> None:
            delay1.schedule(delay=0)
            action1_sched.set(1)

        @reaction(triggers=[delay1], effects=[action1_exec])
        def exec1(self, delay1: Any, action1_exec: Any) -> None:
            action1_exec.set(1)

        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            Two.set()

    with Two:
        T2 = Timer(0, ms(750))
        delay2 = LogicalAction(min_delay=ms(500))

        @reaction(triggers=[T2], effects=[delay2, action2_sched])
        def sched2(self, delay2: Any, action2_sched: Any) -> None:
            delay2.schedule(delay=0)
            action2_sched.set(1)

        @reaction(triggers=[delay2], effects=[action2_exec])
        def exec2(self, delay2: Any, action2_exec: Any) -> None:
            action2_exec.set(1)

        @reaction(triggers=[next], effects=[history(One), mode_switch])
        def to_one(self, next: Any, One: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            One.set()


# ModalActions.lf and ModalAfter.lf expect the same trace.
_DELAYS_TRACE = [
    0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0,
    500000000, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0,
    250000000, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0,
    250000000, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0,
    0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0,
    500000000, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1,
    250000000, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1,
    250000000, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1,
    250000000, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1,
    250000000, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1,
    500000000, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1,
    0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1,
    500000000, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1,
    250000000, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1,
    250000000, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1,
]


@lf_test("modal_models/ModalActions.lf")
def test_modal_actions() -> None:
    main = _StateResetMain(_ActionsModal, ["mode_switch", "action1_sched", "action1_exec", "action2_sched",
                                           "action2_exec"], _DELAYS_TRACE)
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)


# -- ModalAfter.lf --------------------------------------------------------------------------


class _Producer(Reactor):
    product = Output(int)
    t = Timer(0, ms(750))

    def __init__(self, mode_id: int = 0) -> None:
        self.mode_id = mode_id

    @reaction(triggers=[t], effects=[product])
    def produce(self, product: Any) -> None:
        product.set(1)


class _Consumer(Reactor):
    product = Input(int)
    report = Output(int)

    def __init__(self, mode_id: int = 0) -> None:
        self.mode_id = mode_id

    @reaction(triggers=[product], effects=[report])
    def consume(self, product: Any, report: Any) -> None:
        report.set(1)


class _AfterModal(Reactor):
    next = Input(bool)
    mode_switch = Output(int)
    produced1 = Output(int)
    consumed1 = Output(int)
    produced2 = Output(int)
    consumed2 = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    def __init__(self) -> None:
        with self.One:
            self.producer1 = _Producer(mode_id=1)
            self.consumer1 = _Consumer(mode_id=1)
            self.connect(self.producer1.product, self.produced1)
            self.connect(self.producer1.product, self.consumer1.product, after=ms(500))
            self.connect(self.consumer1.report, self.consumed1)
        with self.Two:
            self.producer2 = _Producer(mode_id=2)
            self.consumer2 = _Consumer(mode_id=2)
            self.connect(self.producer2.product, self.produced2)
            self.connect(self.producer2.product, self.consumer2.product, after=ms(500))
            self.connect(self.consumer2.report, self.consumed2)

    with One:
        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            Two.set()

    with Two:
        @reaction(triggers=[next], effects=[history(One), mode_switch])
        def to_one(self, next: Any, One: Any, mode_switch: Any) -> None:
            mode_switch.set(1)
            One.set()


@lf_test("modal_models/ModalAfter.lf")
def test_modal_after() -> None:
    main = _StateResetMain(_AfterModal, ["mode_switch", "produced1", "consumed1", "produced2", "consumed2"],
                           _DELAYS_TRACE)
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)


# -- ModalStartupShutdown.lf ------------------------------------------------------------------


class _StartupShutdownModal(Reactor):
    next = Input(bool)
    mode_switch = Output(int)
    startup1 = Output(int)
    startup2 = Output(int)
    shutdown2 = Output(int)
    shutdown3 = Output(int)
    startup4 = Output(int)
    reset4 = Output(int)
    shutdown4 = Output(int)
    startup5 = Output(int)
    reset5 = Output(int)
    shutdown5 = Output(int)

    One = Mode(initial=True)
    Two = Mode()
    Three = Mode()
    Four = Mode()
    Five = Mode()  # unreachable

    def __init__(self) -> None:
        self.printed: list[str] = []

    def _log(self, what: str) -> None:
        self.printed.append(f"{what} at ({self.elapsed()}, {self.microstep()}).")

    with One:
        @reaction(triggers=[STARTUP], effects=[startup1])
        def on_startup1(self, startup1: Any) -> None:
            self._log("Startup 1")
            startup1.set(1)

        @reaction(triggers=[next], effects=[reset(Two), mode_switch])
        def to_two(self, next: Any, Two: Any, mode_switch: Any) -> None:
            mode_switch.set(2)
            Two.set()

    with Two:
        @reaction(triggers=[STARTUP], effects=[startup2])
        def on_startup2(self, startup2: Any) -> None:
            self._log("Startup 2")
            startup2.set(1)

        @reaction(triggers=[next], effects=[reset(Three), mode_switch])
        def to_three(self, next: Any, Three: Any, mode_switch: Any) -> None:
            mode_switch.set(3)
            Three.set()

        @reaction(triggers=[SHUTDOWN], effects=[shutdown2])
        def on_shutdown2(self, shutdown2: Any) -> None:
            self._log("Shutdown 2")
            shutdown2.set(1)

    with Three:
        @reaction(triggers=[next], effects=[reset(Four), mode_switch])
        def to_four(self, next: Any, Four: Any, mode_switch: Any) -> None:
            mode_switch.set(4)
            Four.set()

        @reaction(triggers=[SHUTDOWN], effects=[shutdown3])
        def on_shutdown3(self, shutdown3: Any) -> None:
            self._log("Shutdown 3")
            shutdown3.set(1)

    with Four:
        @reaction(triggers=[STARTUP], effects=[startup4])
        def on_startup4(self, startup4: Any) -> None:
            self._log("Startup 4")
            startup4.set(1)

        @reaction(triggers=[RESET], effects=[reset4])
        def on_reset4(self, reset4: Any) -> None:
            self._log("Reset 4")
            reset4.set(1)

        @reaction(triggers=[next], effects=[reset(Four), mode_switch])
        def again_four(self, next: Any, Four: Any, mode_switch: Any) -> None:
            mode_switch.set(4)
            Four.set()

        @reaction(triggers=[SHUTDOWN], effects=[shutdown4])
        def on_shutdown4(self, shutdown4: Any) -> None:
            self._log("Shutdown 4")
            shutdown4.set(1)

    with Five:
        @reaction(triggers=[STARTUP], effects=[startup5])
        def on_startup5(self, startup5: Any) -> None:
            startup5.set(1)

        @reaction(triggers=[RESET], effects=[reset5])
        def on_reset5(self, reset5: Any) -> None:
            reset5.set(1)

        @reaction(triggers=[SHUTDOWN], effects=[shutdown5])
        def on_shutdown5(self, shutdown5: Any) -> None:
            shutdown5.set(1)


class _StartupShutdownMain(_Stepped):
    stepper = Timer(ms(500), ms(500))

    @reaction(triggers=[stepper], effects=["modal.next"])
    def trigger(self, modal: Any) -> None:
        modal.next.set(True)


@lf_test("modal_models/ModalStartupShutdown.lf")
def test_modal_startup_shutdown() -> None:
    main = _StartupShutdownMain(_StartupShutdownModal, [
        "mode_switch", "startup1", "startup2", "shutdown2", "shutdown3", "startup4", "reset4", "shutdown4",
        "startup5", "reset5", "shutdown5"], [
        0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 2, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 3, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 4, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 4, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 4, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 4, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 4, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 4, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        500000000, 1, 4, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    ])
    run(main, timeout=ms(3000))
    _check_whole_trace(main.test)
    assert main.modal.printed[0] == "Startup 1 at (0, 0)."
    assert main.modal.printed[-3:] == [f"Shutdown {i} at ({sec(3)}, 0)." for i in (2, 3, 4)]


# -- ConvertCaseTest.lf ---------------------------------------------------------------------


class _Converter(Reactor):
    raw = Input(str)
    converted = Output(str)

    Upper = Mode(initial=True)
    Lower = Mode()

    with Upper:
        @reaction(triggers=[raw], effects=[converted, reset(Lower)])
        def upper(self, raw: Any, converted: Any, Lower: Any) -> None:
            character = raw.value.upper()
            converted.set(character)
            if character == " ":
                Lower.set()

    with Lower:
        @reaction(triggers=[raw], effects=[converted, reset(Upper)])
        def lower(self, raw: Any, converted: Any, Upper: Any) -> None:
            character = raw.value.lower()
            converted.set(character)
            if character == " ":
                Upper.set()


class _ResetProcessor(Reactor):
    discard = Input(bool)
    character = Input(str)
    converted = Output(str)

    Converting = Mode(initial=True)
    Discarding = Mode()

    def __init__(self) -> None:
        with self.Converting:
            self.converter = _Converter()
            self.connect(self.character, self.converter.raw)
            self.connect(self.converter.converted, self.converted)

    with Converting:
        @reaction(triggers=[discard], effects=[reset(Discarding)])
        def to_discarding(self, discard: Any, Discarding: Any) -> None:
            Discarding.set()

    with Discarding:
        @reaction(triggers=[character], effects=[converted])
        def blank(self, character: Any, converted: Any) -> None:
            converted.set("_")

        @reaction(triggers=[character], effects=[reset(Converting)])
        def back(self, character: Any, Converting: Any) -> None:
            Converting.set()


class _HistoryProcessor(Reactor):
    discard = Input(bool)
    character = Input(str)
    converted = Output(str)

    Converting = Mode(initial=True)
    Discarding = Mode()

    def __init__(self) -> None:
        with self.Converting:
            self.converter = _Converter()
            self.connect(self.character, self.converter.raw)
            self.connect(self.converter.converted, self.converted)

    with Converting:
        @reaction(triggers=[discard], effects=[reset(Discarding)])
        def to_discarding(self, discard: Any, Discarding: Any) -> None:
            Discarding.set()

    with Discarding:
        @reaction(triggers=[character], effects=[converted])
        def blank(self, character: Any, converted: Any) -> None:
            converted.set("_")

        @reaction(triggers=[character], effects=[history(Converting)])
        def back(self, character: Any, Converting: Any) -> None:
            Converting.set()


class _InputFeeder(Reactor):
    character = Output(str)
    t = Timer(0, ms(250))

    def __init__(self, message: str = "") -> None:
        self.message = message
        self.idx = 0

    @reaction(triggers=[t], effects=[character])
    def feed(self, character: Any) -> None:
        if self.idx < len(self.message):
            character.set(self.message[self.idx])
            self.idx += 1


class _ConvertCaseMain(Reactor):
    stepper = Timer(ms(500), sec(1))

    def __init__(self) -> None:
        self.feeder = _InputFeeder(message="Hello World!")
        self.reset_processor = _ResetProcessor()
        self.history_processor = _HistoryProcessor()
        self.connect(self.feeder.character, self.reset_processor.character)
        self.connect(self.feeder.character, self.history_processor.character)
        self.test = TraceTesting(events_size=2, trace=[
            0, True, "H", True, "H",
            250000000, True, "E", True, "E",
            250000000, True, "L", True, "L",
            250000000, True, "_", True, "_",
            250000000, True, "O", True, "O",
            250000000, True, " ", True, " ",
            250000000, True, "w", True, "w",
            250000000, True, "_", True, "_",
            250000000, True, "R", True, "r",
            250000000, True, "L", True, "l",
            250000000, True, "D", True, "d",
            250000000, True, "_", True, "_",
        ])
        self.connect([self.reset_processor.converted, self.history_processor.converted], self.test.events)
        self.printed: list[str] = []

    @reaction(triggers=[stepper], effects=["reset_processor.discard", "history_processor.discard"])
    def discard(self, reset_processor: Any, history_processor: Any) -> None:
        reset_processor.discard.set(True)
        history_processor.discard.set(True)

    @reaction(triggers=["reset_processor.converted"])
    def show_reset(self, reset_processor: Any) -> None:
        self.printed.append(f"Reset: {reset_processor.converted.value}")

    @reaction(triggers=["history_processor.converted"])
    def show_history(self, history_processor: Any) -> None:
        self.printed.append(f"History: {history_processor.converted.value}")


@lf_test("modal_models/ConvertCaseTest.lf")
def test_convert_case() -> None:
    main = _ConvertCaseMain()
    run(main, timeout=sec(4))
    _check_whole_trace(main.test)
    assert "".join(p[-1] for p in main.printed if p.startswith("History")) == "HEL_O w_rld_"


# -- ModalCycleBreaker.lf -------------------------------------------------------------------


class _CycleModal(Reactor):
    in1 = Input(int)
    in2 = Input(int)
    out = Output(int)

    # Declaring the reaction to in2 before in1 would be a cycle without the modes
    Two = Mode()
    One = Mode(initial=True)

    with Two:
        wait = Timer(ms(150), sec(1))

        @reaction(triggers=[in2])
        def ignore(self, in2: Any) -> None:
            pass

        @reaction(triggers=[wait], effects=[reset(One)])
        def to_one(self, One: Any) -> None:
            One.set()

    with One:
        @reaction(triggers=[in1], effects=[out])
        def forward(self, in1: Any, out: Any) -> None:
            out.set(in1.value)

        @reaction(triggers=[in1], effects=[reset(Two)])
        def maybe_two(self, in1: Any, Two: Any) -> None:
            if in1.value % 5 == 4:
                Two.set()


class _Counter(Reactor):
    value = Output(int)
    t = Timer(0, "period")

    def __init__(self, period: int = sec(1)) -> None:
        self.period = period
        self.curval = 0

    @reaction(triggers=[t], effects=[value])
    def count(self, value: Any) -> None:
        value.set(self.curval)
        self.curval += 1


class _CycleBreakerMain(Reactor):
    def __init__(self) -> None:
        self.counter = _Counter(period=ms(100))
        self.modal = _CycleModal()
        self.test = TraceTesting(events_size=1, trace=[
            0, 1, 0,
            100000000, 1, 1,
            100000000, 1, 2,
            100000000, 1, 3,
            100000000, 1, 4,
            200000000, 1, 6,
            100000000, 1, 7,
            100000000, 1, 8,
            100000000, 1, 9,
        ])
        self.connect(self.counter.value, self.modal.in1)
        self.connect(self.modal.out, self.modal.in2)
        self.connect(self.modal.out, self.test.events)
        self.printed: list[int] = []

    @reaction(triggers=["modal.out"])
    def show(self, modal: Any) -> None:
        self.printed.append(modal.out.value)


@lf_test("modal_models/ModalCycleBreaker.lf")
def test_modal_cycle_breaker() -> None:
    main = _CycleBreakerMain()
    run(main, timeout=sec(1))
    _check_whole_trace(main.test)
    assert main.printed == [0, 1, 2, 3, 4, 6, 7, 8, 9]


# -- ModalNestedReactions.lf ------------------------------------------------------------------


class _Forward(Reactor):
    inp = Input(bool)
    out = Output(bool)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.value)


class _NestedCounterCycle(Reactor):
    next = Input(bool)
    count = Output(int)
    only_in_two = Output(bool)
    neverp = Output(bool)

    One = Mode(initial=True)
    Two = Mode()
    Three = Mode()

    def __init__(self) -> None:
        with self.Two:
            self.fwd = _Forward()
            self.connect(self.next, self.fwd.inp)
            self.connect(self.fwd.out, self.only_in_two)

    with One:
        @reaction(triggers=[next], effects=[count, reset(Two)])
        def one(self, next: Any, count: Any, Two: Any) -> None:
            count.set(1)
            Two.set()

    with Two:
        @reaction(triggers=[next], effects=[count, reset(One)])
        def two(self, next: Any, count: Any, One: Any) -> None:
            count.set(2)
            One.set()

    with Three:
        @reaction(triggers=[next], effects=[neverp])
        def never(self, next: Any, neverp: Any) -> None:
            neverp.set(True)


class _NestedReactionsMain(Reactor):
    stepper = Timer(0, ms(250))

    def __init__(self) -> None:
        self.counter = _NestedCounterCycle()
        self.printed: list[int] = []

    @reaction(triggers=[stepper], effects=["counter.next"])
    def trigger(self, counter: Any) -> None:
        counter.next.set(True)

    @reaction(triggers=[stepper], sources=["counter.count", "counter.only_in_two"])
    def check(self, counter: Any) -> None:
        self.printed.append(counter.count.value)
        assert counter.count.is_present, "ERROR: Missing mode change."
        assert not (counter.only_in_two.is_present and counter.count.value != 2), (
            "ERROR: Indirectly nested reaction was not properly deactivated.")
        assert counter.only_in_two.is_present or counter.count.value != 2, (
            "ERROR: Missing output from indirectly nested reaction.")

    @reaction(triggers=["counter.neverp"])
    def never(self, counter: Any) -> None:
        raise AssertionError("ERROR: Detected output from unreachable mode.")


@lf_test("modal_models/ModalNestedReactions.lf")
def test_modal_nested_reactions() -> None:
    main = _NestedReactionsMain()
    run(main, timeout=sec(2))
    assert main.printed == [1, 2] * 4 + [1]


# -- ModalMultiport.lf, ModalMultiportBank.lf ----------------------------------------------------


class _Destination(Reactor):
    req = Input(int, width="n_inputs")
    rsp = Output(int, width="n_inputs")

    def __init__(self, n_inputs: int = 2) -> None:
        self.n_inputs = n_inputs
        self.served: list[int] = []

    @reaction(triggers=[req], effects=[rsp])
    def respond(self, req: Any, rsp: Any) -> None:
        self.served.append(self.elapsed())
        for n in range(self.n_inputs):
            if req[n].is_present:
                rsp[n].set(req[n].value)


class _Source(Reactor):
    req = Output(int, width="n_ports")
    rsp = Input(int, width="n_ports")
    t = Timer(0, ms(1))

    def __init__(self, n_ports: int = 2) -> None:
        self.n_ports = n_ports
        self.received: list[list[int]] = []

    @reaction(triggers=[t], effects=[req])
    def request(self, req: Any) -> None:
        for n in range(self.n_ports):
            req[n].set(n)

    @reaction(triggers=[rsp])
    def check(self, rsp: Any) -> None:
        self.received.append([rsp[n].value for n in range(self.n_ports)])
        for n in range(self.n_ports):
            assert rsp[n].value == n, f"ERROR: Expected {n}"


class _Selector(Reactor):
    in_req = Input(int, width="n_ports")
    out_rsp = Output(int, width="n_ports")

    DST_1 = Mode(initial=True)
    DST_2 = Mode()

    def __init__(self, n_ports: int = 2, n_dest: int | None = None) -> None:
        self.n_ports = n_ports
        with self.DST_1:  # LF: dst1 = new Destination(), or new[n_dest] Destination()
            self.dst1 = _Destination() if n_dest is None else bank(_Destination, n_dest)
            self.connect(self.in_req, self.dst1.req)
            self.connect(self.dst1.rsp, self.out_rsp)
        with self.DST_2:
            self.dst2 = _Destination() if n_dest is None else bank(_Destination, n_dest)
            self.connect(self.in_req, self.dst2.req)
            self.connect(self.dst2.rsp, self.out_rsp)

    with DST_1:
        @reaction(triggers=[STARTUP], effects=[reset(DST_2)])
        def switch(self, DST_2: Any) -> None:
            DST_2.set()


class _MultiportMain(Reactor):
    def __init__(self, n_ports: int, n_dest: int | None) -> None:
        self.src = _Source(n_ports=n_ports)
        self.sel = _Selector(n_ports=n_ports, n_dest=n_dest)
        self.connect(self.src.req, self.sel.in_req)
        self.connect(self.sel.out_rsp, self.src.rsp)


@lf_test("modal_models/ModalMultiport.lf")
def test_modal_multiport() -> None:
    main = _MultiportMain(n_ports=2, n_dest=None)
    run(main, timeout=ms(1))
    assert main.src.received == [[0, 1], [0, 1]]
    assert (main.sel.dst1.served, main.sel.dst2.served) == ([0], [ms(1)])  # DST_2 from the next tag on


@lf_test("modal_models/ModalMultiportBank.lf")
def test_modal_multiport_bank() -> None:
    main = _MultiportMain(n_ports=4, n_dest=2)
    run(main, timeout=ms(1))
    assert main.src.received == [[0, 1, 2, 3], [0, 1, 2, 3]]
    assert [d.served for d in (*main.sel.dst1, *main.sel.dst2)] == [[0], [0], [ms(1)], [ms(1)]]


# -- MultipleOutputFeeder_2Connections.lf, MultipleOutputFeeder_ReactionConnections.lf ------------


class _ResetCounter(Reactor):
    value = Output(int)
    t = Timer(0, "period")
    curval = ResetState(0)  # LF: reset state curval = 0

    def __init__(self, period: int = sec(1)) -> None:
        self.period = period

    @reaction(triggers=[t], effects=[value])
    def count(self, value: Any) -> None:
        value.set(self.curval)
        self.curval += 1


class _FeederModal(Reactor):
    """Both programs' Modal: in mode Two, ``count`` is fed by a connection
    (``by_reaction=False``) or by a reaction (``True``)."""

    next = Input(bool)
    count = Output(int)

    One = Mode(initial=True)
    Two = Mode()

    def __init__(self, by_reaction: bool = False) -> None:
        with self.One:
            self.counter1 = _ResetCounter(period=ms(250))
            self.connect(self.counter1.value, self.count)
        with self.Two:
            self.counter2 = _ResetCounter(period=ms(100))
            if not by_reaction:
                self.connect(self.counter2.value, self.count)

    with One:
        @reaction(triggers=[next], effects=[reset(Two)])
        def to_two(self, next: Any, Two: Any) -> None:
            Two.set()

    with Two:
        @reaction(triggers=[next], effects=[history(One)])
        def to_one(self, next: Any, One: Any) -> None:
            One.set()


class _FeederByReaction(_FeederModal):
    def __init__(self) -> None:
        super().__init__(by_reaction=True)

    with _FeederModal.Two:
        @reaction(triggers=["counter2.value"], effects=[_FeederModal.count])
        def times_ten(self, counter2: Any, count: Any) -> None:
            count.set(counter2.value.value * 10)


class _FeederMain(Reactor):
    stepper = Timer(ms(500), ms(500))

    def __init__(self, modal: type[Reactor], scale: int) -> None:
        self.modal = modal()
        s = scale
        self.test = TraceTesting(events_size=1, trace=[
            0, 1, 0,
            250000000, 1, 1,
            250000000, 1, 2,
            0, 1, 0,
            100000000, 1, 1 * s,
            100000000, 1, 2 * s,
            100000000, 1, 3 * s,
            100000000, 1, 4 * s,
            100000000, 1, 5 * s,
            250000000, 1, 3,
            250000000, 1, 4,
            0, 1, 0,
            100000000, 1, 1 * s,
            100000000, 1, 2 * s,
            100000000, 1, 3 * s,
            100000000, 1, 4 * s,
            100000000, 1, 5 * s,
        ])
        self.connect(self.modal.count, self.test.events)
        self.printed: list[int] = []

    @reaction(triggers=[stepper], effects=["modal.next"])
    def trigger(self, modal: Any) -> None:
        modal.next.set(True)

    @reaction(triggers=["modal.count"])
    def show(self, modal: Any) -> None:
        self.printed.append(modal.count.value)


@lf_test("modal_models/MultipleOutputFeeder_2Connections.lf")
def test_multiple_output_feeder_2_connections() -> None:
    main = _FeederMain(_FeederModal, 1)
    run(main, timeout=sec(2))
    _check_whole_trace(main.test)


@lf_test("modal_models/MultipleOutputFeeder_ReactionConnections.lf")
def test_multiple_output_feeder_reaction_connections() -> None:
    main = _FeederMain(_FeederByReaction, 10)
    run(main, timeout=sec(2))
    _check_whole_trace(main.test)


# -- ImportInstanceInMode.lf, lib/InstanceInMode.lf -------------------------------------------


class U(Reactor):
    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.started = self.elapsed_tag()


class B(Reactor):
    A = Mode(initial=True)

    def __init__(self) -> None:
        with self.A:
            self.u = U()

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.started = self.elapsed_tag()


class _ImportInstanceInModeMain(Reactor):
    def __init__(self) -> None:
        self.b = B()


@lf_test("ImportInstanceInMode.lf")
def test_import_instance_in_mode() -> None:
    main = _ImportInstanceInModeMain()
    run(main)
    # (the program only has to compile and run; its startup reactions run, the one in mode A too)
    assert main.b.started == main.b.u.started == (0, 0)


LEFT_OUT = {
    "modal_models/util/TraceTesting.lf": "library used by the modal_models programs; ported with them (here: TraceTesting)",
}
