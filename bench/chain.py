"""Chain benchmark: the runtime's per-reaction cost, reactorfed against xronos.

A source reschedules itself every microstep (a logical action with delay 0) and sends
a counter through K relay reactors into a sink, for N tags. The same program runs on
reactorfed and on the ``xronos`` package (reactors for Python on a C++ core), in the
same process and interleaved run by run, so machine noise hits both alike.

Reactions are counted the same way for both, from the program's shape: one startup
reaction, then per tag the source, K relays and the sink, ``N * (K + 2) + 1`` in all.
Each run checks that the sink saw all N values with the right last value (and, for
reactorfed, that the scheduler's own counter agrees). Time is wall time around the
call that assembles and executes the program (``Environment.run`` / ``execute``),
fast mode, single process, one thread.

    .venv/bin/python -m bench.chain            # N=200000, K=0,4,16, median of 3
    .venv/bin/python -m bench.chain --quick    # N=20000
    .venv/bin/python -m bench.chain --profile  # also: where reactorfed's time goes at K=4

Where reactorfed's time goes at K=4 (cProfile own time, 6 reactions per tag; after the
inline-mark and per-tag fast-path commits): port writes ~23% (``set``: presence, the
reaction queue push), the dispatch loop ~18% (``strategies.Serial.run``: heap pop, the call through
the bound partial), per-tag bookkeeping ~16% (``_process``: firing the tag's events,
delayed deliveries, clearing presence), the reaction bodies themselves ~17%, scheduling
the next microstep ~10% (handle -> ``_schedule`` -> ``_post``), ``_loop`` ~6%, reads 3%.
No single hot spot is left: the rest is the price of a Python call per reaction and per
write. K=0 (two reactions per tag) is the per-tag cost; K=16 the per-reaction cost.
"""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import Results, base_parser, progress
from reactorfed import STARTUP, Environment, Input, LogicalAction, Output, Reactor, reaction

KS = (0, 4, 16)


def expected_reactions(k: int, n: int) -> int:
    return n * (k + 2) + 1


# -- reactorfed ----------------------------------------------------------------------
class Source(Reactor):
    out = Output(int)
    again = LogicalAction(int)

    def __init__(self, n: int) -> None:
        self.n = n

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: Any) -> None:
        again.schedule(value=0)

    @reaction(triggers=[again], effects=[again, out])
    def tick(self, again: Any, out: Any) -> None:
        v = again.get()
        out.set(v)
        if v + 1 < self.n:
            again.schedule(value=v + 1)


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp: Any, out: Any) -> None:
        out.set(inp.get() + 1)


class Sink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.count = 0
        self.last: int | None = None

    @reaction(triggers=[inp])
    def recv(self, inp: Any) -> None:
        self.count += 1
        self.last = inp.get()


class Chain(Reactor):
    def __init__(self, k: int, n: int) -> None:
        self.src = Source(n)
        self.relays = [Relay() for _ in range(k)]
        self.sink = Sink()
        prev = self.src.out
        for r in self.relays:
            self.connect(prev, r.inp)
            prev = r.out
        self.connect(prev, self.sink.inp)


def run_reactorfed(k: int, n: int) -> float:
    main = Chain(k, n)
    gc.collect()
    t0 = time.perf_counter_ns()
    summary = Environment(fast=True).run(main)
    wall = time.perf_counter_ns() - t0
    want = expected_reactions(k, n)
    assert main.sink.count == n and main.sink.last == n - 1 + k, (main.sink.count, main.sink.last)
    assert summary.reactions == want, (summary.reactions, want)
    return want * 1e9 / wall


# -- xronos (the peer) ---------------------------------------------------------------
def _xronos_program(k: int, n: int) -> tuple[Any, Any]:
    import xronos

    class XSource(xronos.Reactor):
        out = xronos.OutputPortDeclaration[int]()
        again = xronos.ProgrammableTimerDeclaration[int]()

        def __init__(self, n: int) -> None:
            super().__init__()
            self.n = n

        @xronos.reaction
        def start(self, ctx: xronos.ReactionContext) -> Callable[[], None]:
            ctx.add_trigger(self.startup)
            again = ctx.add_effect(self.again)
            return lambda: again.schedule(value=0)

        @xronos.reaction
        def tick(self, ctx: xronos.ReactionContext) -> Callable[[], None]:
            trig = ctx.add_trigger(self.again)
            again = ctx.add_effect(self.again)
            out = ctx.add_effect(self.out)
            n = self.n

            def handler() -> None:
                v = trig.get()
                out.set(v)
                if v + 1 < n:
                    again.schedule(value=v + 1)

            return handler

    class XRelay(xronos.Reactor):
        inp = xronos.InputPortDeclaration[int]()
        out = xronos.OutputPortDeclaration[int]()

        @xronos.reaction
        def fwd(self, ctx: xronos.ReactionContext) -> Callable[[], None]:
            inp = ctx.add_trigger(self.inp)
            out = ctx.add_effect(self.out)
            return lambda: out.set(inp.get() + 1)

    class XSink(xronos.Reactor):
        inp = xronos.InputPortDeclaration[int]()

        def __init__(self) -> None:
            super().__init__()
            self.count = 0
            self.last: int | None = None

        @xronos.reaction
        def recv(self, ctx: xronos.ReactionContext) -> Callable[[], None]:
            inp = ctx.add_trigger(self.inp)

            def handler() -> None:
                self.count += 1
                self.last = inp.get()

            return handler

    env = xronos.Environment(fast=True)
    src = env.create_reactor("src", XSource, n)
    prev = src.out
    for i in range(k):
        r = env.create_reactor(f"relay{i}", XRelay)
        env.connect(prev, r.inp)
        prev = r.out
    sink = env.create_reactor("sink", XSink)
    env.connect(prev, sink.inp)
    return env, sink


def run_xronos(k: int, n: int) -> float:
    env, sink = _xronos_program(k, n)
    gc.collect()
    t0 = time.perf_counter_ns()
    env.execute()
    wall = time.perf_counter_ns() - t0
    assert sink.count == n and sink.last == n - 1 + k, (sink.count, sink.last)
    return expected_reactions(k, n) * 1e9 / wall


# -- profile -------------------------------------------------------------------------
def profile_reactorfed(k: int, n: int, top: int = 25) -> str:
    main = Chain(k, n)
    prof = cProfile.Profile()
    prof.enable()
    Environment(fast=True).run(main)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = base_parser(__doc__.split("\n\n")[0])
    p.add_argument("--tags", type=int, default=None, help="N, the number of tags (default 200000; 20000 with --quick)")
    p.add_argument("--ks", type=str, default=",".join(map(str, KS)), help="relay counts, comma-separated (default 0,4,16)")
    p.add_argument("--profile", action="store_true", help="after the runs, cProfile reactorfed at K=4 (to stderr)")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/chain.*")
    args = p.parse_args(argv)
    n = args.tags or (20_000 if args.quick else 200_000)
    ks = [int(x) for x in args.ks.split(",")]
    try:
        import xronos

        peer_version = getattr(xronos, "__version__", None) or _dist_version("xronos")
    except ImportError:
        progress("xronos is not installed: pip install 'reactorfed[bench]' (REACTORFED_EXTRAS=bench scripts/setup.sh)")
        return 2

    res = Results("chain", args.out)
    for k in ks:
        ours: list[float] = []
        peer: list[float] = []
        for _ in range(args.runs):
            # Interleaved: each repetition runs both, so a noisy moment hits both alike.
            ours.append(run_reactorfed(k, n))
            peer.append(run_xronos(k, n))
            progress(f"K={k} N={n}: reactorfed {ours[-1]:,.0f}/s, xronos {peer[-1]:,.0f}/s")
        ours_med, peer_med = statistics.median(ours), statistics.median(peer)
        res.add(
            f"K={k}",
            "reactions_per_s",
            ours_med,
            "xronos",
            peer_med,
            "higher",
            args.runs,
            mode="single-process",
            tags=n,
            relays=k,
            reactions_per_run=expected_reactions(k, n),
            samples={"reactorfed": [round(x) for x in ours], "xronos": [round(x) for x in peer]},
            peer_version=peer_version,
        )
    if not args.no_write:
        path = res.write()
        plot = res.plot(f"chain: reactions/s, single process, N={n} tags (median of {args.runs})")
        progress(f"wrote {path}" + (f" and {plot}" if plot else ""))
    if args.profile:
        progress("cProfile of reactorfed at K=4 (sorted by own time):\n" + profile_reactorfed(4, n))
    return 0


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
