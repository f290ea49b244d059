"""``schedule``'s arguments are keyword-only (issue 16). LF's Python target writes
``a.schedule(delay, value)``; reactorfed's first API was ``schedule(value, delay)``. A
value may be an int, so ``a.schedule(5)`` cannot be read safely either way: every
positional call is refused with a ValidationError naming the action and the keyword form."""

from __future__ import annotations

from typing import Any

import numpy as np
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


def _calling(call: Any) -> Reactor:
    class S(Reactor):
        act = LogicalAction()

        def __init__(self) -> None:
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP], effects=[act])
        def start(self, act: Any) -> None:
            call(act)

        @reaction(triggers=[act])
        def got(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))

    class Main(Reactor):
        def __init__(self) -> None:
            self.s = S()

    return Main()


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda a: a.schedule(0, 42), r"schedule\(0, 42\)"),  # LF's order
        (lambda a: a.schedule(42, ms(5)), r"schedule\(42, 5000000\)"),  # the old order
        (lambda a: a.schedule(ms(10)), r"schedule\(10000000\)"),  # a delay to LF, a value to the old API
        (lambda a: a.schedule(np.zeros(1000)), r"schedule\(<ndarray>\)"),
        (lambda a: a.schedule(1, value=2), r"schedule\(1\)"),
    ],
    ids=["lf-order", "old-order", "one-int", "array", "mixed"],
)
def test_a_positional_call_is_refused_with_the_keyword_form(call: Any, shown: str) -> None:
    with pytest.raises(ValidationError, match=r"Main\.s\.act: " + shown + r": pass the arguments by keyword, "
                                              r"schedule\(delay=\.\.\., value=\.\.\.\) \(LF's Python target"):
        run(_calling(call))


@pytest.mark.parametrize(
    ("call", "fired"),
    [
        (lambda a: a.schedule(), (Tag(0, 1), None)),
        (lambda a: a.schedule(delay=ms(10)), (Tag(ms(10)), None)),
        (lambda a: a.schedule(value=42), (Tag(0, 1), 42)),
        (lambda a: a.schedule(delay=ms(3), value=7), (Tag(ms(3)), 7)),
        (lambda a: a.schedule(value=7, delay=ms(3)), (Tag(ms(3)), 7)),
    ],
)
def test_the_keyword_forms(call: Any, fired: tuple[Tag, Any]) -> None:
    main = _calling(call)
    run(main)
    assert main.s.log == [fired]  # type: ignore[attr-defined]


def test_a_physical_action_takes_keywords_too() -> None:
    class P(Reactor):
        act = PhysicalAction(int)

        def __init__(self) -> None:
            self.log: list[tuple[Tag, Any]] = []

        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            self.act.schedule(value=5, delay=ms(2))

        @reaction(triggers=[act])
        def got(self, act: Any) -> None:
            self.log.append((self.elapsed_tag(), act.get()))

    p = P()
    run(p, timeout=ms(5))
    assert p.log == [(Tag(ms(2)), 5)]

    class Q(P):
        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            self.act.schedule(ms(2), 5)

    with pytest.raises(ValidationError, match=r"Q\.act: schedule\(2000000, 5\): pass the arguments by keyword"):
        run(Q(), timeout=ms(5))
