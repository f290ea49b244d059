"""Membership of elastic banks, as data: what the RTI's core (:class:`.rti_core.RtiCore`)
emits when members join and leave, the recorded schedule, and its check.

A change takes effect at a tag, the same for every federate: a member that joins at ``J``
runs from ``J`` on (its timers and startup reactions at ``J``); one that leaves at ``L``
runs the tags before ``L`` and nothing from ``L`` on. A message is carried when its
*sender* is present at the tag it is sent at and its receiver is present at that tag too
(so at every tag every federate sees one width); a message sent before ``L`` to a member
that leaves at ``L`` and arriving at or after ``L`` (over a delay) is dropped by the
receiving side, in the original run and in a replay alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.elastic import MemberChange
from ...time.tag import NEVER_T, TagT
from ..errors import FederationError
from .layout import Layout

__all__ = ["Admit", "Change", "MembershipError", "Query", "Refused", "RoundEnd", "bank_schedule", "check_schedule",
           "record_of"]


class MembershipError(FederationError):
    """A membership change that the program's declaration or the federation's state
    refuses (a width out of [min, max], a federate that is not an elastic slot, a schedule
    that does not add up)."""


@dataclass(frozen=True, order=True)
class Change:
    """From ``tag`` on, ``member`` is present (``joined``) or absent. Sent to every
    federate; the run's record is the list of them, in order.

    ``quiet``, of the leave of a member whose process failed: the tag after the last one
    it completed. From there to ``tag`` it is present (every federate saw it so) and does
    nothing: it sends nothing, and what is sent to it is dropped. A replay repeats that
    (the record says what happened: the rounds it was asked in and did not answer stay
    incomplete)."""

    tag: TagT
    member: int
    joined: bool
    quiet: TagT | None = None


@dataclass(frozen=True)
class Query:
    """To every federate that is present (the members leaving included, the ones
    joining not): the earliest tag at which you can apply ``changes`` (members, joined),
    at least ``tag``. Answer with :meth:`.RtiMembership.on_membership_reply` and go on only with
    tags before your answer until the :class:`Change` s come (as for a stop request).
    The answer is the latest of: the tag after the last one you completed or are
    processing, and the tag after the last tag of a message you put on a link to one of
    the ``changes``' members."""

    round: int
    tag: TagT
    changes: tuple[tuple[int, bool], ...]
    #: the federates asked
    to: frozenset[int]


@dataclass(frozen=True)
class RoundEnd:
    """To the federates a :class:`Query` asked (``to``): round ``round`` is over, and every
    :class:`Change` it made came before this (none when it was called off: the federation
    stops first, or its only joiner failed). A federate holds its answer's barrier until
    this comes."""

    round: int
    to: frozenset[int]


@dataclass(frozen=True)
class Admit:
    """To a joining member: start at ``tag``. ``sent`` and ``received`` are the message
    counts its slot starts from, per peer (the RTI's grants count cumulatively, per slot,
    over all the slot's incarnations)."""

    member: int
    tag: TagT
    sent: dict[int, int]
    received: dict[int, int]


@dataclass(frozen=True)
class Refused:
    """A request the core did not carry out (the federation is stopping, the change fell
    at or past the stop tag, a replay has no such change)."""

    member: int
    joined: bool
    reason: str


def check_schedule(layout: Layout, changes: list[Change]) -> None:
    """Refuse a schedule that does not add up for ``layout``: changes out of tag order
    (a member's own strictly increasing),
    of federates that are not elastic slots, joins of present members or leaves of absent
    ones, widths outside a bank's [min, max] once a tag's changes are applied."""
    present = set(layout.initial_members())
    last: dict[int, TagT] = {}
    for i, ch in enumerate(changes):
        if i and ch.tag < changes[i - 1].tag:
            raise MembershipError(f"membership schedule: change {i} ({ch}) is before the one before it")
        if ch.member in last and ch.tag <= last[ch.member]:
            raise MembershipError(f"membership schedule: change {i} ({ch}) is not after that member's last change")
        if not 0 <= ch.member < len(layout.names) or layout.elastic_of(ch.member) is None:
            raise MembershipError(f"membership schedule: federate {ch.member} is not a member of an elastic bank")
        name = layout.names[ch.member]
        if ch.joined == (ch.member in present):
            raise MembershipError(
                f"membership schedule: {name} {'joins' if ch.joined else 'leaves'} at {ch.tag} but is "
                f"{'already present' if ch.joined else 'absent'}")
        if ch.quiet is not None and (ch.joined or ch.quiet >= ch.tag or ch.quiet < last.get(ch.member, NEVER_T)):
            raise MembershipError(f"membership schedule: {name}'s quiet tag {ch.quiet} is not between its join "
                                  f"and a leave after it")
        (present.add if ch.joined else present.discard)(ch.member)
        last[ch.member] = ch.tag
        if i + 1 == len(changes) or changes[i + 1].tag != ch.tag:
            for g in layout.elastic:
                w = sum(1 for f in g.slots if f in present)
                if not g.min <= w <= g.max:
                    raise MembershipError(
                        f"membership schedule: bank {g.name} has width {w} at {ch.tag}, outside [{g.min}, {g.max}]")


def bank_schedule(layout: Layout, record: list[Change], start: int) -> list[MemberChange]:
    """A run's record (federate indices, absolute tags) as the schedule one process applies
    (:meth:`reactorfed.execution.scheduler.Scheduler.set_membership`: banks, bank indices, tags after
    the start ``start``)."""
    out = []
    for ch in record:
        g = layout.elastic_of(ch.member)
        if g is None:
            raise MembershipError(f"membership record: federate {ch.member} is not a member of an elastic bank")
        quiet = None if ch.quiet is None else (ch.quiet[0] - start, ch.quiet[1])
        out.append(MemberChange(ch.tag[0] - start, ch.tag[1], g.name, g.slots.index(ch.member), ch.joined, quiet))
    return out


def record_of(layout: Layout, schedule: list[MemberChange], start: int) -> list[Change]:
    """A schedule of bank changes as the RTI's record (what
    :meth:`.rti_membership.RtiMembership.load_schedule` replays)."""
    banks = {g.name: g for g in layout.elastic}
    out = []
    for ch in sorted(schedule):
        g = banks.get(ch.bank)
        if g is None or not 0 <= ch.index < len(g.slots):
            raise MembershipError(f"membership schedule: no member {ch.index} of an elastic bank {ch.bank!r}")
        quiet = None if ch.quiet is None else (start + ch.quiet[0], ch.quiet[1])
        out.append(Change((start + ch.time, ch.microstep), g.slots[ch.index], ch.joined, quiet))
    return out
