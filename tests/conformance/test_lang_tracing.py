"""Port of LF's ``concurrent/Tracing.lf``: its tracing API called from reactions
(``register_user_trace_event``, ``tracepoint_user_event``, ``tracepoint_user_value``),
the events checked in the run's trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactorfed import (
    STARTUP,
    Environment,
    Input,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    bank,
    ms,
    reaction,
    sec,
)
from reactorfed.observe.trace import Recorder, load, trace_path
from reactorfed.observe.trace import records as R
from tests.conformance.harness import lf_test

# -- Tracing.lf (LF's concurrent/Tracing.lf: its user trace events) ----------------------------


class _Source(Reactor):
    out = Output(int)
    t = Timer(0, ms(200))

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.s)
        self.s += 1


class _TakeTime(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.handle = 0

    @reaction(triggers=[STARTUP])
    def register(self) -> None:
        # Construct an id string for a user trace event, and register it.
        self.handle = self.register_user_trace_event(f"Count completed by reactor {self.bank_index}.")
        assert self.handle != 0, "Failed to register trace event."

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp: Any, out: Any) -> None:
        offset = 0
        for _ in range(20_000):  # LF: 2,000,000 (time taken; the sum is checked below)
            offset += 1
        self.tracepoint_user_event(self.handle)
        out.set(inp.get() + offset)


class _Destination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.s = 80_000  # LF: 8,000,000 with its 2,000,000 per reactor
        self.count = 0
        self.handle = 0

    @reaction(triggers=[STARTUP])
    def register(self) -> None:
        self.handle = self.register_user_trace_event("Number of Destination invocations")
        assert self.handle != 0, "Failed to register trace event."

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.count += 1
        self.tracepoint_user_value(self.handle, self.count)
        self.tracepoint_user_event(_GLOBAL["id"])
        total = sum(inp[i].value for i in range(self.width))
        assert total == self.s, f"Expected {self.s}, got {total}."
        self.s += self.width


_GLOBAL = {"id": 0}  # LF: a Python global set by the main reactor's startup reaction


class _Tracing(Reactor):
    def __init__(self, width: int = 4) -> None:
        self.a = _Source()
        self.t = bank(_TakeTime, width)
        self.b = _Destination(width)
        self.connect(self.a.out, self.t.inp, broadcast=True)
        self.connect(self.t.out, self.b.inp)

    @reaction(triggers=[STARTUP])
    def register(self) -> None:
        _GLOBAL["id"] = self.register_user_trace_event("Global user trace event")
        assert _GLOBAL["id"] != 0, "Failed to register user trace event."


@lf_test("concurrent/Tracing.lf")
def test_tracing(tmp_path: Path) -> None:
    """LF's tracing API from reactions (register_user_trace_event, tracepoint_user_event,
    tracepoint_user_value), in a traced run with 4 worker threads: every event in the
    trace, against the tag it was recorded at."""
    clock = VirtualClock()
    rec = Recorder(trace_path(tmp_path, "main"), "main", clock)
    main = _Tracing()
    Environment(timeout=sec(2), workers=4, clock=clock, tracer=rec).run(main)
    rec.close()
    assert main.b.count == 11
    (p,) = load(tmp_path)
    users = [r for r in p.records if r[0] == R.USER]
    names = [r[5] for r in users]
    assert names.count("Number of Destination invocations") == 11 == names.count("Global user trace event")
    assert sorted(r[6] for r in users if r[5] == "Number of Destination invocations") == list(range(1, 12))
    for i in range(4):
        assert names.count(f"Count completed by reactor {i}.") == 11
    # untraced, the same program runs the same (the API records nothing then)
    again = _Tracing()
    Environment(timeout=sec(2), workers=4, clock=VirtualClock()).run(again)
    assert again.b.count == 11
