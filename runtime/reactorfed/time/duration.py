"""Durations are integer nanoseconds. Helpers to build, parse and format them."""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Duration", "format_duration", "hours", "minutes", "ms", "ns", "parse_duration", "sec", "us"]

Duration = int
#: A duration a declaration may take from the reactor's parameters, as a multiport's
#: ``width=`` does: an int (ns), the name of an attribute the reactor's ``__init__``
#: sets, or a function of the reactor. Resolved per instance when the program is assembled.
DurationParam = int | str | Callable[[Any], Any]

_UNITS: dict[str, int] = {
    "ns": 1,
    "nsec": 1,
    "us": 1_000,
    "usec": 1_000,
    "ms": 1_000_000,
    "msec": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
    "secs": 1_000_000_000,
    "m": 60_000_000_000,
    "min": 60_000_000_000,
    "mins": 60_000_000_000,
    "minute": 60_000_000_000,
    "minutes": 60_000_000_000,
    "h": 3_600_000_000_000,
    "hour": 3_600_000_000_000,
    "hours": 3_600_000_000_000,
}
_PATTERN = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")


def _whole(n: int, unit: str, size: int) -> Duration:
    # Time is never a float: ms(1.5) used to become 1 ms silently.
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{unit}({n!r}): durations are whole numbers of a unit (time is never a float); use a smaller unit")
    return int(n) * size


def ns(n: int) -> Duration:
    return _whole(n, "ns", 1)


def us(n: int) -> Duration:
    return _whole(n, "us", 1_000)


def ms(n: int) -> Duration:
    return _whole(n, "ms", 1_000_000)


def sec(n: int) -> Duration:
    return _whole(n, "sec", 1_000_000_000)


def minutes(n: int) -> Duration:
    return _whole(n, "minutes", 60_000_000_000)


def hours(n: int) -> Duration:
    return _whole(n, "hours", 3_600_000_000_000)


def parse_duration(text: str) -> Duration:
    """Parse ``"5s"``, ``"10 ms"``, ``"250us"``, ``"0"`` into nanoseconds.

    Only whole numbers are accepted: time is never a float.
    """
    m = _PATTERN.match(text.lower())
    if not m:
        raise ValueError(f"not a duration: {text!r} (expected e.g. '5s', '10 ms', '250us')")
    value, unit = int(m.group(1)), m.group(2)
    if unit == "":
        if value == 0:
            return 0
        raise ValueError(f"duration {text!r} needs a unit (ns, us, ms, s, min, h)")
    if unit not in _UNITS:
        raise ValueError(f"unknown time unit {unit!r} in {text!r} (use ns, us, ms, s, min, h)")
    return value * _UNITS[unit]


def format_duration(d: Duration) -> str:
    """A short human form: the largest unit that divides ``d`` exactly (``1500 ms``)."""
    if d == 0:
        return "0"
    for unit, size in (("h", 3_600_000_000_000), ("min", 60_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if d % size == 0:
            return f"{d // size} {unit}"
    return f"{d} ns"


def check_duration(value: object, what: str) -> int:
    """``value`` if it is a whole number of ns >= 0, else a ValidationError naming ``what``."""
    from ..errors import ValidationError

    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(f"{what} must be a whole number of ns >= 0 (time is never a float), got {value!r}")
    return value


def check_param(value: object, what: str) -> None:
    """Check a :data:`DurationParam` where it is declared: an int now; an attribute name
    or a function when it is resolved (:func:`resolve_param`)."""
    from ..errors import ValidationError

    if isinstance(value, str):
        if not value.isidentifier():
            raise ValidationError(f"{what}: {value!r} is not the name of a parameter (an attribute of the reactor)")
        return
    if callable(value):
        return
    check_duration(value, what)


def resolve_param(value: Any, reactor: Any, what: str) -> Any:
    """The value of a :data:`DurationParam` for ``reactor`` (not yet checked: callers check
    it with a message naming the element). ``what`` names the element for errors."""
    from ..errors import ValidationError

    if isinstance(value, str):
        try:
            return getattr(reactor, value)
        except AttributeError:
            raise ValidationError(
                f"{what} is the parameter {value!r}, but {reactor.fqn} has no attribute {value!r} (set it in __init__)"
            ) from None
    if callable(value):
        return value(reactor)
    return value
