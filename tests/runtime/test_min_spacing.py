"""``min_spacing``: "not declared" (None, the default: events pile up in superdense
time) and "declared as 0" are different; once declared, 0 included, the policies apply
(reactor-c's lf_schedule_trigger; the rules in reactorfed.model.action's docstring)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    LogicalAction,
    PhysicalAction,
    Reactor,
    Tag,
    ValidationError,
    ms,
    reaction,
)

from .util import run


def plan(action: LogicalAction[Any], steps: list[tuple[int, int]]) -> Reactor:
    """A reactor whose ``act`` is ``action``, scheduled at startup once per (delay, value)."""

    class P(Reactor):
        act = action

        def __init__(self) -> None:
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act: Any) -> None:
            for delay, value in steps:
                act.schedule(value=value, delay=delay)

        @reaction(triggers=[act])
        def fired(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))

    return P()


def log_of(action: LogicalAction[Any], steps: list[tuple[int, int]], **kw: Any) -> list[tuple[Tag, Any]]:
    p = plan(action, steps)
    run(p, **kw)
    return p.log  # type: ignore[attr-defined, no-any-return]


def test_the_default_is_not_declared() -> None:
    assert LogicalAction().min_spacing is None
    assert PhysicalAction().min_spacing is None
    assert LogicalAction(min_spacing=0).min_spacing == 0


SHUFFLED = [(ms(10), 1), (ms(5), 2), (ms(10), 3)]


def test_not_declared_lets_an_earlier_event_go_first() -> None:
    assert log_of(LogicalAction(int), SHUFFLED) == [(Tag(ms(5), 0), 2), (Tag(ms(10), 0), 1), (Tag(ms(10), 1), 3)]


def test_declared_0_defer_keeps_the_order_scheduled_one_microstep_apart() -> None:
    """At spacing 0 tags strictly grow: the 5 ms event is early (before the previous one)
    and goes to the microstep after it; the third to the microstep after that."""
    assert log_of(LogicalAction(int, min_spacing=0), SHUFFLED) == [
        (Tag(ms(10), 0), 1), (Tag(ms(10), 1), 2), (Tag(ms(10), 2), 3)]


def test_declared_0_defer_for_one_tag_is_the_next_microstep() -> None:
    assert log_of(LogicalAction(int, min_spacing=0), [(0, 1), (0, 2), (0, 3)]) == [
        (Tag(0, 1), 1), (Tag(0, 2), 2), (Tag(0, 3), 3)]


def test_declared_0_drop_keeps_the_first_of_one_tag_and_drops_what_is_not_after_it() -> None:
    assert log_of(LogicalAction(int, min_spacing=0, policy="drop"), [(0, 1), (0, 2), (0, 3)]) == [(Tag(0, 1), 1)]
    assert log_of(LogicalAction(int, min_spacing=0, policy="drop"), SHUFFLED) == [(Tag(ms(10), 0), 1)]


def test_declared_0_replace_gives_the_pending_event_the_last_value() -> None:
    assert log_of(LogicalAction(int, min_spacing=0, policy="replace"), [(ms(1), 1), (ms(1), 2), (ms(1), 3)]) == [
        (Tag(ms(1), 0), 3)]


def test_update_cancels_the_pending_event_and_keeps_the_new_one_at_its_own_tag() -> None:
    """reactor-c's ``update``: an early event whose predecessor is still pending cancels it
    and takes its own tag (the 15 ms event cancels the 10 ms one; the 20 ms one, early
    after 15 ms, cancels that in turn). Once the predecessor has happened: deferred."""
    assert log_of(LogicalAction(int, min_spacing=ms(10), policy="update"), [(ms(10), 1), (ms(15), 2), (ms(20), 3)]) == [
        (Tag(ms(20), 0), 3)]
    # at spacing 0: the 5 ms event cancels the 10 ms one (early: not after it); the last
    # 10 ms event is after 5 ms, not early, and is kept
    assert log_of(LogicalAction(int, min_spacing=0, policy="update"), SHUFFLED) == [
        (Tag(ms(5), 0), 2), (Tag(ms(10), 0), 3)]

    class Late(Reactor):
        act = LogicalAction(int, min_spacing=ms(10), policy="update")

        def __init__(self) -> None:
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act: Any) -> None:
            act.schedule(value=1, delay=ms(1))

        @reaction(triggers=[act], effects=[act])
        def again(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))
            if act.get() == 1:
                act.schedule(value=2, delay=ms(2))  # early (3 ms < 1 + 10), nothing pending: deferred

    late = Late()
    run(late)
    assert late.log == [(Tag(ms(1), 0), 1), (Tag(ms(11), 0), 2)]


def test_declared_0_does_not_hold_back_a_later_microstep_of_the_same_time() -> None:
    """Spacing 0 asks for growing tags, not growing times: an action that reschedules
    itself with delay 0 fires at every microstep, with every policy. (reactor-c's code
    compares times only and would treat these as early.)"""
    for policy in ("defer", "drop", "replace", "update"):

        class Chain(Reactor):
            act = LogicalAction(int, min_spacing=0, policy=policy)

            def __init__(self) -> None:
                self.log: list[tuple[Tag, Any]] = []

            @reaction(triggers=[STARTUP], effects=[act])
            def start(self, act: Any) -> None:
                act.schedule(value=0)

            @reaction(triggers=[act], effects=[act])
            def again(self, act: Any) -> None:
                self.log.append((self.elapsed_tag(), act.get()))
                if act.get() < 3:
                    act.schedule(value=act.get() + 1)

        c = Chain()
        run(c)
        assert c.log == [(Tag(0, k + 1), k) for k in range(4)], policy


def test_spacing_defer_past_the_stop_tag_drops_the_event() -> None:
    assert log_of(LogicalAction(int, min_spacing=ms(10)), [(ms(1), 1), (ms(2), 2)], timeout=ms(5)) == [
        (Tag(ms(1), 0), 1)]


def test_a_dropped_event_is_not_the_previous_one_for_the_spacing() -> None:
    """Spacing 10 ms, drop: 10 ms kept, 15 ms dropped, 20 ms kept (10 ms after 10 ms, not
    5 ms after the dropped 15 ms)."""
    assert log_of(LogicalAction(int, min_spacing=ms(10), policy="drop"), [(ms(10), 1), (ms(15), 2), (ms(20), 3)]) == [
        (Tag(ms(10), 0), 1), (Tag(ms(20), 0), 3)]


def test_a_policy_without_a_min_spacing_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"policy 'drop' applies only with a declared min_spacing \(0 included\)"):
        LogicalAction(policy="drop")
    with pytest.raises(ValidationError, match="policy 'defer' applies only with a declared min_spacing"):
        PhysicalAction(policy="defer")
    assert LogicalAction(min_spacing=0, policy="drop").policy == "drop"
    assert LogicalAction(min_spacing=0).policy == "defer"


def test_physical_events_with_spacing_0_at_one_instant_follow_the_policy() -> None:
    """On a virtual clock that does not move, three physical events share one timestamp:
    spacing 0 with drop keeps the first only; without a spacing all three pile up."""

    def phys(action: PhysicalAction[Any]) -> list[tuple[Tag, Any]]:
        class P(Reactor):
            act = action

            def __init__(self) -> None:
                self.log: list[tuple[Tag, Any]] = []

            @reaction(triggers=[STARTUP])
            def start(self) -> None:
                for i in range(3):
                    self.act.schedule(value=i)

            @reaction(triggers=[act])
            def got(self, act: Any) -> None:
                self.log.append((self.elapsed_tag(), act.get()))

        p = P()
        run(p, timeout=ms(1))
        return p.log

    assert phys(PhysicalAction(int, min_spacing=0, policy="drop")) == [(Tag(0, 1), 0)]
    assert phys(PhysicalAction(int)) == [(Tag(0, 1), 0), (Tag(0, 2), 1), (Tag(0, 3), 2)]
