"""Ports of LF's transient-federate programs (``federated/Transient*.lf``): a transient
federate (``transient(...)``, LF's ``@transient``) ends its own participation with its own
stop request (``request_stop()``, LF's ``lf.stop()``), the federation goes on, and the
federate launched again joins at its effective start tag (``tag_start_effective``).

LF's ``TransientExec`` federate launches the transient from the binaries LF's compiler
generated, at logical time 1 s. Here its reaction at 1 s tells the test, which (standing
in for LF's launcher) starts the transient federate again once its first process has
resigned. Each program runs federated, in real time (the transient leaves and is launched
again while the others run), then in one process with the RTI's membership record as its
schedule: the replay must give the same results (every self-check holds in both, and the
downstream federate's trace is the same). The three that LF runs under ``coordination:
decentralized`` run decentralized here, with their maxwaits and tardy handlers (a tardy
message is fatal in each).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Environment,
    Input,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    maxwait,
    ms,
    reaction,
    sec,
    tag_start_effective,
    transient,
)
from reactorfed.federation.process.federate_receiver import Receiver
from tests.conformance.harness import lf_test
from tests.federation.harness import Federation, wait_until

pytestmark = pytest.mark.timeout(90)


class Up(Reactor):
    """TransientDownstreamWithTimer.lf's Up: 0, 1, 2, ... every ``period``."""

    out = Output(int)
    t = Timer(0, "period")

    def __init__(self, period: int = ms(500)) -> None:
        self.period = period
        self.count = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class TransientExec(Reactor):
    """LF's TransientExec: at ``launch_time``, launches the transient federate again (here:
    asks the test, ``launch``, which starts its process)."""

    t = Timer("launch_time", 0)

    def __init__(self, launch_time: int, launch: Callable[[], None]) -> None:
        self.launch_time = launch_time
        self.launch = launch

    @reaction(triggers=[t])
    def go(self) -> None:
        self.launch()


def _check_start(r: Reactor) -> None:
    t = tag_start_effective(r)
    assert t.time >= r.start_time(), "the transient's effective start time is before the federation's start"


class Middle(Reactor):
    """Forwards what it receives; after two inputs it stops (leaves: it is transient)."""

    inp = Input(int)
    out = Output(int)
    join = Output(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[STARTUP], effects=[join])
    def start(self, join: Any) -> None:
        _check_start(self)
        join.set(0)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        self.count += 1
        out.set(inp.get())
        if self.count == 2:
            self.request_stop()


class Down(Reactor):
    t = Timer(0, "period")
    inp = Input(int)
    join = Input(int)

    def __init__(self, period: int = ms(500)) -> None:
        self.period = period
        self.count_timer = 0
        self.count_join = 0
        self.count_in_mid_reactions = 0
        self.trace: list[tuple[str, int, int]] = []

    def _note(self, what: str) -> None:
        t = self.elapsed_tag()
        self.trace.append((what, t.time, t.microstep))

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.count_timer += 1
        self._note("timer")

    @reaction(triggers=[join])
    def joined(self) -> None:
        self.count_join += 1
        self._note("join")

    @reaction(triggers=[inp])
    def got(self) -> None:
        self.count_in_mid_reactions += 1
        self._note("in")

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.count_timer >= 5, f"Down's timer reacted {self.count_timer} times, fewer than 5"
        assert self.count_join == 2, f"the transient federate did not join twice, but {self.count_join} times"
        assert self.count_in_mid_reactions >= 4, f"Mid passed {self.count_in_mid_reactions} values, expected >= 4"


class DownTwo(Down):
    """TransientDownstreamWithTwoUpstream.lf's Down: also an input from a persistent Up."""

    in_up = Input(int)

    def __init__(self) -> None:
        super().__init__()
        self.count_in_up_reactions = 0

    @reaction(triggers=[in_up])
    def got_up(self) -> None:
        self.count_in_up_reactions += 1

    @reaction(triggers=[SHUTDOWN])
    def done_up(self) -> None:
        assert self.count_in_up_reactions >= 7, f"Up2 reached Down {self.count_in_up_reactions} times, expected >= 7"


def _nothing() -> None:
    pass


class WithTimer(Reactor):
    """TransientDownstreamWithTimer.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(1), launch)
        self.up = Up()
        self.down = Down()
        self.mid = transient(Middle())
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)


class WithTwoUpstream(Reactor):
    """TransientDownstreamWithTwoUpstream.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(1), launch)
        self.up1 = Up()
        self.up2 = Up(period=ms(300))
        self.down = DownTwo()
        self.mid = transient(Middle())
        self.connect(self.up1.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)
        self.connect(self.up2.out, self.down.in_up)


def _run(cls: type[Reactor], timeout: int, coordination: str = "centralized", swap: bool = False,
         **cfg: Any) -> tuple[Reactor, Any]:
    """Run ``cls`` federated, in real time, launching ``mid`` again when midExec asks
    (``swap``: at once, while the first process runs, a hot swap; else once it has left);
    then in one process with the RTI's record as its schedule. Returns the federated
    ``down``'s program and the record."""
    asked = threading.Event()
    fed = Federation(lambda: cls(asked.set), coordination=coordination)
    for name in fed.layout.names:
        fed.start(name, fast=False, timeout=timeout, **cfg)
    wait_until(asked.is_set, timeout=20, what="midExec's launch")
    if swap:
        assert "mid" not in fed.results and "mid" not in fed.errors, "mid left by itself: no hot swap"
    else:
        wait_until(lambda: "mid" in fed.results or "mid" in fed.errors, timeout=20, what="mid's first leave")
    assert not fed.errors, fed.errors
    again = fed.start("mid", key="mid2", fast=False, timeout=timeout, **cfg)  # LF: TransientExec's launch
    fed.wait(timeout=40)
    assert not again.is_alive()
    assert not fed.errors, fed.errors
    assert "mid" in fed.results and "mid2" in fed.results
    assert fed.rti_error is None, fed.rti_error
    assert not fed.coords["down"].core.membership.dropped, "a message from a live sender came after its tag"
    summary = fed.summary
    assert summary is not None
    record = [r.change() for r in summary.membership]
    assert [(c.bank, c.index, c.joined) for c in record][:2] == [("mid", 0, False), ("mid", 0, True)]
    down = fed.programs["down"]
    if hasattr(fed.programs["mid2"].mid, "physical"):  # (Up's values reach each incarnation over ~>)
        assert fed.programs["mid"].mid.physical and fed.programs["mid2"].mid.physical  # type: ignore[attr-defined]

    replay = cls()
    env = Environment(fast=True, clock=VirtualClock(), timeout=timeout)
    sched = env.assemble(replay)
    sched.set_membership(record)
    env.run()
    assert replay.down.trace == down.down.trace  # type: ignore[attr-defined]
    return down, record


def _left_twice(down: Reactor, timeout: int) -> list[bool]:
    """The membership record's ``joined`` flags when each incarnation leaves by its own stop
    request after two inputs: left, joined again, left again. A second incarnation launched
    late (a loaded machine starts its process late) may take its second input at the
    timeout tag itself; its stop then falls one microstep after the run's end, which comes
    first, so there is no second leave."""
    ins = [time for what, time, _ in down.down.trace if what == "in"]  # type: ignore[attr-defined]
    assert len(ins) == 4, f"each incarnation forwards two values, Down got {ins}"
    return [False, True, False] if ins[-1] < timeout else [False, True]


@lf_test("federated/TransientDownstreamWithTimer.lf", federated=True)
def test_transient_downstream_with_timer() -> None:
    down, record = _run(WithTimer, sec(3))
    assert [c.joined for c in record] == _left_twice(down, sec(3))


@lf_test("federated/TransientDownstreamWithTwoUpstream.lf", federated=True)
def test_transient_downstream_with_two_upstream() -> None:
    down, record = _run(WithTwoUpstream, sec(3))
    assert [c.joined for c in record] == _left_twice(down, sec(3))


# -- the hot swaps --------------------------------------------------------------------------


class SwapMiddle(Reactor):
    """TransientHotSwap.lf's Middle: forwards what it receives and never leaves by itself."""

    inp = Input(int)
    out = Output(int)
    join = Output(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[STARTUP], effects=[join])
    def start(self, join: Any) -> None:
        _check_start(self)
        join.set(0)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        self.count += 1
        out.set(inp.get())


class HotSwap(Reactor):
    """TransientHotSwap.lf's federated reactor: ``mid``'s second process, launched at 1 s
    while the first runs, takes over from it."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(1), launch)
        self.up = Up()
        self.down = Down()
        self.mid = transient(SwapMiddle())
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)


def _check_swap(record: list[Any]) -> None:
    # the first process left at the tag the RTI agreed on; the second joined after it
    assert [c.joined for c in record] == [False, True]
    leave, join = ((c.time, c.microstep) for c in record)
    assert join > leave


@lf_test("federated/TransientHotSwap.lf", federated=True)
def test_transient_hot_swap() -> None:
    _down, record = _run(HotSwap, sec(3), swap=True)
    _check_swap(record)


class DecSwapMiddle(SwapMiddle):
    """TransientDecentralizedHotSwap.lf's Middle: a tardy input is fatal."""

    @reaction(triggers=[SwapMiddle.inp], effects=[SwapMiddle.out])
    def forward(self, inp: Any, out: Any) -> None:
        self.count += 1
        out.set(inp.get())

    @forward.tardy_handler
    def forward_tardy(self, inp: Any, out: Any) -> None:
        raise AssertionError("federate Middle received a tardy inp event")


class DecHotSwap(Reactor):
    """TransientDecentralizedHotSwap.lf's federated reactor (decentralized)."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(1), launch)
        self.up = Up(period=ms(1500))
        self.down = DecDown(period=ms(1500))
        maxwait(self.down, ms(800))
        self.mid = transient(DecSwapMiddle())
        maxwait(self.mid, ms(500))
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)


@lf_test("federated/TransientDecentralizedHotSwap.lf", federated=True)
def test_transient_decentralized_hot_swap() -> None:
    _down, record = _run(DecHotSwap, sec(9), coordination="decentralized", swap=True)
    _check_swap(record)


# -- TransientStatePersistence.lf ----------------------------------------------------------


class FederateState:
    """The transient's internal state, kept by Persistence across its executions."""

    def __init__(self, state_char: str = "A", state_count: int = 0) -> None:
        self.state_char = state_char
        self.state_count = state_count


class Persistence(Reactor):
    in_from_middle = Input(object)
    in_middle_join = Input(bool)
    out_to_middle = Output(object)

    def __init__(self) -> None:
        self.middle_state = FederateState("A", 0)
        self.middle_first_join = True

    @reaction(triggers=[in_middle_join], effects=[out_to_middle])
    def joined(self, out_to_middle: Any) -> None:
        if not self.middle_first_join:  # only once it joins again
            out_to_middle.set(FederateState(self.middle_state.state_char, self.middle_state.state_count))
        self.middle_first_join = False

    @reaction(triggers=[in_from_middle])
    def saved(self, in_from_middle: Any) -> None:
        v = in_from_middle.get()
        self.middle_state.state_char = v.state_char
        self.middle_state.state_count = v.state_count


class PersistentMiddle(Reactor):
    inp = Input(int)
    out = Output(int)
    join = Output(bool)
    out_to_persistence = Output(object)
    in_from_persistence = Input(object)

    def __init__(self) -> None:
        self.middle_state = FederateState("A", 0)

    @reaction(triggers=[STARTUP], effects=[join])
    def start(self, join: Any) -> None:
        join.set(True)

    @reaction(triggers=[in_from_persistence])
    def restore(self, in_from_persistence: Any) -> None:
        self.middle_state = in_from_persistence.get()

    @reaction(triggers=[inp], effects=[out, out_to_persistence])
    def step(self, out: Any, out_to_persistence: Any) -> None:
        s = self.middle_state
        s.state_char = chr(ord(s.state_char) + 1)
        s.state_count += 2
        out.set(s.state_count)
        out_to_persistence.set(FederateState(s.state_char, s.state_count))
        if s.state_count == 4:
            self.request_stop()


class PersistenceDown(Down):
    """TransientStatePersistence.lf's Down: its check is that the state persisted."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[int] = []

    @reaction(triggers=[Down.inp])
    def value(self, inp: Any) -> None:
        self.values.append(inp.get())

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:  # (replaces Down's checks, as LF's own Down does)
        if self.count_join == 2:
            assert self.count_in_mid_reactions >= 4, "Mid joined twice, but its state did not persist"


class StatePersistence(Reactor):
    """TransientStatePersistence.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.up = Up()
        self.down = PersistenceDown()
        self.persistence = Persistence()
        self.midExec = TransientExec(sec(1), launch)
        self.mid = transient(PersistentMiddle())
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.join, self.persistence.in_middle_join)
        self.connect(self.mid.out, self.down.inp)
        # no delay: mid <-> persistence is a zero-delay cycle, of which the transient mid
        # is a member while present
        self.connect(self.persistence.out_to_middle, self.mid.in_from_persistence)
        self.connect(self.mid.out_to_persistence, self.persistence.in_from_middle)


@lf_test("federated/TransientStatePersistence.lf", federated=True)
def test_transient_state_persistence() -> None:
    down, record = _run(StatePersistence, ms(2900), trusted_pickle=True)
    assert [c.joined for c in record] == [False, True]
    # 2, 4 from its first execution; then 6, 8, 10: the state it got back, carried on
    assert down.down.values == [2, 4, 6, 8, 10]  # type: ignore[attr-defined]


# -- TransientStatePersistenceWithPhysicalConnection.lf ------------------------------------


class PhysicalMiddle(PersistentMiddle):
    """Its Middle: also sends its count on ``outp``, a physical connection to Down."""

    outp = Output(int)

    @reaction(triggers=[PersistentMiddle.inp], effects=[outp])
    def also(self, outp: Any) -> None:  # (after step, which counted already: LF's one reaction)
        outp.set(self.middle_state.state_count)


class PhysicalDown(PersistenceDown):
    inp2 = Input(int)  # (no reaction: LF's Down has none either)


class StatePersistencePhysical(Reactor):
    """TransientStatePersistenceWithPhysicalConnection.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.up = Up()
        self.down = PhysicalDown()
        self.persistence = Persistence()
        self.midExec = TransientExec(sec(1), launch)
        self.mid = transient(PhysicalMiddle())
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.join, self.persistence.in_middle_join)
        self.connect(self.mid.out, self.down.inp)
        self.connect(self.mid.outp, self.down.inp2, physical=True)
        # no delay, as in TransientStatePersistence: a zero-delay cycle with the transient
        self.connect(self.persistence.out_to_middle, self.mid.in_from_persistence)
        self.connect(self.mid.out_to_persistence, self.persistence.in_from_middle)


@lf_test("federated/TransientStatePersistenceWithPhysicalConnection.lf", federated=True)
def test_transient_state_persistence_with_physical_connection() -> None:
    down, record = _run(StatePersistencePhysical, ms(2900), trusted_pickle=True)
    assert [c.joined for c in record] == [False, True]
    assert down.down.values == [2, 4, 6, 8, 10]  # type: ignore[attr-defined]


def test_a_join_round_within_one_wait_for_physical_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Down waits for physical time at the joiner's tag, granted from promises while Mid
    is absent; it answers the join's round last, and the round's Change and end come
    before it reads on: the grant taken back must stop the wait (the barrier, set and
    lifted within one read, looks unchanged), or Down runs that tag without Mid's
    messages. Down is slowed after its answer so that the RTI's next messages arrive
    within the same read."""
    real = Receiver.on_rti

    def on_rti(self: Receiver, sched: Any, frames: Any) -> None:
        asked = self.core.membership.round
        real(self, sched, frames)
        if self.name == "down" and self.core.membership.round not in (None, asked):
            self.send(self.core.outbox)  # the answer goes now; the round ends meanwhile
            time.sleep(0.01)

    monkeypatch.setattr(Receiver, "on_rti", on_rti)
    down, _record = _run(StatePersistencePhysical, ms(2900), trusted_pickle=True)
    assert down.down.values == [2, 4, 6, 8, 10]  # type: ignore[attr-defined]


# -- the decentralized variants ------------------------------------------------------------


class DecMiddle(Middle):
    """TransientDecentralizedDownstreamWithTimer.lf's Middle: a tardy input is fatal."""

    @reaction(triggers=[Middle.inp], effects=[Middle.out])
    def forward(self, inp: Any, out: Any) -> None:
        self.count += 1
        out.set(inp.get())
        if self.count == 2:
            self.request_stop()

    @forward.tardy_handler
    def forward_tardy(self, inp: Any, out: Any) -> None:
        raise AssertionError("federate Middle received a tardy inp event")


class DecDown(Down):
    """Its Down: a tardy join or input is fatal."""

    @reaction(triggers=[Down.join])
    def joined(self) -> None:
        self.count_join += 1
        self._note("join")

    @joined.tardy_handler
    def joined_tardy(self) -> None:
        raise AssertionError("federate Down received a tardy join event")

    @reaction(triggers=[Down.inp])
    def got(self) -> None:
        self.count_in_mid_reactions += 1
        self._note("in")

    @got.tardy_handler
    def got_tardy(self) -> None:
        raise AssertionError("federate Down received a tardy inp event")


class DecWithTimer(Reactor):
    """TransientDecentralizedDownstreamWithTimer.lf's federated reactor (decentralized)."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(3), launch)
        self.up = Up()
        self.down = DecDown()
        maxwait(self.down, ms(800))
        self.mid = transient(DecMiddle())
        maxwait(self.mid, ms(500))
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)


@lf_test("federated/TransientDecentralizedDownstreamWithTimer.lf", federated=True)
def test_transient_decentralized_downstream_with_timer() -> None:
    down, record = _run(DecWithTimer, sec(9), coordination="decentralized")
    assert [c.joined for c in record] == _left_twice(down, sec(9))


class DecDownTwo(DecDown):
    """TransientDecentralizedDownstreamWithTwoUpstream.lf's Down: also an input from a
    persistent Up; a tardy one is fatal too."""

    in_up = Input(int)

    def __init__(self) -> None:
        super().__init__()
        self.count_in_up_reactions = 0

    @reaction(triggers=[in_up])
    def got_up(self) -> None:
        self.count_in_up_reactions += 1

    @got_up.tardy_handler
    def got_up_tardy(self) -> None:
        raise AssertionError("federate Down received a tardy in_up event")

    @reaction(triggers=[SHUTDOWN])
    def done_up(self) -> None:
        assert self.count_in_up_reactions >= 7, f"Up2 reached Down {self.count_in_up_reactions} times, expected >= 7"


class DecWithTwoUpstream(Reactor):
    """TransientDecentralizedDownstreamWithTwoUpstream.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(1), launch)
        self.up1 = Up()
        self.up2 = Up(period=ms(300))
        self.down = DecDownTwo()
        maxwait(self.down, ms(300))
        self.mid = transient(DecMiddle())
        maxwait(self.mid, ms(150))
        self.connect(self.up1.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)
        self.connect(self.up2.out, self.down.in_up)


@lf_test("federated/TransientDecentralizedDownstreamWithTwoUpstream.lf", federated=True)
def test_transient_decentralized_downstream_with_two_upstream() -> None:
    down, record = _run(DecWithTwoUpstream, sec(6), coordination="decentralized")
    assert [c.joined for c in record] == _left_twice(down, sec(6))


class PhysicalInMiddle(Reactor):
    """TransientDecentralizedWithPhysicalConnection.lf's Middle: forwards ``inp_val``, stops
    after two; also gets Up's value over a physical connection (``inp``) and prints it."""

    inp_val = Input(int)
    inp = Input(int)
    out = Output(int)
    join = Output(int)

    def __init__(self) -> None:
        self.count = 0
        self.physical: list[int] = []

    @reaction(triggers=[STARTUP], effects=[join])
    def start(self, join: Any) -> None:
        _check_start(self)
        join.set(0)

    @reaction(triggers=[inp_val], effects=[out])
    def forward(self, inp_val: Any, out: Any) -> None:
        self.count += 1
        out.set(inp_val.get())
        if self.count == 2:
            self.request_stop()

    @forward.tardy_handler
    def forward_tardy(self, inp_val: Any, out: Any) -> None:
        raise AssertionError("federate Middle received a tardy inp_val event")

    @reaction(triggers=[inp])
    def show(self, inp: Any) -> None:
        self.physical.append(inp.get())


class DecWithPhysicalConnection(Reactor):
    """TransientDecentralizedWithPhysicalConnection.lf's federated reactor."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.midExec = TransientExec(sec(3), launch)
        self.up = Up(period=ms(1500))
        self.down = Down(period=ms(1500))
        maxwait(self.down, ms(800))
        self.mid = transient(PhysicalInMiddle())
        maxwait(self.mid, ms(500))
        self.connect(self.up.out, self.mid.inp_val)
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.out, self.down.inp)
        self.connect(self.up.out, self.mid.inp, physical=True)


@lf_test("federated/TransientDecentralizedWithPhysicalConnection.lf", federated=True)
def test_transient_decentralized_with_physical_connection() -> None:
    down, record = _run(DecWithPhysicalConnection, sec(9), coordination="decentralized")
    assert [c.joined for c in record] == _left_twice(down, sec(9))


# -- TransientDecentralizedStatePersistence.lf ---------------------------------------------


class DecPersistence(Persistence):
    """Its Persistence: sends the state it keeps at every join (the first one's too); a
    tardy input is fatal."""

    @reaction(triggers=[Persistence.in_middle_join], effects=[Persistence.out_to_middle])
    def joined(self, out_to_middle: Any) -> None:
        out_to_middle.set(FederateState(self.middle_state.state_char, self.middle_state.state_count))

    @joined.tardy_handler
    def joined_tardy(self, out_to_middle: Any) -> None:
        raise AssertionError("federate Persistence received a tardy in_middle_join event")

    @reaction(triggers=[Persistence.in_from_middle])
    def saved(self, in_from_middle: Any) -> None:
        v = in_from_middle.get()
        self.middle_state.state_char = v.state_char
        self.middle_state.state_count = v.state_count

    @saved.tardy_handler
    def saved_tardy(self, in_from_middle: Any) -> None:
        raise AssertionError("federate Persistence received a tardy in_from_middle event")


class DecPersistentMiddle(PersistentMiddle):
    """Its Middle: a tardy input is fatal."""

    @reaction(triggers=[PersistentMiddle.in_from_persistence])
    def restore(self, in_from_persistence: Any) -> None:
        self.middle_state = in_from_persistence.get()

    @restore.tardy_handler
    def restore_tardy(self, in_from_persistence: Any) -> None:
        raise AssertionError("federate Middle received a tardy in_from_persistence event")

    @reaction(triggers=[PersistentMiddle.inp], effects=[PersistentMiddle.out, PersistentMiddle.out_to_persistence])
    def step(self, out: Any, out_to_persistence: Any) -> None:
        s = self.middle_state
        s.state_char = chr(ord(s.state_char) + 1)
        s.state_count += 2
        out.set(s.state_count)
        out_to_persistence.set(FederateState(s.state_char, s.state_count))
        if s.state_count == 4:
            self.request_stop()

    @step.tardy_handler
    def step_tardy(self, out: Any, out_to_persistence: Any) -> None:
        raise AssertionError("federate Middle received a tardy inp event")


class DecStatePersistence(Reactor):
    """TransientDecentralizedStatePersistence.lf's federated reactor: the transient ``mid``
    and ``persistence`` form a zero-delay cycle (decentralized)."""

    def __init__(self, launch: Callable[[], None] = _nothing) -> None:
        self.up = Up(period=ms(500))
        self.down = PersistenceDown()
        self.persistence = DecPersistence()
        maxwait(self.persistence, ms(200))
        self.midExec = TransientExec(sec(3), launch)
        self.mid = transient(DecPersistentMiddle())
        maxwait(self.mid, 0)
        self.connect(self.up.out, self.mid.inp, absent_after=ms(200))
        self.connect(self.mid.join, self.down.join)
        self.connect(self.mid.join, self.persistence.in_middle_join)
        self.connect(self.mid.out, self.down.inp)
        self.connect(self.persistence.out_to_middle, self.mid.in_from_persistence, absent_after=ms(400))
        self.connect(self.mid.out_to_persistence, self.persistence.in_from_middle, absent_after=ms(200))


@lf_test("federated/TransientDecentralizedStatePersistence.lf", federated=True)
def test_transient_decentralized_state_persistence() -> None:
    down, record = _run(DecStatePersistence, sec(9), coordination="decentralized", trusted_pickle=True)
    assert [c.joined for c in record] == [False, True]
    # 2, 4 from its first execution; then from the state it got back at its join, 6, 8, ...
    values = down.down.values  # type: ignore[attr-defined]
    assert values[:2] == [2, 4] and values[2:] == list(range(6, 6 + 2 * (len(values) - 2), 2)) and len(values) >= 5
