"""The lead window of the RTI's core (its part :attr:`.rti_core.RtiCore.lead`): how far in
logical time a federate may run ahead of the federates downstream of it.

Without it, a federate that nothing holds back (timers and no upstream, under ``--fast``)
runs ahead of its consumers without limit: what it sends queues at a slow consumer without
bound, and a stop asked downstream is agreed at the tag it has reached, which every
federate must then process. With a window ``W``, federate ``f`` processes no tag later
than ``(b + W, max microstep)``, ``b`` the time of the earliest *bound* of a federate
downstream of ``f`` (any path of links, every delay): the earliest tag that federate could
still act at, its next event or its EIMT, whichever is first (:meth:`.RtiBounds.bound`).
The federates know their window from START and start at ``start + W``; the RTI widens it
(LEAD) when one waits at its edge.

**No deadlock.** The federate whose next event ``m`` is the earliest of all is never held:
every bound is at least ``m``, so its limit is at least ``m + W``. The others wait for it,
as they would without a window.

**Few messages.** A federate that reaches its limit reports at once (its report says its
next event lies past it: it is *held*). The RTI widens a held federate's limit only when
the new one leaves it at least ``W / 2`` of room past its next event (the earliest of all
always has ``W``), so a federate held by a consumer that is slower than it gets one LEAD
per ``W / 2`` of logical time, not one per tag. The consumers that hold it back are asked
(WATCH) to report at once when their next event reaches the tag that frees it, instead of
on their usual period (the consumer's reports to the RTI are otherwise rate-limited
while its peers' promises advance it): a producer's room is then renewed while its
consumer still has ``W / 2`` of work queued.

Without a window (``None``) nothing here runs: no limit, no message, the same grants.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...time.tag import FOREVER, TagT
from .layout import Layout
from .rti_bounds import RtiBounds
from .rti_state import FOREVER_T, MAX_MICROSTEP, FederateState

__all__ = ["LeadWindow", "limit_at"]


def limit_at(time: int, window: int) -> TagT:
    """The last tag a federate may process when the earliest bound downstream of it is at
    ``time`` (saturating at FOREVER)."""
    if time >= FOREVER - window:
        return FOREVER_T
    return (time + window, MAX_MICROSTEP)


class LeadWindow:
    """The limits of the federates of ``layout`` under a lead window of ``window`` ns
    (None: none), from the federates' states ``feds`` and the core's ``bounds``."""

    def __init__(
        self, layout: Layout, window: int | None, feds: Sequence[FederateState], bounds: RtiBounds
    ) -> None:
        if window is not None and window < 0:
            raise ValueError(f"a lead window is at least 0 ns, got {window}")
        self.window = window
        self._feds = feds
        self._bounds = bounds
        n = len(layout.names)
        #: the federates each has a path of links to (itself excluded)
        self.downstream: list[tuple[int, ...]] = [
            tuple(sorted(d for d in layout.path[u] if d != u)) for u in range(n)
        ]
        #: the last tag each federate may process, as it was told (FOREVER: no limit)
        self.limit: list[TagT] = [FOREVER_T] * n
        #: federates whose last report put their next event past their limit
        self.held: set[int] = set()
        #: per federate, the WATCH tag it was sent and has not reported reaching yet
        self.watched: list[TagT] = [FOREVER_T] * n
        self._first = FOREVER_T  # the limit START gives (start)
        self.leads_sent = 0
        self.watches_sent = 0

    def start(self, start_time: int) -> None:
        """The federation starts: each federate with downstream federates may run ``window``
        ahead of the start (what it computes from START)."""
        if self.window is None:
            return
        self._first = first = limit_at(start_time, self.window)
        for f, down in enumerate(self.downstream):
            if down:
                self.limit[f] = first

    def restarted(self, f: int) -> None:
        """A new process for ``f`` (an elastic slot's incarnation) starts from the limit
        START gives it, whatever the last one was told."""
        if self.window is not None and self.downstream[f]:
            self.limit[f] = self._first
            self.watched[f] = FOREVER_T

    def reported(self, f: int) -> None:
        """``f`` reported (its NET is in its state)."""
        net = self._feds[f].net
        if net > self.limit[f] and net < FOREVER_T:
            self.held.add(f)
        w = self.watched[f]
        if w != FOREVER_T and net >= w:
            self.watched[f] = FOREVER_T  # (it reported at once, and forgot the watch)

    def due(self) -> tuple[list[tuple[int, TagT]], list[tuple[int, TagT]]]:
        """The LEADs due (federate, its new limit) and the WATCHes (consumer, tag), after a
        batch of reports. Looks at the held federates only."""
        leads: list[tuple[int, TagT]] = []
        watches: list[tuple[int, TagT]] = []
        if not self.held:
            return leads, watches
        window = self.window
        assert window is not None
        half = window // 2
        feds, bounds = self._feds, self._bounds
        for f in sorted(self.held):
            st = feds[f]
            if st.resigned or st.net <= self.limit[f]:
                self.held.discard(f)
                continue
            n = bounds.next_event(f)[0]  # (a message in flight to it may come before its NET)
            low = FOREVER
            for c in self.downstream[f]:
                if not feds[c].resigned:
                    b = bounds.bound(c)[0]
                    if b < low:
                        low = b
            new = limit_at(low, window)
            if new > self.limit[f] and new[0] >= n + half:
                self.limit[f] = new
                leads.append((f, new))
                if new >= st.net:
                    self.held.discard(f)
                continue
            # Still held: the consumers whose own next events hold it back report at once
            # when they reach the tag that would free it.
            want = (n + half - window, 0)
            for c in self.downstream[f]:
                if (
                    not feds[c].resigned
                    and bounds.next_event(c) < want
                    and want < self.watched[c]
                    and bounds.bound(c)[0] + window < n + half
                ):
                    self.watched[c] = want
                    watches.append((c, want))
        self.leads_sent += len(leads)
        self.watches_sent += len(watches)
        return leads, watches
