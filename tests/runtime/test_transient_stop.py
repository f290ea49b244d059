"""A transient federate's own stop request is its leave, in one process (LF: ``lf.stop()``
in a ``@transient`` federate ends its participation, not the run): it leaves at the next
microstep, the rest runs on; in a replay of a federated record, whose leave was agreed at
a later tag, the record's tag holds. Anyone else's stop request stops the run."""

from __future__ import annotations

from typing import Any

from reactorfed import (
    Environment,
    Input,
    MemberChange,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    ms,
    reaction,
    transient,
)


class Src(Reactor):
    out = Output(int)
    t = Timer(0, ms(10))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.n)
        self.n += 1


class Mid(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self, stop_after: int = 2) -> None:
        self.stop_after = stop_after
        self.count = 0

    @reaction(triggers=[inp], effects=[out])
    def fwd(self, inp: Any, out: Any) -> None:
        self.count += 1
        out.set(inp.get())
        if self.count == self.stop_after:
            self.request_stop()


class Sink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.got: list[tuple[int, int]] = []

    @reaction(triggers=[inp])
    def take(self, inp: Any) -> None:
        self.got.append((self.elapsed(), inp.get()))


class Main(Reactor):
    def __init__(self, is_transient: bool = True) -> None:
        self.src = Src()
        mid = Mid()
        self.mid = transient(mid) if is_transient else mid
        self.sink = Sink()
        self.connect(self.src.out, self.mid.inp)
        self.connect(self.mid.out, self.sink.inp)


def _run(main: Main, schedule: list[MemberChange] | None = None) -> Any:
    env = Environment(fast=True, clock=VirtualClock(), timeout=ms(50))
    sched = env.assemble(main)
    if schedule is not None:
        sched.set_membership(schedule)
    env.run()
    return sched


def test_a_transient_federates_stop_request_is_its_leave_and_the_run_goes_on() -> None:
    main = Main()
    sched = _run(main)
    assert main.sink.got == [(0, 0), (ms(10), 1)]  # it forwarded two, then left
    assert main.src.n == 6  # the run went on to its timeout
    assert sched.membership.applied == [((sched.start_time + ms(10), 1), "mid", 0, False)]


def test_launched_again_by_the_schedule_it_joins_as_constructed_and_leaves_again() -> None:
    main = Main()
    _run(main, [MemberChange(ms(10), 1, "mid", 0, False), MemberChange(ms(25), 0, "mid", 0, True)])
    # first incarnation: 0, 10 ms; then absent; then 30 ms, 40 ms, and its own leave again
    assert main.sink.got == [(0, 0), (ms(10), 1), (ms(30), 3), (ms(40), 4)]


def test_in_a_replay_the_records_later_leave_holds() -> None:
    main = Main()
    _run(main, [MemberChange(ms(20), 0, "mid", 0, False)])
    assert main.sink.got == [(0, 0), (ms(10), 1)]  # its request at 10 ms is no leave of its own


def test_a_stop_request_elsewhere_stops_the_run() -> None:
    main = Main(is_transient=False)
    _run(main)
    assert main.sink.got == [(0, 0), (ms(10), 1)]
    assert main.src.n == 2  # stopped at (10 ms, 1)
