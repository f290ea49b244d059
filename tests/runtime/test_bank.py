"""Banks and multiports: width, per-channel presence, broadcast, bank index."""

import pytest

from reactorfed import (
    STARTUP,
    Input,
    Output,
    Reactor,
    Tag,
    Timer,
    ValidationError,
    bank,
    each,
    ms,
    reaction,
)
from reactorfed.assembly.assemble import assemble

from .util import run


class Worker(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self, scale=1):
        self.scale = scale

    @reaction(triggers=[inp], effects=[out])
    def work(self, inp, out):
        out.set(inp.get() * self.scale + (self.bank_index or 0))


class Fan(Reactor):
    """Writes channel i of its multiport output with 10 * i, only the even channels at
    odd ticks."""

    out = Output(int, width="n")
    t = Timer(0, ms(10))

    def __init__(self, n):
        self.n = n
        self.k = 0

    @reaction(triggers=[t], effects=[out])
    def emit(self, out):
        for i, ch in enumerate(out):
            if self.k % 2 == 0 or i % 2 == 0:
                ch.set(10 * i + self.k)
        self.k += 1


class Gather(Reactor):
    inp = Input(int, width=lambda self: self.n)

    def __init__(self, n, log):
        self.n = n
        self.log = log

    @reaction(triggers=[inp])
    def got(self, inp):
        self.log.append((self.elapsed_tag(), len(inp), inp.present(), inp.values()))


def test_bank_members_know_their_index_and_take_per_member_parameters():
    class Main(Reactor):
        def __init__(self):
            self.w = bank(Worker, 3, scale=each(lambda i: 100 + i))

    m = Main()
    assert len(m.w) == 3
    assert [w.bank_index for w in m.w] == [0, 1, 2]
    assert [w.scale for w in m.w] == [100, 101, 102]
    assemble(m)
    assert [w.fqn for w in m.w] == ["Main.w[0]", "Main.w[1]", "Main.w[2]"]
    assert Worker().bank_index is None


def test_multiport_width_and_per_channel_presence():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.f = Fan(3)
            self.g = Gather(3, log)
            self.connect(self.f.out, self.g.inp)

    m = Main()
    assert m.f.out.width == 3 and len(m.g.inp) == 3
    run(m, timeout=ms(20))
    assert log == [
        (Tag(0), 3, [(0, 0), (1, 10), (2, 20)], [0, 10, 20]),
        (Tag(ms(10)), 3, [(0, 1), (2, 21)], [1, None, 21]),  # channel 1 absent
        (Tag(ms(20)), 3, [(0, 2), (1, 12), (2, 22)], [2, 12, 22]),
    ]


def test_a_banks_outputs_feed_a_multiport_and_a_multiport_feeds_a_bank():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.f = Fan(4)
            self.w = bank(Worker, 4, scale=2)
            self.g = Gather(4, log)
            self.connect(self.f.out, self.w.inp)
            self.connect(self.w.out, self.g.inp, after=ms(1))

    run(Main(), timeout=ms(15))
    assert log == [
        (Tag(ms(1)), 4, [(0, 0), (1, 21), (2, 42), (3, 63)], [0, 21, 42, 63]),
        (Tag(ms(11)), 4, [(0, 2), (2, 44)], [2, None, 44, None]),
    ]


def test_broadcast_repeats_one_output_to_every_member():
    log = []

    class One(Reactor):
        out = Output(int)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out):
            out.set(5)

    class Main(Reactor):
        def __init__(self):
            self.one = One()
            self.w = bank(Worker, 3)
            self.g = Gather(3, log)
            self.connect(self.one.out, self.w.inp, broadcast=True)
            self.connect(self.w.out, self.g.inp)

    run(Main())
    assert log == [(Tag(0), 3, [(0, 5), (1, 6), (2, 7)], [5, 6, 7])]


def test_a_width_mismatch_is_an_error_with_broadcast_as_the_hint():
    class One(Reactor):
        out = Output(int)

    class Main(Reactor):
        def __init__(self):
            self.one = One()
            self.w = bank(Worker, 3)
            self.connect(self.one.out, self.w.inp)

    with pytest.raises(ValidationError, match=r"Main: width mismatch connecting Main\.one\.out \(1 channels\) to \[Main\.w\[0\]\.inp, \.\.\.\] \(3 channels\) \(use broadcast=True to repeat the sources\)"):
        assemble(Main())


def test_a_width_mismatch_that_broadcast_cannot_fix_has_no_hint():
    class Main(Reactor):
        def __init__(self):
            self.f = Fan(2)
            self.w = bank(Worker, 3)
            self.connect(self.f.out, self.w.inp, broadcast=True)

    with pytest.raises(ValidationError, match=r"width mismatch connecting Main\.f\.out \(2 channels\) to .* \(3 channels\)$"):
        assemble(Main())


def test_broadcast_of_a_multiport_repeats_it_in_order():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.f = Fan(2)
            self.g = Gather(4, log)
            self.connect(self.f.out, self.g.inp, broadcast=True)

    run(Main(), timeout=0)
    assert log == [(Tag(0), 4, [(0, 0), (1, 10), (2, 0), (3, 10)], [0, 10, 0, 10])]


def test_lists_of_ports_connect_channel_by_channel():
    log = []

    class Pair(Reactor):
        a = Output(int)
        b = Output(int)

        @reaction(triggers=[STARTUP], effects=[a, b])
        def go(self, a, b):
            a.set(1)
            b.set(2)

    class Main(Reactor):
        def __init__(self):
            self.p = Pair()
            self.g = Gather(2, log)
            self.connect([self.p.b, self.p.a], self.g.inp)

    run(Main())
    assert log == [(Tag(0), 2, [(0, 2), (1, 1)], [2, 1])]


def test_a_parent_reads_a_banks_outputs_and_writes_a_childs_input_by_string_reference():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.w = bank(Worker, 3, scale=10)
            self.head = Worker()

        @reaction(triggers=[STARTUP], effects=["w.inp", "head.inp"])
        def feed(self, w, head):
            assert len(w.inp) == 3
            w.inp[0].set(1)
            w.inp[2].set(3)
            head.inp.set(7)

        @reaction(triggers=["w.out"], sources=["head.out"])
        def collect(self, w, head):
            log.append((self.elapsed_tag(), w.out.present(), head.out.get()))

    run(Main())
    assert log == [(Tag(0), [(0, 10), (2, 32)], 7)]


def test_a_parent_reaction_with_the_same_child_as_trigger_and_effect_gets_both_ports():
    log = []

    class Main(Reactor):
        def __init__(self):
            self.c = Worker()

        @reaction(triggers=[STARTUP], effects=["c.inp"])
        def feed(self, c):
            c.inp.set(4)

        @reaction(triggers=["c.out"], effects=["c.inp"])
        def loop(self, c):
            log.append(c.out.get())

    # feed -> c.work -> loop, and loop writes c.inp -> c.work: a causality loop.
    from reactorfed import CausalityLoopError

    with pytest.raises(CausalityLoopError, match=r"Main\.c\.work -> Main\.loop"):
        assemble(Main())


def test_multiport_writer_set_all_broadcasts_at_one_tag():
    log = []

    class All(Reactor):
        out = Output(int, width=3)

        @reaction(triggers=[STARTUP], effects=[out])
        def go(self, out):
            out.set_all(9)

    class Main(Reactor):
        def __init__(self):
            self.a = All()
            self.g = Gather(3, log)
            self.connect(self.a.out, self.g.inp)

    run(Main())
    assert log == [(Tag(0), 3, [(0, 9), (1, 9), (2, 9)], [9, 9, 9])]


def test_a_multiport_of_width_zero_and_an_empty_bank_are_allowed():
    class Main(Reactor):
        def __init__(self):
            self.f = Fan(0)
            self.w = bank(Worker, 0)
            self.connect(self.f.out, self.w.inp)

    m = Main()
    assert len(m.w) == 0 and m.f.out.width == 0
    run(m, timeout=0)


@pytest.mark.parametrize("width", [-1, 1.5, "nope"])
def test_bad_widths_are_refused(width):
    class Bad(Reactor):
        out = Output(int, width=width)

        def __init__(self):
            self.nope = -2

    with pytest.raises(ValidationError, match=r"multiport width must be an int >= 0"):
        Bad()
    if not isinstance(width, str):
        with pytest.raises(ValidationError, match="bank width must be an int >= 0"):
            bank(Worker, width)
