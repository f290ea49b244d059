"""Elastic banks in one process (issue 19): a membership schedule applied by the scheduler:
the width, present() channels and bank indices a reaction sees at each tag, the learner's
hook, joiners' startup reactions and timers, leavers' dropped messages, and a rejoin's
fresh state. This is the reference a federated run with the same schedule must equal."""

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
)
from reactorfed.errors import ValidationError
from reactorfed.model.elastic import (
    Elastic,
    MemberChange,
    changed,
    elastic_bank,
    members,
    tag_start_effective,
    width,
)


class Sampler(Reactor):
    out = Output(int)
    inp = Input(int)
    tick = Timer(ms(1), ms(10))

    def __init__(self) -> None:
        self.n = 0
        self.seen: list[tuple[int, int, int | None]] = []
        self.started: list[int] = []

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        self.started.append(self.elapsed_tag().time)

    @reaction(triggers=[tick], effects=[out])
    def step(self, out: Any) -> None:
        self.n += 1
        out.set(1000 * (self.bank_index or 0) + self.n)

    @reaction(triggers=[inp])
    def weights(self, inp: Any) -> None:
        t = self.elapsed_tag()
        self.seen.append((t.time, t.microstep, inp.get()))


class Trainer(Reactor):
    ins = Input(int, width=3)
    out = Output(int)

    def __init__(self) -> None:
        self.rounds: list[tuple[int, int, list[tuple[int, int]], int, tuple[int, ...], bool]] = []

    @reaction(triggers=[ins], effects=[out])
    def learn(self, ins: Any, out: Any) -> None:
        t = self.elapsed_tag()
        self.rounds.append((t.time, t.microstep, ins.present(), width(self, "samplers"),
                            members(self, "samplers"), changed(self, "samplers")))
        out.set(t.time)


class Main(Reactor):
    def __init__(self, initial: int = 2, delay: int | None = ms(3)) -> None:
        self.learner = Trainer()
        self.samplers = elastic_bank(Sampler, Elastic(1, 3, initial=initial))
        self.connect(self.samplers.out, self.learner.ins)
        self.connect(self.learner.out, self.samplers.inp, broadcast=True, after=delay)


def run(main: Main, schedule: list[MemberChange] | None = None, timeout: int = ms(50)) -> Main:
    env = Environment(fast=True, clock=VirtualClock(), timeout=timeout)
    sched = env.assemble(main)
    if schedule is not None:
        sched.set_membership(schedule)
    env.run()
    return main


def test_without_a_schedule_the_initial_members_are_present_throughout() -> None:
    m = run(Main(initial=2))
    assert [r[2] for r in m.learner.rounds][:2] == [[(0, 1), (1, 1001)], [(0, 2), (1, 1002)]]
    assert all(r[3] == 2 and r[4] == (0, 1) and not r[5] for r in m.learner.rounds)
    s2 = m.samplers[2]
    assert s2.n == 0 and s2.started == [] and s2.seen == []  # absent: nothing ran


def test_a_join_mid_run_starts_the_member_there_and_widens_the_bank_at_that_tag() -> None:
    m = run(Main(initial=2), [MemberChange(ms(15), 0, "samplers", 2, True)])
    s2 = m.samplers[2]
    assert s2.started == [ms(15)]  # its startup reactions at its join
    by_time = {r[0]: r for r in m.learner.rounds}
    assert by_time[ms(11)][3] == 2 and by_time[ms(11)][4] == (0, 1)
    # its timer restarts from the join: first at 15 + 1 ms, then every 10
    assert by_time[ms(16)][2] == [(2, 2001)] and by_time[ms(16)][3] == 3 and by_time[ms(16)][4] == (0, 1, 2)
    assert by_time[ms(21)][2] == [(0, 3), (1, 1003)]
    assert by_time[ms(26)][2] == [(2, 2002)]
    # the learner's broadcasts reach it only from its join on: the one sent at 11 ms
    # arrives at 14 ms, before it joined
    assert [s[0] for s in s2.seen] == [ms(19), ms(24), ms(29), ms(34), ms(39), ms(44), ms(49)]


def test_the_hook_tells_the_learner_the_width_changed_at_the_tag() -> None:
    m = run(Main(initial=2), [MemberChange(ms(11), 0, "samplers", 2, True)])
    r = {x[0]: x for x in m.learner.rounds}[ms(11)]
    assert r[5] and r[3] == 3 and r[4] == (0, 1, 2)  # wider from its join on
    assert r[2] == [(0, 2), (1, 1002)]  # the joiner's first tick is at 12 ms (offset 1 ms)
    assert not any(x[5] for x in m.learner.rounds if x[0] != ms(11))


def test_a_leave_drops_what_was_sent_to_it_and_narrows_the_bank() -> None:
    m = run(Main(initial=3), [MemberChange(ms(13), 0, "samplers", 1, False)])
    s1 = m.samplers[1]
    # the learner's output at 11 ms arrives at 14 ms: after the leave, dropped
    assert [s[0] for s in s1.seen] == [ms(4)]
    assert s1.n == 2  # ticks at 1 and 11 ms, none from 13 ms on
    by_time = {r[0]: r for r in m.learner.rounds}
    assert by_time[ms(11)][3] == 3 and by_time[ms(21)][3] == 2 and by_time[ms(21)][4] == (0, 2)
    assert by_time[ms(21)][2] == [(0, 3), (2, 2003)]  # channel 1 absent


def test_a_member_whose_process_failed_does_nothing_from_its_quiet_tag_and_stays_present_until_its_leave() -> None:
    """The leave of a member whose process failed (the RTI's record): quiet from 13 ms
    (its reactions do nothing, what is sent to it is not taken), present until 23 ms."""
    m = run(Main(initial=3), [MemberChange(ms(23), 0, "samplers", 1, False, quiet=(ms(13), 0))])
    s1 = m.samplers[1]
    assert s1.n == 2 and [s[0] for s in s1.seen] == [ms(4)]  # ticks at 1 and 11 ms; nothing from 13 ms
    by_time = {r[0]: r for r in m.learner.rounds}
    assert by_time[ms(21)][2] == [(0, 3), (2, 2003)] and by_time[ms(21)][4] == (0, 1, 2)  # present, silent
    assert by_time[ms(31)][4] == (0, 2)
    sched = Environment(fast=True, clock=VirtualClock(), timeout=ms(5)).assemble(Main(initial=2))
    with pytest.raises(ValidationError, match="quiet tag is of a leave"):  # (not before it)
        sched.set_membership([MemberChange(ms(13), 0, "samplers", 1, False, quiet=(ms(13), 0))])


def test_a_rejoin_starts_from_the_state_as_constructed() -> None:
    sched = [MemberChange(ms(13), 0, "samplers", 1, False), MemberChange(ms(25), 0, "samplers", 1, True)]
    m = run(Main(initial=2), sched)
    s1 = m.samplers[1]
    by_time = {r[0]: r for r in m.learner.rounds}
    assert by_time[ms(26)][2] == [(1, 1001)]  # counts from 1 again: a new incarnation
    assert s1.started == [ms(25)]  # its state as constructed, then its startup at the join
    assert [s[0] for s in s1.seen] == [ms(29), ms(34), ms(39), ms(44), ms(49)]


def test_a_schedule_that_does_not_fit_the_bank_is_refused() -> None:
    for bad, why in (
        ([MemberChange(ms(1), 0, "samplers", 0, True)], "already present"),
        ([MemberChange(ms(1), 0, "samplers", 2, False)], "not present"),
        ([MemberChange(ms(1), 0, "samplers", 0, False), MemberChange(ms(1), 0, "samplers", 1, False)],
         "width 0, outside"),
        ([MemberChange(ms(1), 0, "others", 0, True)], "no elastic bank 'others'"),
        ([MemberChange(ms(1), 0, "samplers", 7, True)], "no member 7"),
    ):
        env = Environment(fast=True, clock=VirtualClock(), timeout=ms(5))
        s = env.assemble(Main(initial=2))
        with pytest.raises(ValidationError, match=why):
            s.set_membership(bad)


def test_the_same_schedule_gives_the_same_run() -> None:
    sched = [MemberChange(ms(7), 0, "samplers", 2, True), MemberChange(ms(18), 2, "samplers", 0, False),
             MemberChange(ms(31), 0, "samplers", 0, True)]
    a, b = run(Main(), sched), run(Main(), sched)
    assert a.learner.rounds == b.learner.rounds
    assert [s.seen for s in a.samplers] == [s.seen for s in b.samplers]


def test_an_absent_member_reacts_to_nothing_sent_over_a_zero_delay_connection() -> None:
    """Over a zero-delay connection the member's input shares the sender's slot: its
    reactions, not the events, are what absence stops."""
    m = run(Main(initial=2, delay=None), [MemberChange(ms(15), 0, "samplers", 2, True),
                                         MemberChange(ms(30), 0, "samplers", 0, False)])
    assert [s[0] for s in m.samplers[0].seen] == [ms(1), ms(11), ms(16), ms(21), ms(26)]  # not from 30 ms on
    assert [s[0] for s in m.samplers[2].seen] == [ms(16), ms(21), ms(26), ms(31), ms(36), ms(41), ms(46)]
    assert m.samplers[2].seen[0] == (ms(16), 0, ms(16))  # the same tag: no delay


def test_what_is_dropped_for_a_member_not_there_is_counted_and_a_federated_join_keeps_its_own() -> None:
    """The learner's broadcast at 11 ms arrives at 14 ms, after slot 2's join at 13 ms (the
    joiner's first step, at 14 ms, comes back at 17 ms). In one process it was sent while
    the member was absent: its join drops it, counted. A federate's scheduler
    (``senders_filter``: its senders send only to the members present at their tag, its core
    drops what is not for this incarnation) keeps what is queued for a joiner at its join:
    there it is the joiner's own (a replayed joiner that connects late reads its first
    weights before it processes its join tag; they were dropped, silently)."""
    join = [MemberChange(ms(13), 0, "samplers", 2, True)]
    for filtered, first, dropped in ((False, ms(17), 1), (True, ms(14), 0)):
        main = Main(initial=2)
        env = Environment(fast=True, clock=VirtualClock(), timeout=ms(30))
        sched = env.assemble(main)
        sched.set_membership(join)
        assert sched.membership is not None
        sched.membership.senders_filter = filtered
        env.run()
        assert [s[0] for s in main.samplers[2].seen][:1] == [first], filtered
        assert sched.membership.messages_dropped == dropped, filtered
    # a leave drops what was in flight to it (counted): the broadcast at 11 ms, at 14 ms
    main = Main(initial=3)
    env = Environment(fast=True, clock=VirtualClock(), timeout=ms(30))
    sched = env.assemble(main)
    sched.set_membership([MemberChange(ms(13), 0, "samplers", 1, False)])
    env.run()
    assert sched.membership is not None and sched.membership.messages_dropped == 1


def test_a_run_that_begins_at_a_later_tag_processes_nothing_before_it() -> None:
    """A joiner's scheduler begins at its ADMIT tag (``Membership.begin_at``, which a
    federate's driver calls before the run starts): no tag before it is processed, the
    startup reactions run there, timers fire on their schedule from there, and the changes
    posted for earlier tags (the record's, before it joined) apply there in their order.
    Here on a whole program in one process: slot 2 joins at 5 ms and leaves at 8 ms, so it
    is absent at 20 ms (applied leaves first, as one tag's changes, it was present)."""
    start = ms(1000)
    main = Main(initial=2)
    env = Environment(fast=True, clock=VirtualClock(start), timeout=ms(50))
    sched = env.assemble(main)
    mem = sched.membership
    assert mem is not None
    mem.post(sched, (start + ms(5), 0), "samplers", 2, True)
    mem.post(sched, (start + ms(8), 0), "samplers", 2, False)
    mem.begin_at(sched, (start + ms(20), 0))
    env.run()
    assert mem.applied == [((start + ms(5), 0), "samplers", 2, True), ((start + ms(8), 0), "samplers", 2, False)]
    assert [s.started for s in main.samplers] == [[ms(20)], [ms(20)], []]
    # the timers (1 ms, then every 10) from 20 ms: 21, 31, 41
    assert [r[0] for r in main.learner.rounds] == [ms(21), ms(31), ms(41)]
    assert all(r[4] == (0, 1) and not r[5] for r in main.learner.rounds)
    assert [s.n for s in main.samplers] == [3, 3, 0]
    # 20 (the start of this run: changes, startup), 21, 24 (the weights), 31, 34, 41, 44, 50
    # (the timeout's): none before 20, not 5 or 8 for the changes
    assert sched.tags_processed == 8


class _Started(Sampler):
    """A sampler that records its effective start tag at each startup (LF's
    ``lf.tag_start_effective()`` in a transient federate's startup reaction)."""

    def __init__(self) -> None:
        super().__init__()
        self.effective: list[tuple[int, int]] = []

    @reaction(triggers=[STARTUP])
    def effective_start(self) -> None:
        t = tag_start_effective(self)
        start = self.tag().time - self.elapsed()
        self.effective.append((t.time - start, t.microstep))


class _MainStarted(Reactor):
    def __init__(self) -> None:
        self.learner = Trainer()
        self.samplers = elastic_bank(_Started, Elastic(1, 3, initial=2))
        self.connect(self.samplers.out, self.learner.ins)


def test_the_effective_start_tag_is_the_join_of_the_present_incarnation() -> None:
    """A member present from the start started at the start tag; one that joins at J, and
    again at J' after a leave, started at J' in its present incarnation (the first one's
    record went with its state)."""
    main = _MainStarted()
    env = Environment(fast=True, clock=VirtualClock(), timeout=ms(50))
    sched = env.assemble(main)
    sched.set_membership([MemberChange(ms(12), 0, "samplers", 2, True), MemberChange(ms(20), 0, "samplers", 2, False),
                          MemberChange(ms(31), 0, "samplers", 2, True)])
    env.run()
    assert main.samplers[0].effective == [(0, 0)]
    assert main.samplers[2].effective == [(ms(31), 0)]  # (a rejoin starts from the constructed state)
    assert main.samplers[2].started == [ms(31)]
