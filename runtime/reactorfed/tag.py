"""Logical time: tags are (time in integer nanoseconds, microstep), ordered lexicographically.

Tags are plain tuples underneath (a ``NamedTuple``), so comparisons and hashing run in C;
the scheduler keeps bare ``(time, microstep)`` tuples internally and converts to
:class:`Tag` at the API boundary.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["FOREVER", "FOREVER_TAG", "NEVER", "NEVER_TAG", "ZERO_TAG", "Tag", "delay_tag"]

#: The earliest representable time (int64 min, as in Lingua Franca).
NEVER: int = -(2**63)
#: The latest representable time (int64 max).
FOREVER: int = 2**63 - 1
_MAX_MICROSTEP = 2**32 - 1


class Tag(NamedTuple):
    """A point in logical time: ``time`` ns and a ``microstep`` within that instant."""

    time: int
    microstep: int = 0

    def __repr__(self) -> str:
        if self.time == NEVER:
            return "Tag(NEVER)"
        if self.time == FOREVER:
            return "Tag(FOREVER)"
        return f"Tag({self.time}, {self.microstep})"

    def __str__(self) -> str:
        """LF's Python target's form (reactor-c python_tag.c, ``Tag_str``): what ``print``
        and ``str`` give, ``Tag(time=<ns>, microstep=<m>)``; ``repr`` stays compact."""
        return f"Tag(time={self.time}, microstep={self.microstep})"

    def delayed(self, delay: int) -> Tag:
        """The tag ``delay`` ns later: ``(t, m+1)`` for 0, ``(t+d, 0)`` otherwise."""
        return Tag(*delay_tag(self, delay))

    def relative_to(self, start: int) -> Tag:
        """This tag with ``start`` subtracted from its time (elapsed logical time)."""
        return Tag(self.time - start, self.microstep)


NEVER_TAG = Tag(NEVER, 0)
FOREVER_TAG = Tag(FOREVER, _MAX_MICROSTEP)
ZERO_TAG = Tag(0, 0)


def delay_tag(tag: tuple[int, int], delay: int) -> tuple[int, int]:
    """Lingua Franca's tag arithmetic: a zero delay advances the microstep, a positive
    delay advances time and resets the microstep. Saturates at FOREVER."""
    assert delay >= 0, "delays are never negative"
    t, m = tag
    if t == NEVER:
        return tag
    if delay == 0:
        return (t, m + 1)
    if t >= FOREVER - delay:
        return (FOREVER, _MAX_MICROSTEP)
    return (t + delay, 0)
