"""Shared helpers for the runtime tests: run a program in fast mode on a virtual clock
(tags in traces are relative to the start time: ``self.elapsed_tag()``)."""

from __future__ import annotations

from typing import Any

from reactorfed import Environment, RunSummary, VirtualClock
from reactorfed.model.reactor import Reactor


def run(main: Reactor, **kwargs: Any) -> RunSummary:
    """Run ``main`` in fast mode on a fresh virtual clock unless told otherwise."""
    kwargs.setdefault("fast", True)
    kwargs.setdefault("clock", VirtualClock())
    return Environment(**kwargs).run(main)
