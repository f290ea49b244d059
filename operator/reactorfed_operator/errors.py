"""The error every pure check raises: a spec the operator cannot run, naming the field."""

from __future__ import annotations

__all__ = ["SpecError"]


class SpecError(ValueError):
    """A spec the operator cannot run; ``field`` names the offending path."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
