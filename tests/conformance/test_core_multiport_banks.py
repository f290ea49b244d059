"""Ports of LF's multiport/ programs with banks of reactors: banks to banks, to and from
multiports, broadcast, hierarchy, nesting and interleaving.

A member whose LF parameter is called ``width`` gets it by keyword, as in LF
(``bank(cls, width, /, ...)``: the bank's own width is positional-only).
LF's ``interleaved(a.p)`` (channel-major order over a bank's multiports) has no
reactorfed operator: the port lists the channels in that order for ``connect``.
"""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    Output,
    Reactor,
    Timer,
    bank,
    each,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# ------------------------------------------------------------------- BankIndexInitializer.lf

_TABLE = [4, 3, 2, 1]  # the program's preamble


class _BIISource(Reactor):
    out = Output(int)

    def __init__(self, value: int = 0) -> None:
        self.value = value

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(self.value)


class _BIISink(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.received = False
        self.channels: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for idx, port in enumerate(inp):
            if port.is_present is True:
                self.received = True
                self.channels.append(idx)
                assert port.get() == 4 - idx, f"ERROR: expected {4 - idx}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is not False, "ERROR: Sink received no data"


class _BankIndexInitializer(Reactor):
    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.source = bank(_BIISource, width, value=each(lambda i: _TABLE[i]))
        self.sink = _BIISink(width=width)
        self.connect(self.source.out, self.sink.inp)


@lf_test("multiport/BankIndexInitializer.lf")
def test_bank_index_initializer() -> None:
    main = _BankIndexInitializer()
    run(main)
    assert main.sink.channels == [0, 1, 2, 3]


# --------------------------------------------------------------- BankReactionsInContainer.lf


class _R(Reactor):
    out = Output(int, width=2)
    inp = Input(int, width=2)

    def __init__(self) -> None:
        self.received = False
        self.got: list[int] = []

    @reaction(triggers=[STARTUP], effects=[out])
    def send(self, out: Any) -> None:
        assert self.bank_index is not None
        for i, p in enumerate(out):
            p.set(self.bank_index * 2 + i)

    @reaction(triggers=[inp])
    def receive(self, inp: Any) -> None:
        assert self.bank_index is not None
        for i, p in enumerate(inp):
            if p.is_present:
                self.received = True
                self.got.append(p.get())
                assert p.get() == self.bank_index * 2 + i, f"ERROR: Expected {self.bank_index * 2 + i}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, "ERROR: Received no input."


class _BankReactionsInContainer(Reactor):
    def __init__(self) -> None:
        self.s = bank(_R, 2)
        self.received = False
        self.got: list[int] = []

    @reaction(triggers=[STARTUP], effects=["s.inp"])
    def send(self, s: Any) -> None:
        # s.inp: the bank's input channels, member by member (LF: s[i].inp[j])
        count = 0
        for i in range(len(self.s)):
            for j in range(2):
                s.inp[i * 2 + j].set(count)
                count += 1

    @reaction(triggers=["s.out"])
    def receive(self, s: Any) -> None:
        for i in range(len(self.s)):
            for j in range(2):
                p = s.out[i * 2 + j]
                if p.is_present:
                    self.received = True
                    self.got.append(p.get())
                    assert p.get() == i * 2 + j, f"ERROR: Expected {i * 2 + j}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, "ERROR: Received no input."


@lf_test("multiport/BankReactionsInContainer.lf")
def test_bank_reactions_in_container() -> None:
    main = _BankReactionsInContainer()
    run(main, timeout=sec(1))
    assert main.got == [0, 1, 2, 3]
    assert [r.got for r in main.s] == [[0, 1], [2, 3]]


# ----------------------------------------------------------------------------- BankToBank.lf


class _BTBSource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(int)

    def __init__(self) -> None:
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        assert self.bank_index is not None
        out.set(self.s)
        self.s += self.bank_index


class _BTBDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.s = 0
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert self.bank_index is not None
        self.received += 1
        assert inp.get() == self.s, f"ERROR: Expected {self.s}"
        self.s += self.bank_index

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert not (self.s == 0 and self.bank_index != 0), f"ERROR: Destination {self.bank_index} received no input!"


class _BankToBank(Reactor):
    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.a = bank(_BTBSource, width)
        self.b = bank(_BTBDestination, width)
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/BankToBank.lf")
def test_bank_to_bank() -> None:
    main = _BankToBank()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [11] * 4
    assert [d.s for d in main.b] == [0, 11, 22, 33]


# -------------------------------------------------------------------- BankToBankMultiport.lf


class _BTBMSource(Reactor):
    t = Timer(offset=0, period=ms(200))
    out = Output(int, width="width")

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.s = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        for port in out:
            port.set(self.s)
            self.s += 1


class _BTBMDestination(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.s = 6
        self.received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.received += 1
        sm = 0
        for port in inp:
            if port.is_present:
                sm += port.get()
        assert sm == self.s, f"ERROR: Expected {self.s}."
        self.s += 16

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.s > 6, "ERROR: Destination received no input!"


class _BankToBankMultiport(Reactor):
    def __init__(self, bank_width: int = 4, after: int | None = None) -> None:
        self.bank_width = bank_width
        self.a = bank(_BTBMSource, bank_width, width=4)
        self.b = bank(_BTBMDestination, bank_width, width=4)
        self.connect(self.a.out, self.b.inp, after=after)


@lf_test("multiport/BankToBankMultiport.lf")
def test_bank_to_bank_multiport() -> None:
    main = _BankToBankMultiport()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [11] * 4


@lf_test("multiport/BankToBankMultiportAfter.lf")
def test_bank_to_bank_multiport_after() -> None:
    main = _BankToBankMultiport(after=ms(200))  # a.out -> b.inp after 200 msec
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [10] * 4  # 200 ms .. 2 s


# ------------------------------------------------------------------------- BankToMultiport.lf


class _BTMSource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(self.bank_index)


class _BTMSink(Reactor):
    inp = Input(int, width="width")

    def __init__(self, width: int = 4) -> None:
        self.width = width
        self.received = False
        self.channels: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for idx, port in enumerate(inp):
            if port.is_present is True:
                self.received = True
                self.channels.append(idx)
                assert port.get() == idx, f"ERROR: expected {idx}"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is not False, "ERROR: Sink received no data"


class _BankToMultiport(Reactor):
    def __init__(self, width: int = 5) -> None:
        self.width = width
        self.source = bank(_BTMSource, width)
        self.sink = _BTMSink(width=width)
        self.connect(self.source.out, self.sink.inp)


@lf_test("multiport/BankToMultiport.lf")
def test_bank_to_multiport() -> None:
    main = _BankToMultiport()
    run(main)
    assert main.sink.channels == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- Broadcast.lf, BroadcastAfter.lf


class _BSource(Reactor):
    out = Output(int)

    def __init__(self, value: int = 42) -> None:
        self.value = value

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(self.value)


class _BDestination(Reactor):
    inp = Input(int)

    def __init__(self, delay: int = 0) -> None:
        self.delay = delay
        self.received = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == 42, "ERROR: Expected 42."
        assert self.elapsed() == self.delay, f"ERROR: Expected to receive input after {self.delay / 1000000000} second(s)."
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, f"ERROR: Destination {self.bank_index} received no input!"


class _Broadcast(Reactor):
    def __init__(self) -> None:
        self.a = _BSource()
        self.b = bank(_BDestination, 4)
        self.connect(self.a.out, self.b.inp, broadcast=True)  # (a.out)+ -> b.inp


@lf_test("multiport/Broadcast.lf")
def test_broadcast() -> None:
    main = _Broadcast()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [True] * 4


class _BroadcastAfter(Reactor):
    def __init__(self) -> None:
        self.a = _BSource()
        self.b = bank(_BDestination, 4, delay=sec(1))
        self.connect(self.a.out, self.b.inp, broadcast=True, after=sec(1))  # (a.out)+ -> b.inp after 1 sec


@lf_test("multiport/BroadcastAfter.lf")
def test_broadcast_after() -> None:
    main = _BroadcastAfter()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [True] * 4


# ------------------------------------------------------------------ BroadcastMultipleAfter.lf


class _BMADestination(Reactor):
    inp = Input(int)

    def __init__(self, delay: int = 0) -> None:
        self.delay = delay
        self.received = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert self.bank_index is not None
        expected = (self.bank_index % 3) + 1
        assert inp.get() == expected, "ERROR: Expected 42."  # (sic: LF's message)
        assert self.elapsed() == self.delay, f"ERROR: Expected to receive input after {self.delay / 1000000000} second(s)."
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, f"ERROR: Destination {self.bank_index} received no input!"


class _BroadcastMultipleAfter(Reactor):
    def __init__(self) -> None:
        self.a1 = _BSource(value=1)
        self.a2 = _BSource(value=2)
        self.a3 = _BSource(value=3)
        self.b = bank(_BMADestination, 9, delay=sec(1))
        # (a1.out, a2.out, a3.out)+ -> b.inp after 1 sec
        self.connect([self.a1.out, self.a2.out, self.a3.out], self.b.inp, broadcast=True, after=sec(1))


@lf_test("multiport/BroadcastMultipleAfter.lf")
def test_broadcast_multiple_after() -> None:
    main = _BroadcastMultipleAfter()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [True] * 9


# ---------------------------------------------------------------------- MultiportFromBank.lf


class _MFBSource(Reactor):
    out = Output(int)

    def __init__(self, check_override: int = 0) -> None:
        self.check_override = check_override

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        assert self.bank_index is not None
        out.set(self.bank_index * self.check_override)


class _MFBDestination(Reactor):
    inp = Input(int, width=3)

    def __init__(self) -> None:
        self.received: Any = 0
        self.times: list[int] = []

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        self.times.append(self.elapsed())
        for idx, port in enumerate(inp):
            assert idx == port.get(), f"ERROR: Expected {idx}"
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is not False, "ERROR: Destination received no input!"


class _MultiportFromBank(Reactor):
    def __init__(self) -> None:
        self.a = bank(_MFBSource, 3, check_override=1)
        self.b = _MFBDestination()
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportFromBank.lf")
def test_multiport_from_bank() -> None:
    main = _MultiportFromBank()
    run(main, timeout=sec(2), fast=True)
    assert main.b.times == [0]


class _MFBHSource(Reactor):
    out = Output(int)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        out.set(self.bank_index)


class _MFBHContainer(Reactor):
    out = Output(int, width=3)

    def __init__(self) -> None:
        self.s = bank(_MFBHSource, 3)
        self.connect(self.s.out, self.out)


class _MultiportFromBankHierarchy(Reactor):
    def __init__(self, after: int | None = None) -> None:
        self.a = _MFBHContainer()
        self.b = _MFBDestination()
        self.connect(self.a.out, self.b.inp, after=after)


@lf_test("multiport/MultiportFromBankHierarchy.lf")
def test_multiport_from_bank_hierarchy() -> None:
    main = _MultiportFromBankHierarchy()
    run(main, timeout=sec(2), fast=True)
    assert main.b.times == [0]


@lf_test("multiport/MultiportFromBankHierarchyAfter.lf")
def test_multiport_from_bank_hierarchy_after() -> None:
    main = _MultiportFromBankHierarchy(after=sec(1))  # a.out -> b.inp after 1 sec
    run(main, timeout=sec(2), fast=True)
    assert main.b.times == [sec(1)]


# ------------------------------------------------------------------------ MultiportToBank.lf


class _MTBSource(Reactor):
    out = Output(int, width=3)

    @reaction(triggers=[STARTUP], effects=[out])
    def go(self, out: Any) -> None:
        for idx, port in enumerate(out):
            port.set(idx)


class _MTBDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received: Any = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert self.bank_index == inp.get(), f"ERROR: Expected {self.bank_index}"
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, f"ERROR: Destination {self.bank_index} received no input!"


class _MultiportToBank(Reactor):
    def __init__(self) -> None:
        self.a = _MTBSource()
        self.b = bank(_MTBDestination, 3)
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToBank.lf")
def test_multiport_to_bank() -> None:
    main = _MultiportToBank()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [True] * 3


class _MTBADestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert self.bank_index == inp.get(), f"ERROR: Expected {self.bank_index}."
        assert self.elapsed() == sec(1), "ERROR: Expected to receive input after one second."
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, f"ERROR: Destination {self.bank_index} received no input!"


class _MultiportToBankAfter(Reactor):
    def __init__(self) -> None:
        self.a = _MTBSource()
        self.b = bank(_MTBADestination, 3)
        self.connect(self.a.out, self.b.inp, after=sec(1))


@lf_test("multiport/MultiportToBankAfter.lf")
def test_multiport_to_bank_after() -> None:
    main = _MultiportToBankAfter()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b] == [True] * 3


class _MTBHDestination(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.received = False

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert self.bank_index == inp.get(), f"ERROR: Expected {self.bank_index}."
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.received is True, f"ERROR: Destination {self.bank_index} received no input!"


class _MTBHContainer(Reactor):
    inp = Input(int, width=3)

    def __init__(self) -> None:
        self.c = bank(_MTBHDestination, 3)
        self.connect(self.inp, self.c.inp)


class _MultiportToBankHierarchy(Reactor):
    def __init__(self) -> None:
        self.a = _MTBSource()
        self.b = _MTBHContainer()
        self.connect(self.a.out, self.b.inp)


@lf_test("multiport/MultiportToBankHierarchy.lf")
def test_multiport_to_bank_hierarchy() -> None:
    main = _MultiportToBankHierarchy()
    run(main, timeout=sec(2), fast=True)
    assert [d.received for d in main.b.c] == [True] * 3


# ---------------------------------------------------------------------------- NestedBanks.lf


class _NB(Reactor):
    y = Output(int, width=2)

    def __init__(self, a_bank_index: int = 0) -> None:
        self.a_bank_index = a_bank_index

    @reaction(triggers=[STARTUP], effects=[y])
    def go(self, y: Any) -> None:
        assert self.bank_index is not None
        base = self.a_bank_index * 4 + self.bank_index * 2
        y[0].set(base)
        y[1].set(base + 1)


class _NA(Reactor):
    x = Output(int, width=4)

    def __init__(self) -> None:
        assert self.bank_index is not None
        self.b = bank(_NB, 2, a_bank_index=self.bank_index)
        self.connect(self.b.y, self.x)


class _NF(Reactor):
    w = Input(int)

    def __init__(self, c_bank_index: int = 0) -> None:
        self.c_bank_index = c_bank_index
        self.got: list[int] = []

    @reaction(triggers=[w])
    def check(self, w: Any) -> None:
        self.got.append(w.get())
        assert w.get() == self.c_bank_index * 2, f"ERROR: Expected {self.c_bank_index * 2} but received {w.get()}."


class _NG(Reactor):
    s = Input(int)

    def __init__(self, c_bank_index: int = 0) -> None:
        self.c_bank_index = c_bank_index
        self.got: list[int] = []

    @reaction(triggers=[s])
    def check(self, s: Any) -> None:
        self.got.append(s.get())
        assert s.get() == self.c_bank_index * 2 + 1, f"ERROR: Expected {self.c_bank_index * 2 + 1} but received {s.get()}."


class _NC(Reactor):
    z = Input(int, width=2)

    def __init__(self) -> None:
        assert self.bank_index is not None
        self.f = _NF(c_bank_index=self.bank_index)
        self.g = _NG(c_bank_index=self.bank_index)
        self.connect(self.z, [self.f.w, self.g.s])


class _ND(Reactor):
    u = Input(int, width=2)

    def __init__(self) -> None:
        self.got: list[int] = []

    @reaction(triggers=[u])
    def check(self, u: Any) -> None:
        for i, p in enumerate(u):
            self.got.append(p.get())
            assert p.get() == 6 + i, f"ERROR: Expected {6 + i} but received {p.get()}."


class _NE(Reactor):
    t = Input(int, width=8)

    def __init__(self) -> None:
        self.got: list[int] = []

    @reaction(triggers=[t])
    def show(self, t: Any) -> None:
        for p in t:
            self.got.append(p.get())  # LF prints them: "e.t[i] received ..."


class _NestedBanks(Reactor):
    def __init__(self) -> None:
        self.a = bank(_NA, 2)
        self.c = bank(_NC, 3)
        self.d = _ND()
        self.e = _NE()
        self.connect(self.a.x, [self.c.z, self.d.u, self.e.t], broadcast=True)  # (a.x)+ -> c.z, d.u, e.t


@lf_test("multiport/NestedBanks.lf")
def test_nested_banks() -> None:
    main = _NestedBanks()
    run(main)
    assert [(c.f.got, c.g.got) for c in main.c] == [([0], [1]), ([2], [3]), ([4], [5])]
    assert main.d.got == [6, 7]
    assert main.e.got == list(range(8))


# ----------------------------------------------------------------- NestedInterleavedBanks.lf


class _NIA(Reactor):
    p = Output(int, width=2)

    def __init__(self, outer_bank_index: int = 0) -> None:
        self.outer_bank_index = outer_bank_index

    @reaction(triggers=[STARTUP], effects=[p])
    def go(self, p: Any) -> None:
        assert self.bank_index is not None
        for i, port in enumerate(p):
            port.set(self.outer_bank_index * 4 + self.bank_index * 2 + i + 1)


class _NIB(Reactor):
    q = Output(int, width=4)

    def __init__(self) -> None:
        self.a = bank(_NIA, 2, outer_bank_index=self.bank_index)
        # interleaved(a.p) -> q: channel 0 of every member, then channel 1 of every member
        self.connect([m.p[i] for i in range(2) for m in self.a], self.q)


class _NIC(Reactor):
    i = Input(int, width=8)

    def __init__(self) -> None:
        self.got: list[int] = []

    @reaction(triggers=[i])
    def check(self, i: Any) -> None:
        expected = [1, 3, 2, 4, 5, 7, 6, 8]
        for j, port in enumerate(i):
            self.got.append(port.get())
            assert port.get() == expected[j], f"ERROR: Expected {expected[j]}."


class _NestedInterleavedBanks(Reactor):
    def __init__(self) -> None:
        self.b = bank(_NIB, 2)
        self.c = _NIC()
        self.connect(self.b.q, self.c.i)


@lf_test("multiport/NestedInterleavedBanks.lf")
def test_nested_interleaved_banks() -> None:
    main = _NestedInterleavedBanks()
    run(main)
    assert main.c.got == [1, 3, 2, 4, 5, 7, 6, 8]


# ------------------------------------------------------- ReactionToContainedBankMultiport.lf


class _TestCountMultiport(Reactor):
    """LF's lib/TestCountMultiport.lf."""

    inp = Input(int, width="width")

    def __init__(self, start: int = 1, stride: int = 1, num_inputs: int = 1, width: int = 2) -> None:
        self.start = start
        self.stride = stride
        self.num_inputs = num_inputs
        self.width = width
        self.count = start
        self.inputs_received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for i in range(len(inp)):
            assert inp[i].is_present, f"No input on channel {i}."
            assert inp[i].get() == self.count, f"Expected {self.count}."
            self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but only got {self.inputs_received}."
        )


class _ReactionToContainedBankMultiport(Reactor):
    t = Timer(offset=0, period=ms(100))

    def __init__(self, width: int = 2) -> None:
        self.width = width
        self.count = 1
        # new[width] TestCountMultiport(num_inputs=11, width=width)
        self.test = bank(_TestCountMultiport, width, num_inputs=11, width=width)

    @reaction(triggers=[t], effects=["test.inp"])
    def send(self, test: Any) -> None:
        # test.inp: every member's channels, member by member (LF: test[j].inp[i])
        for i in range(self.width):
            for j in range(self.width):
                test.inp[j * self.width + i].set(self.count)
            self.count += 1


@lf_test("multiport/ReactionToContainedBankMultiport.lf")
def test_reaction_to_contained_bank_multiport() -> None:
    main = _ReactionToContainedBankMultiport()
    run(main, timeout=sec(1), fast=True)
    assert [m.inputs_received for m in main.test] == [11, 11]
