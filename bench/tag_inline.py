"""Whether the scheduler's hot paths may call reactorfed.time.tag's arithmetic, or must inline it.

The scheduler computes an event's tag with ``tag.delay_tag``'s rule, written out inline, in
two hot spots: ``Scheduler._schedule`` (every logical action's schedule) and the delivery
of delayed connections in ``Scheduler._process`` (every value sent on an ``after``
connection). This runs the scheduler as it is against the same scheduler with those lines
replaced by calls to ``delay_tag``, alternately in one process, fast mode:

* ``sched``: a source that reschedules itself every microstep (a logical action, delay 0)
  into a sink (bench/chain.py's K=0);
* ``after``: the same with the sink on an ``after 0`` connection (the delayed path too).

Reported: CPU (``time.process_time``) per tag, the median of ``--runs``, and call/inline.

    .venv/bin/python -m bench.tag_inline            # N = 50000 tags, 15 runs
    .venv/bin/python -m bench.tag_inline --quick    # N = 10000, 5 runs

Measured (2-core machine, another test suite running; 4 rounds of 15 runs): call/inline
1.015 to 1.10 in ``sched`` (~2.7 us a tag) and 1.03 to 1.12 in ``after`` (~3.6 us); the
inline form with its FOREVER check measured 0.94 to 1.04 against the unchecked
``(t + d, 0)`` it replaced (noise).
"""

from __future__ import annotations

import gc
import inspect
import statistics
import textwrap
import time
from collections.abc import Callable
from typing import Any

import reactorfed.execution.scheduler as S
from bench.chain import Sink, Source
from bench.common import base_parser
from reactorfed import Environment, Reactor
from reactorfed.time.tag import delay_tag

_SCHEDULE_INLINE = "tag = (t, m + 1) if d == 0 else (td, 0) if (td := t + d) < FOREVER else FOREVER_T"
_PROCESS_INLINE = "dtag = (t, m + 1) if delay == 0 else (td, 0) if (td := t + delay) < FOREVER else FOREVER_T"


def _patched(fn: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """``fn`` (a Scheduler method) with the line ``old`` replaced by ``new``."""
    src = textwrap.dedent(inspect.getsource(fn))
    if old not in src:
        raise SystemExit(f"Scheduler.{fn.__name__} no longer has the line {old!r}: update bench/tag_inline.py")
    ns = dict(vars(S))
    ns["delay_tag"] = delay_tag
    exec(src.replace(old, new), ns)
    out: Callable[..., Any] = ns[fn.__name__]
    return out


class _Main(Reactor):
    def __init__(self, n: int, after: int | None) -> None:
        self.src = Source(n)
        self.sink = Sink()
        self.connect(self.src.out, self.sink.inp, after=after)


def _once(variant: dict[str, Any], prog: str, n: int) -> float:
    for name, fn in variant.items():
        setattr(S.Scheduler, name, fn)
    main = _Main(n, 0 if prog == "after" else None)
    gc.collect()
    t0 = time.process_time_ns()
    Environment(fast=True).run(main)
    cpu = time.process_time_ns() - t0
    assert main.sink.count == n
    return cpu / n


def main() -> None:
    p = base_parser(__doc__.splitlines()[0])
    p.set_defaults(runs=15)
    p.add_argument("--tags", type=int, default=50_000)
    a = p.parse_args()
    n, runs = (10_000, 5) if a.quick else (a.tags, a.runs)
    inline = {"_schedule": S.Scheduler._schedule, "_process": S.Scheduler._process}
    call = {
        "_schedule": _patched(S.Scheduler._schedule, _SCHEDULE_INLINE, "tag = delay_tag(self.current_tag, d)"),
        "_process": _patched(S.Scheduler._process, _PROCESS_INLINE, "dtag = delay_tag(tag, delay)"),
    }
    try:
        for prog in ("sched", "after"):
            res: dict[str, list[float]] = {"inline": [], "call": []}
            for _ in range(runs):
                res["inline"].append(_once(inline, prog, n))
                res["call"].append(_once(call, prog, n))
            mi, mc = statistics.median(res["inline"]), statistics.median(res["call"])
            print(f"{prog}: inline {mi:.0f} ns/tag, call {mc:.0f} ns/tag (call/inline {mc / mi:.3f}), "
                  f"CPU, median of {runs}, {n} tags")
    finally:
        for name, fn in inline.items():
            setattr(S.Scheduler, name, fn)


if __name__ == "__main__":
    main()
