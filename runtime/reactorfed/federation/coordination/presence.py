"""Who is present at which tag, as one federate knows it: the membership of a federation's
elastic banks (issue 19; :mod:`.membership` for the RTI's side), built from the changes
the RTI sends (:class:`.membership.Change`: from a tag on, a member is present or absent).

The same changes reach every federate before it passes their tags (the round's barrier,
:class:`.federate_core.FederateCore`), so every federate sees one membership at each tag.
A member present from ``J`` until it leaves at ``L`` is one *incarnation* of its slot; a
later join of the slot is another (a new process). A message goes from a sender present at
its tag ``t`` to the incarnation of the receiver present at ``t``, and is delivered only if
that incarnation is still present at the tag it arrives at: a message sent before ``L``
and arriving at or after it is dropped by the receiving side.
"""

from __future__ import annotations

import bisect

from ...time.tag import NEVER_T, TagT
from .layout import Layout

__all__ = ["Presence"]


class Presence:
    """The changes known so far, per member, and what follows from them."""

    def __init__(self, layout: Layout) -> None:
        #: every elastic slot; every other federate is present from start to end
        self.slots = frozenset(f for g in layout.elastic for f in g.slots)
        self._initial = layout.initial_members()
        #: member -> its changes, in tag order: tags, and joined
        self._tags: dict[int, list[TagT]] = {}
        self._joined: dict[int, list[bool]] = {}
        #: every change known, in the order it came
        self.known: list[tuple[TagT, int, bool]] = []

    def set_initial(self, absent: frozenset[int]) -> None:
        """The elastic slots absent at the start are ``absent`` (the RTI's view, which wins
        over this program's own initial widths), before any change is known."""
        assert not self.known, "the initial membership is set before any change"
        self._initial = frozenset(f for f in self._initial | self.slots if f not in absent)

    def add(self, tag: TagT, member: int, joined: bool) -> None:
        """From ``tag`` on, ``member`` is present (``joined``) or absent."""
        assert member in self.slots, f"federate {member} is not an elastic slot"
        tags = self._tags.setdefault(member, [])
        joins = self._joined.setdefault(member, [])
        assert not tags or tag > tags[-1], f"a change of {member} at {tag} is not after its last one"
        assert joined != self.present(member, tag), f"federate {member} {'joins' if joined else 'leaves'} twice"
        tags.append(tag)
        joins.append(joined)
        self.known.append((tag, member, joined))

    def present(self, f: int, tag: TagT) -> bool:
        """Whether ``f`` is present at ``tag`` (by the changes known)."""
        if f not in self.slots:
            return True
        tags = self._tags.get(f)
        if not tags:
            return f in self._initial
        i = bisect.bisect_right(tags, tag)
        return self._joined[f][i - 1] if i else f in self._initial

    def joined_at(self, f: int, tag: TagT) -> TagT | None:
        """The tag the incarnation of ``f`` present at ``tag`` started at (None: absent
        then; a member present from the start started at no change: the NEVER tag)."""
        if not self.present(f, tag):
            return None
        tags = self._tags.get(f, [])
        i = bisect.bisect_right(tags, tag)
        return tags[i - 1] if i else NEVER_T

    def leaves_at(self, f: int, tag: TagT) -> TagT | None:
        """The tag the incarnation of ``f`` present at ``tag`` leaves at, if known."""
        tags = self._tags.get(f, [])
        i = bisect.bisect_right(tags, tag)
        return tags[i] if i < len(tags) and not self._joined[f][i] else None

    def next_join(self, f: int, after: TagT) -> TagT | None:
        """The first known join of ``f`` at or after ``after``."""
        tags = self._tags.get(f, [])
        i = bisect.bisect_left(tags, after)
        for k in range(i, len(tags)):
            if self._joined[f][k]:
                return tags[k]
        return None

    def delivered(self, receiver: int, sent_at: TagT, arrives: TagT) -> bool:
        """Whether a message sent at ``sent_at`` arriving at ``arrives`` reaches
        ``receiver``: it is present at ``sent_at`` and does not change until ``arrives``."""
        if receiver not in self.slots:
            return True
        if not self.present(receiver, sent_at):
            return False
        tags = self._tags.get(receiver, [])
        i = bisect.bisect_right(tags, sent_at)
        return i == len(tags) or tags[i] > arrives

    def width(self, slots: tuple[int, ...], tag: TagT) -> int:
        """How many of ``slots`` (a bank's) are present at ``tag``."""
        return sum(1 for f in slots if self.present(f, tag))
