"""The RTI server's state as ``/status``'s document and as Prometheus metrics: a read-only
view over the public names of :class:`.rti_server.RtiServer`.

The document's ``progress`` is the federation's progress for a person: the latest report
(``{"done", "total", "figures"}``, each when known; :mod:`reactorfed.observe.progress`)
of the first federate, in the program's order, that sent one (in the RL plans, the
learner: it alone reports); each federate's own is under ``federates``. No federate
reported: no ``progress``. Each federate's ``lag_ns`` is physical minus logical time at
its latest tag complete (as the metric ``reactorfed_rti_federate_lag_seconds``).

:func:`history_of` is every federate's reports over its logical time, bounded
(:class:`~reactorfed.observe.progress.ProgressHistory`): ``/history``, the curves of
the RTI's live page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...observe.progress import ProgressReport
from ..wire import protocol as P

if TYPE_CHECKING:
    from .rti_server import RtiServer

__all__ = ["elapsed_of", "history_of", "metrics_of", "status_of"]


def status_of(srv: RtiServer) -> dict[str, Any]:
    """``/status``'s document (see :meth:`.rti_server.RtiServer.status`)."""
    start = srv.start_time or 0
    now = srv.clock.now()
    members = srv.members
    core = srv.core
    reports = srv.progress
    last_seen = srv.last_seen
    feds: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(srv.layout.names):
        st = core.feds[i]
        elapsed = elapsed_of(srv, i)
        feds[name] = {
            "joined": i in srv.admission.control_of,
            "resigned": st.resigned,
            "ltc_elapsed_ns": elapsed,
            # as reactorfed_rti_federate_lag_seconds: physical minus logical time (negative: ahead, as in fast mode)
            "lag_ns": None if elapsed is None else now - start - elapsed,
            "last_seen_ms_ago": (now - last_seen[i]) // 1_000_000 if i in last_seen else None,
        }
        if members is not None:
            feds[name]["present"] = core.members.present[i]
        if i in reports:
            feds[name]["progress"] = _progress_json(reports[i])
    done = [st.ltc for st in core.feds if st.ltc[0] < 2**62 and st.ltc[0] >= start]
    # (elastic banks: the absent slots have no tag)
    expected = len(core.feds) if members is None else sum(core.members.present)
    low = min(done) if done and len(done) == expected else None
    out: dict[str, Any] = {
        "phase": srv.phase,
        "federation": srv.cfg.federation_id,
        "tag": [low[0] - start, low[1]] if low else None,
        "elapsed_ns": low[0] - start if low else 0,
        "federates": feds,
        "grants": srv.grants,
        "messages": srv.messages,
        "rejected": srv.rejected,
        "handshakes_refused": srv.handshakes_refused,
        "error": srv.error,
    }
    first = min(reports, default=None)
    if first is not None:
        out["progress"] = _progress_json(reports[first])
    if members is not None:  # the joins and leaves so far, tags after the start
        out["membership"] = [r.json() for r in members.record()]
    return out


def elapsed_of(srv: RtiServer, i: int) -> int | None:
    """Federate ``i``'s latest tag complete, ns after the start (None: none yet)."""
    start = srv.start_time or 0
    t = srv.core.feds[i].ltc[0]
    return t - start if start and start <= t < 2**62 else None


def history_of(srv: RtiServer) -> dict[str, Any]:
    """Each federate's progress reports over its logical time (the live page's curves):
    :meth:`.ProgressHistory.json`, by federate."""
    return srv.progress_history.json()


def _progress_json(msg: P.Progress) -> dict[str, Any]:
    return ProgressReport(msg.done, msg.total, msg.figures).json()


def metrics_of(srv: RtiServer) -> Iterator[Any]:
    """The Prometheus metrics (see :meth:`.rti_server.RtiServer.collect`)."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    yield CounterMetricFamily("reactorfed_rti_grants", "Tag grants (TAG and PTAG) sent", value=srv.grants)
    yield CounterMetricFamily("reactorfed_rti_messages", "Control messages received", value=srv.messages)
    yield CounterMetricFamily("reactorfed_rti_rejected", "Messages or joins rejected", value=srv.rejected)
    start = srv.start_time or 0
    lt = GaugeMetricFamily("reactorfed_rti_federate_logical_time_seconds", "Latest tag complete, elapsed", labels=["federate"])
    lag = GaugeMetricFamily("reactorfed_rti_federate_lag_seconds", "Physical minus logical time of the latest tag complete", labels=["federate"])
    now = srv.clock.now()
    for i, name in enumerate(srv.layout.names):
        ltc = srv.core.feds[i].ltc
        if start and start <= ltc[0] < 2**62:
            lt.add_metric([name], (ltc[0] - start) / 1e9)
            lag.add_metric([name], (now - ltc[0]) / 1e9)
    yield lt
    yield lag
    # Joins and leaves of processes, a series per federate from the start (at 0 before its
    # first join), so that a rate sees the first join too. A leave: a RESIGN (the run's end,
    # or an elastic member's leave), or an elastic member's process that failed.
    joins = CounterMetricFamily("reactorfed_rti_federate_joins", "Processes admitted for the federate (an elastic "
                                "member's each join)", labels=["federate"])
    leaves = CounterMetricFamily("reactorfed_rti_federate_leaves", "Processes of the federate that resigned, or "
                                 "failed (an elastic member)", labels=["federate"])
    failures = srv.members.failures if srv.members is not None else None
    for i, name in enumerate(srv.layout.names):
        joins.add_metric([name], srv.joins[i])
        leaves.add_metric([name], srv.resigns[i] + (failures[i] if failures is not None else 0))
    yield joins
    yield leaves
