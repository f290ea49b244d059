"""Warnings about what strangers send are rate-limited (a flood must not flood the log)."""

from __future__ import annotations

import logging

import pytest

from reactorfed.federation.process.throttle import Throttle


def test_one_warning_per_period_and_a_count_of_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("reactorfed.test.throttle")
    t = Throttle(log, period_ns=10**12)  # nothing else within this test
    with caplog.at_level(logging.WARNING, logger=log.name):
        for i in range(1000):
            t.warning("refused %d", i)
    assert [r.getMessage() for r in caplog.records] == ["refused 0"]
    assert t.suppressed == 999
    t.reset()  # the period is over
    with caplog.at_level(logging.WARNING, logger=log.name):
        t.warning("refused %d", 1000)
    assert caplog.records[-1].getMessage() == "refused 1000 (999 more like it in the last second not shown)"
    assert t.suppressed == 0


def test_each_kind_has_its_own_budget_and_the_table_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    """A refusal for another reason is shown at once: a burst of one kind (a federate with
    the wrong key retrying) does not hide a stranger of another kind."""
    log = logging.getLogger("reactorfed.test.throttle.kinds")
    t = Throttle(log, period_ns=10**12, max_kinds=3)
    with caplog.at_level(logging.WARNING, logger=log.name):
        for reason in ("wrong key", "wrong key", "plaintext", "wrong key", "plaintext"):
            t.warning("refused: %s", reason, kind=reason)
        for i in range(10):  # kinds beyond the table share one budget
            t.warning("refused: %s", f"odd {i}", kind=f"odd {i}")
    assert [r.getMessage() for r in caplog.records] == ["refused: wrong key", "refused: plaintext", "refused: odd 0",
                                                        "refused: odd 1"]
    assert t.suppressed == 3 + 8
