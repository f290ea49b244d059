"""Rate-limited warnings: what strangers send must not flood the log (or slow the
process that writes it)."""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["Throttle"]


class Throttle:
    """Logs at most one warning per ``period_ns``; the rest are counted and mentioned
    with the next one that is logged (and logged at DEBUG)."""

    def __init__(self, logger: logging.Logger, period_ns: int = 1_000_000_000) -> None:
        self.logger = logger
        self.period_ns = period_ns
        self._next = 0
        self.suppressed = 0

    def warning(self, msg: str, *args: Any) -> None:
        now = time.monotonic_ns()
        if now < self._next:
            self.suppressed += 1
            self.logger.debug(msg, *args)
            return
        self._next = now + self.period_ns
        if self.suppressed:
            msg += " (%d more like it in the last second not shown)"
            args = (*args, self.suppressed)
            self.suppressed = 0
        self.logger.warning(msg, *args)
