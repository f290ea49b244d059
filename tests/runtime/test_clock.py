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
