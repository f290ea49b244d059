"""A run's histograms and their Prometheus exposition: buckets cumulative with ``le``
bounds in the base unit, ``_sum`` and ``_count``, one family per name with the
histogram's labels after the collector's."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from reactorfed import STARTUP, Environment, Reactor, VirtualClock, reaction
from reactorfed.observe.histograms import Histogram, HistogramBoard
from reactorfed.observe.metrics import SchedulerCollector


def test_a_value_counts_in_the_first_bucket_whose_bound_it_does_not_exceed() -> None:
    h = Histogram([0, 1, 4])
    for v in (0, 1, 2, 4, 5, 100):
        h.observe(v)
    snap = h.snapshot()
    assert snap.counts == (1, 1, 2, 2) and snap.sum == 112 and snap.count == 6
    with pytest.raises(ValueError):
        Histogram([1, 1])
    board = HistogramBoard()
    a = board.histogram("x", "", [1], {"reactor": "a"})
    assert board.histogram("x", "", [1], {"reactor": "a"}) is a
    assert board.histogram("x", "", [1], {"reactor": "b"}) is not a
    assert [(n, lbl) for n, lbl, _ in board.items()] == [("x", {"reactor": "a"}), ("x", {"reactor": "b"})]


class Filler(Reactor):
    @reaction(triggers=[STARTUP])
    def fill(self) -> None:
        from reactorfed.model.attachment import running_scheduler

        board = running_scheduler(self).histograms
        ns = board.histogram("reactorfed_test_seconds", "A test's times", [1_000_000, 1_000_000_000],
                             {"reactor": self.fqn}, unit=1_000_000_000)
        for v in (500_000, 2_000_000, 3_000_000_000):
            ns.observe(v)
        board.histogram("reactorfed_test_count", "A test's counts", [0, 2], {"reactor": self.fqn}).observe(1)


def test_the_collector_shows_every_histogram_of_its_scheduler() -> None:
    env = Environment(fast=True, clock=VirtualClock())
    env.run(Filler())
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SchedulerCollector(lambda: env.scheduler, {"federate": "f"}))
    text = generate_latest(registry).decode()
    lines = [line for line in text.splitlines() if line.startswith("reactorfed_test")]
    assert 'reactorfed_test_seconds_bucket{federate="f",le="0.001",reactor="Filler"} 1.0' in lines
    assert 'reactorfed_test_seconds_bucket{federate="f",le="1.0",reactor="Filler"} 2.0' in lines
    assert 'reactorfed_test_seconds_bucket{federate="f",le="+Inf",reactor="Filler"} 3.0' in lines
    assert 'reactorfed_test_seconds_count{federate="f",reactor="Filler"} 3.0' in lines
    assert 'reactorfed_test_seconds_sum{federate="f",reactor="Filler"} 3.0025' in lines
    assert 'reactorfed_test_count_bucket{federate="f",le="0.0",reactor="Filler"} 0.0' in lines
    assert 'reactorfed_test_count_bucket{federate="f",le="2.0",reactor="Filler"} 1.0' in lines
    assert "# TYPE reactorfed_test_seconds histogram" in text
