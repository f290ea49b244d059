"""Serial, parallel and reordered executions of one program give identical traces."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactorfed import (
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Tag,
    Timer,
    UndeclaredAccessError,
    bank,
    ms,
    reaction,
)
from reactorfed.time.tag import FOREVER

from .util import run

# -- a fixed, wide program ----------------------------------------------------------


class Feeder(Reactor):
    out = Output(object)
    t = Timer(0, ms(1))

    def __init__(self, n):
        self.rng = np.random.default_rng(7)
        self.n = n

    @reaction(triggers=[t], effects=[out])
    def emit(self, out):
        out.set(self.rng.standard_normal((self.n, 16)))


class Crunch(Reactor):
    """Numpy work (releases the GIL) with per-member state and a self-scheduled action."""

    inp = Input(object)
    out = Output(float)
    again = LogicalAction(float)

    def __init__(self, log, threads=None):
        self.log = log
        self.threads = threads  # where the reactions ran (threading identities), if asked
        self.acc = 0.0

    @reaction(triggers=[inp], effects=[out, again])
    def work(self, inp, out, again):
        if self.threads is not None:
            self.threads.add(threading.get_ident())
        row = inp.get()[self.bank_index]
        m = np.linalg.matrix_power(np.outer(row, row) / 16.0, 3)
        self.acc = self.acc * 0.5 + float(m.sum())
        out.set(self.acc)
        if self.bank_index % 2:
            again.schedule(value=self.acc, delay=ms(1) // 2)

    @reaction(triggers=[again])
    def later(self, again):
        self.log.setdefault(self.fqn, []).append((self.elapsed_tag(), round(again.get(), 9)))


class Reduce(Reactor):
    inp = Input(float, width="n")

    def __init__(self, n, log):
        self.n = n
        self.log = log

    @reaction(triggers=[inp])
    def total(self, inp):
        self.log.setdefault(self.fqn, []).append((self.elapsed_tag(), [round(v, 9) for _, v in inp.present()]))


def _wide(log, n=8, threads=None):
    class Main(Reactor):
        def __init__(self):
            self.feed = Feeder(n)
            self.c = bank(Crunch, n, log, threads)
            self.r = Reduce(n, log)
            self.connect(self.feed.out, self.c.inp, broadcast=True)
            self.connect(self.c.out, self.r.inp)

    return Main()


def test_parallel_execution_gives_the_same_trace_as_serial():
    serial, parallel = {}, {}
    one, several = set(), set()
    s1 = run(_wide(serial, threads=one), timeout=ms(20))
    s2 = run(_wide(parallel, threads=several), timeout=ms(20), workers=4)
    assert len(one) == 1 and len(several) > 1, "workers=4 must run same-level reactions on several threads"
    assert serial == parallel
    assert len(serial["Main.r"]) == 21
    assert (s1.tags, s1.reactions, s1.last_tag) == (s2.tags, s2.reactions, s2.last_tag)


# -- random acyclic programs ---------------------------------------------------------

MICROSTEP_LIMIT = 4  # bounds feedback through after-0 connections
TIMEOUT = ms(12)


class Node(Reactor):
    """A node of a random program: a multiport input (one channel per upstream), an
    output, a timer and a self-scheduled action, redeclared per program, and a deadline
    (never missed in fast mode: it changes the order reactions ready at one tag run in,
    earliest inferred deadline first, never the results)."""

    inp = Input(int, width="width")
    out = Output(int)
    t = Timer(TIMEOUT + 1)  # never, unless redeclared
    act = LogicalAction(int)

    def __init__(self, ident, width, reschedule, trace, deadline=FOREVER, threads=None):
        self.ident = ident
        self.threads = threads  # where the reactions ran (threading identities), if asked
        self.deadline = deadline
        self.width = width
        self.reschedule = reschedule  # delays for the action, consumed one per firing
        self.trace = trace
        self.state = ident

    @reaction(triggers=[STARTUP, inp, t, act], effects=[out, act], deadline="deadline")
    def step(self, inp, t, act, out):
        if self.threads is not None:
            self.threads.add(threading.get_ident())
        tag = self.elapsed_tag()
        seen = inp.present()
        a = act.get() if act.is_present else None
        self.state = (self.state * 31 + sum((i + 1) * v for i, v in seen) + (a or 0) + int(t.is_present) + tag.time // 1000 + tag.microstep) % 1_000_003
        self.trace.setdefault(self.name, []).append((tag, seen, a, t.is_present, self.state))
        if tag.microstep < MICROSTEP_LIMIT:
            out.set(self.state)
            if self.reschedule:
                act.schedule(value=self.state, delay=self.reschedule.pop())


delays = st.sampled_from([None, None, 0, ms(1), ms(3)])


@st.composite
def programs(draw):
    n = draw(st.integers(2, 8))
    edges = []
    for j in range(n):
        for i in range(n):
            if i < j and draw(st.booleans()):
                edges.append((i, j, draw(delays)))  # forward: any delay keeps it acyclic
            elif i > j and draw(st.integers(0, 4)) == 0:
                edges.append((i, j, draw(st.sampled_from([0, ms(2)]))))  # feedback: delayed
    nodes = []
    for _ in range(n):
        timer = draw(st.one_of(st.none(), st.tuples(st.integers(0, 5), st.sampled_from([0, 2, 3, 5]))))
        action = draw(st.tuples(st.sampled_from([0, ms(1)]), st.sampled_from([None, 0, ms(2)]), st.sampled_from(["defer", "drop", "replace"])))
        reschedule = draw(st.lists(st.sampled_from([0, ms(1), ms(2)]), max_size=3))
        deadline = draw(st.sampled_from([FOREVER, FOREVER, ms(1), ms(5)]))
        nodes.append((timer, action, reschedule, deadline))
    order = draw(st.permutations(range(n)))
    return n, edges, nodes, order


def _build(spec, trace, shuffled, threads=None):
    n, edges, nodes, order = spec
    classes = []
    for i, (timer, (min_delay, min_spacing, policy), _, _) in enumerate(nodes):
        # a policy applies only with a declared min_spacing (None: not declared)
        body = {"act": LogicalAction(int, min_delay=min_delay, min_spacing=min_spacing,
                                     policy=None if min_spacing is None else policy)}
        if timer is not None:
            body["t"] = Timer(ms(timer[0]), ms(timer[1]))
        classes.append(type(f"Node{i}", (Node,), body))
    fan_in = [[e for e in edges if e[1] == j] for j in range(n)]

    class Main(Reactor):
        def __init__(self):
            made = {}
            for i in (order if shuffled else range(n)):
                made[i] = classes[i](i, len(fan_in[i]), list(nodes[i][2]), trace, nodes[i][3], threads, name=f"n{i}")
            self.nodes = [made[i] for i in range(n)]
            conns = [(src, dst, ch, after) for dst in range(n) for ch, (src, _, after) in enumerate(fan_in[dst])]
            if shuffled:
                random.Random(len(conns)).shuffle(conns)
            for src, dst, ch, after in conns:
                self.connect(self.nodes[src].out, self.nodes[dst].inp[ch], after=after)

    return Main()


def test_random_acyclic_programs_are_deterministic():
    """Serial, workers=4 and reordered assembly give one trace, on 100 random programs.

    One program may leave the pool nothing to do (a single chain: one reaction per
    level), so the proof that workers=4 ran reactions in parallel is taken over all the
    examples: the parallel runs' reactions ran on more than one thread."""
    parallel_threads: set[int] = set()

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(programs())
    def check(spec):
        serial, parallel, shuffled = {}, {}, {}
        s1 = run(_build(spec, serial, shuffled=False), timeout=TIMEOUT)
        s2 = run(_build(spec, parallel, shuffled=False, threads=parallel_threads), timeout=TIMEOUT, workers=4)
        s3 = run(_build(spec, shuffled, shuffled=True), timeout=TIMEOUT)
        assert serial == parallel
        assert serial == shuffled
        assert (s1.tags, s1.reactions, s1.last_tag, s1.stop_reason) == (s2.tags, s2.reactions, s2.last_tag, s2.stop_reason)
        assert (s1.tags, s1.reactions, s1.last_tag, s1.stop_reason) == (s3.tags, s3.reactions, s3.last_tag, s3.stop_reason)
        assert set(serial) == {f"n{i}" for i in range(spec[0])}  # every node ran (startup)

    check()
    assert len(parallel_threads) > 1, "workers=4 must run same-level reactions on several threads"


# -- errors and stop requests on the worker pool -----------------------------------


class Member(Reactor):
    t = Timer(0, ms(1))
    secret = Output(int)

    def __init__(self, log, sneaky=False, threads=None):
        self.log = log
        self.sneaky = sneaky
        self.threads = threads if threads is not None else {}  # bank index -> threads its reactions ran on

    @reaction(triggers=[t])
    def tick(self):
        self.threads.setdefault(self.bank_index, set()).add(threading.get_ident())
        self.log.append((self.bank_index, self.elapsed_tag()))
        if self.elapsed() == ms(3) and self.bank_index == 2:
            if self.sneaky:
                self.secret.set(1)
            self.request_stop()


def _off_the_calling_thread(threads):
    """Reactions ran on several threads, and member 2's (the third of its level's batch,
    never the batch's first, which the calling thread runs) on a worker's."""
    assert len(set().union(*threads.values())) > 1, "workers=4 must run same-level reactions on several threads"
    assert threading.get_ident() not in threads[2]


def test_request_stop_from_a_worker_thread_stops_at_the_next_microstep():
    log, threads = [], {}

    class Main(Reactor):
        def __init__(self):
            self.m = bank(Member, 4, log, threads=threads)

    summary = run(Main(), workers=4)
    _off_the_calling_thread(threads)
    assert summary.last_tag == Tag(ms(3), 1)
    assert summary.stop_reason == "stop requested"
    assert sorted(log) == [(i, Tag(ms(k))) for i in range(4) for k in range(4)]


def test_an_undeclared_write_on_a_worker_thread_names_the_reaction():
    threads = {}

    class Main(Reactor):
        def __init__(self):
            self.m = bank(Member, 4, [], sneaky=True, threads=threads)

    with pytest.raises(UndeclaredAccessError, match=r"reaction Main\.m\[2\]\.tick writes Main\.m\[2\]\.secret"):
        run(Main(), workers=4)
    _off_the_calling_thread(threads)
