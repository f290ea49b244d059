"""Physical connections (LF's ``~>``): the value arrives at physical time + after."""

from __future__ import annotations

import pytest

from reactorfed import (
    STARTUP,
    CausalityLoopError,
    Environment,
    Input,
    Output,
    Reactor,
    VirtualClock,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble


class Source(Reactor):
    out = Output(int)

    def __init__(self, clock, work):
        self.clock = clock
        self.work = work

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out):
        self.clock.advance(self.work)  # simulated work before the output
        out.set(42)


class Destination(Reactor):
    inp = Input(int)

    def __init__(self):
        self.got = []

    @reaction(triggers=[inp])
    def receive(self, inp):
        t = self.elapsed_tag()
        self.got.append((t.time, t.microstep, inp.get()))


def _main(clock, work, after):
    class Main(Reactor):
        def __init__(self):
            self.source = Source(clock, work)
            self.destination = Destination()
            self.connect(self.source.out, self.destination.inp, physical=True, after=after)

    return Main()


@pytest.mark.parametrize(("work", "after", "expected"), [
    (ms(3), None, (ms(3), 0)),  # physical time when the tag ends
    (ms(3), ms(2), (ms(5), 0)),  # + after
    (0, None, (0, 1)),  # no physical time passed: the sender's next microstep, never its tag
])
def test_a_physical_connection_delivers_at_physical_time_plus_after(work, after, expected):
    clock = VirtualClock()
    main = _main(clock, work, after)
    Environment(clock=clock).run(main)
    assert main.destination.got == [(*expected, 42)]


class Foo(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def relay(self, inp, out):
        pass


def _cycle(physical):
    class Main(Reactor):
        def __init__(self):
            self.a = Foo()
            self.b = Foo()
            self.connect(self.a.out, self.b.inp, physical=physical)
            self.connect(self.b.out, self.a.inp)

    return Main()


def test_a_physical_connection_breaks_a_cycle():
    with pytest.raises(CausalityLoopError):
        assemble(_cycle(False))
    prog = assemble(_cycle(True))
    assert {rx.fqn: rx.level for rx in prog.reactions} == {"Main.b.relay": 0, "Main.a.relay": 1}


def test_a_physical_connection_between_federates_is_a_link_outside_coordination():
    """Between federates, a physical connection is a network link that time coordination
    does not see: no upstream, no path delay, no message count; data only."""
    from reactorfed.federation.coordination.layout import Layout

    part = assemble(_main(VirtualClock(), 0, ms(4)), federate="source").partition
    assert part is not None
    (lk,) = part.links
    assert lk.physical and lk.delay == ms(4) and "~>" in repr(lk)
    lay = Layout.of(part)
    src, dst = lay.index("source"), lay.index("destination")
    assert lay.links == [] and [(p.src, p.dst, p.delay) for p in lay.physical] == [(src, dst, ms(4))]
    assert lay.upstream(dst) == {} and lay.direct_upstream(dst) == set() and lay.downstream(src) == set()
    assert lay.data_upstream(dst) == {src} and lay.data_downstream(src) == {dst}


class _Once(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out):
        out.set(7)


class _Got(Reactor):
    inp = Input(int)

    def __init__(self):
        self.got = []

    @reaction(triggers=[inp])
    def receive(self, inp):
        self.got.append((self.elapsed(), inp.get()))


class _OnceMain(Reactor):
    def __init__(self):
        self.src = _Once()
        self.dst = _Got()
        self.connect(self.src.out, self.dst.inp, physical=True)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fast", [False, True])
def test_a_receiver_of_physical_links_waits_for_arrivals_and_ends_when_its_senders_end(fast):
    """No timeout, no stop request: the receiver has nothing of its own, so it waits for what
    its physical input brings (it does not starve at once), and once the sender ended (its
    last Mark reaches physical-only peers too) it ends by starvation: no hang."""
    from reactorfed.federation import run_threads

    run = run_threads(_OnceMain, fast=fast, join_timeout_s=20)
    assert not run.errors, run.errors
    got = run.programs["dst"].dst.got
    assert [v for _, v in got] == [7] and got[0][0] >= 0


def test_a_physical_connection_may_go_to_and_come_from_an_elastic_member():
    """(LF's transient federates with ``~>`` connections: what a member receives while
    absent does nothing; each incarnation sends and receives while present.)"""
    from reactorfed import Elastic, elastic_bank
    from reactorfed.federation.coordination.layout import Layout

    class Main(Reactor):
        def __init__(self):
            self.src = _Once()
            self.dst = elastic_bank(_Got, Elastic(0, 2, initial=1))
            self.connect(self.src.out, self.dst[0].inp, physical=True)

    part = assemble(Main(), federate="src").partition
    assert len(Layout.of(part).physical) == 1
