import threading

import pytest

from reactorfed import Clock, SystemClock, VirtualClock, ms


def test_virtual_clock_moves_only_when_told():
    c = VirtualClock(start=1_000)
    assert c.now() == 1_000
    assert c.now() == 1_000
    c.advance(50)
    assert c.now() == 1_050
    c.set(2_000)
    assert c.now() == 2_000


def test_virtual_clock_never_goes_back():
    c = VirtualClock(start=1_000)
    with pytest.raises(AssertionError):
        c.advance(-1)
    with pytest.raises(AssertionError):
        c.set(999)


def test_virtual_wait_until_jumps_to_the_target_at_once():
    c = VirtualClock(start=1_000)
    wake = threading.Event()
    assert c.wait_until(5_000, wake) is True
    assert c.now() == 5_000
    # Waiting for the past does not move the clock back.
    assert c.wait_until(10, wake) is True
    assert c.now() == 5_000


def test_virtual_wait_until_returns_early_when_woken_and_clears_the_event():
    c = VirtualClock(start=1_000)
    wake = threading.Event()
    wake.set()
    assert c.wait_until(5_000, wake) is False
    assert not wake.is_set()
    assert c.now() == 1_000


def test_system_clock_is_epoch_based_and_monotonic():
    import time

    c = SystemClock()
    a = c.now()
    b = c.now()
    assert b >= a
    assert abs(a - time.time_ns()) < 10**9  # within a second of the wall clock


def test_system_clock_wait_until_reaches_the_time_or_wakes_early():
    c = SystemClock()
    wake = threading.Event()
    target = c.now() + ms(1)
    assert c.wait_until(target, wake) is True
    assert c.now() >= target
    # Woken by another thread long before a far target: returns False and clears.
    threading.Timer(0.01, wake.set).start()
    assert c.wait_until(c.now() + 60 * 10**9, wake) is False
    assert not wake.is_set()


def test_both_clocks_satisfy_the_protocol():
    assert isinstance(SystemClock(), Clock)
    assert isinstance(VirtualClock(), Clock)


def test_a_wakeup_is_an_event_a_descriptor_wait_can_watch():
    import select

    from reactorfed.time.clock import Wakeup

    def readable(w: Wakeup) -> bool:
        return bool(select.select([w.fileno()], [], [], 0)[0])

    w = Wakeup()
    w.set()  # before the descriptor exists
    assert readable(w) and w.is_set()
    w.clear()
    assert not readable(w) and not w.is_set()
    w.clear()  # nothing to drain
    threading.Timer(0.05, w.set).start()  # from another thread
    assert select.select([w.fileno()], [], [], 5)[0] and w.is_set()
    assert SystemClock().wait_until(SystemClock().now() + 60 * 10**9, w) is False  # still an Event
    assert not w.is_set() and not readable(w)


def test_a_synced_clock_reads_its_base_plus_bias_plus_offset():
    from reactorfed.time.clock import SyncedClock

    base = VirtualClock(start=10**9)
    c = SyncedClock(base, bias=ms(200))
    assert isinstance(c, Clock)
    assert c.now() == 10**9 + ms(200)
    c.settle(-ms(200))  # the initial synchronization: whole, before the start
    assert c.offset == -ms(200) and c.now() == 10**9
    base.advance(ms(5))
    c.adjust(ms(1))
    assert c.now() == 10**9 + ms(6)


def test_a_synced_clock_never_goes_back_while_running():
    from reactorfed.time.clock import SyncedClock

    base = VirtualClock(start=10**9)
    c = SyncedClock(base)
    t = c.now()
    c.adjust(-ms(3))  # held: 1 ns a read until the base catches up
    assert [c.now() - t for _ in range(3)] == [1, 2, 3]
    base.advance(ms(4))
    assert c.now() == 10**9 + ms(1)


def test_a_synced_clock_waits_in_its_own_time():
    from reactorfed.time.clock import SyncedClock

    base = VirtualClock(start=10**9)
    c = SyncedClock(base, bias=ms(100))
    wake = threading.Event()
    assert c.wait_until(10**9 + ms(150), wake) is True
    assert base.now() == 10**9 + ms(50) and c.now() >= 10**9 + ms(150)
    wake.set()
    assert c.wait_until(c.now() + ms(10), wake) is False and not wake.is_set()
