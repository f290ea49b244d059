"""Logical time: tags are (time in integer nanoseconds, microstep), ordered lexicographically.

Tags are plain tuples underneath (a ``NamedTuple``), so comparisons and hashing run in C;
the scheduler and the federation keep bare ``(time, microstep)`` tuples internally
(:data:`TagT`, the one alias for them) and convert to :class:`Tag` at the API boundary.

All tag arithmetic lives here (as Lingua Franca's in reactor-c's ``core/tag.c``):

* :func:`delay_tag` -- an LF delay ("after d", ``schedule(a, d)``): ``(t, m+1)`` for 0,
  ``(t+d, 0)`` for d > 0 (``lf_delay_tag``);
* :func:`succ` -- the next microstep, ``delay_tag(tag, 0)``;
* :func:`pred` -- the largest tag strictly before (``lf_tag_latest_earlier``);
* :func:`add_delay` -- a path delay ``(dt, dm)`` (a federation's links composed:
  ``(0, 0)`` none, ``(0, 1)`` "after 0", ``(d, 0)`` "after d"): ``(t+dt, dm)`` if
  dt > 0, else ``(t, m+dm)`` (``lf_tag_add``).

One saturation rule for all of them:

* **FOREVER saturates.** A result whose time would reach or pass FOREVER is
  :data:`FOREVER_TAG`, and so is any result from a tag whose time is already FOREVER (it
  counts as FOREVER_TAG), its predecessor included. Nothing is ever past FOREVER_TAG.
* **NEVER stays NEVER.** A delay (:func:`delay_tag`, :func:`succ`, :func:`add_delay`)
  returns a tag whose time is NEVER as it is: nothing is later than NEVER by a delay.
  The predecessor of NEVER_TAG is NEVER_TAG (nothing is before it).
* **Microsteps do not wrap or saturate.** They are Python ints (int64 on the wire), so
  ``(t, MAX_MICROSTEP)`` delayed by 0 is ``(t, MAX_MICROSTEP + 1)``, still before
  FOREVER_TAG. :data:`MAX_MICROSTEP` is FOREVER_TAG's microstep and the one :func:`pred`
  gives at microstep 0 (as reactor-c's ``UINT_MAX``).

This is reactor-c's rule (``lf_delay_tag``, ``lf_tag_add``, ``lf_tag_latest_earlier``)
except at a microstep overflow, where reactor-c has none to follow: ``lf_delay_tag`` wraps
the uint32 microstep to 0 and ``lf_tag_add`` gives FOREVER_TAG (a FIXME there,
reactor-c#430). Both break monotonicity, ``(t, MAX)`` would come out after
``(t+1, 0)``, and a bound computed from a promise must not: here :func:`delay_tag`,
:func:`succ` and :func:`add_delay` are monotone (``a <= b`` gives ``f(a) <= f(b)``; for
:func:`pred` see there), and :func:`succ` and :func:`delay_tag` give a tag strictly after
theirs (unless it is at NEVER, or FOREVER_TAG). :func:`add_delay` also returns a tag at
NEVER unchanged, as :func:`delay_tag` does (``lf_tag_add`` gives NEVER_TAG: the same tag
unless its microstep is not 0).

Delays are never negative (LF's delays, ``after`` and ``min_delay`` are not).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "FOREVER",
    "FOREVER_T",
    "FOREVER_TAG",
    "MAX_MICROSTEP",
    "NEVER",
    "NEVER_T",
    "NEVER_TAG",
    "ZERO_TAG",
    "Tag",
    "TagT",
    "add_delay",
    "delay_tag",
    "pred",
    "succ",
]

#: A bare tag ``(time, microstep)``: what the scheduler and the federation pass around
#: (a :class:`Tag` is one too). A path delay ``(dt, dm)`` (see :func:`add_delay`) has the
#: same shape.
TagT = tuple[int, int]

#: The earliest representable time (int64 min, as in Lingua Franca).
NEVER: int = -(2**63)
#: The latest representable time (int64 max).
FOREVER: int = 2**63 - 1
#: FOREVER_TAG's microstep (uint32 max, as in Lingua Franca), and the one :func:`pred` gives
#: at microstep 0. Not a cap: a microstep may pass it (see the module docstring).
MAX_MICROSTEP: int = 2**32 - 1


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
        """The tag ``delay`` ns later: ``(t, m+1)`` for 0, ``(t+d, 0)`` otherwise
        (:func:`delay_tag`)."""
        return Tag(*delay_tag(self, delay))

    def relative_to(self, start: int) -> Tag:
        """This tag with ``start`` subtracted from its time (elapsed logical time)."""
        return Tag(self.time - start, self.microstep)


#: The last tag and the first, bare: the forms the functions here return (bare tuples, never
#: a Tag, except a NEVER tag handed in, which comes back as it is), and what the scheduler
#: and the federation compare with. Defined here only: everything else imports them.
FOREVER_T: TagT = (FOREVER, MAX_MICROSTEP)
NEVER_T: TagT = (NEVER, 0)
#: The same as :class:`Tag` s (what users see)
NEVER_TAG = Tag(*NEVER_T)
FOREVER_TAG = Tag(*FOREVER_T)
ZERO_TAG = Tag(0, 0)


def delay_tag(tag: TagT, delay: int) -> TagT:
    """``tag`` delayed by ``delay`` ns (reactor-c's ``lf_delay_tag``): a zero delay
    advances the microstep, ``(t, m+1)``; a positive delay advances time and resets the
    microstep, ``(t+d, 0)``. FOREVER_TAG when the time reaches FOREVER or ``tag`` is at
    FOREVER; a tag at NEVER stays as it is. ``delay`` must not be negative."""
    assert delay >= 0, "delays are never negative"
    t, m = tag
    if t == NEVER:
        return tag
    if delay:
        return (td, 0) if (td := t + delay) < FOREVER else FOREVER_T
    return (t, m + 1) if t < FOREVER else FOREVER_T


def succ(tag: TagT) -> TagT:
    """The next microstep, ``(t, m+1)``: the earliest tag after ``tag`` at the same time
    (``delay_tag(tag, 0)``). FOREVER_TAG for a tag at FOREVER; a tag at NEVER stays as it
    is."""
    t, m = tag
    if t == NEVER:
        return tag
    return (t, m + 1) if t < FOREVER else FOREVER_T


def pred(tag: TagT) -> TagT:
    """The largest tag strictly before ``tag`` (reactor-c's ``lf_tag_latest_earlier``):
    ``(t, m-1)``, or ``(t-1, MAX_MICROSTEP)`` at microstep 0. FOREVER_TAG for a tag at
    FOREVER (it counts as FOREVER_TAG, which stays); NEVER_TAG for NEVER_TAG (nothing is
    before it).

    At microstep 0 it assumes no microstep past MAX_MICROSTEP at the time before (as
    reactor-c does): there could be one only after 2**32 zero-delay steps at one time, and
    then a grant ``pred(bound)`` stops short of it (waits longer, never goes too far). So
    pred is monotone on tags whose microstep is at most MAX_MICROSTEP + 1."""
    t, m = tag
    if t >= FOREVER:
        return FOREVER_T
    if m > 0:
        return (t, m - 1)
    if t == NEVER:
        return NEVER_T
    return (t - 1, MAX_MICROSTEP)


def add_delay(tag: TagT, delay: TagT) -> TagT:
    """``tag`` plus a path delay ``(dt, dm)`` (reactor-c's ``lf_tag_add``): ``(t+dt, dm)``
    if ``dt > 0`` (the microstep of ``tag`` is lost, as after an "after d" link), else
    ``(t, m+dm)``. So ``(0, 0)`` (no delay) gives ``tag``, ``(0, 1)`` gives ``succ(tag)``
    and ``(d, 0)`` gives ``delay_tag(tag, d)``. FOREVER_TAG when the time reaches FOREVER
    or ``tag`` is at FOREVER; a tag at NEVER stays as it is. Neither part of ``delay`` may
    be negative (not checked: a hot path)."""
    t, m = tag
    if t == NEVER:
        return tag
    dt, dm = delay
    if dt:
        return (td, dm) if (td := t + dt) < FOREVER else FOREVER_T
    return (t, m + dm) if t < FOREVER else FOREVER_T
