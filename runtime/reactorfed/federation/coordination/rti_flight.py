"""The messages in flight between federates, as the RTI's core knows them from the counts
its federates report: its :class:`Flight` part (see :mod:`.rti_core`'s docstring).

A federate reports, cumulatively, how many messages it has sent each downstream federate
(with the earliest tag of those sent since its last report) and received from each
upstream one. Those sent and not yet reported received are in flight: a receiver cannot
act before the earliest of them, whatever next event it reported. A receiver may report
them received before the sender reports them sent (the reports race); then they were
never in flight.
"""

from __future__ import annotations

from collections.abc import Callable

from ...time.tag import TagT
from .layout import Layout
from .rti_state import FOREVER_T, NEVER_T, FederateState

__all__ = ["Flight"]


class Flight:
    """The messages in flight to each federate, and the counts in the federates' states
    (``feds``, the core's) they follow from. When the earliest tag in flight to a
    federate moves earlier, ``moved`` is told (the core follows its next event)."""

    def __init__(
        self, layout: Layout, feds: list[FederateState], moved: Callable[[int], None]
    ) -> None:
        n = len(layout.names)
        self._feds = feds
        self._moved = moved
        self._down = [layout.downstream(f) for f in range(n)]
        #: per receiver, per sender: [(cumulative count, earliest tag)] in the order sent
        #: (counts increasing)
        self._to: list[dict[int, list[tuple[int, TagT]]]] = [{} for _ in range(n)]
        #: the earliest tag in flight to each federate (FOREVER: none)
        self.earliest: list[TagT] = [FOREVER_T] * n
        #: the latest tag reported sent to each federate
        self.addressed: list[TagT] = [NEVER_T] * n
        #: the tag each rejoined slot's incarnation started at (what was sent to it before
        #: is for an incarnation that is gone)
        self._since: dict[int, TagT] = {}

    @property
    def in_flight(self) -> dict[tuple[int, int], list[tuple[int, TagT]]]:
        """The messages in flight, per (sender, receiver) (a copy, for reading)."""
        return {(u, d): list(lst) for d, by in enumerate(self._to) for u, lst in by.items()}

    def counts(self, f: int, sent: dict[int, list[int]], received: dict[int, int]) -> None:
        """``f`` reports what it has sent (per receiver: ``[count, *earliest tag]``) and
        received (per sender: count) so far. The earliest tag in flight to ``f`` may move
        later (its next event is followed by the report's caller)."""
        feds = self._feds
        st = feds[f]
        n = len(feds)
        for d, (count, t, m) in sent.items():
            if d >= n:
                continue
            if count > st.sent.get(d, 0):
                st.sent[d] = count
                if (t, m) > self.addressed[d]:
                    self.addressed[d] = (t, m)
                if self._since and (t, m) < self._since.get(d, NEVER_T):
                    # for an incarnation of the slot that is gone: taken, not in flight
                    feds[d].received[f] = max(feds[d].received.get(f, 0), count)
                # The receiver may have reported them received before this report came.
                elif count > feds[d].received.get(f, 0):
                    self._to[d].setdefault(f, []).append((count, (t, m)))
                    if (t, m) < self.earliest[d]:
                        self.earliest[d] = (t, m)
                        self._moved(d)
        mine = self._to[f]
        removed = False
        for u, count in received.items():
            if u >= n:
                continue
            if count > st.received.get(u, 0):
                st.received[u] = count
            lst = mine.get(u)
            if lst:
                keep = [(c, t) for c, t in lst if c > count]
                if len(keep) < len(lst):
                    removed = True
                    if keep:
                        mine[u] = keep
                    else:
                        del mine[u]
        if removed:  # the earliest may have gone: look again (at what is left)
            self.earliest[f] = _earliest(mine)

    def delivered(self, f: int) -> bool:
        """Whether every message ``f`` sent has been received, or its receiver that still
        lacks some has resigned or failed (it will read nothing more)."""
        feds, to = self._feds, self._to
        return all(feds[d].resigned or not to[d].get(f) for d in self._down[f])

    def start(self, m: int, tag: TagT) -> None:
        """Slot ``m``'s incarnation starts at ``tag``: what was sent to the slot for before
        ``tag`` is for an incarnation that is gone (taken); what is for ``tag`` on (a
        replayed member connecting late) is its own. It starts from the counts its
        receivers have of the slot."""
        st = self._feds[m]
        self._since[m] = tag
        mine = self._to[m]
        for u in list(mine):
            old = [c for c, t in mine[u] if t < tag]
            if old:
                st.received[u] = max(st.received.get(u, 0), old[-1])
                mine[u] = [(c, t) for c, t in mine[u] if t >= tag]
                if not mine[u]:
                    del mine[u]
        self.earliest[m] = _earliest(mine)
        for d in self._down[m]:
            st.sent[d] = max(st.sent.get(d, 0), self._feds[d].received.get(m, 0))

    def drop_to(self, m: int) -> None:
        """What was sent to ``m`` and not received is for an incarnation that is gone."""
        received = self._feds[m].received
        for u, lst in self._to[m].items():
            received[u] = max(received.get(u, 0), lst[-1][0])
        self._to[m] = {}
        self.earliest[m] = FOREVER_T

    def drop_from(self, m: int) -> list[int]:
        """``m`` failed: what it reported sending that has not been received may be lost
        with it, so no grant waits for it (a receiver drops it if it comes too late).
        Returns the receivers that had some in flight (their earliest may have moved)."""
        feds, st = self._feds, self._feds[m]
        out = []
        for d in self._down[m]:
            got = feds[d].received.get(m, 0)
            if st.sent.get(d, 0) > got:
                st.sent[d] = got
            if self._to[d].pop(m, None) is not None:
                self.earliest[d] = _earliest(self._to[d])
                out.append(d)
        return out


def _earliest(by_sender: dict[int, list[tuple[int, TagT]]]) -> TagT:
    return min((t for lst in by_sender.values() for _c, t in lst), default=FOREVER_T)
