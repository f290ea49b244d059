"""Ports of LF's C-target top-level programs that the Python suite has no counterpart for:
arrays over ``after`` delays, a reaction not invoked twice at one tag when two paths
reach it, action policies on events for one tag, a logical action's minimum spacing
deferring a burst, the main reactor's parameters reaching timers and deadlines,
inheritance of contained reactors, parameters and widths, and reactors' names."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    bank,
    ms,
    ns,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run

# ---------------------------------------------------------------------------- AfterArray.lf


class _ArraySource(Reactor):
    out = Output(list)
    t = Timer(0, sec(1))

    def __init__(self, size: int = 10) -> None:
        self.size = size
        self.inputs = [0] * 16

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        for i in range(self.size):
            self.inputs[i] = i + 1

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        value = [0] * 16  # the output's uint8_t[16] buffer
        value[: self.size] = self.inputs[: self.size]
        out.set(value)


class _ArraySink(Reactor):
    inp = Input(list)

    def __init__(self) -> None:
        self.count = 0
        self.at: list[int] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        for i in range(16):
            if i < 4:
                assert inp.get()[i] == i + 1, f"Expected value {i + 1}, but got {inp.get()[i]}"
        self.at.append(self.elapsed())
        self.count += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 5, f"Expected 5 inputs, but got {self.count}"


class _AfterArray(Reactor):
    def __init__(self) -> None:
        self.p = _ArraySource()
        self.m = _ArraySink()
        self.connect(self.p.out, self.m.inp, after=ms(10))


@lf_test("AfterArray.lf", suite="C")
def test_after_array() -> None:
    """A fixed-size array through an ``after`` delay: the one at 5 s would arrive after
    the timeout."""
    main = _AfterArray()
    run(main, timeout=sec(5), fast=True)
    assert main.m.at == [sec(k) + ms(10) for k in range(5)]


# ----------------------------------------------------------------------------- Alignment.lf


class _ASource(Reactor):
    out = Output(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class _Sieve(Reactor):
    inp = Input(int)
    out = Output(bool)

    def __init__(self) -> None:
        self.primes: list[int] = []
        self.last_prime = 0

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        # There are 1229 primes between 1 and 10,000; 1 and 2 are not on the list.
        self.primes = [0] * 1229
        self.primes[0] = 3

    @reaction(triggers=[inp], effects=[out])
    def sieve(self, inp: Any, out: Any) -> None:
        v = inp.get()
        if v in (1, 2):
            out.set(True)
            return
        candidate = self.primes[self.last_prime]
        while v > self.primes[self.last_prime]:
            candidate += 2  # the next prime is always odd
            if all(candidate % self.primes[i] != 0 for i in range(self.last_prime)):
                self.last_prime += 1
                self.primes[self.last_prime] = candidate
        for i in range(self.last_prime, -1, -1):
            if self.primes[i] == v:
                out.set(True)
                return


class _ADestination(Reactor):
    ok = Input(bool)
    inp = Input(int)

    def __init__(self) -> None:
        self.last_invoked: tuple[int, int] | None = None
        self.primes: list[int] = []
        self.invocations = 0

    @reaction(triggers=[ok, inp])
    def got(self, ok: Any, inp: Any) -> None:
        tag = self.elapsed_tag()
        now = (tag.time, tag.microstep)
        if ok.is_present and inp.is_present:
            self.primes.append(inp.get())
        assert self.last_invoked is None or now > self.last_invoked, (
            f"Invoked at tag {now}, but previously invoked at tag {self.last_invoked}.")
        self.last_invoked = now
        self.invocations += 1


class _Alignment(Reactor):
    def __init__(self) -> None:
        self.source = _ASource()
        self.sieve = _Sieve()
        self.destination = _ADestination()
        self.connect(self.source.out, self.sieve.inp)
        self.connect(self.sieve.out, self.destination.ok)
        self.connect(self.source.out, self.destination.inp)


@lf_test("Alignment.lf", suite="C")
def test_alignment() -> None:
    """A reaction reached directly and through a sieve runs once per tag."""
    main = _Alignment()
    run(main, timeout=sec(1))
    assert main.destination.invocations == 11
    assert main.destination.primes == [1, 2, 3, 5, 7, 11]


# ---------------------------------------------------------------------- ArrayAsTypeAfter.lf


class _AATSource(Reactor):
    out = Output(list)

    @reaction(triggers=[STARTUP], effects=[out])
    def send(self, out: Any) -> None:
        out.set([0, 1, 2])


class _AATPrint(Reactor):
    inp = Input(list)

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.at: list[int] = []

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.at.append(self.elapsed())
        for count, v in enumerate(inp.get()):
            assert v == self.scale * count, "ERROR: Value received by Print does not match expectation!"


class _ArrayAsTypeAfter(Reactor):
    def __init__(self) -> None:
        self.s = _AATSource()
        self.p = _AATPrint()
        self.connect(self.s.out, self.p.inp, after=ms(100))


@lf_test("ArrayAsTypeAfter.lf", suite="C")
def test_array_as_type_after() -> None:
    main = _ArrayAsTypeAfter()
    run(main)
    assert main.p.at == [ms(100)]


# ---------------------------------------------------------------------- CommandLineAction.lf


class _CommandLineAction(Reactor):
    a = LogicalAction(min_delay="min_delay", min_spacing="min_spacing")
    t = Timer(0, ns(1))

    def __init__(self, min_delay: int = ns(1), min_spacing: int = ns(10)) -> None:
        self.min_delay = min_delay
        self.min_spacing = min_spacing
        self.count = 0

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=0)

    @reaction(triggers=[a])
    def fired(self) -> None:
        elapsed = self.elapsed()
        expected = self.count * self.min_spacing + self.min_delay
        self.count += 1
        assert elapsed == expected, f"Expected {expected} but got {elapsed}"
        if self.count == 10:
            self.request_stop()

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == 10, f"Expected 10 events but got {self.count}"


@lf_test("CommandLineAction.lf", suite="C")
def test_command_line_action() -> None:
    """Events scheduled every nanosecond on an action with a 10 ns minimum spacing (the
    default policy, defer): the n-th at n * 10 ns + the 1 ns minimum delay. The main
    reactor's parameters set the action's delay and spacing (LF's test also passes them
    on the command line, as the constructor's arguments here)."""
    main = _CommandLineAction()
    run(main, fast=True)
    assert main.count == 10
    main = _CommandLineAction(min_delay=ns(5), min_spacing=ns(20))
    run(main, fast=True)
    assert main.count == 10


# -------------------------------------------------------------------- CommandLineDeadline.lf


class _CLSource(Reactor):
    out = Output(int)

    def __init__(self, clock: VirtualClock, execution_time: int = ms(100)) -> None:
        self.clock = clock
        self.execution_time = execution_time

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        self.clock.advance(self.execution_time)  # lf_sleep(self->execution_time)
        out.set(42)


class _CLPrint(Reactor):
    inp = Input(int)

    def __init__(self, deadline_time: int = ms(50), expect_violation: int = 1) -> None:
        self.deadline_time = deadline_time
        self.expect_violation = expect_violation
        self.violation_detected = 0
        self.checked = False

    @reaction(triggers=[inp], deadline="deadline_time")
    def got(self, inp: Any) -> None:
        pass  # "No deadline violation."

    @got.deadline_handler
    def late(self, inp: Any) -> None:
        self.violation_detected = 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.violation_detected == self.expect_violation, (
            f"Expected expect_violation={self.expect_violation} but got {self.violation_detected}.")
        self.checked = True


class _CommandLineDeadline(Reactor):
    def __init__(self, clock: VirtualClock, execution_time: int = ms(100), deadline_time: int = ms(50),
                 expect_violation: int = 1) -> None:
        self.execution_time = execution_time
        self.deadline_time = deadline_time
        self.expect_violation = expect_violation
        self.s = _CLSource(clock, execution_time=execution_time)
        self.p = _CLPrint(deadline_time=deadline_time, expect_violation=expect_violation)
        self.connect(self.s.out, self.p.inp)


@lf_test("CommandLineDeadline.lf", suite="C")
def test_command_line_deadline() -> None:
    """The main reactor's parameters reach a deadline: with the defaults it is missed,
    with LF's test's command-line values (10 ms of work, a 200 ms deadline) it is not."""
    for params in ({}, {"execution_time": ms(10), "deadline_time": ms(200), "expect_violation": 0}):
        clock = VirtualClock()
        main = _CommandLineDeadline(clock, **params)
        run(main, clock=clock)
        assert main.p.checked


# ----------------------------------------------------------------------- CommandLineParam.lf


class _CPSource(Reactor):
    t = Timer(0, "period")
    out = Output(float)

    def __init__(self, period: int = sec(1), value: float = 3.14159) -> None:
        self.period = period
        self.value = value
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def send(self, out: Any) -> None:
        self.count += 1
        out.set(self.value)


class _CPPrint(Reactor):
    inp = Input(float)

    def __init__(self, expected: int = 6, value: float = 3.14159) -> None:
        self.expected = expected
        self.value = value
        self.count = 0
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.count += 1
        assert inp.get() == self.value, f"Expected {self.value} but got {inp.get()}."

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count == self.expected, f"Expected {self.expected} firings but got {self.count}."
        self.checked = True


class _CommandLineParam(Reactor):
    def __init__(self, period: int = sec(1), expected: int = 6, value: float = 3.14159) -> None:
        self.period = period
        self.expected = expected
        self.value = value
        self.s = _CPSource(period=period, value=value)
        self.p = _CPPrint(expected=expected, value=value)
        self.connect(self.s.out, self.p.inp)


@lf_test("CommandLineParam.lf", suite="C")
def test_command_line_param() -> None:
    """The main reactor's parameters reach a timer: 6 firings in 5 s at the default
    period; 11 with LF's test's command-line override (500 ms)."""
    for params in ({}, {"period": ms(500), "expected": 11}):
        main = _CommandLineParam(**params)  # type: ignore[arg-type]
        run(main, timeout=sec(5), fast=True)
        assert main.p.checked


# ------------------------------------------------------------------ DelayedActionDuplicate.lf


class _DelayedActionDuplicate(Reactor):
    t = Timer(0, sec(1))
    a = LogicalAction(int)  # Default should be the same as a(0, 0, "defer").
    b = LogicalAction(int, min_delay=0, min_spacing=0, policy="drop")
    c = LogicalAction(int, min_delay=0, min_spacing=0, policy="replace")

    def __init__(self) -> None:
        self.count_a = 0
        self.count_a_r = 0
        self.count_b = 0
        self.count_b_r = 0
        self.count_c = 0
        self.count_c_r = 1
        self.log: list[tuple[str, int, int, int]] = []

    @reaction(triggers=[t], effects=[a, b, c])
    def tick(self, a: Any, b: Any, c: Any) -> None:
        # Schedule two events with the same tag for each action.
        for act, name in ((a, "count_a"), (a, "count_a"), (b, "count_b"), (b, "count_b"),
                          (c, "count_c"), (c, "count_c")):
            act.schedule(delay=ms(100), value=getattr(self, name))
            setattr(self, name, getattr(self, name) + 1)

    def _log(self, name: str, value: int) -> None:
        tag = self.elapsed_tag()
        self.log.append((name, tag.time, tag.microstep, value))

    @reaction(triggers=[a])
    def on_a(self, a: Any) -> None:
        self._log("a", a.get())
        assert a.get() == self.count_a_r, f"Defer policy: Expected {self.count_a_r} but got {a.get()}"
        self.count_a_r += 1

    @reaction(triggers=[b])
    def on_b(self, b: Any) -> None:
        self._log("b", b.get())
        assert b.get() == self.count_b_r, f"Drop policy: Expected {self.count_b_r} but got {b.get()}"
        self.count_b_r += 2

    @reaction(triggers=[c])
    def on_c(self, c: Any) -> None:
        self._log("c", c.get())
        assert c.get() == self.count_c_r, f"Replace policy: Expected {self.count_c_r} but got {c.get()}"
        self.count_c_r += 2


@lf_test("DelayedActionDuplicate.lf", suite="C")
def test_delayed_action_duplicate() -> None:
    """Two events for one tag on each of three actions: without a spacing both are kept
    (the second a microstep later); ``drop`` keeps the first, ``replace`` the second's value."""
    main = _DelayedActionDuplicate()
    run(main, timeout=sec(5), fast=True)
    want = []
    for k in range(5):
        t = sec(k) + ms(100)
        want += [("a", t, 0, 2 * k), ("b", t, 0, 2 * k), ("c", t, 0, 2 * k + 1), ("a", t, 1, 2 * k + 1)]
    assert main.log == want


# --------------------------------------------------------------------- Inherited*.lf


class _Foo(Reactor):
    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def through(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class _IIParent(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.f = _Foo()


class _IIChild(_IIParent):
    def __init__(self) -> None:
        super().__init__()
        self.got: list[int] = []

    @reaction(triggers=[STARTUP], effects=["f.inp"])
    def start(self, f: Any) -> None:
        f.inp.set(42)

    @reaction(triggers=["f.out"])
    def got_(self, f: Any) -> None:
        assert f.out.get() == 42, "Expected 42"
        self.got.append(f.out.get())


class _InheritedInstance(Reactor):
    def __init__(self) -> None:
        self.c = _IIChild()


@lf_test("InheritedInstance.lf", suite="C")
def test_inherited_instance() -> None:
    """A subclass's reactions write to and read from a reactor its base class contains."""
    main = _InheritedInstance()
    run(main)
    assert main.c.got == [42]


class _IPParent(Reactor):
    def __init__(self, a: int = 0) -> None:
        self.a = a


class _T(Reactor):
    out = Output(int)

    def __init__(self, b: int = 0) -> None:
        self.b = b

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set(self.b)


class _IPChild(_IPParent):
    out = Output(int)

    def __init__(self, a: int = 0) -> None:
        super().__init__(a=a)
        self.t = _T(b=self.a)
        self.connect(self.t.out, self.out)


class _InheritedParameter(Reactor):
    def __init__(self) -> None:
        self.c1 = _IPChild(a=42)
        self.got: list[int] = []

    @reaction(triggers=["c1.out"])
    def got_(self, c1: Any) -> None:
        assert c1.out.get() == 42, "Expected 42"
        self.got.append(c1.out.get())


@lf_test("InheritedParameter.lf", suite="C")
def test_inherited_parameter() -> None:
    """A base class's parameter passed on to a reactor the subclass contains."""
    main = _InheritedParameter()
    run(main)
    assert main.got == [42]


class _IWParent(Reactor):
    def __init__(self, n_triggers: int = 1) -> None:
        self.n_triggers = n_triggers


class _IWChild(_IWParent):
    inp = Input(int, width="n_triggers")

    def __init__(self, n_triggers: int = 1) -> None:
        super().__init__(n_triggers=n_triggers)
        self.got: list[int] = []

    @reaction(triggers=[inp])
    def got_(self, inp: Any) -> None:
        assert inp[0].get() == 42, "Expected 42"
        self.got.append(inp[0].get())


class _InheritedWidth(Reactor):
    def __init__(self) -> None:
        self.c = _IWChild()

    @reaction(triggers=[STARTUP], effects=["c.inp"])
    def start(self, c: Any) -> None:
        c.inp[0].set(42)


@lf_test("InheritedWidth.lf", suite="C")
def test_inherited_width() -> None:
    """A multiport's width from a base class's parameter."""
    main = _InheritedWidth()
    run(main)
    assert main.c.got == [42]


# -------------------------------------------------------------------------- ReactionNaming.lf


class _NR(Reactor):
    a = LogicalAction(int)
    b = LogicalAction(int)

    @reaction(triggers=[a], effects=[b])
    def B(self, a: Any, b: Any) -> None:  # LF: reaction B(a) -> b
        b.schedule(delay=0, value=0)


class _ReactionNaming(Reactor):
    c = LogicalAction(int)

    def __init__(self) -> None:
        self.e = False
        self.r = _NR()  # Check that it compiles with this reactor.

    @reaction(triggers=[STARTUP], effects=[c])
    def A(self, c: Any) -> None:  # LF: reaction A(startup) -> c
        c.schedule(delay=0, value=0)

    @reaction(triggers=[c])
    def second(self) -> None:
        self.e = True

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.e, "The reaction to c was not triggered!"


@lf_test("ReactionNaming.lf", suite="C")
def test_reaction_naming() -> None:
    """Named reactions (LF's ``reaction A(...)``: the method's name here)."""
    main = _ReactionNaming()
    run(main)
    assert main.e


# ---------------------------------------------------------------------------- ReactorName.lf


class _NameA(Reactor):
    def __init__(self, parent_bank_index: int = 0) -> None:
        self.parent_bank_index = parent_bank_index
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert self.fqn == f"ReactorName.b[{self.parent_bank_index}].a", f"full name does not match: {self.fqn}"
        assert self.name == "a", f"name does not match: {self.name}"
        self.checked = True


class _NameB(Reactor):
    def __init__(self) -> None:
        self.a = _NameA(parent_bank_index=self.bank_index)
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert self.fqn == f"ReactorName.b[{self.bank_index}]", f"full name does not match: {self.fqn}"
        assert self.name == f"b[{self.bank_index}]", f"name does not match: {self.name}"
        self.checked = True


class ReactorName(Reactor):
    """LF's main reactor ``ReactorName`` (the class name is the main reactor's name)."""

    def __init__(self) -> None:
        self.b = bank(_NameB, 3)
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert self.fqn == "ReactorName", f"full name does not match: {self.fqn}"
        assert self.name == "ReactorName", f"name does not match: {self.name}"
        self.checked = True


@lf_test("ReactorName.lf", suite="C")
def test_reactor_name() -> None:
    """Reactors' full and short names, in and under a bank (LF's lf_reactor_full_name and
    lf_reactor_name; ``fqn`` and ``name`` here)."""
    main = ReactorName()
    run(main)
    assert main.checked and all(b.checked and b.a.checked for b in main.b)


# ------------------------------------------------------------------------- LastTimeUpdate.lf


class _LastTimeUpdate(Reactor):
    t = Timer(0, ms(100))
    # An offset of 101 ms ensures that two a's are scheduled and trigger the "update"
    # policy before the reaction to a is invoked.
    a = LogicalAction(int, min_delay=ms(101), min_spacing=ms(300), policy="update")

    def __init__(self) -> None:
        self.c = 0
        self.fired: list[tuple[int, int, int]] = []

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        # Only schedule a three times: the "update" policy drops the first two events.
        if self.c < 3:
            a.schedule(delay=0, value=self.c)
            self.c += 1

    @reaction(triggers=[a])
    def got(self, a: Any) -> None:
        now = self.elapsed_tag()
        self.fired.append((now.time, now.microstep, a.get()))
        assert now.time == ms(301), "Expected elapsed logical time of 301ms was violated."
        assert a.get() == self.c - 1, f"Expected value {self.c - 1}"


@lf_test("LastTimeUpdate.lf", suite="C")
def test_last_time_update() -> None:
    """Schedules at 0, 100 and 200 ms for 101 ms later, 300 ms apart at least: each new
    event finds the previous one still pending and cancels it (``update``), so only the
    third happens, at its own time, 301 ms, with its value."""
    main = _LastTimeUpdate()
    run(main, timeout=ms(600))
    assert main.fired == [(ms(301), 0, 2)]
