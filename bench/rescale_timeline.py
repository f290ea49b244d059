"""What ``bench/rescale.py`` reads off the learner's timeline: the row per iteration that
the Q-learning learner keeps with ``--param timeline=true``
(:class:`reactorfed.rl.TrainConfig`'s ``timeline``): ``[wall_ns, tag_ns, microstep,
env_steps, [channels]]``, the physical time (ns since the epoch) at which the learner took
the iteration's fragments, the iteration's tag, the env steps those fragments held and the
bank indices they came from. Pure functions, so that they are tested apart.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Row:
    wall_ns: int
    tag_ns: int
    microstep: int
    steps: int
    members: frozenset[int]


def rows_of(result: dict[str, Any]) -> list[Row]:
    """The learner's timeline, from its result (a clear error when it kept none)."""
    if "timeline" not in result:
        raise ValueError("the learner's result has no timeline: run it with --param timeline=true")
    return [Row(int(w), int(t), int(m), int(s), frozenset(int(i) for i in ms)) for w, t, m, s, ms in result["timeline"]]


def rows_of_all(results: Sequence[dict[str, Any]]) -> list[Row]:
    """The timelines of learners that update together (the data-parallel plan's, each keeping
    the fragments of its own members) as one: a row per update tag, with every learner's
    members and env steps, at the latest wall time any of them took it."""
    by_tag: dict[tuple[int, int], Row] = {}
    for r in (row for result in results for row in rows_of(result)):
        key = (r.tag_ns, r.microstep)
        seen = by_tag.get(key)
        by_tag[key] = r if seen is None else Row(max(seen.wall_ns, r.wall_ns), r.tag_ns, r.microstep,
                                                 seen.steps + r.steps, seen.members | r.members)
    return [by_tag[k] for k in sorted(by_tag)]


def first_with(rows: Sequence[Row], member: int, since_ns: int) -> Row | None:
    """The first iteration at or after ``since_ns`` that took a fragment from ``member``."""
    return next((r for r in rows if r.wall_ns >= since_ns and member in r.members), None)


def between(rows: Sequence[Row], start_ns: int, end_ns: int) -> list[Row]:
    return [r for r in rows if start_ns <= r.wall_ns <= end_ns]


def throughput(rows: Sequence[Row]) -> float:
    """Env steps per second at the learner over ``rows`` (consecutive iterations): the
    steps of every iteration after the first, over the time from the first to the last."""
    if len(rows) < 2 or rows[-1].wall_ns <= rows[0].wall_ns:
        raise ValueError(f"{len(rows)} iterations: too few to time (a longer phase is needed)")
    return sum(r.steps for r in rows[1:]) / ((rows[-1].wall_ns - rows[0].wall_ns) / 1e9)


def median_gap_ms(rows: Sequence[Row]) -> float:
    """One iteration: the median wall time between consecutive iterations of ``rows``."""
    if len(rows) < 2:
        raise ValueError(f"{len(rows)} iterations: too few to time (a longer phase is needed)")
    return statistics.median((b.wall_ns - a.wall_ns) / 1e6 for a, b in itertools.pairwise(rows))


def transition(rows: Sequence[Row], since_ns: int, final: frozenset[int]) -> tuple[int, int]:
    """Where a change of membership shows at the learner: the index of the first iteration
    at or after ``since_ns`` (the request) whose members differ from the iteration's before,
    and of the first that takes exactly ``final`` (the width asked for)."""
    start = next((i for i, r in enumerate(rows) if r.wall_ns >= since_ns and i > 0
                  and r.members != rows[i - 1].members), None)
    if start is None:
        raise ValueError("the learner's members never changed after the request")
    end = next((i for i in range(start, len(rows)) if rows[i].members == final), None)
    if end is None:
        raise ValueError(f"the learner never took fragments from exactly {sorted(final)}")
    return start, end


@dataclass(frozen=True)
class Pause:
    longest_gap_ms: float
    longest_gap_rounds: float
    #: how long before (negative) or after the first iteration of the change it ended (rounds)
    at: int


def longest_pause(rows: Sequence[Row], start: int, end: int, window: int, round_ns: int,
                  since_ns: int = 0) -> Pause:
    """The longest wall time between consecutive iterations from ``window`` iterations before
    the change's first (``start``) to ``window`` after its last (``end``), and the longest
    logical time between consecutive iterations there, in rounds (``round_ns`` apart: 1 when
    no round was lost; a round nobody answered makes it 2). ``since_ns``: only gaps that
    begin at or after it."""
    lo, hi = max(1, start - window), min(len(rows) - 1, end + window)
    while lo <= hi and rows[lo - 1].wall_ns < since_ns:
        lo += 1
    if hi < lo:
        raise ValueError("no iterations around the change")
    gaps = [(rows[i].wall_ns - rows[i - 1].wall_ns, i) for i in range(lo, hi + 1)]
    gap_ns, at = max(gaps, key=lambda g: (g[0], -g[1]))  # (the first of equal gaps)
    rounds = max(rows[i].tag_ns - rows[i - 1].tag_ns for i in range(lo, hi + 1)) / round_ns if round_ns else 0.0
    return Pause(gap_ns / 1e6, rounds, at - start)
