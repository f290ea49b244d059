"""Decentralized coordination's rule for advancing without word from upstream, pure: the
:class:`MaxWait` part of :class:`.federate_core.FederateCore` (only under decentralized
coordination: the RTI then grants nothing).

A federate processes tag ``g`` once it knows every message for ``g`` has arrived (its
upstream peers' promises say so: :mod:`.federate_promises`), or once physical time
reaches ``g``'s time + its **maxwait** (LF's ``@maxwait`` on the federate, formerly STA /
STP_offset). An input whose connection has an **absent_after** (LF's ``@absent_after``,
formerly the reactions' STAA) is waited for longer, as in LF: before the first reaction
that reads it, until ``g``'s time + maxwait + its absent_after (a checkpoint, as for the
inputs on a zero-delay cycle); the reactions before it run meanwhile. What has not arrived
by then is taken to be absent. A message that comes after its tag was passed is *tardy*
(:mod:`reactorfed.execution.tardy`). maxwait defaults to forever (LF since 2026): a federate
then waits for its upstream's word and no message is ever tardy. In ``fast`` mode the
scheduler never waits for physical time, and neither does a finite maxwait (reactor-c's
``wait_until`` returns at once in fast mode but for a wait of forever).

Within a tag, a federate on a zero-delay cycle stops before the reactions that read an
input on the cycle until it arrives (:mod:`.federate_cycles`); under decentralized
coordination that wait also ends at the tag's time + maxwait + that link's absent_after.

**Cycles** (:func:`rti_backstop`). Around a cycle of links, a federate's promise is bounded
by what the others promised it plus the cycle's delay: with every member idle, or waiting
for a later time, the promises climb by that delay per round trip. Over ``after 0`` that is
a microstep: they never reach the next time, nor FOREVER, however many are exchanged (the
members spin, exchanging promises, and never advance or end). What the cycle can still do
is a property of all its members and of what is in flight between them, which the RTI has
from their reports (with their counts); so it sends, of the grants it computes:

* to a member of a cycle whose smallest delay is microsteps only, every grant but a PTAG
  (promises cannot advance its time at all);
* to a member of any cycle, FOREVER (nothing can reach it again: it may end), unless a stop
  is agreed: the peers' StopMarks then carry their promises to the stop tag.

Nothing else: a federation without cycles gets no grant, and one with a zero-delay cycle
advances within a tag by its finite maxwait.
"""

from __future__ import annotations

from ...errors import ValidationError
from ...time.tag import FOREVER, FOREVER_T, TagT
from .layout import Layout
from .rti_state import Grant

__all__ = ["MaxWait", "check_decentralized", "rti_backstop"]


def check_decentralized(layout: Layout) -> None:
    """Refuse what decentralized coordination cannot run without hanging: a zero-delay
    cycle between federates of which one waits for ever (maxwait forever, the default).
    Promises cannot go round a cycle without delay (the RTI's provisional grants do that
    under centralized coordination); a finite maxwait, or a delay on the cycle, can.
    Elastic banks and transient federates are not refused: their joins and leaves are
    agreed in the RTI's rounds (every present federate asked, none processing a tag past
    its answer until the round ends), which need no grant."""
    for f, scc in enumerate(layout.scc):
        if len(scc) > 1 and (not layout.maxwait or layout.maxwait[f] >= FOREVER):
            names = ", ".join(layout.names[g] for g in sorted(scc))
            raise ValidationError(
                f"decentralized coordination: federates {names} form a cycle of connections without delay, "
                f"and {layout.names[f]} has no maxwait (forever): it would wait for ever for the others' word. "
                "Give it a finite maxwait (maxwait(federate, d), LF's @maxwait), put a delay on the cycle, "
                "or run it centralized")


def rti_backstop(layout: Layout, grants: list[Grant], stop: TagT | None) -> list[Grant]:
    """Of the grants the RTI computed (``grants``; ``stop``: the agreed stop tag, None:
    none), those it sends under decentralized coordination (see the module docstring)."""
    path = layout.path
    out = []
    for g in grants:
        cycle = path[g.federate].get(g.federate)  # (None: on no cycle)
        if cycle is None or g.provisional:
            continue
        if (cycle[0] == 0 and cycle[1] > 0) or (g.tag >= FOREVER_T and stop is None):
            out.append(g)
    return out


def _plus(t: int, d: int) -> int:
    s = t + d
    return s if s < FOREVER and d < FOREVER else FOREVER


class MaxWait:
    """Federate ``me``'s maxwait and its input links' absent_after (see the module)."""

    def __init__(self, layout: Layout, me: int, *, fast: bool) -> None:
        check_decentralized(layout)
        #: ns past a tag's time (FOREVER: wait for the upstream's word, however long)
        self.maxwait = layout.maxwait[me] if layout.maxwait else FOREVER
        self.fast = fast
        #: input link id -> its absent_after (ns)
        self.absent_after = {lk.id: lk.absent_after for lk in layout.links if lk.dst == me}

    def set(self, maxwait: int) -> None:
        """A reaction changed this federate's maxwait (LF's ``lf.set_fed_maxwait``)."""
        self.maxwait = maxwait

    def deadline(self, tag: TagT, link: int | None = None) -> int:
        """The physical time from which ``tag`` is begun without word from upstream
        (FOREVER: never); ``link``: from which that input link is taken to be absent."""
        extra = 0 if link is None else self.absent_after.get(link, 0)
        return _plus(_plus(tag[0], self.maxwait), extra)

    def passed(self, tag: TagT, now: int, link: int | None = None) -> bool:
        """Whether ``tag`` may be processed now without word from upstream (at ``link``)."""
        d = self.deadline(tag, link)
        return d < FOREVER and (self.fast or now >= d)

    def wait_ms(self, tag: TagT, now: int) -> int:
        """How long (ms, at least 1) to wait for messages before :meth:`passed` may change."""
        d = self.deadline(tag)
        if d >= FOREVER or self.fast:
            return 100
        return max(1, min(100, (d - now + 999_999) // 1_000_000))
