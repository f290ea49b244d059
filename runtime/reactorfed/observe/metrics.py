"""Prometheus metrics for a running program, read from the scheduler at scrape time.

The scheduler already keeps plain counters (tags processed, reactions executed,
deadline misses) and the current tag; a custom collector reads them when Prometheus
scrapes, so the hot path pays nothing; the histograms a program's reactors fill (its
:class:`~reactorfed.observe.histograms.HistogramBoard`: the learners' policy lag) are read
the same way, and so is the program's latest progress report (iterations done, the
figures it reports: env steps, the training return)::

    env = Environment(...)
    env.assemble(main)
    server = serve_metrics(env, port=9464)
    try:
        env.run()
    finally:
        server.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..time.tag import NEVER

if TYPE_CHECKING:
    from ..execution.environment import Environment
    from ..execution.scheduler import Scheduler
    from .status import StatusServer

__all__ = ["SchedulerCollector", "serve_metrics"]


class SchedulerCollector:
    """A prometheus_client collector over one scheduler's counters.

    ``source`` returns the scheduler to read (None before assembly: nothing is reported
    but ``reactorfed_up``). ``labels`` are constant labels on every sample (e.g. the
    program and, in a federation, the federate).
    """

    def __init__(self, source: Callable[[], Scheduler | None], labels: Mapping[str, str] | None = None) -> None:
        self._source = source
        self._labels = dict(labels or {})

    def describe(self) -> list[Any]:
        return []  # unchecked collector: what it yields is known only at scrape time

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        names = list(self._labels)
        values = list(self._labels.values())

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            g = GaugeMetricFamily(name, doc, labels=names)
            g.add_metric(values, value)
            return g

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=names)
            c.add_metric(values, value)
            return c

        sched = self._source()
        yield gauge("reactorfed_up", "1 while the program is assembled and running", 0 if sched is None else 1)
        if sched is None:
            return
        yield counter("reactorfed_tags_processed", "Tags (time, microstep) processed", sched.tags_processed)
        yield counter("reactorfed_reactions_executed", "Reactions executed", sched.reactions_executed)
        yield counter(
            "reactorfed_deadline_misses", "Reactions whose deadline was missed (the handler ran)", sched.deadline_misses
        )
        yield from _histograms(sched, names, values)
        yield from _progress(sched, names, values)
        t, m = sched.current_tag
        if t == NEVER:
            return  # not started yet: no logical time
        yield gauge(
            "reactorfed_logical_time_elapsed_seconds", "Logical time elapsed since the start", (t - sched.start_time) / 1e9
        )
        yield gauge("reactorfed_microstep", "Microstep of the current tag", m)
        yield gauge(
            "reactorfed_lag_seconds",
            "Physical time minus logical time of the current tag (negative: logical time ahead, as in fast mode)",
            (sched.clock.now() - t) / 1e9,
        )


def _histograms(sched: Scheduler, names: list[str], values: list[str]) -> Iterator[Any]:
    """Each of the run's histograms as a Prometheus histogram, a family per name."""
    from prometheus_client.core import HistogramMetricFamily

    families: dict[str, HistogramMetricFamily] = {}
    for name, labels, h in sched.histograms.items():
        fam = families.get(name)
        if fam is None:
            fam = families[name] = HistogramMetricFamily(name, h.doc, labels=[*names, *labels])
        snap = h.snapshot()
        cumulative, buckets = 0, []
        for bound, n in zip([*snap.bounds, None], snap.counts, strict=True):
            cumulative += n
            buckets.append(("+Inf" if bound is None else _le(bound / h.unit), cumulative))
        fam.add_metric([*values, *labels.values()], buckets, snap.sum / h.unit)
    yield from families.values()


def _progress(sched: Scheduler, names: list[str], values: list[str]) -> Iterator[Any]:
    """The program's latest progress report (:mod:`.progress`) as gauges: ``done``, ``total``,
    and each figure under one name with a ``figure`` label (the RL learners' ``env_steps``
    and ``mean_return``), so that a dashboard needs no name per figure. Gauges, not
    counters: a figure is whatever the program says (a return goes down too); a rate of
    ``env_steps`` is ``deriv()``'s. Nothing reported yet: no series."""
    from prometheus_client.core import GaugeMetricFamily

    report = sched.progress.latest()[1]
    if report is None:
        return
    for field, doc, v in (("done", "Progress reported: how far (e.g. iterations done)", report.done),
                          ("total", "Progress reported: of how many", report.total)):
        if v is not None:
            g = GaugeMetricFamily(f"reactorfed_progress_{field}", doc, labels=names)
            g.add_metric(values, v)
            yield g
    if report.figures:
        g = GaugeMetricFamily("reactorfed_progress_figure", "A figure of the program's progress report (label figure: "
                              "its name, e.g. env_steps, mean_return)", labels=[*names, "figure"])
        for name, figure in report.figures.items():
            g.add_metric([*values, name], figure)
        yield g


def _le(x: float) -> str:
    """A bucket's bound as Prometheus writes it (``0.005``, ``1.0``, ``64.0``)."""
    return repr(float(x))


def serve_metrics(env: Environment, port: int, addr: str = "0.0.0.0", labels: Mapping[str, str] | None = None) -> StatusServer:
    """Serve ``env``'s scheduler counters on ``http://addr:port/metrics`` (port 0: any
    free port, see :attr:`StatusServer.port`), with the process's own metrics (CPU
    seconds, resident memory, open descriptors) and a JSON ``/status`` (with the
    program's ``progress`` once a reactor reported it: :mod:`.progress`)."""
    from .status import StatusServer

    def status() -> dict[str, Any]:
        sched = env.scheduler
        out: dict[str, Any] = dict(labels or {})
        if sched is not None:
            out.update(tag=list(sched.current_tag), start_time=sched.start_time, tags=sched.tags_processed,
                       reactions=sched.reactions_executed)
            progress = sched.progress.json()
            if progress is not None:
                out["progress"] = progress
        return out

    return StatusServer(port, [SchedulerCollector(lambda: env.scheduler, labels)], status, host=addr)
