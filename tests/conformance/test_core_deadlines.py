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
    Output,
    Reactor,
    Timer,
    VirtualClock,
    bank,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

LEFT_OUT = {
    "DeadlineAnytime.lf": (
        "calls check_deadline(True) inside the reaction body (LF's anytime deadline check, which "
        "runs the deadline handler mid-reaction); reactorfed checks a deadline only before a "
        "reaction starts and has no API to check it from inside the body"
    ),
    "DeadlineUpdateDecrease.lf": (
        "calls update_deadline() and check_deadline() inside the reaction body (changing a "
        "reaction's deadline at run time); reactorfed's deadlines are fixed per reaction "
        "declaration and checked only before the reaction starts"
    ),
}

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
