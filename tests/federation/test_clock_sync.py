"""Clock synchronization's estimate (coordination/clock_sync.py, reactor-c's clock-sync.c),
pure: exchanges simulated with an RTI clock ``t`` and a federate clock ``t + error``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactorfed.federation.coordination.clock_sync import GUARD_BAND_NS, ClockSyncEstimator


def exchange(
    est: ClockSyncEstimator,
    at: int,
    error: int,
    up: int,
    down: int,
    local: int = 0,
    *,
    initial: bool = True,
    probe_skew: int | None = None,
) -> int:
    """One exchange begun at RTI time ``at``, the federate's clock ``error`` ahead, the
    network ``up`` and ``down`` ns each way, the federate replying ``local`` ns after T1
    arrived; ``probe_skew``: a runtime exchange whose probe arrives that much off."""
    t1 = at
    t2 = at + up + error
    est.on_t1(t1, t2)
    est.on_t3_sent(t2 + local)
    t4 = at + up + local + down
    if probe_skew is None:
        return est.on_t4(t4, initial)
    r4 = t4 + down + error  # (T4 back down the same way)
    return est.on_t4(t4, initial, (r4, t4 + 10, r4 + 10 + probe_skew))


def test_an_initial_window_corrects_the_whole_error_on_a_symmetric_network() -> None:
    est = ClockSyncEstimator(exchanges=10)
    adjustments = [exchange(est, 1000 * i, 200_000_000, 300, 300, 50) for i in range(10)]
    assert adjustments[:9] == [0] * 9  # nothing until the window ends
    assert adjustments[9] == -200_000_000 and est.windows == 1 and est.last_error == -200_000_000


def test_a_runtime_window_corrects_by_the_attenuated_error() -> None:
    est = ClockSyncEstimator(exchanges=4, attenuation=10)
    got = [
        exchange(est, 1000 * i, -4_000_000, 200, 200, initial=False, probe_skew=0) for i in range(4)
    ]
    assert got == [0, 0, 0, 400_000]  # a clock 4 ms behind goes 0.4 ms forward


@given(
    error=st.integers(-(10**12), 10**12),
    delays=st.lists(
        st.tuples(st.integers(0, 40_000), st.integers(0, 10_000)), min_size=5, max_size=5
    ),
)
def test_with_symmetric_delays_the_estimate_is_exact_to_the_integer_truncations(
    error: int, delays: list[tuple[int, int]]
) -> None:
    est = ClockSyncEstimator(exchanges=5, guard_band=10**9)
    adj = [exchange(est, 10**6 * i, error, d, d, local) for i, (d, local) in enumerate(delays)]
    assert abs(adj[-1] + error) <= 5  # each of the 5 parts truncated by less than 1 ns


def test_an_asymmetric_network_biases_the_estimate_by_half_the_difference() -> None:
    # PTP's assumption: one way takes as long as the other. It cannot see this.
    est = ClockSyncEstimator(exchanges=2)
    assert [exchange(est, i, 0, 900, 100) for i in range(2)] == [0, -400]


def test_a_window_takes_the_estimate_of_its_shortest_round_trip() -> None:
    # Slow exchanges, asymmetric, are off by up to half their round trip; the short one is exact.
    est = ClockSyncEstimator(exchanges=4)
    delays = [(9_000_000, 100), (100, 100), (50, 7_000_000), (4_000_000, 3_000_000)]
    assert [
        exchange(est, 10**8 * i, 1_000_000, up, down) for i, (up, down) in enumerate(delays)
    ] == [0, 0, 0, -1_000_000]
    assert est.windows == 1 and est.bound == 100


def test_a_short_initial_window_is_applied_when_the_exchanges_end() -> None:
    est = ClockSyncEstimator(exchanges=3)
    assert exchange(est, 0, 500, 10, 10) == 0
    assert est.flush(True) == -500 and est.flush(True) == 0


def test_an_impossible_round_trip_does_not_count() -> None:
    est = ClockSyncEstimator(exchanges=1)
    est.on_t1(1000, 1000)
    est.on_t3_sent(5000)  # a local delay longer than the RTI saw the whole exchange take
    assert est.on_t4(2000, True) == 0 and est.disturbed == 1 and est.windows == 0


def test_a_disturbed_coded_probe_drops_its_exchange_from_the_window() -> None:
    est = ClockSyncEstimator(exchanges=2, attenuation=1)
    assert exchange(est, 0, 1000, 10, 10, initial=False, probe_skew=GUARD_BAND_NS) == 0
    assert exchange(est, 100, 1000, 10, 10, initial=False, probe_skew=GUARD_BAND_NS - 1) == 0
    assert (
        exchange(est, 200, 1000, 10, 10, initial=False, probe_skew=-5) == -1000
    )  # the second counted


def test_a_t4_without_its_t1_is_ignored() -> None:
    est = ClockSyncEstimator(exchanges=1)
    assert est.on_t4(123, True) == 0
    assert exchange(est, 0, 7, 1, 1) == -7


def test_exchanges_and_attenuation_are_at_least_one() -> None:
    with pytest.raises(ValueError):
        ClockSyncEstimator(exchanges=0)
    with pytest.raises(ValueError):
        ClockSyncEstimator(attenuation=0)


# -- a federate's answers (process/clock_sync.py), on a virtual clock ---------------------


def test_a_federate_answers_each_t1_and_corrects_its_clock_by_each_window() -> None:
    from reactorfed import VirtualClock
    from reactorfed.federation.process.clock_sync import FederateClockSync
    from reactorfed.federation.wire import protocol as P
    from reactorfed.time.clock import SyncedClock

    base = VirtualClock(start=10**12)
    clock = SyncedClock(base, bias=300)  # 300 ns ahead of the RTI's (the base)
    sync = FederateClockSync(clock, ClockSyncEstimator(exchanges=2, attenuation=2))
    sent: list[bytes] = []

    def one(initial: bool) -> None:
        t1 = base.now()
        base.advance(50)  # on the way
        sync.on_message(P.ClockT1(t1), sent.append, initial)
        base.advance(50)  # back
        sync.on_message(P.ClockT4(base.now()), sent.append, initial)
        if not initial:
            sync.on_message(P.ClockProbe(base.now()), sent.append, initial)

    one(True)
    one(True)
    assert [P.parse(b) for b in sent] == [P.ClockT3(), P.ClockT3()]
    # (each read of a synced clock is 1 ns after the last: the virtual base stands still
    # between advances, so the federate's local delay reads 1 ns)
    assert abs(clock.offset + 300) <= 1  # the initial window: whole
    clock.bias += 1000  # the clock drifts 1 us ahead
    one(False)
    one(False)
    assert abs(clock.offset - (-300 - 500)) <= 2  # a runtime window: half of it (attenuation 2)


def test_a_federate_without_a_synced_clock_answers_and_keeps_its_clock(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from reactorfed import VirtualClock
    from reactorfed.federation.process.clock_sync import FederateClockSync
    from reactorfed.federation.wire import protocol as P

    clock = VirtualClock(start=10**12)
    sync = FederateClockSync(clock, ClockSyncEstimator(exchanges=1))
    sent: list[bytes] = []
    sync.on_message(P.ClockT1(clock.now() - 5000), sent.append, True)
    sync.on_message(P.ClockT4(clock.now()), sent.append, True)
    assert [P.parse(b) for b in sent] == [P.ClockT3()]  # (so the RTI's exchanges end)
    assert clock.now() == 10**12 and "does not correct its own" in caplog.text


# -- a federation's run ---------------------------------------------------------------------


def test_init_corrects_every_federates_clock_before_the_start() -> None:
    from typing import Any

    from reactorfed import STARTUP, Input, Output, Reactor, ms, reaction
    from reactorfed.federation import ClockSyncOptions, run_threads
    from reactorfed.time.clock import SyncedClock

    class Src(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out: Any) -> None:
            out.set(1)

    class Dst(Reactor):
        inp = Input(int)

        @reaction(triggers=[inp])
        def got(self, inp: Any) -> None:
            self.request_stop()

    class Main(Reactor):
        def __init__(self) -> None:
            self.a = Src()
            self.b = Dst()
            self.connect(self.a.out, self.b.inp)

    run = run_threads(
        Main,
        fast=True,
        timeout=ms(100),
        join_timeout_s=30,
        clock_sync=ClockSyncOptions(mode="init", test_offset_ns=-ms(300)),
    )
    run.raise_errors()
    for i, name in enumerate(("a", "b")):
        clock = run.clocks[name]
        assert isinstance(clock, SyncedClock)
        assert clock.bias == -(1 + i) * ms(300)  # behind, this time
        assert abs(clock.offset + clock.bias) < ms(10), (name, clock.offset)
