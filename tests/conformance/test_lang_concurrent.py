"""Ports of LF's concurrent/ programs: Python threads that schedule physical actions.

These programs wait for real time in their threads (``time.sleep``), so they cannot run
on the virtual clock (which jumps to the next event at once). They run on
:class:`_ScaledClock`, physical time running ``_SCALE`` times faster than the wall clock,
and their threads sleep ``_SCALE`` times shorter: the programs' timing, in physical and
logical time, is LF's, and a 2 s program takes 2 / ``_SCALE`` s of wall time.

A program with a physical action keeps running with an empty event queue in LF
(keepalive is on unless the program turns it off), so the ports run with keepalive.

In LF, a reaction that declares a physical action as an effect (``-> a``) may hand ``a``
to a thread, which schedules it later: the event takes physical time + delay, whoever
calls. The ports do the same with the handle the reaction gets (thread-safe, stamped with
physical time, as ``self.a.schedule`` is).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from reactorfed import STARTUP, PhysicalAction, Reactor, Timer, ms, reaction, sec
from tests.conformance.harness import lf_test, run

_SCALE = 10


class _ScaledClock:
    """Physical time that runs ``scale`` times faster than the wall clock (from the
    virtual clock's epoch), for programs whose threads sleep in real time."""

    def __init__(self, scale: int = _SCALE, start: int = 1_000_000_000_000) -> None:
        self.scale = scale
        self._start = start
        self._t0 = time.monotonic_ns()

    def now(self) -> int:
        return self._start + (time.monotonic_ns() - self._t0) * self.scale

    def wait_until(self, t: int, wakeup: threading.Event) -> bool:
        while True:
            remaining = t - self.now()
            if remaining <= 0:
                return True
            if wakeup.wait(remaining / self.scale / 1e9):
                wakeup.clear()
                return False


def _sleep(seconds: float) -> None:
    """``time.sleep`` in the programs' threads, on the scaled clock's time."""
    time.sleep(seconds / _SCALE)


# -- AsyncCallback.lf, AsyncCallbackNoTimer.lf ------------------------------------------


class _AsyncCallbackBase(Reactor):
    """The shared part: the preamble's callback and the checking reaction."""

    a = PhysicalAction(min_delay=ms(100))

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.expected_time = ms(100)
        self.toggle = False
        self.i = 0
        self.times: list[int] = []

    def callback(self, a: Any) -> None:
        # Schedule twice. If the action is not physical, these should get consolidated
        # into a single action triggering. If it is, then they cause two separate
        # triggerings with close but not equal time stamps.
        a.schedule(delay=0)
        a.schedule(delay=0)

    def take_time(self, a: Any) -> None:
        _sleep(0.1)  # simulate time passing before a callback occurs
        self.callback(a)

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        elapsed_time = self.elapsed()
        self.times.append(elapsed_time)
        self.i += 1
        assert elapsed_time > self.expected_time, (
            f"ERROR: Expected logical time to be larger than {self.expected_time}."
        )
        if self.toggle:
            self.toggle = False
            self.expected_time += 200_000_000
        else:
            self.toggle = True


class _AsyncCallbackMain(_AsyncCallbackBase):
    t = Timer(0, ms(200))

    @reaction(triggers=[t], effects=[_AsyncCallbackBase.a])
    def start_thread(self, a: Any) -> None:
        x = threading.Thread(target=self.take_time, args=(a,))
        self.threads.append(x)
        x.start()


class _AsyncCallbackNoTimerMain(_AsyncCallbackBase):
    @reaction(triggers=[STARTUP], effects=[_AsyncCallbackBase.a])
    def start_thread(self, a: Any) -> None:
        x = threading.Thread(target=self.take_time, args=(a,))
        self.threads.append(x)
        x.start()


def _join(threads: list[threading.Thread]) -> None:
    for x in threads:
        x.join(10)


@pytest.mark.timeout(60)
@lf_test("concurrent/AsyncCallback.lf")
def test_async_callback() -> None:
    main = _AsyncCallbackMain()
    try:
        run(main, timeout=sec(2), keepalive=True, clock=_ScaledClock())
    finally:
        _join(main.threads)
    # Each tick's thread schedules twice 100 ms (of sleep) + 100 ms (min delay) later;
    # the threads of the ticks at 0 .. 1.6 s land before the 2 s timeout.
    assert main.i >= 2 and main.times == sorted(main.times)


@pytest.mark.timeout(60)
@lf_test("concurrent/AsyncCallbackNoTimer.lf")
def test_async_callback_no_timer() -> None:
    main = _AsyncCallbackNoTimerMain()
    try:
        run(main, timeout=sec(2), keepalive=True, clock=_ScaledClock())
    finally:
        _join(main.threads)
    assert main.i == 2  # both events of the one callback, about 200 ms after the start


# -- concurrent/failing/ConcurrentAction.lf ----------------------------------------------
# LF's thread ends the program with os._exit(0) once its threads are done; the port asks
# the running program to stop from that thread instead (request_stop() from outside),
# which ends it the same way: no timeout, and every event scheduled before is processed.
# ConcurrentActionRepeat.lf is the same with 100 rounds of 100 threads, 0.1 s apart.


class _ConcurrentActionTest(Reactor):
    addlog_action = PhysicalAction(str)

    def __init__(self, rounds: int, per_round: int, pause: float) -> None:
        self.rounds = rounds
        self.per_round = per_round
        self.pause = pause
        self.logs: list[str] = []
        self.received = 0
        self.main_thread: threading.Thread | None = None

    @reaction(triggers=[STARTUP], effects=[addlog_action])
    def start(self, addlog_action: Any) -> None:
        self.logs = []

        def testall() -> None:
            def test(i: int) -> None:
                addlog_action.schedule(delay=0, value=f"{i}")

            threads = []
            for j in range(self.rounds):
                if self.rounds > 1:
                    self.logs = []  # ConcurrentActionRepeat starts each round afresh
                for i in range(self.per_round):
                    test_thread = threading.Thread(target=test, args=(j * self.per_round + i,))
                    test_thread.start()
                    threads.append(test_thread)
                for thread in threads:
                    thread.join()
                _sleep(self.pause)
            self.request_stop()  # LF: os._exit(0)

        self.main_thread = threading.Thread(target=testall)
        self.main_thread.start()

    @reaction(triggers=[addlog_action])
    def log(self, addlog_action: Any) -> None:
        self.received += 1
        assert addlog_action.get() not in self.logs, f"Duplicate Action: {addlog_action.get()}"
        self.logs.append(addlog_action.get())


class _ConcurrentActionMain(Reactor):
    def __init__(self, rounds: int, per_round: int, pause: float) -> None:
        self.server = _ConcurrentActionTest(rounds, per_round, pause)


def _run_concurrent_action(rounds: int, per_round: int, pause: float) -> None:
    main = _ConcurrentActionMain(rounds, per_round, pause)
    try:
        run(main, keepalive=True, clock=_ScaledClock())
    finally:
        if main.server.main_thread is not None:
            main.server.main_thread.join(30)
    assert main.server.received == rounds * per_round, (
        f"{main.server.received} of {rounds * per_round} scheduled actions arrived"
    )


@pytest.mark.timeout(60)
@lf_test("concurrent/failing/ConcurrentAction.lf")
def test_concurrent_action() -> None:
    # 100 threads, each scheduling the action once, then 2 s before the end.
    _run_concurrent_action(rounds=1, per_round=100, pause=2.0)


@pytest.mark.slow
@pytest.mark.timeout(120)
@lf_test("concurrent/ConcurrentActionRepeat.lf")
def test_concurrent_action_repeat() -> None:
    # 10,000 OS threads in 100 rounds; about 3 s of wall time, most of it creating threads.
    _run_concurrent_action(rounds=100, per_round=100, pause=0.1)
