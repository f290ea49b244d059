"""The messages of elastic banks' membership rounds (issue 19), typed as the control
messages of :mod:`.messages` are.

A round, as the RTI's core runs it (coordination/rti_core.py, membership.py): the RTI asks
every present federate (Query), each answers (QueryReply) and goes no further than its
answer until the round is over (RoundEnd, after the round's Changes); a joining member
gets its start (Admit). A member asks to join (JoinReq, after the handshake) or to leave
(LeaveReq); Refused when the RTI did not. Peer gives a replayed joiner's data address to its
upstream federates; Lost tells the downstream ones that a member's process failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ...time.tag import FOREVER_T, TagT
from .kinds import (
    ADMIT,
    CHANGE,
    JOIN_REQ,
    LEAVE_REQ,
    LOST,
    PEER,
    QUERY,
    QUERY_REPLY,
    REFUSED,
    ROUND_END,
    packb,
)

__all__ = ["Admit", "Change", "JoinReq", "LeaveReq", "Lost", "Peer", "Query", "QueryReply", "Refused", "RoundEnd"]

_new = tuple.__new__  # see messages.py


class QueryReply(NamedTuple):
    """federate -> RTI: the earliest tag this federate can apply round ``round``'s changes
    at (it goes no further than ``tag`` until they come). ``took``: for each failed member
    the round has leave that this federate heard from, the tag of the last message it took
    from it (it did that tag's work: the record's quiet tag is after it)."""

    round: int
    tag: TagT
    took: Mapping[int, TagT] = {}

    def pack(self) -> bytes:
        return packb([QUERY_REPLY, self.round, *self.tag, {m: list(t) for m, t in self.took.items()}])

    @classmethod
    def _of(cls, m: list[Any]) -> QueryReply:
        return _new(cls, (m[1], (m[2], m[3]), {k: (t[0], t[1]) for k, t in m[4].items()}))


class JoinReq(NamedTuple):
    """federate -> RTI: this elastic member (its slot admitted by the handshake) asks to
    join the running federation; ``physical_time`` is its clock at the request (Lingua
    Franca's first term of the effective start tag)."""

    physical_time: int

    def pack(self) -> bytes:
        return packb([JOIN_REQ, self.physical_time])

    @classmethod
    def _of(cls, m: list[Any]) -> JoinReq:
        return _new(cls, (m[1],))


class LeaveReq(NamedTuple):
    """federate -> RTI: this elastic member asks to leave (at a tag agreed in a round)."""

    def pack(self) -> bytes:
        return packb([LEAVE_REQ])

    @classmethod
    def _of(cls, m: list[Any]) -> LeaveReq:
        return _new(cls, ())


class Query(NamedTuple):
    """RTI -> federate: membership round ``round`` will apply ``changes`` ((member,
    joined), ...) at ``tag`` or later: answer with a :class:`QueryReply`."""

    round: int
    tag: TagT
    changes: tuple[tuple[int, bool], ...]

    def pack(self) -> bytes:
        return packb([QUERY, self.round, *self.tag, [list(c) for c in self.changes]])

    @classmethod
    def _of(cls, m: list[Any]) -> Query:
        return _new(cls, (m[1], (m[2], m[3]), tuple((c[0], c[1]) for c in m[4])))


class Change(NamedTuple):
    """RTI -> federate: from ``tag`` on, ``member`` is present (``joined``) or absent.
    ``endpoint``: a joiner's data address, from its HELLO, for its upstream peers to
    connect to (empty for a leave, and for a join whose process has not connected yet:
    a replayed one, sent at the start)."""

    tag: TagT
    member: int
    joined: bool
    endpoint: str = ""

    def pack(self) -> bytes:
        return packb([CHANGE, *self.tag, self.member, self.joined, self.endpoint])

    @classmethod
    def _of(cls, m: list[Any]) -> Change:
        return _new(cls, ((m[1], m[2]), m[3], m[4], m[5]))


class Admit(NamedTuple):
    """RTI -> a joining member: start at ``tag``; the message counts its slot starts from,
    per downstream peer (``sent``) and upstream peer (``received``)."""

    tag: TagT
    sent: dict[int, int]
    received: dict[int, int]

    def pack(self) -> bytes:
        return packb([ADMIT, *self.tag, self.sent, self.received])

    @classmethod
    def _of(cls, m: list[Any]) -> Admit:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Refused(NamedTuple):
    """RTI -> member: its request to join (``joined``) or leave was not carried out."""

    joined: bool
    reason: str

    def pack(self) -> bytes:
        return packb([REFUSED, self.joined, self.reason])

    @classmethod
    def _of(cls, m: list[Any]) -> Refused:
        return _new(cls, (m[1], m[2]))


class RoundEnd(NamedTuple):
    """RTI -> federate: membership round ``round`` is over; its :class:`Change` s (none if
    it was called off) came before this. The barrier of the answer to its Query lifts."""

    round: int

    def pack(self) -> bytes:
        return packb([ROUND_END, self.round])

    @classmethod
    def _of(cls, m: list[Any]) -> RoundEnd:
        return _new(cls, (m[1],))


class Peer(NamedTuple):
    """RTI -> the federates upstream of ``member``: the data address of its incarnation
    that joins at ``tag``, sent when the RTI admits it, before its :class:`Admit`. For a
    replayed join: its :class:`Change` went out at the start, before its process
    connected, without an address. (The tag tells a new process at an old address from
    the one linked already.)"""

    tag: TagT
    member: int
    endpoint: str

    def pack(self) -> bytes:
        return packb([PEER, *self.tag, self.member, self.endpoint])

    @classmethod
    def _of(cls, m: list[Any]) -> Peer:
        return _new(cls, ((m[1], m[2]), m[3], m[4]))


class Lost(NamedTuple):
    """RTI -> the federates downstream of ``member``: its process failed (the RTI's
    verdict, after every grant it computed before). Nothing more it sent is waited for;
    its leave is agreed in a round, as any. ``quiet``: the tag after the last one the RTI
    knew it completed: what it sent at or after it, or after the last tag taken from it
    if later (told in :class:`QueryReply`), is not taken (the record's quiet tag,
    :class:`..coordination.membership.Change`: a replay has none of it)."""

    member: int
    quiet: TagT = FOREVER_T

    def pack(self) -> bytes:
        return packb([LOST, self.member, *self.quiet])

    @classmethod
    def _of(cls, m: list[Any]) -> Lost:
        return _new(cls, (m[1], (m[2], m[3])))
