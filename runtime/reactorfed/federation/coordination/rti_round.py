"""A membership round of the RTI's core (:mod:`.rti_membership` runs them): its state, and
Lingua Franca's rule for the tag it proposes (reactor-c's ``handle_timestamp``, branch
``transient-fed``), as a function of what the core knows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...time.tag import TagT, succ
from .membership import Change
from .rti_state import FOREVER_T, MAX_MICROSTEP, NEVER_T, FederateState

__all__ = ["Round", "normal", "proposal"]


@dataclass
class Round:
    """A round of membership changes: the tag so far (the proposal, raised by answers),
    and the federates that have not answered yet."""

    id: int
    tag: TagT
    changes: tuple[tuple[int, bool], ...]
    waiting: set[int]
    #: the federates asked (they hold their answers' barriers until the RoundEnd)
    asked: frozenset[int]

    def answer(self, f: int, tag: TagT) -> None:
        """``f`` can apply the changes at ``tag`` at the earliest."""
        self.waiting.discard(f)
        if tag > self.tag:
            self.tag = normal(tag)

    def gone(self, f: int, last: TagT) -> None:
        """``f`` resigned or failed before it answered: its answer is the tag after
        ``last``, the last it completed (what it did at that tag stands, with the
        membership it had)."""
        self.waiting.discard(f)
        if last != FOREVER_T:
            self.tag = max(self.tag, normal(succ(last)))


def normal(tag: TagT) -> TagT:
    """``tag``, or the next tag a federate can be at if its microstep is past the wire's
    32 bits (``succ`` of a grant ``(t, 2**32 - 1)``, ``pred`` of ``(t + 1, 0)``)."""
    return (tag[0] + 1, 0) if tag[1] > MAX_MICROSTEP and tag[0] < FOREVER_T[0] else tag


def proposal(
    m: int,
    start_time: int,
    physical_time: int | None,
    last: TagT,
    downstream: Iterable[FederateState],
    addressed: TagT,
    record: list[Change],
) -> TagT:
    """LF's earliest tag for a change of member ``m``, from what the core knows (the
    answers to the round cover what it does not): not before the start, nor (a join
    asked live) before ``physical_time``, the joiner's clock at its request; after
    ``last``, what the slot's last incarnation (or, leaving, this one) completed; after
    every tag granted to a federate ``downstream`` (of a joiner); after ``addressed``,
    the latest tag of a message reported sent to ``m``; not before the last change
    ``record`` has, and after ``m``'s own last one."""
    t: TagT = (start_time, 0)
    if physical_time is not None and (physical_time, 0) > t:
        t = (physical_time, 0)
    if last != FOREVER_T and succ(last) > t:
        t = succ(last)
    for st in downstream:
        t = max(t, succ(st.granted), succ(st.ptag))
    if addressed != NEVER_T:
        t = max(t, succ(addressed))
    if record:  # the record's tags never decrease; a member's own increase
        t = max(t, record[-1].tag)
        mine = [ch.tag for ch in record if ch.member == m]
        if mine:
            t = max(t, succ(mine[-1]))
    return normal(t)
