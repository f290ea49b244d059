"""A learner's rounds over an elastic bank of samplers (members join and leave while it
trains): the bookkeeping every plan with rounds shares, held by its learner reactor.

A round: the learner sends its weights at tag ``W`` (to the members present at ``W``); each
sampler that still is at the tag they arrive at, ``R`` (``W`` plus the connection's delay,
``period``), collects there and sends its fragment back at ``R``. So the fragments at ``R``
are exactly those of the members present at both ``W`` and ``R``: a member that joins after
``W`` is asked from the next round on, one that leaves by ``R`` got no weights (they are
dropped). :class:`ElasticRound` knows both sets (:func:`reactorfed.model.elastic.members` at
``W`` and at ``R``), so its learner takes every fragment once and can tell a missing one (an
incomplete round; none in a correct run). The learner's own logical action, scheduled
``period`` after ``W`` (:meth:`ElasticRound.ask`), makes it run at ``R`` even when every
member asked has left: then it asks those present (``rounds_asked_again``), so training
never waits for fragments nobody will send.

It counts the env steps of each member, one count per incarnation (a slot that leaves and
joins again is a new one), and notes each change of the width the learner sees, with its
tag (``samples_by_member``, ``membership`` in :meth:`ElasticRound.result`), with the wall
time each change held training up (``change_gaps_ms``: from the learner's reaction before
the change to the one at it). Given the same membership at the same tags (the RTI's record,
replayed) everything but the times is the same.

The learner declares the action (a reactor's own) and calls, from its reactions:
:meth:`~ElasticRound.look` first (at a round's end :meth:`~ElasticRound.end`, which looks,
tells whether the fragments of the tag are complete and asks again when none came),
:meth:`~ElasticRound.took` for each fragment it learns from and
:meth:`~ElasticRound.ask` as it sends its weights (see
:class:`~reactorfed.rl.plans.elastic_qlearning.ElasticDQNTrainer` and
:class:`~reactorfed.rl.plans.sync.ElasticSyncTrainer`). A plan without rounds, whose
learner learns from whatever arrives (APPO's
:class:`~reactorfed.rl.plans.async_.ElasticAsyncTrainer`, Ape-X's
:class:`~reactorfed.rl.plans.apex_trainer.ElasticApexTrainer`), keeps only its account of
the members: :meth:`~ElasticRound.look`, :meth:`~ElasticRound.took`, the timeline's
:meth:`~ElasticRound.row` and :meth:`~ElasticRound.result`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reactorfed import ActionHandle, Reactor

from ...model.elastic import members

__all__ = ["ElasticRound"]


class ElasticRound:
    """The rounds of a learner whose samplers are the members of the main reactor's elastic
    bank ``bank``, its weights reaching them ``period`` later (0: the next microstep)."""

    def __init__(self, bank: str, period: int = 0, timeline: bool = False) -> None:
        self.bank = bank
        self.period = period
        #: with ``timeline``: a row per update, [wall ns, tag ns, microstep, env steps,
        #: [members]] (see :meth:`row`; bench/rescale.py times rescaling with it)
        self.timeline: list[list[Any]] | None = [] if timeline else None
        self.asked: tuple[int, ...] = ()  # the members the last weights went to
        self.seen: tuple[int, ...] = ()  # the members at the learner's last reaction
        #: bank index -> env steps taken from it, one count per incarnation
        self.samples: dict[int, list[int]] = {}
        #: (ns after the start, microstep, width): each width the learner saw, from its tag
        self.widths: list[tuple[int, int, int]] = []
        self.rounds_asked_again = 0
        #: wall ms from the learner's reaction before each change it saw to the one at it
        #: (how long the change held training up; not part of what a replay reproduces)
        self.change_gaps_ms: list[float] = []
        self.wall = 0  # the learner's physical time at its last look (ns)

    def look(self, learner: Reactor) -> tuple[int, ...]:
        """From a reaction of ``learner``: the members present now; a new count for each that
        was not at the last look, and a note of the width when it changed."""
        now = members(learner, self.bank)
        wall = learner.physical_time()
        if now != self.seen:
            for i in now:
                if i not in self.seen:
                    self.samples.setdefault(i, []).append(0)
            t = learner.elapsed_tag()
            self.widths.append((t.time, t.microstep, len(now)))
            if self.seen:
                self.change_gaps_ms.append(round((wall - self.wall) / 1e6, 1))
            self.seen = now
        self.wall = wall
        return now

    def ask(self, now: tuple[int, ...], round_end: ActionHandle) -> None:
        """The learner sends its weights now to the members ``now``: the round ends
        ``period`` later (``round_end``: the learner's own logical action, which triggers the
        reaction that takes the fragments)."""
        self.asked = now
        round_end.schedule(delay=self.period)

    def complete(self, present: Sequence[tuple[int, Any]], now: tuple[int, ...]) -> bool:
        """Whether the fragments ``present`` (channel, value; in channel order) are exactly
        those of the members asked that are still present (``now``)."""
        return [i for i, _ in present] == [i for i in self.asked if i in now]

    def asked_again(self, now: tuple[int, ...], round_end: ActionHandle) -> None:
        """No fragment came (every member asked left before its weights arrived): the
        learner asks those present ``now`` (and sends its weights)."""
        self.rounds_asked_again += 1
        self.ask(now, round_end)

    def end(self, learner: Reactor, present: Sequence[tuple[int, Any]], round_end: ActionHandle,
            send: Callable[[], None]) -> tuple[tuple[int, ...], bool]:
        """From ``learner``'s reaction at a round's end (the fragments ``present`` arrived, or
        its ``round_end``): :meth:`look`, and whether the round is :meth:`complete`. When no
        fragment came, :meth:`asked_again`: ``send`` sends the learner's weights to those
        present now. The members present now, and whether the round was complete."""
        now = self.look(learner)
        complete = self.complete(present, now)
        if not present:
            send()
            self.asked_again(now, round_end)
        return now, complete

    def took(self, index: int, steps: int, *, late: bool = False) -> None:
        """The learner takes ``steps`` env steps from the fragment of channel ``index``.
        ``late``: what it takes was sent a connection's delay ago, so its sender may have
        left since: it counts for the member's latest incarnation the learner saw."""
        if index in self.seen or (late and index in self.samples):
            self.samples[index][-1] += steps
        else:  # (from a member absent here: only with a coordination bug; counted apart)
            self.samples.setdefault(-1 - index, [0])[-1] += steps
        if self.timeline:
            self.timeline[-1][3] += steps

    def row(self, learner: Reactor, members: Sequence[int]) -> None:
        """With a timeline: a row for the update ``learner`` begins now, from the fragments
        of ``members``: the physical time (ns since the epoch, the clock's), the tag (ns
        after the start, microstep), the env steps it takes (what :meth:`took` counts until
        the next row) and the members. Timing, so no replay repeats it."""
        if self.timeline is not None:
            t = learner.elapsed_tag()
            self.timeline.append([learner.physical_time(), t.time, t.microstep, 0, list(members)])

    def result(self) -> dict[str, Any]:
        """The learner's result's part: counts by member, widths, rounds asked again, gaps."""
        out = {
            "samples_by_member": {str(i): list(c) for i, c in sorted(self.samples.items())},
            "membership": [list(w) for w in self.widths],
            "rounds_asked_again": self.rounds_asked_again,
            "change_gaps_ms": self.change_gaps_ms,
        }
        if self.timeline is not None:
            out["timeline"] = self.timeline
        return out
