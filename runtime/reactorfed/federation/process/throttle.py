"""Rate-limited warnings: what strangers send must not flood the log (or slow the
process that writes it)."""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["Throttle"]


class Throttle:
    """Logs at most one warning per ``period_ns`` for each kind (by default the message's
    format; callers may name a kind, such as the reason a connection was refused); the rest
    are counted and mentioned with the next one of that kind that is logged (and logged at
    DEBUG). Kinds are few by construction; past ``max_kinds`` the new ones share one budget,
    so that a stranger cannot grow the table."""

    def __init__(self, logger: logging.Logger, period_ns: int = 1_000_000_000, max_kinds: int = 32) -> None:
        self.logger = logger
        self.period_ns = period_ns
        self.max_kinds = max_kinds
        self._next: dict[str, int] = {}
        self._suppressed: dict[str, int] = {}

    @property
    def suppressed(self) -> int:
        """Warnings not shown since the last of their kind was."""
        return sum(self._suppressed.values())

    def reset(self) -> None:
        """Forget when each kind was last logged (the next of each is shown)."""
        self._next.clear()

    def warning(self, msg: str, *args: Any, kind: str | None = None) -> None:
        now = time.monotonic_ns()
        key = msg if kind is None else kind
        if key not in self._next and len(self._next) >= self.max_kinds:
            key = ""  # the shared budget of kinds beyond the table
        if now < self._next.get(key, 0):
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            self.logger.debug(msg, *args)
            return
        self._next[key] = now + self.period_ns
        missed = self._suppressed.pop(key, 0)
        if missed:
            msg += " (%d more like it in the last second not shown)"
            args = (*args, missed)
        self.logger.warning(msg, *args)
