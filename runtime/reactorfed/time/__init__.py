"""Logical time: tags, durations and clocks.

The public names below are Lingua Franca's time model: :class:`Tag` and its bounds, the
tag arithmetic of delays (:func:`delay_tag`, :func:`add_delay`, :func:`pred`,
:func:`succ`; the bare ``(time, microstep)`` tuples of :data:`TagT` are what a
coordinator exchanges), durations in ns and the clocks physical time is read from. Each
loads its module on first use (importing ``reactorfed.time.tag`` loads no clock).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .clock import Clock, SystemClock, VirtualClock
    from .duration import Duration, format_duration, hours, minutes, ms, ns, parse_duration, sec, us
    from .tag import (
        FOREVER,
        FOREVER_T,
        FOREVER_TAG,
        MAX_MICROSTEP,
        NEVER,
        NEVER_T,
        NEVER_TAG,
        ZERO_TAG,
        Tag,
        TagT,
        add_delay,
        delay_tag,
        pred,
        succ,
    )

_TAG = ("FOREVER", "FOREVER_T", "FOREVER_TAG", "MAX_MICROSTEP", "NEVER", "NEVER_T", "NEVER_TAG", "ZERO_TAG", "Tag",
        "TagT", "add_delay", "delay_tag", "pred", "succ")
_DURATION = ("Duration", "format_duration", "hours", "minutes", "ms", "ns", "parse_duration", "sec", "us")
_CLOCK = ("Clock", "SystemClock", "VirtualClock")
#: public name -> the module (relative to this package) that defines it
_HOME = {**dict.fromkeys(_TAG, "tag"), **dict.fromkeys(_DURATION, "duration"), **dict.fromkeys(_CLOCK, "clock")}

__all__ = [
    "FOREVER",
    "FOREVER_T",
    "FOREVER_TAG",
    "MAX_MICROSTEP",
    "NEVER",
    "NEVER_T",
    "NEVER_TAG",
    "ZERO_TAG",
    "Clock",
    "Duration",
    "SystemClock",
    "Tag",
    "TagT",
    "VirtualClock",
    "add_delay",
    "delay_tag",
    "format_duration",
    "hours",
    "minutes",
    "ms",
    "ns",
    "parse_duration",
    "pred",
    "sec",
    "succ",
    "us",
]
assert sorted(__all__) == sorted(_HOME)

__getattr__ = lazy_attributes(__name__, globals(), _HOME)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
