"""Ports of LF's C++-target top-level and ``properties/`` programs that neither the Python
nor the C suite has: an action's value per event, a contained reactor's output read as a
source by a startup reaction, a zero value being present, shutdown at the next microstep
with ``startup``/``shutdown``/timers tested for presence, events scheduled from shutdown
never running, fast mode not waiting for physical time, and names of nested banks."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    SystemClock,
    Timer,
    bank,
    ms,
    reaction,
    sec,
)
from tests.conformance.c_lib import LoopedActionSender
from tests.conformance.harness import lf_test, run

# --------------------------------------------------------------------------- ActionValues.lf


class ActionValues(Reactor):
    act = LogicalAction(int, min_delay=ms(100))

    def __init__(self) -> None:
        self.r1done = False
        self.r2done = False

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act: Any) -> None:
        act.schedule(value=100)  # scheduled in 100 ms
        act.schedule(delay=ms(50), value=-100)  # scheduled in 150 ms

    @reaction(triggers=[act])
    def fired(self, act: Any) -> None:
        elapsed = self.elapsed()
        if elapsed == ms(100):
            assert act.get() == 100, "ERROR: Expected action value to be 100"
            self.r1done = True
        else:
            assert elapsed == ms(150), f"ERROR: Unexpected reaction invocation at {elapsed}"
            assert act.get() == -100, "ERROR: Expected action value to be -100"
            self.r2done = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.r1done and self.r2done, "ERROR: Expected 2 reaction invocations"


@lf_test("ActionValues.lf", suite="Cpp")
def test_action_values() -> None:
    """Two events of one action, each with its own value and time."""
    main = ActionValues()
    run(main)
    assert main.r1done and main.r2done


# -------------------------------------------------------------------------------- FqnTest.lf


def _name_validation(fqn: str, name: str) -> bool:
    if not fqn or not name:
        return False
    return name == fqn.rsplit(".", 1)[-1]


class _Named(Reactor):
    def __init__(self) -> None:
        self.started = False
        self.terminated = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert _name_validation(self.fqn, self.name), (self.fqn, self.name)
        self.started = True

    @reaction(triggers=[SHUTDOWN])
    def stop(self) -> None:
        self.terminated = True


class _FA(_Named):
    pass


class _FB(_Named):
    def __init__(self) -> None:
        super().__init__()
        self.a = bank(_FA, 3)


class _FC(_Named):
    def __init__(self) -> None:
        super().__init__()
        self.b = bank(_FB, 2)


class _FD(_Named):
    def __init__(self) -> None:
        super().__init__()
        self.a = bank(_FA, 2)


class FqnTest(_Named):
    def __init__(self) -> None:
        super().__init__()
        self.c = bank(_FC, 2)
        self.d = bank(_FD, 3)


def _all(r: Any) -> list[Any]:
    out = [r]
    for attr in ("a", "b", "c", "d"):
        for m in getattr(r, attr, []):
            out += _all(m)
    return out


@lf_test("FqnTest.lf", suite="Cpp")
def test_fqn_test() -> None:
    """Every reactor's short name is the last part of its full name, through nested banks."""
    main = FqnTest()
    run(main, workers=1)
    reactors = _all(main)
    assert len(reactors) == 1 + 2 + 2 * 2 + 2 * 2 * 3 + 3 + 3 * 2
    assert all(r.started and r.terminated for r in reactors)
    assert main.c[1].b[0].a[2].fqn == "FqnTest.c[1].b[0].a[2]"


# ------------------------------------------------------------------- ParametersOutOfOrder.lf


class _POFoo(Reactor):
    def __init__(self, a: int = 0, b: str = "", c: float = 0.0) -> None:
        self.a = a
        self.b = b
        self.c = c
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert not (self.a != 42 or self.b != "bar" or self.c < 3.1), "received an unexpected parameter!"
        self.checked = True


class _ParametersOutOfOrder(Reactor):
    def __init__(self) -> None:
        self.foo = _POFoo(c=3.14, b="bar", a=42)


@lf_test("ParametersOutOfOrder.lf", suite="Cpp")
def test_parameters_out_of_order() -> None:
    main = _ParametersOutOfOrder()
    run(main)
    assert main.foo.checked


# ---------------------------------------------------------------------- ReactionOrder.lf, SetZero.lf


class _Src(Reactor):
    out = Output(int)

    def __init__(self, value: int = 42) -> None:
        self.value = value

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(self.value)


class _OrderSink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.checked = False

    @reaction(triggers=[STARTUP], sources=[inp])
    def start(self, inp: Any) -> None:
        assert inp.is_present, "Received no value"
        assert inp.get() == 42, "Received an unexpected value"
        self.checked = True


class ReactionOrder(Reactor):
    def __init__(self) -> None:
        self.src = _Src()
        self.sink = _OrderSink()
        self.connect(self.src.out, self.sink.inp)


@lf_test("ReactionOrder.lf", suite="Cpp")
def test_reaction_order() -> None:
    """A startup reaction that only reads an input (a source, not a trigger) runs after
    the upstream startup reaction that sets it."""
    main = ReactionOrder()
    run(main)
    assert main.sink.checked


class _ZeroSink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.checked = False

    @reaction(triggers=[STARTUP, inp])
    def got(self, inp: Any) -> None:
        assert inp.is_present and inp.get() == 0, "Expected to receive 0"
        self.checked = True


class _SetZero(Reactor):
    def __init__(self) -> None:
        self.source = _Src(value=0)
        self.sink = _ZeroSink()
        self.connect(self.source.out, self.sink.inp)


@lf_test("SetZero.lf", suite="Cpp")
def test_set_zero() -> None:
    """A port set to 0 is present (a falsy value is still a value)."""
    main = _SetZero()
    run(main)
    assert main.sink.checked


# -------------------------------------------------------------------- Shutdown(Async|Sync).lf


class _Shutdown(Reactor):
    check_shutdown = LogicalAction()
    request_shutdown = Timer(ms(1))
    after_shutdown = Timer(ms(2))

    def __init__(self) -> None:
        self.success = False

    @reaction(triggers=[request_shutdown], effects=[check_shutdown])
    def request(self, check_shutdown: Any) -> None:
        # From a reaction, the next possible tag to shut down at is the next microstep.
        self.request_stop()  # C++: environment()->async_shutdown() / sync_shutdown()
        check_shutdown.schedule()

    @reaction(triggers=[SHUTDOWN, check_shutdown])
    def check(self, shutdown: Any, check_shutdown: Any) -> None:
        assert shutdown.is_present and check_shutdown.is_present, "shutdown was not triggered at the expected tag"
        tag = self.elapsed_tag()
        assert (tag.time, tag.microstep) == (ms(1), 1)
        self.success = True

    @reaction(triggers=[after_shutdown])
    def after(self) -> None:
        raise AssertionError("triggered a reaction after shutdown")


@lf_test("ShutdownAsync.lf", suite="Cpp")
def test_shutdown_async() -> None:
    """A stop requested in a reaction: shutdown at the next microstep, together with an
    action scheduled for it; a timer later never fires."""
    main = _Shutdown()
    run(main)
    assert main.success


@lf_test("ShutdownSync.lf", suite="Cpp")
def test_shutdown_sync() -> None:
    """As ShutdownAsync, with reactor-cpp's synchronous shutdown request (the same
    ``request_stop`` here: from a reaction both stop at the next microstep)."""
    main = _Shutdown()
    run(main)
    assert main.success


# ------------------------------------------------------------------------- Starve(Zero).lf


class _Starve(Reactor):
    t = Timer(sec(1))
    after_shutdown = LogicalAction()

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.shutdown_at: tuple[int, int] | None = None

    @reaction(triggers=[t], effects=[after_shutdown])
    def tick(self, after_shutdown: Any) -> None:
        pass  # "Timer triggered"

    @reaction(triggers=[SHUTDOWN], effects=[after_shutdown])
    def shutdown(self, after_shutdown: Any) -> None:
        tag = self.elapsed_tag()
        self.shutdown_at = (tag.time, tag.microstep)
        assert self.shutdown_at == (self.expect, 1), f"Shutdown invoked at wrong tag {self.shutdown_at}"
        after_shutdown.schedule()

    @reaction(triggers=[after_shutdown])
    def after(self) -> None:
        raise AssertionError("Executed a reaction after shutdown")


@lf_test("Starve.lf", suite="Cpp")
def test_starve() -> None:
    """Starvation after a timer at 1 s: shutdown at (1 s, 1); an event scheduled by the
    shutdown reaction never runs."""
    main = _Starve(expect=sec(1))
    run(main)
    assert main.shutdown_at == (sec(1), 1)


class _StarveZero(Reactor):
    after_shutdown = LogicalAction()

    def __init__(self) -> None:
        self.shutdown_at: tuple[int, int] | None = None

    @reaction(triggers=[SHUTDOWN], effects=[after_shutdown])
    def shutdown(self, after_shutdown: Any) -> None:
        tag = self.elapsed_tag()
        self.shutdown_at = (tag.time, tag.microstep)
        assert self.shutdown_at == (0, 1), f"Shutdown invoked at wrong tag {self.shutdown_at}"
        after_shutdown.schedule()

    @reaction(triggers=[after_shutdown])
    def after(self) -> None:
        raise AssertionError("Executed a reaction after shutdown")


@lf_test("StarveZero.lf", suite="Cpp")
def test_starve_zero() -> None:
    """Nothing to do at all: shutdown at (0, 1)."""
    main = _StarveZero()
    run(main)
    assert main.shutdown_at == (0, 1)


# -------------------------------------------------------------------------- TimerIsPresent.lf


class _TimerIsPresent(Reactor):
    t1 = Timer(0, ms(50))
    t2 = Timer(ms(33), ms(33))

    def __init__(self) -> None:
        self.startup_checked = False
        self.shutdown_checked = False
        self.ticks = 0

    @reaction(triggers=[STARTUP], sources=[t1, t2])
    def start(self, startup: Any, t1: Any, t2: Any) -> None:
        assert startup.is_present, "Startup is not present."
        assert t1.is_present, "t1 is not present at startup."
        assert not t2.is_present, "t2 is present at startup."
        self.startup_checked = True

    @reaction(triggers=[t1, t2])
    def tick(self, t1: Any, t2: Any) -> None:
        assert not (t1.is_present and t2.is_present), "t1 and t2 are both present."
        assert t1.is_present or t2.is_present, "Neither t1 nor t2 are present."
        self.ticks += 1

    @reaction(triggers=[SHUTDOWN], sources=[t1, t2])
    def stop(self, shutdown: Any, t1: Any, t2: Any) -> None:
        assert shutdown.is_present, "Shutdown is not present."
        assert t1.is_present, "t1 is not present at shutdown."
        assert not t2.is_present, "t2 is present at shutdown"
        self.shutdown_checked = True


@lf_test("TimerIsPresent.lf", suite="Cpp")
def test_timer_is_present() -> None:
    """Timers (and startup, shutdown) read for presence in reactions they do not trigger."""
    main = _TimerIsPresent()
    run(main, timeout=sec(1))
    assert main.startup_checked and main.shutdown_checked
    assert main.ticks == 21 + 30  # t1 at 0, 50, ..., 1000 ms; t2 at 33, 66, ..., 990 ms


# ------------------------------------------------------------------------ properties/*.lf


class _Fast(Reactor):
    a = LogicalAction()

    def __init__(self) -> None:
        self.triggered = False

    @reaction(triggers=[STARTUP], effects=[a])
    def start(self, a: Any) -> None:
        a.schedule(delay=sec(2))

    @reaction(triggers=[a])
    def fired(self) -> None:
        self.triggered = True
        elapsed_physical = self.physical_time() - self.start_time()
        assert elapsed_physical < sec(2), "ERROR: needed more than 2s to process the reaction"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.triggered, "ERROR: reaction was not invoked!"


@lf_test("properties/Fast.lf", suite="Cpp")
def test_fast() -> None:
    """In fast mode an event 2 s ahead runs at once (on the real clock: no waiting)."""
    main = _Fast()
    run(main, fast=True, clock=SystemClock())
    assert main.triggered


class _TimeoutConsumer(Reactor):
    inp = Input(int)
    after_shutdown = LogicalAction()
    check_shutdown = Timer(ms(11))

    def __init__(self) -> None:
        self.success = False
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        current = self.elapsed()
        assert current <= ms(11), f"Received at: {current}. Failed to enforce timeout."
        if current == ms(11):
            self.success = True

    @reaction(triggers=[SHUTDOWN], effects=[after_shutdown])
    def shutdown(self, after_shutdown: Any) -> None:
        tag = self.elapsed_tag()
        assert tag.time == ms(11) and tag.microstep == 0 and self.success, (
            "Failed to enforce timeout at the correct tag.")
        self.checked = True
        after_shutdown.schedule()

    @reaction(triggers=[check_shutdown, SHUTDOWN])
    def check(self, check_shutdown: Any, shutdown: Any) -> None:
        assert not (check_shutdown.is_present and not shutdown.is_present), (
            "Shutdown was not triggered at the expected tag")
        assert not (not check_shutdown.is_present and shutdown.is_present), (
            f"Shutdown was triggered at an unexpected tag: {self.elapsed_tag()}")

    @reaction(triggers=[after_shutdown])
    def after(self) -> None:
        raise AssertionError("Executed a reaction after timeout.")


class _Timeout(Reactor):
    def __init__(self) -> None:
        self.consumer = _TimeoutConsumer()
        self.producer = LoopedActionSender(take_a_break_after=10, break_interval=ms(1))
        self.connect(self.producer.out, self.consumer.inp)


@lf_test("properties/Timeout.lf", suite="Cpp")
def test_timeout() -> None:
    """Shutdown at the timeout's tag (11 ms, 0), with a timer of that tag, and nothing after."""
    main = _Timeout()
    run(main, timeout=ms(11))
    assert main.consumer.checked


class _TimeoutZero(Reactor):
    should_never_trigger = Timer(sec(1))

    def __init__(self) -> None:
        self.checked = False

    @reaction(triggers=[STARTUP, SHUTDOWN])
    def both(self, startup: Any, shutdown: Any) -> None:
        assert startup.is_present and shutdown.is_present, "Shutdown was not triggered at startup"
        self.checked = True

    @reaction(triggers=[should_never_trigger])
    def never(self) -> None:
        raise AssertionError("Executed a reaction after timeout.")


@lf_test("properties/TimeoutZero.lf", suite="Cpp")
def test_timeout_zero() -> None:
    """A timeout of 0: startup and shutdown at one tag, one reaction sees both present."""
    main = _TimeoutZero()
    run(main, timeout=0)
    assert main.checked
