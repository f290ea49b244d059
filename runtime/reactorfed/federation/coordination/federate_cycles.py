"""A federate's links on zero-delay cycles, pure: the :class:`CycleLinks` part of
:class:`.federate_core.FederateCore`.

Promises cannot advance around a zero-delay cycle: its members report to the RTI at once
and advance on its PTAG. Within a tag, a member sends each of its outputs on the cycle as
soon as the reactions that could write it have run (:meth:`CycleLinks.outputs_due`), and
waits, before the first reaction that reads an input on the cycle, until that input's
value or absence at the tag has arrived (:meth:`CycleLinks.known`; the core's
``inputs_ready`` adds the grants and their counts): the scheduler stops at those levels
(the checkpoints). Under decentralized coordination the inputs with an ``absent_after``
are waited for the same way (:mod:`.federate_maxwait`), on whatever link they come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...time.tag import NEVER_T, TagT

if TYPE_CHECKING:
    from .federate_maxwait import MaxWait

__all__ = ["CycleLinks"]


class CycleLinks:
    """A federate's links on zero-delay cycles, and what arrived on them (see the module)."""

    def __init__(self) -> None:
        self._outs: list[tuple[int, int]] = []  # (send after this level, link id)
        self._ins: list[tuple[int, int]] = []  # (needed before this level, link id)
        #: link id -> the latest tag whose value or absence arrived on it (the core's
        #: ``on_data`` writes it for every data message: a hot path, no call)
        self.status: dict[int, TagT] = {}
        self._sent_this_tag: set[int] = set()  # links whose value or absence went at _sent_at
        self._sent_at: TagT = NEVER_T
        #: with elastic banks: whether an input link's sender is absent at a tag (an
        #: elastic member is on a cycle only while present: nothing comes from it then)
        self.absent: Callable[[int, TagT], bool] | None = None

    def checkpoints(self, outs: list[tuple[int, int]], ins: list[tuple[int, int]]) -> list[int]:
        """This federate's links on zero-delay cycles: ``outs``, (the level after the last
        reaction that may write it, link id); ``ins``, (the level of the first reaction
        that reads it, link id). The levels the scheduler must stop at, in order."""
        self._outs = list(outs)
        self._ins = list(ins)
        return sorted({lvl for lvl, _ in outs} | {lvl for lvl, _ in ins})

    def outputs_due(self, tag: TagT, level: int) -> list[int]:
        """At a checkpoint before ``level`` of ``tag``: the links on a zero-delay cycle whose
        value (or absence) can go now, each once a tag."""
        done = self._sent_this_tag
        if tag != self._sent_at:
            self._sent_at = tag
            done.clear()
        due = [lid for lvl, lid in self._outs if lvl <= level and lid not in done]
        done.update(due)
        return due

    def known(self, tag: TagT, level: int) -> bool:
        """At a checkpoint before ``level`` of ``tag``: whether every input on a zero-delay
        cycle read from this level on is known at ``tag`` (its value or its absence arrived)."""
        status, absent = self.status, self.absent
        for need, lid in self._ins:
            if need <= level and status.get(lid, NEVER_T) < tag and (absent is None or not absent(lid, tag)):
                return False
        return True

    def passed(self, tag: TagT, level: int, maxwait: MaxWait, now: int) -> bool:
        """Decentralized coordination: whether every input on a zero-delay cycle read from
        ``level`` on is known at ``tag`` or past its maxwait + absent_after (see
        :mod:`.federate_maxwait`)."""
        status, absent = self.status, self.absent
        for need, lid in self._ins:
            if (need <= level and status.get(lid, NEVER_T) < tag and not maxwait.passed(tag, now, lid)
                    and (absent is None or not absent(lid, tag))):
                return False
        return True

    def on_absent(self, link: int, tag: TagT) -> None:
        """``link`` (on a zero-delay cycle) carries nothing at ``tag``."""
        if tag > self.status.get(link, NEVER_T):
            self.status[link] = tag
