"""Programs for the federation's robustness tests.

Imported by the tests (``from .programs import ...``) and loaded by file path by
``reactorfed launch tests/federation/programs.py:Slow`` in the fault tests, so this
module imports nothing from the test package.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
)

Trace = list[tuple[int, int, Any]]


class Source(Reactor):
    """Every 10 ms a small numpy array."""

    out = Output(object)
    tick = Timer(offset=0, period=ms(10))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        self.i += 1
        out.set(np.arange(4, dtype=np.int64) * self.i)


class Relay(Reactor):
    inp = Input(object)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(int(inp.get().sum()))


class Recorder(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.trace: Trace = []

    @reaction(triggers=[inp])
    def record(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.trace.append((t.time, t.microstep, inp.get()))


class Pipeline(Reactor):
    """src -> relay -> sink, three federates; the sink's trace is the output."""

    def __init__(self, after: int | None = None) -> None:
        self.src = Source()
        self.relay = Relay()
        self.sink = Recorder()
        self.connect(self.src.out, self.relay.inp)
        self.connect(self.relay.out, self.sink.inp, after=after)


class OtherPipeline(Pipeline):
    """The same federates as :class:`Pipeline` with a different delay: another program."""

    def __init__(self) -> None:
        super().__init__(after=ms(1))


def trace_of(programs: dict[str, Reactor]) -> Trace:
    """The recorder's trace from a federated run's per-federate programs."""
    sink = programs["sink"]
    assert isinstance(sink, Pipeline)
    return list(sink.sink.trace)


# -- long-running programs for the process-level fault tests ------------------------


class Announce(Reactor):
    """Prints ``PID <pid>`` at startup (prefixed by the launcher with the federate's name)."""

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PID {os.getpid()}", flush=True)


class SlowSource(Announce):
    out = Output(int)
    tick = Timer(offset=0, period=ms(50))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        self.i += 1
        out.set(self.i)


class SlowSink(Announce):
    inp = Input(int)

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.n += 1
        if self.n % 10 == 0:
            print(f"received {self.n}", flush=True)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        print(f"sink: {self.n} values", file=sys.stdout, flush=True)


class Slow(Reactor):
    """Two federates, a value every 50 ms in real time: runs as long as its timeout."""

    def __init__(self) -> None:
        self.src = SlowSource()
        self.sink = SlowSink()
        self.connect(self.src.out, self.sink.inp)


class Spy(Reactor):
    """Like :class:`Pipeline`, but its last federate is called ``spy``."""

    def __init__(self) -> None:
        self.src = Source()
        self.relay = Relay()
        self.spy = Recorder()
        self.connect(self.src.out, self.relay.inp)
        self.connect(self.relay.out, self.spy.inp)


class Faulty(Recorder):
    """A recorder whose reaction fails at the fifth value."""

    @reaction(triggers=[Recorder.inp])
    def check(self, inp: Any) -> None:
        if len(self.trace) == 5:
            raise RuntimeError("the fifth value is one too many")


class FailingPipeline(Reactor):
    def __init__(self) -> None:
        self.src = Source()
        self.relay = Relay()
        self.sink = Faulty()
        self.connect(self.src.out, self.relay.inp)
        self.connect(self.relay.out, self.sink.inp)


def _print_priorities() -> None:
    """``POLICY <n>`` (the CPU scheduling policy, os.SCHED_*, of the thread that runs
    reactions) and ``NICE <own> <others>`` (its nice value; the set of the process's other
    threads' nice values and policies, from /proc)."""
    import threading
    from pathlib import Path

    me = threading.get_native_id()
    others = set()
    for task in Path("/proc/self/task").iterdir():
        if int(task.name) != me:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            others.add((int(fields[16]), int(fields[38])))  # nice, policy
    print(f"POLICY {os.sched_getscheduler(0)}", flush=True)
    print(f"NICE {os.getpriority(os.PRIO_PROCESS, me)} {sorted(others)}", flush=True)


class _PolicyReporter(Reactor):
    """Prints its priorities (see :func:`_print_priorities`) and OMP_NUM_THREADS."""

    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def hello(self, out: Any) -> None:
        _print_priorities()
        print(f"THREADS {os.environ.get('OMP_NUM_THREADS')}", flush=True)
        out.set(1)


class _PolicySink(Reactor):
    inp = Input(int)

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        _print_priorities()
        print(f"THREADS {os.environ.get('OMP_NUM_THREADS')}", flush=True)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        pass


class Policies(Reactor):
    """Two federates that print their processes' scheduling policies."""

    def __init__(self) -> None:
        self.a = _PolicyReporter()
        self.b = _PolicySink()
        self.connect(self.a.out, self.b.inp)


class _ParentReporter(Reactor):
    """Prints ``PARENT <pid>``: the process this federate's process was started by."""

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PARENT {os.getppid()}", flush=True)


class Parents(Reactor):
    """Three federates that say which process started theirs, and a main reactor that
    says which processes built it."""

    def __init__(self) -> None:
        print(f"BUILT {os.getpid()}", flush=True)
        self.a = _ParentReporter()
        self.b = _ParentReporter()
        self.c = _ParentReporter()


class _Namer(Reactor):
    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"NAME {self.name}", flush=True)


class Names(Reactor):
    """A bank of ``n`` federates that each print their own name: which output came from
    which process."""

    def __init__(self, n: int = 40) -> None:
        self.namers = bank(_Namer, n)


class _GilHog(Reactor):
    """At startup, holds the interpreter lock for ``hold_ms`` (a C call through
    ``ctypes.PyDLL``, which keeps the GIL): no Python thread of this process runs
    meanwhile, its heartbeat thread included. Then sends one value."""

    out = Output(int)

    def __init__(self, hold_ms: int) -> None:
        self.hold_ms = hold_ms

    @reaction(triggers=[STARTUP], effects=[out])
    def hog(self, out: Any) -> None:
        import ctypes

        ctypes.PyDLL(None).usleep(self.hold_ms * 1000)
        out.set(1)


class _Taker(Reactor):
    inp = Input(int)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        print(f"GOT {inp.get()}", flush=True)


class GilHog(Reactor):
    """A federate whose reaction holds the GIL for longer than the heartbeat timeout."""

    def __init__(self, hold_ms: int = 2500) -> None:
        self.hog = _GilHog(hold_ms)
        self.taker = _Taker()
        self.connect(self.hog.out, self.taker.inp)


# -- a zero-delay cycle between federates with a microstep event on one side -------------
class _CycleA(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, ms(10))

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(1)

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        pass  # no effects: no reaction-level cycle


class _CycleB(Reactor):
    inp = Input(int)
    out = Output(int)
    act = LogicalAction()

    def __init__(self) -> None:
        self.log: list[tuple[int, int, bool, bool]] = []

    @reaction(triggers=[STARTUP], effects=[act])
    def start(self, act: Any) -> None:
        act.schedule(delay=0)  # an event at (0, 1), where a has none

    @reaction(triggers=[inp, act], effects=[out])
    def react(self, inp: Any, act: Any, out: Any) -> None:
        t = self.elapsed_tag()
        self.log.append((t.time // 10**6, t.microstep, inp.is_present, act.is_present))
        out.set(0)

    @reaction(triggers=[SHUTDOWN])
    def show(self) -> None:
        print("CYCLE LOG", self.log, flush=True)


class MicrostepCycle(Reactor):
    """a <-> b without delay; b has an event a microstep after the start, a none then: a
    must process that tag all the same to announce its output absent (it hung federated)."""

    def __init__(self, loop: bool = True) -> None:
        self.a = _CycleA()
        self.b = _CycleB()
        self.connect(self.a.out, self.b.inp)
        if loop:
            self.connect(self.b.out, self.a.inp)
