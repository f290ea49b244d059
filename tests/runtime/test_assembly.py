"""The three phases: construction declares, assembly builds a new program from the
declarations without changing them, execution binds one program to one scheduler.

So one reactor tree assembles any number of times into independent programs, and runs
again once a run has ended (never twice at once: test_graph.py). State a reactor keeps in
its own attributes carries over between runs; the programs here reset theirs at startup.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Environment,
    Input,
    LogicalAction,
    Output,
    PhysicalAction,
    Reactor,
    Timer,
    ValidationError,
    VirtualClock,
    bank,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble
from reactorfed.assembly.program import Program
from reactorfed.model.port import MultiPort, Port
from reactorfed.model.reactor import Connection

Trace = list[tuple[str, int, int, Any]]


# -- a structural snapshot of what the tree declares -------------------------------------
def _walk(r: Reactor) -> list[Reactor]:
    out = [r]
    for c in r.children:
        out.extend(_walk(c))
    return out


def _shallow(v: Any) -> Any:
    """A value as the snapshot records it: plain data as is, containers element by
    element, any other object by identity (so replacing it or changing a list shows)."""
    if v is None or isinstance(v, (bool, int, float, str, type)):
        return v
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_shallow(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, _shallow(x)) for k, x in v.items()))
    return ("obj", type(v).__name__, id(v))


def _fields(obj: Any) -> dict[str, Any]:
    names: list[str] = [n for k in type(obj).__mro__ for n in getattr(k, "__slots__", ())]
    out = {n: _shallow(getattr(obj, n)) for n in names if hasattr(obj, n)}
    out.update({k: _shallow(v) for k, v in getattr(obj, "__dict__", {}).items()})
    return out


#: the runtime's own keys in a reactor's __dict__ (the rest is the user's state)
_REACTOR_KEYS = ("_parent", "_children", "_connections", "_explicit_name", "bank_index", "name", "fqn")


def snapshot(main: Reactor) -> list[Any]:
    """Everything the tree declares: each reactor's runtime fields, its ports' channels,
    actions and timers with all their fields, and its connections."""
    out: list[Any] = []
    for r in _walk(main):
        d = r.__dict__
        out.append(("reactor", id(r), {k: _shallow(d[k]) for k in _REACTOR_KEYS}))
        for attr in (*r._decl_ports, *r._decl_actions, *r._decl_timers):
            el = d[attr]
            out.append((attr, _fields(el)))
            if isinstance(el, MultiPort):
                out.extend(("channel", _fields(ch)) for ch in el.channels())
        for c in d["_connections"]:
            assert isinstance(c, Connection)
            out.append(("connection", _fields(c)))
    return out


# -- programs ---------------------------------------------------------------------------
class Source(Reactor):
    out = Output(int)
    tick = Timer(offset=0, period="every")
    again = LogicalAction(int, min_spacing=ms(1))

    def __init__(self, log: Trace, every: int = ms(2), n: int = 5) -> None:
        self.log, self.every, self.n = log, every, n
        self.i = 0

    @reaction(triggers=[STARTUP])
    def reset(self) -> None:
        self.i = 0  # the reactor's own state: reset for each run

    @reaction(triggers=[tick, again], effects=[out, again])
    def emit(self, out: Any, again: Any) -> None:
        if self.i >= self.n:
            return
        self.i += 1
        out.set(self.i * 10 + (self.bank_index or 0))
        if self.i % 2:
            again.schedule(value=self.i)  # min_spacing: the action's previous tag matters


class Sink(Reactor):
    inp = Input(int)

    def __init__(self, log: Trace) -> None:
        self.log = log

    @reaction(triggers=[STARTUP], sources=[inp])
    def first(self, inp: Any) -> None:
        # A port's value persists within a run; a new run starts with none.
        t = self.elapsed_tag()
        self.log.append((f"{self.fqn} start", t.time, t.microstep, inp.value))

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.log.append((self.fqn, t.time, t.microstep, inp.get()))


class Gather(Reactor):
    inp = Input(int, width="width")

    def __init__(self, log: Trace, width: int) -> None:
        self.log, self.width = log, width

    @reaction(triggers=[inp, SHUTDOWN])
    def got(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.log.append((self.fqn, t.time, t.microstep, tuple(inp.values())))


class Relay(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get() + 1)


class Plain(Reactor):
    """Zero-delay connections through a hierarchy: one shared slot per chain."""

    def __init__(self, log: Trace) -> None:
        self.src = Source(log)
        self.relay = Relay()
        self.sink = Sink(log)
        self.connect(self.src.out, self.relay.inp)
        self.connect(self.relay.out, self.sink.inp)


class Banked(Reactor):
    def __init__(self, log: Trace) -> None:
        self.srcs = bank(Source, 3, log)
        self.gather = Gather(log, 3)
        self.connect(self.srcs.out, self.gather.inp)


class Delayed(Reactor):
    """after d, after 0 and a physical connection."""

    def __init__(self, log: Trace) -> None:
        self.src = Source(log)
        self.relay = Relay()
        self.late = Sink(log)
        self.connect(self.src.out, self.relay.inp, after=ms(3))
        self.connect(self.relay.out, self.late.inp, after=0)
        self.phys = Relay()
        self.seen = Sink(log)
        self.connect(self.src.out, self.phys.inp, physical=True)
        self.connect(self.phys.out, self.seen.inp)


def _run(main: Reactor, log: Trace, **kw: Any) -> tuple[Any, Trace]:
    log.clear()
    s = Environment(fast=True, clock=VirtualClock(), **kw).run(main)
    return (s.tags, s.reactions, s.last_tag, s.stop_reason), sorted(log, key=repr)


@pytest.mark.parametrize("program", [Plain, Banked, Delayed])
@pytest.mark.parametrize("workers", [1, 2])
def test_the_same_main_runs_twice_with_the_same_results(program: type[Reactor], workers: int) -> None:
    log: Trace = []
    main = program(log)
    before = snapshot(main)
    first = _run(main, log, timeout=ms(20), workers=workers)
    assert snapshot(main) == before
    second = _run(main, log, timeout=ms(20), workers=workers)
    assert second == first
    assert first[1], "the program produced output"
    assert snapshot(main) == before
    # ... and equals a fresh tree's run
    fresh_log: Trace = []
    assert _run(program(fresh_log), fresh_log, timeout=ms(20), workers=workers) == first


@pytest.mark.parametrize("program", [Plain, Banked, Delayed])
def test_assembly_leaves_the_tree_as_declared(program: type[Reactor]) -> None:
    main = program([])
    before = snapshot(main)
    assemble(main)
    assert snapshot(main) == before


def _runtime_objects(prog: Program) -> set[int]:
    objs: list[Any] = [prog.startup, prog.shutdown, *prog.slots.values(), *prog.reactions, *prog.actions, *prog.timers]
    objs += [d for s in prog.slots.values() for d, _ in s.delayed]
    return {id(o) for o in objs}


@pytest.mark.parametrize("program", [Plain, Banked, Delayed])
def test_two_assemblies_share_no_runtime_state(program: type[Reactor]) -> None:
    main = program([])
    a, b = assemble(main), assemble(main)
    assert not _runtime_objects(a) & _runtime_objects(b)
    # ... and agree on everything else: same shape, same ranks, same slot sharing
    assert [(rx.fqn, rx.rank, rx.level, rx.inferred_deadline) for rx in a.reactions] == [
        (rx.fqn, rx.rank, rx.level, rx.inferred_deadline) for rx in b.reactions]
    assert a.channels == b.channels
    shared_a = [[c.fqn for c in a.channels if a.slots[c] is a.slots[ch]] for ch in a.channels]
    shared_b = [[c.fqn for c in b.channels if b.slots[c] is b.slots[ch]] for ch in b.channels]
    assert shared_a == shared_b
    assert [(a.slots[ch].fqn, [(d.fqn, n) for d, n in a.slots[ch].delayed]) for ch in a.channels] == [
        (b.slots[ch].fqn, [(d.fqn, n) for d, n in b.slots[ch].delayed]) for ch in b.channels]


def test_zero_delay_connections_share_a_slot_and_delayed_ones_deliver_slot_to_slot() -> None:
    prog = assemble(Plain([]))
    m = prog.main
    assert isinstance(m, Plain)
    assert prog.slot_of(m.src.out) is prog.slot_of(m.relay.inp)
    assert prog.slot_of(m.relay.out) is prog.slot_of(m.sink.inp) is not prog.slot_of(m.src.out)
    d = assemble(Delayed([]))
    dm = d.main
    assert isinstance(dm, Delayed)
    assert [(s.fqn, n) for s, n in d.slot_of(dm.src.out).delayed] == [
        ("Delayed.relay.inp", ms(3)), ("Delayed.phys.inp", -1)]
    assert [(s.fqn, n) for s, n in d.slot_of(dm.relay.out).delayed] == [("Delayed.late.inp", 0)]


def test_full_names_are_final_when_construction_ends() -> None:
    main = Banked([])
    assert [r.fqn for r in _walk(main)] == ["Banked", "Banked.srcs[0]", "Banked.srcs[1]", "Banked.srcs[2]", "Banked.gather"]
    assert main.gather.inp[2].fqn == "Banked.gather.inp[2]"
    assert main.srcs[1].tick.fqn == "Banked.srcs[1].tick"


def test_a_federate_partition_leaves_the_tree_as_declared_and_is_its_own_object() -> None:
    class Fed(Reactor):
        def __init__(self, log: Trace) -> None:
            self.a = Source(log)
            self.b = Relay()
            self.c = Sink(log)
            self.connect(self.a.out, self.b.inp, after=ms(1))
            self.connect(self.b.out, self.c.inp)

    main = Fed([])
    before = snapshot(main)
    progs = {n: assemble(main, n) for n in ("a", "b", "c", "b")}
    assert snapshot(main) == before
    b = progs["b"]
    assert b.partition is not None and b.partition.federate == "b"
    assert b.partition.federates == ["a", "b", "c"]
    assert [(lk.src.fqn, lk.dst.fqn, lk.delay, lk.src_fed, lk.dst_fed) for lk in b.partition.links] == [
        ("Fed.a.out", "Fed.b.inp", ms(1), "a", "b"), ("Fed.b.out", "Fed.c.inp", None, "b", "c")]
    assert [rx.fqn for rx in b.reactions] == ["Fed.b.forward"]
    assert b.partition.federate_of(main.c) == "c" and b.is_local(main.b) and not b.is_local(main.a)
    # the network cuts the zero-delay connection: b's output and c's input have their own slots
    c = progs["c"]
    assert c.slot_of(main.b.out) is not c.slot_of(main.c.inp)
    assert assemble(main).partition is None
    assert not _runtime_objects(progs["a"]) & _runtime_objects(b)


def test_a_program_is_bound_to_one_scheduler_and_a_scheduler_runs_once() -> None:
    log: Trace = []
    main = Plain(log)
    env = Environment(fast=True, clock=VirtualClock(), timeout=ms(5))
    sched = env.assemble(main)
    with pytest.raises(ValidationError, match="already part of a running program"):
        Environment(fast=True).assemble(main)  # bound, not yet run: one program at a time
    from reactorfed.execution.scheduler import Scheduler

    with pytest.raises(ValidationError, match="already bound to a scheduler"):
        Scheduler(sched.program, clock=VirtualClock(), fast=True, timeout=None, keepalive=False).bind()
    env.run()
    with pytest.raises(ValidationError, match="already run its program"):
        env.run()
    env.run(main)  # assembled again: runs


def test_a_physical_action_scheduled_from_outside_reaches_the_run_it_is_in() -> None:
    class Phys(Reactor):
        act = PhysicalAction(int)

        def __init__(self) -> None:
            self.got: list[int] = []

        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            self.got = []
            threading.Thread(target=lambda: self.act.schedule(value=7)).start()

        @reaction(triggers=[act])
        def on(self, act: Any) -> None:
            self.got.append(act.get())
            self.request_stop()

    p = Phys()
    for _ in range(2):
        Environment(timeout=ms(2000)).run(p)
        assert p.got == [7]
    with pytest.raises(ValidationError, match="scheduled before the program runs"):
        Phys().act.schedule(value=1)


def test_the_tree_holds_no_runtime_state() -> None:
    """Ports, actions and timers of the tree are declarations: no slot, no connection
    state, no value."""
    main = Delayed([])
    assert not hasattr(main.src.out, "_slot") and not hasattr(main.src.out, "upstream")
    assert not hasattr(main.src.again, "value") and not hasattr(main.src.again, "last_tag")
    assert not hasattr(main.src.tick, "reactions") and not hasattr(main.src.tick, "period")
    assert isinstance(main.src.out, Port)
