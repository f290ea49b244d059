"""A transient federate outside any bank (LF's ``@transient``: ``transient(Mid())`` in the
main reactor): the one slot of an elastic bank of its own, under its own name. It leaves a
running federation, its downstream goes on (its timer keeps firing: the absent federate
holds no grant back), and a new process of it joins again at its effective start tag,
which its startup reaction reads (``tag_start_effective``). In one process, the same
program with the federated run's record as its schedule gives the downstream the same
trace."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Environment,
    Input,
    Output,
    Reactor,
    Timer,
    VirtualClock,
    ms,
    reaction,
    tag_start_effective,
    transient,
)
from reactorfed.federation.coordination.layout import Layout

from .harness import Federation, wait_until

pytestmark = pytest.mark.timeout(90)

TIMEOUT = ms(800)


class Up(Reactor):
    out = Output(int)
    t = Timer(0, ms(20))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        out.set(self.n)
        self.n += 1


class Mid(Reactor):
    inp = Input(int)
    out = Output(int)
    join = Output(int)

    def __init__(self) -> None:
        self.started: list[tuple[int, int]] = []  # its effective start tag, after the start

    @reaction(triggers=[STARTUP], effects=[join])
    def start(self, join: Any) -> None:
        t = tag_start_effective(self)
        assert t.time >= self.tag().time - self.elapsed(), "the effective start is before the federation's start"
        self.started.append((t.time - (self.tag().time - self.elapsed()), t.microstep))
        join.set(0)

    @reaction(triggers=[inp], effects=[out])
    def forward(self, inp: Any, out: Any) -> None:
        out.set(inp.get())


class Down(Reactor):
    inp = Input(int)
    join = Input(int)
    t = Timer(0, ms(100))

    def __init__(self) -> None:
        self.ticks = 0
        self.joins: list[tuple[int, int]] = []
        self.got: list[tuple[int, int, int]] = []

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.ticks += 1

    @reaction(triggers=[join])
    def joined(self) -> None:
        t = self.elapsed_tag()
        self.joins.append((t.time, t.microstep))

    @reaction(triggers=[inp])
    def forwarded(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.got.append((t.time, t.microstep, inp.get()))


class Main(Reactor):
    def __init__(self) -> None:
        self.up = Up()
        self.mid = transient(Mid())
        self.down = Down()
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.join, self.down.join, after=0)
        self.connect(self.mid.out, self.down.inp, after=0)


def test_a_transient_federate_is_an_elastic_slot_under_its_own_name() -> None:
    from reactorfed.assembly.assemble import assemble

    part = assemble(Main(), federate="up").partition
    assert part is not None
    lay = Layout.of(part)
    assert lay.names == ["up", "mid", "down"]
    (g,) = lay.elastic
    assert (g.name, g.slots, g.min, g.max, g.initial) == ("mid", (1,), 0, 1, 1)


def test_a_transient_federate_leaves_and_joins_again_and_the_replay_agrees() -> None:
    fed = Federation(Main)
    for name in ("up", "mid", "down"):
        fed.start(name, fast=False, timeout=TIMEOUT)
    wait_until(lambda: "down" in fed.programs and len(fed.programs["down"].down.got) >= 3,  # type: ignore[attr-defined]
               timeout=20, what="mid's first forwards")
    wait_until(lambda: "mid" in fed.coords, what="mid's driver")
    first = fed.coords["mid"]
    first.request_leave()
    wait_until(lambda: fed.results.get("mid") is not None or "mid" in fed.errors, timeout=20, what="mid's leave")
    assert not fed.errors, fed.errors
    second = fed.start("mid", key="mid2", fast=False, timeout=TIMEOUT)  # a new process of it (LF: relaunched)
    fed.wait(timeout=40)
    assert not second.is_alive()
    assert not fed.errors, fed.errors
    assert fed.rti_error is None, fed.rti_error
    summary = fed.summary
    assert summary is not None
    leave, join = summary.membership
    assert (leave.member, leave.bank, leave.index, leave.joined) == ("mid", "mid", 0, False)
    assert (join.member, join.bank, join.index, join.joined) == ("mid", "mid", 0, True)
    down = fed.programs["down"].down  # type: ignore[attr-defined]
    # its downstream kept its timer going throughout (8 ticks in 800 ms, and the last)
    assert down.ticks == 9
    # it heard mid join twice: at the start and at the new process's effective start tag
    assert down.joins == [(0, 1), (join.tag[0], join.tag[1] + 1)]
    again = fed.programs["mid2"].mid  # type: ignore[attr-defined]
    assert again.started == [join.tag]
    assert fed.programs["mid"].mid.started == [(0, 0)]  # type: ignore[attr-defined]
    before = [g for g in down.got if (g[0], g[1]) < leave.tag]
    after = [g for g in down.got if (g[0], g[1]) > join.tag]
    assert len(before) >= 3 and after
    assert not [g for g in down.got if leave.tag <= (g[0], g[1]) <= join.tag], "nothing while it was absent"

    # The same program in one process, with the record as its schedule.
    replay = Main()
    env = Environment(fast=True, clock=VirtualClock(), timeout=TIMEOUT)
    sched = env.assemble(replay)
    sched.set_membership([r.change() for r in summary.membership])
    env.run()
    assert replay.down.got == down.got and replay.down.joins == down.joins
