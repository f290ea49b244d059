"""Port of LF's ``federated/failing/ClockSync.lf``: clock synchronization between the
federates and the RTI (``clock-sync: on``), with artificial clock errors
(``test-offset: 200 msec``: federate i's clock (1 + i) * 200 ms ahead) that the
synchronization must remove, to within 100 ms (the program's threshold).

LF lists it as failing (its Python target has no clock-sync options, and its Printer is
C code reading ``_lf_clock_sync_offset + _lf_clock_sync_constant_bias``). The port reads
the same sum from each federate's clock after the run (its offset plus its bias). What
the error does inside a program shows in the control run below, without synchronization:
a federate whose clock is 200 ms ahead starts about 200 ms late by its own clock. LF runs it
for 10 s in real time; here 300 ms (about 60 runtime exchanges per federate at its 5 ms
period), with the same options.
"""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Timer, ms, reaction
from reactorfed.federation import ClockSyncOptions, run_threads
from reactorfed.time.clock import SyncedClock
from tests.conformance.harness import lf_test, run_local

pytestmark = pytest.mark.timeout(60)

OPTIONS = ClockSyncOptions(
    mode="on", period_ns=ms(5), trials=10, attenuation=10, test_offset_ns=ms(200)
)
THRESHOLD = ms(100)


class _Ticker(Reactor):
    out = Output(int)
    tick = Timer(0, ms(1600))

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(42)


class _Printer(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: list[int] = []
        self.lags: list[
            int
        ] = []  # physical minus logical time, at startup and at shutdown (LF prints the error then)

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.lags.append(self.physical_time() - self.logical_time())

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received.append(inp.get())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        self.lags.append(self.physical_time() - self.logical_time())


class _Federate(Reactor):
    def __init__(self) -> None:
        self.source = _Ticker()
        self.play = _Printer()
        self.connect(self.source.out, self.play.inp)


class _ClockSync(Reactor):
    def __init__(self) -> None:
        self.fed1 = _Federate()
        self.fed2 = _Federate()


def run_clock_sync(options: ClockSyncOptions) -> tuple[dict[str, _Printer], dict[str, SyncedClock]]:
    run = run_threads(
        _ClockSync,
        fast=False,
        timeout=ms(300),
        join_timeout_s=30,
        coordination="decentralized",
        clock_sync=options,
    )
    run.raise_errors()
    printers = {n: getattr(p, n).play for n, p in run.programs.items()}
    clocks = {n: c for n, c in run.clocks.items() if isinstance(c, SyncedClock)}
    return printers, clocks


@lf_test("federated/failing/ClockSync.lf", federated=True)
def test_clock_sync() -> None:
    main = _ClockSync()
    run_local(main, timeout=ms(300), fast=True)
    assert main.fed1.play.received == main.fed2.play.received == [42]
    printers, clocks = run_clock_sync(OPTIONS)
    assert set(clocks) == {"fed1", "fed2"}
    for i, name in enumerate(("fed1", "fed2")):
        clock = clocks[name]
        assert clock.bias == (1 + i) * ms(200)  # the artificial error was there
        error = (
            clock.offset + clock.bias
        )  # LF: _lf_clock_sync_offset + _lf_clock_sync_constant_bias
        assert abs(error) <= THRESHOLD, f"{name}: clock sync error {error} ns at shutdown"
        assert printers[name].received == [42]


def test_without_synchronization_the_artificial_error_stays() -> None:
    """The control: the same offsets, no synchronization; the checks above would fail."""
    printers, clocks = run_clock_sync(ClockSyncOptions(mode="off", test_offset_ns=ms(200)))
    for i, name in enumerate(("fed1", "fed2")):
        assert clocks[name].offset == 0 and clocks[name].bias == (1 + i) * ms(200)
        # its startup by its own clock: the start is the RTI's time at the last join plus its
        # start delay (20 ms), so a clock (1 + i) * 200 ms ahead starts at least that late
        assert printers[name].lags[0] >= (1 + i) * ms(200) - ms(20)
