"""The runtime's errors. User mistakes are :class:`ValidationError` naming the element's
full name; internal invariants are plain ``assert``."""

from __future__ import annotations

__all__ = ["CausalityLoopError", "ReactorError", "UndeclaredAccessError", "ValidationError"]


class ReactorError(Exception):
    """Base class of every error the runtime raises on purpose."""


class ValidationError(ReactorError):
    """The program is invalid (found while declaring or assembling it)."""


class CausalityLoopError(ValidationError):
    """A cycle of zero-delay dependencies between reactions."""

    def __init__(self, cycle: list[str]) -> None:
        self.cycle = cycle
        path = " -> ".join([*cycle, cycle[0]])
        super().__init__(f"causality loop (a cycle without delay): {path}")


class UndeclaredAccessError(ReactorError):
    """A reaction read or wrote a port or action it did not declare."""
