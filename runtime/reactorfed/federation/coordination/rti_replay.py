"""A replayed membership schedule, pure: the :class:`Replay` part of
:class:`.rti_membership.RtiMembership`, made when a run's record is loaded
(:meth:`~.rti_membership.RtiMembership.load_schedule`). It holds each slot's changes still
to come: a slot present from the start leaves at its first; an absent one joins at its
recorded tag once its process connected and asked (:meth:`Replay.request_join`), and once
what was sent to it is settled (:meth:`.rti_slots.Slots.settled`; until then it waits in
:attr:`Replay.connected`). The membership admits it (the ``admit`` it gives); the leave
that follows counts from its admission, and the join after that holds grants back already.
"""

from __future__ import annotations

from collections.abc import Callable

from ...time.tag import TagT
from .layout import Layout
from .membership import Change, MembershipError
from .rti_slots import Slots
from .rti_state import Grant

__all__ = ["Replay"]


class Replay:
    """Each slot's changes to come in a replayed schedule (see the module docstring).
    ``connected`` is the membership's set of replayed joiners connected and not admitted
    yet, which this part fills and empties."""

    def __init__(
        self,
        layout: Layout,
        changes: list[Change],
        slots: Slots,
        connected: set[int],
        admit: Callable[[TagT, int, TagT | None], list[Grant]],
    ) -> None:
        self._names = layout.names
        self._slots = slots
        self._admit = admit
        self.connected = connected
        self._todo: dict[int, list[Change]] = {}  # slot -> its changes to come, in order
        for ch in changes:
            self._todo.setdefault(ch.member, []).append(ch)

    def schedule(self) -> None:
        """Tell the slots what each does first: a present slot's leave, an absent one's join."""
        for m, todo in self._todo.items():
            leave = None if todo[0].joined else todo.pop(0).tag
            self._slots.schedule(m, leave, todo[0].tag if todo else None)

    def request_join(self, m: int) -> list[Grant] | None:
        """Slot ``m``'s process asks to join: admitted now at its recorded tag, or once it
        is settled (then it waits in :attr:`connected`: no grant yet). None: the schedule
        has no join of it now."""
        todo = self._todo.get(m)
        if not todo or not todo[0].joined or self._slots.present[m]:
            return None
        if m in self.connected:
            raise MembershipError(f"{self._names[m]} is already joining")
        if not self._slots.settled(m):  # admitted once it is (regrant), as a live join is
            self.connected.add(m)
            return []
        return self._join(m)

    def progressed(self) -> list[Grant]:
        """Reports came: the joiners connected that are settled now are admitted."""
        out: list[Grant] = []
        for m in [m for m in sorted(self.connected) if self._slots.settled(m)]:
            if m in self.connected:  # (not admitted by the regrant of one before it)
                self.connected.discard(m)
                out += self._join(m)
        return out

    def _join(self, m: int) -> list[Grant]:
        todo = self._todo[m]
        ch = todo.pop(0)
        # its next change is a leave: from the start it counts
        out = self._admit(ch.tag, m, todo.pop(0).tag if todo else None)
        if todo:  # and the join after it holds grants back already
            self._slots.hold(m, todo[0].tag)
        return out

    def rejoin(self, m: int) -> TagT | None:
        """The tag ``m`` joins at again after the leave it is to make next."""
        todo = self._todo.get(m)
        return todo[0].tag if todo and todo[0].joined else None
