"""The product's promise: a program split over federates gives exactly the output of the
same program in one process, every time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
    us,
)
from reactorfed.federation import run_threads

Trace = list[tuple[str, int, int, Any]]


class Source(Reactor):
    """Counts up on a timer and, every third tick, once more a microstep later."""

    out = Output(int)
    tick = Timer(offset=0, period=ms(5))
    again = LogicalAction(int)

    def __init__(self, n: int = 12) -> None:
        self.n = n
        self.i = 0

    @reaction(triggers=[tick, again], effects=[out, again])
    def emit(self, out: Any, again: Any) -> None:
        if self.i >= self.n:
            return
        self.i += 1
        out.set(self.i)
        if self.i % 3 == 0:
            again.schedule()


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get() * 10 + 1)


class Recorder(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.trace: Trace = []
        self.lags: list[int] = []  # physical minus logical time when recording

    @reaction(triggers=[inp])
    def record(self, inp: Any) -> None:
        self.lags.append(self.physical_time() - self.logical_time())
        t = self.elapsed_tag()
        v = inp.get()
        self.trace.append((self.fqn, t.time, t.microstep, v.tolist() if isinstance(v, np.ndarray) else v))


def pipeline(after: int | None) -> Callable[[], Reactor]:
    class Main(Reactor):
        def __init__(self) -> None:
            self.src = Source()
            self.relay = Relay()
            self.rec = Recorder()
            self.connect(self.src.out, self.relay.inp, after=after)
            self.connect(self.relay.out, self.rec.inp, after=after)

    return Main


class Accumulator(Reactor):
    """Adds what comes back around the loop to what the source sends."""

    inp = Input(int)
    feedback = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.total = 0

    @reaction(triggers=[inp, feedback], effects=[out])
    def add(self, inp: Any, feedback: Any, out: Any) -> None:
        if feedback.is_present:
            self.total += feedback.get()
        if inp.is_present:
            self.total += inp.get()
            out.set(self.total)


def cycle_with_delay() -> Reactor:
    class Main(Reactor):
        def __init__(self) -> None:
            self.src = Source()
            self.acc = Accumulator()
            self.relay = Relay()
            self.rec = Recorder()
            self.connect(self.src.out, self.acc.inp)
            self.connect(self.acc.out, self.relay.inp)
            self.connect(self.relay.out, self.acc.feedback, after=ms(1))
            self.connect(self.relay.out, self.rec.inp)

    return Main()


class Pinger(Reactor):
    """Sends, then hears the answer at the same tag: a zero-delay cycle across federates
    that is acyclic at the level of reactions."""

    ping = Output(int)
    pong = Input(int)
    tick = Timer(offset=0, period=ms(2))

    def __init__(self) -> None:
        self.i = 0
        self.trace: Trace = []

    @reaction(triggers=[tick], effects=[ping])
    def send(self, ping: Any) -> None:
        self.i += 1
        if self.i % 4 != 0:  # sometimes absent: the other side must say so
            ping.set(self.i)

    @reaction(triggers=[pong])
    def hear(self, pong: Any) -> None:
        t = self.elapsed_tag()
        self.trace.append((self.fqn, t.time, t.microstep, pong.get()))


class Ponger(Reactor):
    ping = Input(int)
    pong = Output(int)

    @reaction(triggers=[ping], effects=[pong])
    def answer(self, ping: Any, pong: Any) -> None:
        if ping.get() % 3 != 0:
            pong.set(-ping.get())


def zero_delay_cycle() -> Reactor:
    class Main(Reactor):
        def __init__(self) -> None:
            self.pinger = Pinger()
            self.ponger = Ponger()
            self.connect(self.pinger.ping, self.ponger.ping)
            self.connect(self.ponger.pong, self.pinger.pong)

    return Main()


class Worker(Reactor):
    job = Input(int)
    result = Output(object)

    @reaction(triggers=[job], effects=[result])
    def work(self, job: Any, result: Any) -> None:
        k = self.bank_index or 0
        result.set(np.arange(4, dtype=np.int64) * job.get() + k)


class Dispatcher(Reactor):
    jobs = Output(int)
    tick = Timer(offset=0, period=ms(1))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[tick], effects=[jobs])
    def dispatch(self, jobs: Any) -> None:
        self.n += 1
        if self.n <= 6:
            jobs.set(self.n)


class Gather(Reactor):
    results = Input(object, width="width")

    def __init__(self, width: int = 8) -> None:
        self.width = width
        self.trace: Trace = []

    @reaction(triggers=[results])
    def gather(self, results: Any) -> None:
        t = self.elapsed_tag()
        total = sum(int(v.sum()) for _, v in results.present())
        self.trace.append((self.fqn, t.time, t.microstep, (len(results.present()), total)))

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.trace.append((self.fqn, -1, -1, "shutdown"))


def bank_gather() -> Reactor:
    class Main(Reactor):
        def __init__(self) -> None:
            self.dispatcher = Dispatcher()
            self.workers = bank(Worker, 8)
            self.gather = Gather(width=8)
            self.connect(self.dispatcher.jobs, self.workers.job, broadcast=True)
            self.connect(self.workers.result, self.gather.results)

    return Main()


class Frames(Reactor):
    """Large arrays (through shared memory between federates), of sizes and dtypes that
    leave later records at odd offsets of the ring."""

    out = Output(object)
    back = Input(object)
    tick = Timer(offset=0, period=ms(2))

    def __init__(self) -> None:
        self.i = 0
        self.rng = np.random.default_rng(7)
        self.trace: Trace = []

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        self.i += 1
        if self.i > 15:
            return
        if self.i % 3 == 0:
            out.set(self.rng.integers(0, 255, size=160_001 + self.i, dtype=np.uint8))  # odd byte counts
        else:
            out.set(self.rng.standard_normal((256, 80 + self.i)).astype(np.float32))  # 82-97 KB

    @reaction(triggers=[back])
    def got(self, back: Any) -> None:
        t = self.elapsed_tag()
        v = back.get()
        self.trace.append((self.fqn, t.time, t.microstep, (v.shape, str(v.dtype), float(v.sum()), v.tobytes().hex()[:64])))


class Transform(Reactor):
    inp = Input(object)
    out = Output(object)

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp: Any, out: Any) -> None:
        v = inp.get()
        out.set((v.astype(np.float64) * 1.5 + np.arange(v.size).reshape(v.shape)) @ np.ones(v.shape[-1])
                if v.ndim == 2 else np.cumsum(v.astype(np.float64)))


def large_arrays() -> Reactor:
    class Main(Reactor):
        def __init__(self) -> None:
            self.frames = Frames()
            self.transform = Transform()
            self.connect(self.frames.out, self.transform.inp)
            self.connect(self.transform.out, self.frames.back)

    return Main()


def _traces(main: Reactor) -> Trace:
    out: Trace = []
    stack = [main]
    while stack:
        r = stack.pop()
        out.extend(getattr(r, "trace", []))
        stack.extend(r.children)
    return sorted(out, key=lambda e: (e[1], e[2], e[0]))


def _federated_traces(run: Any) -> Trace:
    out: Trace = []
    for name, main in run.programs.items():
        child = next(c for c in main.children if c.name == name)
        out.extend(_traces(child))
    return sorted(out, key=lambda e: (e[1], e[2], e[0]))


#: programs that only the RTI's provisional grants can advance
ZERO_DELAY_CYCLES = {"zero-delay cycle", "large arrays, both ways"}

PROGRAMS: dict[str, Callable[[], Reactor]] = {
    "pipeline, no delay": pipeline(None),
    "pipeline, after 0": pipeline(0),
    "pipeline, after 3 ms": pipeline(ms(3)),
    "cycle with a delay": cycle_with_delay,
    "zero-delay cycle": zero_delay_cycle,
    "bank of 8 gathering": bank_gather,
    "large arrays, both ways": large_arrays,
}


@pytest.mark.parametrize(("peer_grants", "unix"), [(True, True), (False, True), (True, False)],
                         ids=["peer-grants", "rti-grants-only", "peer-grants-tcp"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_federated_run_equals_single_process(name: str, peer_grants: bool, unix: bool) -> None:
    factory = PROGRAMS[name]
    timeout = ms(40)
    single = factory()
    Environment(fast=True, timeout=timeout).run(single)
    expected = _traces(single)
    assert len(expected) >= 5, "the program must do something worth comparing"
    for _ in range(2):  # every time, not once
        run = run_threads(factory, fast=True, timeout=timeout, join_timeout_s=60, peer_grants=peer_grants,
                          unix_sockets=unix)
        run.raise_errors()
        assert _federated_traces(run) == expected
        # every link between these federates (one host) goes over Unix sockets, or none
        assert (sum(run.unix_links.values()) > 0) == unix, run.unix_links
        # Turned off, federates never advance on promises. That they do when on is pinned
        # by test_peer_grants_alone_are_correct (RTI grants withheld): here, in a short
        # run, the RTI's grant may come first every time (it failed ~1 run in 6 when
        # this asserted that some promise was used).
        if not peer_grants:
            assert sum(run.peer_grants.values()) == 0, run.peer_grants


def test_real_time_federation_keeps_physical_time() -> None:
    """Not in fast mode: the same trace, and logical time never ahead of physical time."""
    factory = pipeline(us(500))
    single = factory()
    Environment(fast=True, timeout=ms(30)).run(single)
    run = run_threads(factory, fast=False, timeout=ms(30), join_timeout_s=60)
    run.raise_errors()
    assert _federated_traces(run) == _traces(single)
    lags = [lag for main in run.programs.values() for lag in _lags(main)]
    assert lags and min(lags) >= 0, "a reaction ran before physical time reached its tag"


def _lags(main: Reactor) -> list[int]:
    out: list[int] = []
    stack = [main]
    while stack:
        r = stack.pop()
        out.extend(getattr(r, "lags", []))
        stack.extend(r.children)
    return out


def test_startup_only_federates_stop_by_starvation() -> None:
    class Once(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out: Any) -> None:
            out.set(7)

    class Main(Reactor):
        def __init__(self) -> None:
            self.once = Once()
            self.rec = Recorder()
            self.connect(self.once.out, self.rec.inp)

    run = run_threads(Main, fast=True, timeout=None, join_timeout_s=60)
    run.raise_errors()
    assert _federated_traces(run) == [("Main.rec", 0, 0, 7)]
    assert all(s.stop_reason == "starvation" for s in run.summaries.values())


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ZERO_DELAY_CYCLES])
def test_peer_grants_alone_are_correct(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the RTI's grants withheld, the peers' promises alone drive the run, and the trace is still the single-process one: they are not merely
    hidden behind the RTI's."""
    from reactorfed.federation.process import rti_grants

    withheld: list[object] = []
    monkeypatch.setattr(rti_grants.RtiGrants, "send_grant", lambda self, g: withheld.append(g))
    factory = PROGRAMS[name]
    single = factory()
    Environment(fast=True, timeout=ms(40)).run(single)
    run = run_threads(factory, fast=True, timeout=ms(40), join_timeout_s=60)
    run.raise_errors()
    assert _federated_traces(run) == _traces(single)
    # Whether the RTI computed any grant at all is a race (reports are throttled; a short run
    # may end before one is due); that the promises drove the federates is not.
    assert sum(run.peer_grants.values()) > 0, "no federate advanced on its peers' promises"


def test_large_arrays_go_through_shared_memory() -> None:
    run = run_threads(large_arrays, fast=True, timeout=ms(40), join_timeout_s=60)
    run.raise_errors()
    # every frame; of the replies only the cumulative sums of the byte arrays are large
    assert run.shm_payloads == {"frames": 15, "transform": 5}, run.shm_payloads
