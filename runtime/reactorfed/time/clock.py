"""Physical time is read only through a clock object.

:class:`SystemClock` reads the real clock; :class:`VirtualClock` is driven by tests so
that timing behaviour (deadlines, not running ahead of physical time) is exact and
repeatable; :class:`SyncedClock` is another clock kept in step with the RTI's by clock
synchronization.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SyncedClock", "SystemClock", "VirtualClock", "Wakeup"]


class Wakeup(threading.Event):
    """The event that ends a wait early (a physical action, a stop from another thread),
    which a wait on file descriptors can watch too: :meth:`fileno` (an eventfd, made on
    first use) becomes readable when the event is set, and is drained when it is cleared.
    Check :meth:`is_set` before each such wait (a set racing a clear may leave the event
    set and the descriptor drained). A federate waiting for physical time waits on its
    sockets and this at once (:meth:`reactorfed.execution.scheduler.Coordinator.wait_until`)."""

    def __init__(self) -> None:
        super().__init__()
        self._fd = -1

    def fileno(self) -> int:
        if self._fd < 0:
            fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            weakref.finalize(self, os.close, fd)
            self._fd = fd
            if self.is_set():  # set before the descriptor existed
                os.eventfd_write(fd, 1)
        return self._fd

    def set(self) -> None:
        super().set()
        if self._fd >= 0:
            os.eventfd_write(self._fd, 1)

    def clear(self) -> None:
        super().clear()
        if self._fd >= 0:
            with contextlib.suppress(BlockingIOError):  # not written since the last clear
                os.eventfd_read(self._fd)


@runtime_checkable
class Clock(Protocol):
    def now(self) -> int:
        """Physical time in ns since the epoch."""
        ...

    def wait_until(self, t: int, wakeup: threading.Event) -> bool:
        """Block until physical time reaches ``t`` or ``wakeup`` is set.

        Returns True when ``t`` was reached. Clears ``wakeup`` when it woke early.
        """
        ...


class SystemClock:
    """The machine's clock: epoch-based, advanced monotonically between reads."""

    def __init__(self) -> None:
        # Anchor a monotonic clock to the epoch once, so physical time never goes back.
        self._offset = time.time_ns() - time.monotonic_ns()

    def now(self) -> int:
        return time.monotonic_ns() + self._offset

    def wait_until(self, t: int, wakeup: threading.Event) -> bool:
        while True:
            remaining = t - self.now()
            if remaining <= 0:
                return True
            if wakeup.wait(remaining / 1e9):
                wakeup.clear()
                return False


class VirtualClock:
    """A clock that moves only when told to.

    ``wait_until(t)`` advances the clock to ``t`` at once (the program sleeps in zero
    real time). ``advance(d)`` lets a test (or a reaction) make time pass, e.g. to
    simulate a slow computation. Every read is recorded for assertions.
    """

    def __init__(self, start: int = 1_000_000_000_000) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> int:
        with self._lock:
            return self._now

    def advance(self, d: int) -> None:
        assert d >= 0, "virtual time never goes back"
        with self._lock:
            self._now += d

    def set(self, t: int) -> None:
        with self._lock:
            assert t >= self._now, "virtual time never goes back"
            self._now = t

    def wait_until(self, t: int, wakeup: threading.Event) -> bool:
        if wakeup.is_set():
            wakeup.clear()
            return False
        with self._lock:
            if t > self._now:
                self._now = t
        return True


class SyncedClock:
    """A federate's clock under clock synchronization: ``base`` plus a ``bias`` (LF's
    ``test-offset``: an artificial error, for tests) plus the offset clock
    synchronization adjusts, so that it reads what the RTI's clock reads. Strictly
    increasing once running, as reactor-c's physical time is (``lf_clock_gettime``): an
    adjustment backwards holds it to 1 ns a read until ``base`` catches up."""

    def __init__(self, base: Clock, bias: int = 0) -> None:
        self._base = base
        self.bias = bias
        self._offset = 0
        self._last = 0
        self._lock = threading.Lock()

    @property
    def offset(self) -> int:
        """What clock synchronization has added so far (ns)."""
        return self._offset

    def adjust(self, delta: int) -> None:
        """Add ``delta`` to the offset (a runtime adjustment: small, attenuated)."""
        with self._lock:
            self._offset += delta

    def settle(self, delta: int) -> None:
        """Add ``delta`` to the offset before the federation starts (the initial
        synchronization's estimate, whole), forgetting earlier reads: nothing timed by
        this clock yet needs it to keep increasing across the step, and holding it still
        until ``base`` caught up would run the first tags early."""
        with self._lock:
            self._offset += delta
            self._last = 0

    def now(self) -> int:
        with self._lock:
            t = self._base.now() + self.bias + self._offset
            if t <= self._last:
                t = self._last + 1
            self._last = t
            return t

    def wait_until(self, t: int, wakeup: threading.Event) -> bool:
        while True:
            left = t - self.now()
            if left <= 0:
                return True
            # (an adjustment while waiting moves the target: look again when this wait ends)
            if not self._base.wait_until(self._base.now() + left, wakeup):
                return False
