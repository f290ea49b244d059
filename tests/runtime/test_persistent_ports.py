"""A port's value persists (LF's Python target): ``.value`` reads the latest value at
this tag or an earlier one; ``.get()`` and ``is_present`` are about the current tag."""

from __future__ import annotations

from reactorfed import (
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
)
from reactorfed.federation import run_threads

from .util import run


class Src(Reactor):
    out = Output(int)
    t = Timer(ms(10), ms(20))

    def __init__(self):
        self.n = 0
        self.own = []

    @reaction(triggers=[t], effects=[out])
    def emit(self, out):
        self.own.append(out.value)  # the output's own previous value, before this set
        self.n += 1
        out.set(self.n)


class Sink(Reactor):
    inp = Input(int)
    many = Input(int, width=2)
    t = Timer(0, ms(10))

    def __init__(self):
        self.seen = []

    @reaction(triggers=[t], sources=[inp, many])
    def look(self, inp, many):
        self.seen.append((self.elapsed(), inp.value, inp.get(), inp.is_present, many.values(), many[1].value))


class Main(Reactor):
    def __init__(self):
        self.src = Src()
        self.sink = Sink()
        self.pair = bank(Src, 2)
        self.connect(self.src.out, self.sink.inp)
        self.connect(self.pair.out, self.sink.many, after=ms(5))




def test_value_persists_and_get_is_presence_gated():
    main = Main()
    run(main, timeout=ms(40))
    assert main.sink.seen == [
        (0, None, None, False, [None, None], None),
        (ms(10), 1, 1, True, [None, None], None),
        (ms(20), 1, None, False, [None, None], 1),  # many's values arrived at 15 ms
        (ms(30), 2, 2, True, [None, None], 1),
        (ms(40), 2, None, False, [None, None], 2),
    ]
    assert main.src.own == [None, 1]  # an output's value persists for its writer too


def test_the_same_values_persist_federated():
    """Split over federates (the sink's inputs arrive over the network), the persisted
    values are the same as in one process."""
    one = Main()
    run(one, timeout=ms(40))
    fed = run_threads(Main, fast=True, timeout=ms(40))
    fed.raise_errors()
    assert fed.programs["sink"].sink.seen == one.sink.seen


def test_an_action_value_does_not_persist():
    class A(Reactor):
        a = LogicalAction(int)
        t = Timer(0, ms(1))

        def __init__(self):
            self.seen = []

        @reaction(triggers=[t, a], effects=[a])
        def r(self, a):
            self.seen.append((a.value, a.get()))
            if self.elapsed() == 0 and not a.is_present:
                a.schedule(value=7)

    main = A()
    run(main, timeout=ms(1))
    assert main.seen == [(None, None), (7, 7), (None, None)]
