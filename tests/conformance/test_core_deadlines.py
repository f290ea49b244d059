"""Ports of LF's programs on deadlines.

LF programs cause deadline violations by sleeping (``time.sleep``) in a reaction; on the
harness's virtual clock the port advances the clock by the same amount instead.

Several programs check reactor-c's deadline-based priorities: in single-threaded
execution the reaction queue is ordered by each reaction's *inferred* deadline (its own,
or the smallest deadline of a reaction downstream of it) before its level
(``lf_combine_deadline_and_level``), so that among reactions ready at one tag those
with the earliest deadline run first.
"""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    bank,
    ms,
    reaction,
    sec,
    us,
)
from tests.conformance.harness import lf_test, run

# ------------------------------------------------------------------------------- Deadline.lf


class _DSource(Reactor):
    y = Output(int)
    t = Timer(offset=0, period="period")

    def __init__(self, clock: VirtualClock, period: int = sec(3)) -> None:
        self.clock = clock
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[y])
    def send(self, y: Any) -> None:
        if self.count % 2 != 0:
            # The count variable is odd: take time to cause a deadline violation.
            self.clock.advance(ms(1500))  # time.sleep(1.5)
        y.set(self.count)
        self.count += 1


class _DDestination(Reactor):
    x = Input(int)

    def __init__(self, timeout: int = sec(1)) -> None:
        self.timeout = timeout
        self.count = 0
        self.log: list[tuple[str, int]] = []

    @reaction(triggers=[x], deadline="timeout")
    def receive(self, x: Any) -> None:
        self.log.append(("on time", x.get()))
        # The count variable is odd, so the deadline should have been violated.
        assert self.count % 2 == 0, "ERROR: Failed to detect deadline."
        self.count += 1

    @receive.deadline_handler
    def late(self, x: Any) -> None:
        self.log.append(("late", x.get()))
        # The count variable is even, so the deadline should not have been violated.
        assert self.count % 2 != 0, "ERROR: Deadline miss handler invoked without deadline violation."
        self.count += 1


class _Deadline(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.s = _DSource(clock)
        self.d = _DDestination(timeout=sec(1))
        self.connect(self.s.y, self.d.x)


@lf_test("Deadline.lf")
def test_deadline() -> None:
    clock = VirtualClock()
    main = _Deadline(clock)
    summary = run(main, timeout=sec(6), clock=clock)
    assert main.d.log == [("on time", 0), ("late", 1), ("on time", 2)]
    assert summary.deadline_misses == 1


# ------------------------------------------------------------------- DeadlineHandledAbove.lf


class _DHADeadline(Reactor):
    """DeadlineHandledAbove.lf's Deadline(threshold = 100 msec)."""

    x = Input(int)
    deadline_violation = Output(bool)

    def __init__(self, threshold: int = ms(100)) -> None:
        self.threshold = threshold

    @reaction(triggers=[x], effects=[deadline_violation], deadline="threshold")
    def on_time(self, x: Any, deadline_violation: Any) -> None:
        raise AssertionError("ERROR: Deadline violation was not detected!")

    @on_time.deadline_handler
    def late(self, x: Any, deadline_violation: Any) -> None:
        deadline_violation.set(True)


class _DeadlineHandledAbove(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.violation_detected = False
        self.d = _DHADeadline(threshold=ms(10))

    @reaction(triggers=[STARTUP], effects=["d.x"])
    def start(self, d: Any) -> None:
        self.clock.advance(ms(200))  # time.sleep(0.2)
        d.x.set(42)

    @reaction(triggers=["d.deadline_violation"])
    def handled(self, d: Any) -> None:
        if d.deadline_violation.get() is True:
            self.violation_detected = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.violation_detected is True, "FAILURE. Container did not react to deadline violation."


@lf_test("DeadlineHandledAbove.lf")
def test_deadline_handled_above() -> None:
    clock = VirtualClock()
    main = _DeadlineHandledAbove(clock)
    summary = run(main, clock=clock)
    assert main.violation_detected
    assert summary.deadline_misses == 1


# ------------------------------------------------------------ DeadlinePriority.lf, Inherited.lf


class _Global:
    """The programs' module-level ``global_cnt``."""

    def __init__(self) -> None:
        self.cnt = 0


class _NoDeadline(Reactor):
    t = Timer(offset=ms(0), period=ms(100))

    def __init__(self, g: _Global) -> None:
        self.g = g

    @reaction(triggers=[t])
    def count(self) -> None:
        self.g.cnt += 1


class _PWithDeadline(Reactor):
    t = Timer(offset=ms(0), period=ms(100))

    def __init__(self, g: _Global) -> None:
        self.g = g
        self.ran = 0

    @reaction(triggers=[t], deadline=sec(100))
    def first(self) -> None:
        assert self.g.cnt == 0, f"Deadline reaction was not executed first. cnt={self.g.cnt}"
        self.g.cnt -= 1
        self.ran += 1

    @first.deadline_handler
    def late(self) -> None:
        pass


class _DeadlinePriority(Reactor):
    def __init__(self) -> None:
        self.g = _Global()
        self.a = _NoDeadline(self.g)
        self.b = _PWithDeadline(self.g)


@lf_test("DeadlinePriority.lf")
def test_deadline_priority() -> None:
    main = _DeadlinePriority()
    run(main, timeout=sec(1))
    assert main.b.ran == 11


class _IWithDeadline(Reactor):
    t = Timer(offset=ms(0), period=ms(100))

    def __init__(self, g: _Global) -> None:
        self.g = g
        self.ran = 0

    @reaction(triggers=[t])
    def empty(self) -> None:
        pass

    @reaction(triggers=[t], deadline=sec(100))
    def second(self) -> None:
        assert self.g.cnt == 0, f"Deadline reaction was not executed first. cnt={self.g.cnt}"
        self.g.cnt -= 1
        self.ran += 1

    @second.deadline_handler
    def late(self) -> None:
        pass


class _DeadlineInherited(Reactor):
    def __init__(self) -> None:
        self.g = _Global()
        self.a = _NoDeadline(self.g)
        self.b = _IWithDeadline(self.g)


@lf_test("DeadlineInherited.lf")
def test_deadline_inherited() -> None:
    main = _DeadlineInherited()
    run(main, timeout=sec(1))
    assert main.b.ran == 11


# ----------------------------------------------------------------- DeadlineWithAfterDelay.lf


class _WADSource(Reactor):
    out = Output(int)
    t = Timer(offset=ms(0), period=ms(100))

    def __init__(self, g: _Global) -> None:
        self.g = g

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(1)
        self.g.cnt += 1


class _SinkWithDeadline(Reactor):
    inp = Input(int)

    def __init__(self, g: _Global) -> None:
        self.g = g
        self.ran = 0

    @reaction(triggers=[inp], deadline=sec(100))
    def receive(self, inp: Any) -> None:
        self.g.cnt -= 1
        assert self.g.cnt == 0, f"Deadline reaction was not executed first. cnt={self.g.cnt}"
        self.ran += 1

    @receive.deadline_handler
    def late(self, inp: Any) -> None:
        pass


class _DeadlineWithAfterDelay(Reactor):
    def __init__(self) -> None:
        self.g = _Global()
        self.a = _WADSource(self.g)
        self.b = _SinkWithDeadline(self.g)
        self.connect(self.a.out, self.b.inp, after=ms(100))


@lf_test("DeadlineWithAfterDelay.lf")
def test_deadline_with_after_delay() -> None:
    main = _DeadlineWithAfterDelay()
    run(main, timeout=sec(1))
    assert main.b.ran == 10  # 100 ms .. 1 s


# --------------------------------------------------------------------- DeadlineWithBanks.lf


class _WBBank(Reactor):
    t = Timer(offset=0, period=ms(100))
    out = Output(int)

    def __init__(self, g: _Global) -> None:
        self.g = g
        self.ran = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        exp_cnt = {0: 3, 1: 1, 2: 0, 3: 2}[self.bank_index or 0]
        assert self.g.cnt == exp_cnt, f"global_cnt={self.g.cnt} expected={exp_cnt}"
        self.g.cnt += 1
        if self.bank_index == 0:
            self.g.cnt = 0
        self.ran += 1


class _WBSink(Reactor):
    inp = Input(int)

    def __init__(self, dead: int = 0) -> None:
        self.dead = dead

    @reaction(triggers=[inp], deadline="dead")
    def receive(self, inp: Any) -> None:
        pass

    @receive.deadline_handler
    def late(self, inp: Any) -> None:
        pass


class _DeadlineWithBanks(Reactor):
    def __init__(self) -> None:
        self.g = _Global()
        self.rp = bank(_WBBank, 4, self.g)
        self.s1 = _WBSink(dead=ms(14))
        self.s2 = _WBSink(dead=ms(12))
        self.s3 = _WBSink(dead=ms(11))
        self.s4 = _WBSink(dead=ms(13))
        self.connect(self.rp.out, [self.s1.inp, self.s2.inp, self.s3.inp, self.s4.inp])


@lf_test("DeadlineWithBanks.lf")
def test_deadline_with_banks() -> None:
    main = _DeadlineWithBanks()
    run(main, timeout=ms(300))
    assert [m.ran for m in main.rp] == [4, 4, 4, 4]


# ---------------------------------------------------------------------------- DeadlineZero.lf


class _Detector(Reactor):
    trigger = Input(int)

    def __init__(self) -> None:
        self.cnt = 0

    @reaction(triggers=[trigger], deadline=ms(0))
    def detect(self, trigger: Any) -> None:
        raise AssertionError(f"ERROR: failed to detect zero-duration deadline at iteration {self.cnt}.")

    @detect.deadline_handler
    def late(self, trigger: Any) -> None:
        self.cnt += 1


class _Generator(Reactor):
    pulse = Output(int)
    t = Timer(offset=0, period=ms(100))

    @reaction(triggers=[t], effects=[pulse])
    def go(self, pulse: Any) -> None:
        pulse.set(0)


class _DeadlineZero(Reactor):
    def __init__(self) -> None:
        self.g = _Generator()
        self.d = _Detector()
        self.connect(self.g.pulse, self.d.trigger)


@lf_test("DeadlineZero.lf")
def test_deadline_zero() -> None:
    main = _DeadlineZero()
    run(main, timeout=sec(1))
    assert main.d.cnt == 11


# -- DeadlineAnytime.lf, DeadlineUpdateDecrease.lf, failing/DeadlineUpdateIncrease.lf --------
# LF's self.check_deadline(invoke_handler=True) and self.update_deadline(d) inside a
# reaction body; time.sleep(x) advances the virtual clock by x.


class _TickingClock(VirtualClock):
    """A virtual clock that moves 1 us forward at every read, so a busy loop that polls
    check_deadline() sees time pass as LF's does."""

    def now(self) -> int:
        self.advance(us(1))
        return super().now()


class _AnytimeA(Reactor):
    a = LogicalAction()

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[STARTUP], effects=[a], deadline=ms(10))
    def start(self, a: Any) -> None:
        self.i = 0
        while not self.check_deadline(True):
            pass

    @start.deadline_handler
    def start_late(self, a: Any) -> None:
        a.schedule(delay=0)

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        self.i = 42
        # Check that if there is no deadline, check_deadline() returns false.
        assert not self.check_deadline(), "ERROR: check_deadline() returned true when there is no deadline"

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.i == 42, f"ERROR: Expected 42, but got {self.i}"


class _DeadlineAnytime(Reactor):
    def __init__(self) -> None:
        self.a = _AnytimeA()


@lf_test("DeadlineAnytime.lf")
def test_deadline_anytime() -> None:
    main = _DeadlineAnytime()
    run(main, clock=_TickingClock())
    assert main.a.i == 42


class _DecreaseDeadline(Reactor):
    t = Timer(0, ms(50))

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.deadline_decreased = False
        self.violations: list[int] = []

    @reaction(triggers=[t], deadline=ms(100))
    def tick(self) -> None:
        if not self.deadline_decreased:
            self.update_deadline(ms(50))
            self.clock.advance(ms(60))  # time.sleep(0.06)
            assert self.check_deadline(), (
                "Deadline update failed. Deadline handler was not invoked on lag of 50 msec.")
            self.deadline_decreased = True
        else:
            raise AssertionError("Deadline not updated correctly.")

    @tick.deadline_handler
    def tick_late(self) -> None:
        self.violations.append(self.elapsed())
        # When the next reaction is invoked at 50 ms, the deadline handler is invoked
        # because of this sleep.
        self.clock.advance(ms(60))  # time.sleep(0.06)


class _DeadlineUpdateDecrease(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.decreaseDeadline = _DecreaseDeadline(clock)


@lf_test("DeadlineUpdateDecrease.lf")
def test_deadline_update_decrease() -> None:
    clock = VirtualClock()
    main = _DeadlineUpdateDecrease(clock)
    run(main, timeout=ms(50), clock=clock)
    assert main.decreaseDeadline.violations == [0, ms(50)]  # from check_deadline, then before 50 ms


class _IncreaseDeadline(Reactor):
    t = Timer(0, sec(1))

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.deadline_increased = False
        self.deadline_checked = False
        self.on_time: list[int] = []

    @reaction(triggers=[t], deadline=ms(200))
    def tick(self) -> None:
        if not self.deadline_increased:
            self.update_deadline(ms(500))
            self.clock.advance(ms(200))  # time.sleep(0.2)
            assert not self.check_deadline(), (
                "Deadline update failed. Deadline handler should not invoked on lag of 200 msec.")
            self.clock.advance(ms(800))  # time.sleep(0.8)
            assert self.check_deadline(), "Deadline update failed. Deadline handler was not invoked on lag of 1 sec."
            self.deadline_increased = True
        else:
            # When the reaction is triggered again, the deadline should not be violated.
            self.on_time.append(self.elapsed())

    @tick.deadline_handler
    def tick_late(self) -> None:
        # When the next reaction is invoked at 1 s, the deadline handler should not be
        # invoked when only sleeping 200 ms.
        self.clock.advance(ms(200))  # time.sleep(0.2)
        assert not self.deadline_checked, "Deadline should not be violated with lag smaller than 1 sec!"
        self.deadline_checked = True


class _DeadlineUpdateIncrease(Reactor):
    def __init__(self, clock: VirtualClock) -> None:
        self.increaseDeadline = _IncreaseDeadline(clock)


@lf_test("failing/DeadlineUpdateIncrease.lf")
def test_deadline_update_increase() -> None:
    """In LF's failing/ folder for flakiness in real time (its own comment); on the
    virtual clock its sleeps are exact."""
    clock = VirtualClock()
    main = _DeadlineUpdateIncrease(clock)
    run(main, timeout=ms(1500), clock=clock)
    d = main.increaseDeadline
    assert d.deadline_checked and d.on_time == [sec(1)]
