"""Whether the scheduler's hot paths may call reactorfed.time's ``delay_tag``, or must inline it.

The scheduler computes an event's tag with ``delay_tag``'s rule, written out inline, in
two hot spots: every logical action's schedule, and the delivery of a value sent on an
``after`` connection. This measures, with public names only, what a call would add to a
tag, as a share of the tag's own cost:

* the tag: CPU (``time.process_time``) per tag of two programs run as they are, fast
  mode: ``sched``, a source that reschedules itself every microstep (a logical action,
  delay 0) into a sink (bench/chain.py's K=0: one tag computation a tag); ``after``, the
  same with the sink on an ``after 0`` connection (two a tag: the schedule and the
  delivery);
* the computation: CPU per evaluation of ``delay_tag(tag, d)`` and of the scheduler's
  inline expression (``(t, m + 1) if d == 0 else ...``, FOREVER's check included), with a
  tag and a delay in local variables as the scheduler holds them (delay 0, the programs').

Reported: both, the median of ``--runs``, and the call's extra cost per tag
(``(call - inline) * computations a tag / tag``) as a share of the tag.

    .venv/bin/python -m bench.tag_inline            # N = 50000 tags, 15 runs
    .venv/bin/python -m bench.tag_inline --quick    # N = 10000, 5 runs

Measured (2-core machine, another test suite running; 4 rounds of 15 runs), with an
earlier form of this benchmark that swapped the scheduler's own lines for calls (git show
2c7d9f8:bench/tag_inline.py; it used the scheduler's private module): call/inline 1.015
to 1.10 in ``sched`` (~2.7 us a tag) and 1.03 to 1.12 in ``after`` (~3.6 us); the inline
form with its FOREVER check measured 0.94 to 1.04 against the unchecked ``(t + d, 0)`` it
replaced (noise).
"""

from __future__ import annotations

import gc
import statistics
import time
import timeit

from bench.chain import Sink, Source
from bench.common import base_parser
from reactorfed import Environment, Reactor
from reactorfed.time import FOREVER, FOREVER_T, delay_tag

#: evaluations per timing of the tag computation
EVALS = 200_000
_SETUP = "t, m = 1_000_000_000, 3; d = 0; tag = (t, m)"
_INLINE = "x = (t, m + 1) if d == 0 else (td, 0) if (td := t + d) < FOREVER else FOREVER_T"
_CALL = "x = delay_tag(tag, d)"
_NAMES = {"FOREVER": FOREVER, "FOREVER_T": FOREVER_T, "delay_tag": delay_tag}


class _Main(Reactor):
    def __init__(self, n: int, after: int | None) -> None:
        self.src = Source(n)
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp, after=after)


def per_tag(prog: str, n: int) -> float:
    """CPU ns per tag of ``prog`` over ``n`` tags."""
    main = _Main(n, 0 if prog == "after" else None)
    gc.collect()
    t0 = time.process_time_ns()
    Environment(fast=True).run(main)
    cpu = time.process_time_ns() - t0
    assert main.sink.count == n
    return cpu / n


def per_eval(stmt: str) -> float:
    """CPU ns per evaluation of ``stmt`` (the least of 3 timings)."""
    timer = timeit.Timer(stmt, _SETUP, timer=time.process_time, globals=_NAMES)
    return min(timer.repeat(3, EVALS)) / EVALS * 1e9


def main() -> None:
    p = base_parser(__doc__.splitlines()[0])
    p.set_defaults(runs=15)
    p.add_argument("--tags", type=int, default=50_000)
    a = p.parse_args()
    n, runs = (10_000, 5) if a.quick else (a.tags, a.runs)
    inline = statistics.median(per_eval(_INLINE) for _ in range(runs))
    call = statistics.median(per_eval(_CALL) for _ in range(runs))
    print(f"tag computation: inline {inline:.1f} ns, call {call:.1f} ns (CPU, median of {runs})")
    for prog, computations in (("sched", 1), ("after", 2)):
        tag = statistics.median(per_tag(prog, n) for _ in range(runs))
        extra = (call - inline) * computations
        print(f"{prog}: {tag:.0f} ns/tag; a call instead of the inline form adds {extra:.0f} ns "
              f"({extra / tag:.1%} of a tag; {computations} a tag), CPU, median of {runs}, {n} tags")


if __name__ == "__main__":
    main()
