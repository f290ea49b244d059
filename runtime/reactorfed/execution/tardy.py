"""Tardy messages: what a federate under decentralized coordination does with a message
that arrives after it has passed the message's tag (an STP violation, in LF's older words).

The message is not lost: the federate's coordinator posts it at a later tag (reactor-c:
the microstep after the current tag, or after the port's last event) and tells
:class:`Tardiness` the tag it was meant for. At that later tag the input's slot carries
the intended tag (``port.intended_tag``), and a reaction it triggers is *tardy*: its
tardy handler (:meth:`~reactorfed.model.reaction.ReactionDecl.tardy_handler`, LF's
``tardy``, formerly ``STAA``/``STP``) runs instead of its body. A tardy reaction without a
handler runs its body, with a warning, and whatever it writes at that tag is tardy too:
the violation goes down the chain of reactions until one handles it (reactor-c passes
``is_STP_violated`` downstream the same way, ``schedule_output_reactions``). What a handler
writes is on time.

Programs under centralized coordination never see a tardy message; their reactions are
not wrapped (:meth:`Tardiness.install` runs only when the federation is decentralized).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model.port import Port
from ..model.trigger import Slot
from ..time.tag import TagT, succ

if TYPE_CHECKING:
    from ..assembly.program import Program
    from ..model.reaction import Reaction
    from .event_queue import EventQueue

__all__ = ["Tardiness"]

log = logging.getLogger("reactorfed.execution.scheduler")


class Tardiness:
    """The tardy messages of one run: where they are posted, and the reactions' check."""

    def __init__(self) -> None:
        #: tag -> the slots whose event at that tag is a tardy message, with its intended tag
        self.due: dict[TagT, list[tuple[Slot, TagT]]] = {}
        self._marked: list[Slot] = []  # slots carrying an intended tag at the current tag
        #: tardy reactions so far (handled or not)
        self.violations = 0
        #: of which, without a handler (their bodies ran, with a warning)
        self.unhandled = 0
        #: (tag, slot) -> the physical time its message arrived (``port.physical_time_of_arrival``)
        self.arrivals: dict[tuple[TagT, Slot], int] = {}
        # the slots of ``arrivals`` by tag, and those tags least first: a federate that runs
        # behind its upstream holds arrivals for many tags ahead, and a tag's end forgets
        # only those at or before it
        self._slots_at: dict[TagT, list[Slot]] = {}
        self._arrival_tags: list[TagT] = []

    def install(self, program: Program) -> None:
        """Wrap every reaction triggered by a port in the tardy check."""
        for rx in program.reactions:
            ins = [program.slots[e] for e in rx.triggers if isinstance(e, Port)]
            if ins:
                outs = [program.slots[e] for e in rx.effects if isinstance(e, Port)]
                rx.call = self._wrap(rx, rx.call, ins, outs)

    def post(self, tag: TagT, slot: Slot, intended: TagT) -> None:
        """The event for ``slot`` at ``tag`` is a message meant for ``intended``."""
        self.due.setdefault(tag, []).append((slot, intended))

    def place(self, queue: EventQueue, current: TagT, stop: TagT, slot: Slot, value: Any,
              intended: TagT) -> TagT | None:
        """A message for ``slot`` meant for ``intended`` arrived after that tag was
        processed (or began), or finds ``slot`` taken at ``intended`` by an earlier tardy
        one: queue it at the first microstep after both ``current`` and ``intended`` that
        ``slot`` has no event at (reactor-c's handle_tagged_message). Returns that tag;
        None when it is past ``stop`` (the message is dropped)."""
        tag = succ(max(current, intended))
        while tag <= stop:
            if queue.post_exact(tag, slot, value):
                self.post(tag, slot, intended)
                return tag
            tag = succ(tag)
        return None

    def begin(self, tag: TagT) -> None:
        """Tag ``tag`` begins: its tardy messages' slots carry their intended tags."""
        for slot, intended in self.due.pop(tag, ()):
            self._mark(slot, intended)

    def arrived(self, tag: TagT, slot: Slot, t: int) -> None:
        """The message for ``slot`` at ``tag`` arrived at physical time ``t``."""
        slots = self._slots_at.get(tag)
        if slots is None:
            slots = self._slots_at[tag] = []
            heapq.heappush(self._arrival_tags, tag)
        if (tag, slot) not in self.arrivals:
            slots.append(slot)
        self.arrivals[(tag, slot)] = t

    def end(self, tag: TagT) -> None:
        """Tag ``tag`` is over: every value is on time again."""
        for slot in self._marked:
            slot.intended = None
        self._marked.clear()
        tags = self._arrival_tags
        while tags and tags[0] <= tag:
            done = heapq.heappop(tags)
            for slot in self._slots_at.pop(done):
                del self.arrivals[(done, slot)]

    def _mark(self, slot: Slot, intended: TagT) -> None:
        if slot.intended is None:
            self._marked.append(slot)
            slot.intended = intended
        elif intended < slot.intended:
            slot.intended = intended

    def _wrap(self, rx: Reaction, body: Callable[[], Any], ins: list[Slot], outs: list[Slot]) -> Callable[[], Any]:
        def run() -> Any:
            intended: TagT | None = None
            for s in ins:
                it = s.intended
                if it is not None and s.present and (intended is None or it < intended):
                    intended = it
            if intended is None:
                return body()
            self.violations += 1
            handler = rx.tardy
            if handler is not None:
                return handler()
            self.unhandled += 1
            log.warning("%s is triggered by a tardy message (meant for %s) and has no tardy handler: "
                        "running its body, and what it writes is tardy too", rx.fqn, intended)
            result = body()
            for s in outs:
                if s.present:
                    self._mark(s, intended)
            return result

        return run
