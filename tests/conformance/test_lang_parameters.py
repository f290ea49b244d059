"""Ports of LF's programs about parameters and state: parameters passed down a hierarchy,
overridden in subclasses, initializing state, computed per bank member, and used where LF
allows them (timer offsets and periods, action delays)."""

from __future__ import annotations

from typing import Any

from reactorfed import STARTUP, LogicalAction, Reactor, Timer, bank, each, ms, reaction, sec
from tests.conformance.harness import lf_test, run

# -- ParameterHierarchy.lf --------------------------------------------------------------


class _Deep(Reactor):
    def __init__(self, p0: int = 0) -> None:
        self.p0 = p0
        self.checked = False

    @reaction(triggers=[STARTUP])
    def check(self) -> None:
        assert self.p0 == 42, f"Parameter value is {self.p0}. Should have been 42."
        self.checked = True


class _Intermediate(Reactor):
    def __init__(self, p1: int = 10) -> None:
        self.p1 = p1
        self.a0 = _Deep(p0=p1)


class _Another(Reactor):
    def __init__(self, p2: int = 20) -> None:
        self.p2 = p2
        self.a1 = _Intermediate(p1=p2)


class _ParameterHierarchyMain(Reactor):
    def __init__(self) -> None:
        self.a2 = _Another(p2=42)


@lf_test("ParameterHierarchy.lf")
def test_parameter_hierarchy() -> None:
    main = _ParameterHierarchyMain()
    run(main)
    assert main.a2.a1.a0.checked


# -- ParameterOverride.lf ---------------------------------------------------------------


class _POA(Reactor):
    def __init__(self, x: int = 0) -> None:
        self.x = x
        self.checked = False

    @reaction(triggers=[STARTUP])
    def check(self) -> None:
        assert self.x == 1, f"x is {self.x}. Should be 1."
        self.checked = True


class _POB(_POA):
    def __init__(self, x: int = 1) -> None:  # B(x=1) extends A: a new default
        super().__init__(x)


class _ParameterOverrideMain(Reactor):
    def __init__(self) -> None:
        self.b = _POB()


@lf_test("ParameterOverride.lf")
def test_parameter_override() -> None:
    main = _ParameterOverrideMain()
    run(main)
    assert main.b.checked


# -- ParameterizedState.lf --------------------------------------------------------------


class _PSFoo(Reactor):
    def __init__(self, bar: int = 42) -> None:
        self.bar = bar
        self.baz = bar
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def show(self) -> None:
        self.printed.append(f"Baz: {self.baz}")


class _ParameterizedStateMain(Reactor):
    def __init__(self) -> None:
        self.a = _PSFoo()


@lf_test("ParameterizedState.lf")
def test_parameterized_state() -> None:
    main = _ParameterizedStateMain()
    run(main)
    assert main.a.printed == ["Baz: 42"]


# -- TimeState.lf -----------------------------------------------------------------------


class _TSFoo(Reactor):
    def __init__(self, bar: int = 42) -> None:
        self.bar = bar
        self.baz = ms(500)
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def show(self) -> None:
        self.printed.append(f"Baz: {self.baz}")


class _TimeStateMain(Reactor):
    def __init__(self) -> None:
        self.a = _TSFoo()


@lf_test("TimeState.lf")
def test_time_state() -> None:
    main = _TimeStateMain()
    run(main)
    assert main.a.printed == ["Baz: 500000000"]


# -- ParentParamsAccessToChildInit.lf ---------------------------------------------------

table = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # the file-level preamble


class _PPChild(Reactor):
    table = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # the reactor's preamble

    def __init__(self, parent_index: int = 0, value: int = 0) -> None:
        self.parent_index = parent_index
        self.value = value
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def show(self) -> None:
        self.printed.append(f"Child bank_index:{self.bank_index} parent_index:{self.parent_index} value:{self.value}")


class _PPParent(Reactor):
    def __init__(self, n_parents: int = 0, n_children: int = 1) -> None:
        self.n_parents = n_parents
        self.n_children = n_children
        assert self.bank_index is not None
        self.c = bank(
            _PPChild,
            n_children,
            parent_index=self.bank_index,
            value=each(lambda i: table[(self.bank_index * self.n_children + i) % len(table)]),
        )
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def show(self) -> None:
        self.printed.append(f"Parent[{self.bank_index + 1}/{self.n_parents}] bank_index:{self.bank_index}")


class _ParentParamsMain(Reactor):
    def __init__(self, n_parents: int = 2, per_parent_n_children: int = 3) -> None:
        self.p = bank(_PPParent, n_parents, n_parents=n_parents, n_children=per_parent_n_children)


@lf_test("ParentParamsAccessToChildInit.lf")
def test_parent_params_access_to_child_init() -> None:
    main = _ParentParamsMain()
    run(main)
    assert [p.printed for p in main.p] == [["Parent[1/2] bank_index:0"], ["Parent[2/2] bank_index:1"]]
    children = [line for p in main.p for c in p.c for line in c.printed]
    assert children == [
        f"Child bank_index:{c} parent_index:{p} value:{p * 3 + c + 1}" for p in range(2) for c in range(3)
    ]


# -- NativeListsAndTimes.lf -------------------------------------------------------------


class _NativeListsAndTimesMain(Reactor):
    tick = Timer(0)  # units missing but not required
    tock = Timer(sec(1))
    toe = Timer(offset="z")  # timer toe(z)

    def __init__(
        self,
        x: int = 0,
        y: int = 0,
        z: int = ms(1),
        p: list[int] | None = None,
        q: list[int] | None = None,
        g: list[int] | None = None,
    ) -> None:
        self.x, self.y, self.z = x, y, z
        self.p = p if p is not None else [1, 2, 3, 4]
        self.q = q if q is not None else [ms(1), ms(2), ms(3)]
        self.g = g if g is not None else [ms(1), ms(2)]
        self.s = y
        self.t = z
        self.v = None
        self.w = None
        self.baz = self.p
        self.period = z
        self.bar = [ms(1), ms(2), ms(3)]
        self.notype = [1, 2, 3, 4]
        self.ticked = 0

    @reaction(triggers=[tick])
    def on_tick(self) -> None:
        self.ticked += 1  # (target code)


@lf_test("NativeListsAndTimes.lf")
def test_native_lists_and_times() -> None:
    main = _NativeListsAndTimesMain()
    run(main)
    assert main.ticked == 1


# -- Hello.lf ---------------------------------------------------------------------------


class _Reschedule(Reactor):
    t = Timer(offset=sec(1), period="period")  # timer t(1 sec, period)
    a = LogicalAction()

    def __init__(self, period: int = sec(2), message: str = "Hello Python") -> None:
        self.period = period
        self.message = message
        self.count = 0
        self.previous_time = 0

    @reaction(triggers=[t], effects=[a])
    def tick(self, a: Any) -> None:
        a.schedule(delay=ms(200))
        self.previous_time = self.logical_time()

    @reaction(triggers=[a])
    def action(self, a: Any) -> None:
        self.count += 1
        assert a.get() is None, "FAILURE: Expected a.value to be None, but it exists."
        tm = self.logical_time()
        assert tm - self.previous_time == 200_000_000, (
            f"FAILURE: Expected 200ms of logical time to elapse but got {tm - self.previous_time} nanoseconds."
        )


class _Inside(Reactor):
    def __init__(self, period: int = sec(1), message: str = "Composite default message.") -> None:
        self.third_instance = _Reschedule(period=period, message=message)


class _HelloMain(Reactor):
    def __init__(self) -> None:
        self.first_instance = _Reschedule(period=sec(4), message="Hello from first_instance.")
        self.second_instance = _Reschedule(message="Hello from second_instance.")
        self.composite_instance = _Inside(message="Hello from composite_instance.")


@lf_test("Hello.lf")
def test_hello() -> None:
    main = _HelloMain()
    run(main, timeout=sec(10), fast=True)
    # Ticks at 1 s then every period; each action 200 ms later, within the 10 s timeout.
    assert main.first_instance.count == 3  # 1, 5, 9 s
    assert main.second_instance.count == 5  # 1, 3, 5, 7, 9 s
    assert main.composite_instance.third_instance.count == 9  # 1 .. 9 s (10 s's is past the end)


# -- PeriodicDesugared.lf ---------------------------------------------------------------


class _PeriodicDesugaredMain(Reactor):
    init = LogicalAction(min_delay="offset")  # logical action init(offset)
    recur = LogicalAction(min_delay="period")  # logical action recur(period)

    def __init__(self, offset: int = 0, period: int = ms(500)) -> None:
        self.offset = offset
        self.period = period
        self.printed: list[int] = []

    @reaction(triggers=[STARTUP], effects=[init, recur])
    def start(self, init: Any, recur: Any) -> None:
        if self.offset == 0:
            self.printed.append(self.elapsed())  # "Hello World!"
            recur.schedule(delay=0)
        else:
            init.schedule(delay=0)

    @reaction(triggers=[init, recur], effects=[recur])
    def again(self, recur: Any) -> None:
        self.printed.append(self.elapsed())  # "Hello World!"
        recur.schedule(delay=0)


@lf_test("PeriodicDesugared.lf")
def test_periodic_desugared() -> None:
    main = _PeriodicDesugaredMain()
    run(main, timeout=sec(1), fast=True)
    assert main.printed == [0, ms(500), ms(1000)]
