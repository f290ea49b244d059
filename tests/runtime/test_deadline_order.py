"""Reactions ready at one tag run earliest inferred deadline first, then by level, then
in assembly order (reactor-c: a reaction's index is ``lf_combine_deadline_and_level``;
LF's ReactionInstanceGraph infers each reaction's deadline from those downstream)."""

from __future__ import annotations

import threading

import pytest

from reactorfed import Input, Output, Reactor, Timer, ms, reaction
from reactorfed.assembly.assemble import assemble, rank

from .util import run


class Plain(Reactor):
    """A reaction without a deadline, on the shared timer's tags."""

    t = Timer(0, ms(10))

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[t])
    def go(self):
        self.log.append(self.name)


class Src(Reactor):
    t = Timer(0, ms(10))
    out = Output(int)

    def __init__(self, log):
        self.log = log

    @reaction(triggers=[t], effects=[out])
    def emit(self, out):
        self.log.append(self.name)
        out.set(1)


class Urgent(Reactor):
    inp = Input(int)

    def __init__(self, log, deadline):
        self.log = log
        self.deadline = deadline

    @reaction(triggers=[inp], deadline="deadline")
    def react(self, inp):
        self.log.append(self.name)


def _program(log):
    class Main(Reactor):
        def __init__(self):
            self.plain = Plain(log)  # assembled first, level 0, no deadline
            self.slow_src = Src(log)  # feeds a 50 ms deadline
            self.slow = Urgent(log, ms(50))
            self.fast_src = Src(log)  # feeds a 5 ms deadline
            self.fast = Urgent(log, ms(5))
            self.connect(self.slow_src.out, self.slow.inp)
            self.connect(self.fast_src.out, self.fast.inp)

    return Main()


def test_the_earliest_inferred_deadline_runs_first_and_precedence_holds():
    """fast_src has no deadline of its own but infers 5 ms from fast: it and fast run
    first (fast at level 1 before plain at level 0), then the 50 ms chain, then plain.
    By (level, assembly order) alone it would be plain, slow_src, fast_src, slow, fast."""
    log = []
    run(_program(log), timeout=0)
    assert log == ["fast_src", "fast", "slow_src", "slow", "plain"]


class _ThreadLog(list):
    """A log that also keeps the threads it was appended from (where the reactions ran)."""

    def __init__(self):
        super().__init__()
        self.threads = set()

    def append(self, item):
        self.threads.add(threading.get_ident())
        super().append(item)


@pytest.mark.parametrize("workers", [2, 4])
def test_with_workers_a_batch_is_one_level_and_precedence_holds(workers):
    """With workers > 1 the scheduler pops by rank and runs a run of ranks on one level
    together (reactor-c's GEDF_NP does the same: the queue's head, at the current level):
    here fast_src, then slow_src and plain join it (fast is not triggered yet), so the
    three start in any order; each chain's reactions still run in precedence order."""
    log = _ThreadLog()
    run(_program(log), timeout=ms(20), workers=workers)
    assert len(log.threads) > 1, f"workers={workers} must run same-level reactions on several threads"
    assert len(log) == 15
    for i in range(0, 15, 5):
        tag = log[i:i + 5]
        assert sorted(tag) == sorted(["fast_src", "fast", "slow_src", "slow", "plain"])
        assert tag.index("fast_src") < tag.index("fast") and tag.index("slow_src") < tag.index("slow")


def test_inferred_deadlines_follow_data_and_declaration_order():
    """A reaction infers the smallest deadline downstream of it, through connections and
    through its reactor's later reactions (the declaration-order edge)."""

    class Two(Reactor):
        t = Timer(0)
        out = Output(int)

        @reaction(triggers=[t], effects=[out])
        def first(self, out):
            out.set(1)

        @reaction(triggers=[t], deadline=ms(3))
        def second(self):
            pass

    class Main(Reactor):
        def __init__(self):
            self.two = Two()
            self.sink = Urgent([], ms(7))
            self.connect(self.two.out, self.sink.inp)

    prog = assemble(Main())
    inferred = {rx.fqn: rx.inferred_deadline for rx in prog.reactions}
    assert inferred == {"Main.two.first": ms(3), "Main.two.second": ms(3), "Main.sink.react": ms(7)}
    assert [rx.fqn for rx in prog.reactions] == ["Main.two.first", "Main.two.second", "Main.sink.react"]


def test_ranked_by_level_for_level_checkpoints():
    """A scheduler with level checkpoints (a federate on a zero-delay cycle) must finish
    each level before the next: rank(by_deadline=False) gives (level, assembly order)."""
    prog = assemble(_program([]))
    rank(prog, by_deadline=False)
    assert [(rx.level, rx.reactor.name) for rx in prog.reactions] == [
        (0, "plain"), (0, "slow_src"), (0, "fast_src"), (1, "slow"), (1, "fast")]
    assert [rx.rank for rx in prog.reactions] == list(range(5))
    for slot in (prog.slot_of(ch) for ch in prog.channels):
        assert [rx.rank for rx in slot.reactions] == sorted(rx.rank for rx in slot.reactions)

