"""Run an RTI or one federate of a program in this process."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...assembly.assemble import assemble
from ...execution.environment import Environment, RunSummary
from ...execution.tracing import Tracer
from ...model.reactor import Reactor
from ...observe.metrics import SchedulerCollector
from ...observe.status import StatusServer
from ...time.clock import Clock, SyncedClock, SystemClock
from ..coordination.layout import Layout
from .defaults import DEFAULT_METRICS_ADDR
from .heap import keep_payload_memory
from .rti_server import RtiConfig, RtiServer, RtiSummary
from .rti_status import history_of

if TYPE_CHECKING:  # imported when a federate runs: the RTI needs neither it nor numpy
    from ...execution.scheduler import Scheduler
    from .federate import FederateCoordinator
    from .federate_config import FederateConfig

__all__ = ["NO_DIAGRAM", "diagram_of", "layout_of", "run_federate", "run_rti", "serve_rti"]

log = logging.getLogger("reactorfed.federation")


def layout_of(main: Reactor) -> Layout:
    """The federation layout of a (not yet assembled) main reactor."""
    if not main.children:
        from ...errors import ValidationError

        raise ValidationError(f"{main.fqn} contains no reactors: nothing to federate")
    part = assemble(main, main.children[0].name).partition
    assert part is not None
    return Layout.of(part)


def diagram_of(main: Reactor) -> str:
    """``main`` drawn as a federation (SVG), for the RTI's live page; a placeholder if
    drawing fails: the page without its drawing, never the federation for it."""
    from ...observe.diagram import program_svg

    try:
        return program_svg(assemble(main), federated=True)
    except Exception:
        log.warning("the live page has no diagram: drawing the program failed", exc_info=True)
        return NO_DIAGRAM


#: what the live page shows where the program's drawing would be
NO_DIAGRAM = '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="20"><text y="14">no diagram</text></svg>'


def run_rti(main: Reactor, cfg: RtiConfig, clock: Clock | None = None, metrics_port: int | None = None,
            on_bound: Callable[[str, int | None], None] | None = None, metrics_addr: str = DEFAULT_METRICS_ADDR,
            tracer: Tracer | None = None) -> RtiSummary:
    """Serve as the RTI of ``main``'s federation until every federate resigned: :func:`serve_rti`
    with ``main``'s layout and drawing."""
    return serve_rti(layout_of(main), cfg, clock, metrics_port, on_bound, metrics_addr, tracer,
                     diagram=diagram_of(main) if metrics_port is not None else None)


def serve_rti(layout: Layout, cfg: RtiConfig, clock: Clock | None = None, metrics_port: int | None = None,
              on_bound: Callable[[str, int | None], None] | None = None, metrics_addr: str = DEFAULT_METRICS_ADDR,
              tracer: Tracer | None = None, diagram: str | None = None) -> RtiSummary:
    """Serve as the RTI of the federation ``layout`` describes until every federate
    resigned; the program itself is not needed (``reactorfed rti --layout``).
    ``on_bound(endpoint, status_port)`` is called once the RTI's port (and the metrics
    port, if any) is bound: for tests and launchers. ``tracer`` records its grants, stop
    agreements, joins and leaves (a traced run). The metrics port serves the live page at
    ``/`` too (:mod:`reactorfed.observe.page`): ``diagram`` (the program's drawing, SVG)
    with the federation's state on it."""
    server = RtiServer(layout, cfg, clock or SystemClock())
    server.tracer = tracer
    endpoint = server.bind()
    status = None
    if metrics_port is not None:
        from ...observe.page import live_pages

        pages = live_pages(diagram or NO_DIAGRAM, lambda: history_of(server))
        status = StatusServer(metrics_port, [server], server.status, host=metrics_addr, pages=pages)
    try:
        if on_bound is not None:
            on_bound(endpoint, status.port if status else None)
        summary = server.run()
    finally:
        if status is not None:
            status.close()
    log.info("%s", summary)
    return summary


def run_federate(
    main: Reactor,
    federate: str,
    cfg: FederateConfig,
    *,
    fast: bool = False,
    timeout: int | None = None,
    workers: int = 1,
    clock: Clock | None = None,
    metrics_port: int | None = None,
    metrics_addr: str = DEFAULT_METRICS_ADDR,
    on_scheduler: Any = None,
    layout: Layout | None = None,
    reaction_nice: int = 0,
    reaction_sched: str = "normal",
    tracer: Tracer | None = None,
) -> RunSummary:
    """Run ``federate`` (one of ``main``'s children) as part of its federation.
    ``layout``: the federation's layout if already known (the same for every federate).
    ``reaction_nice``, ``reaction_sched``: once joined, the thread that runs reactions
    lowers its priority by that much and moves to that scheduling policy (:mod:`.priority`)."""
    from .federate import FederateCoordinator

    keep_payload_memory()
    clock = clock or SystemClock()
    if cfg.clock_sync:
        clock = SyncedClock(clock)  # (its test bias is set below, from the federate's index)
    env = Environment(fast=fast, timeout=timeout, workers=workers, clock=clock, tracer=tracer)
    sched = env.assemble(main, federate=federate)
    assert sched.program.partition is not None
    if layout is None:
        layout = Layout.of(sched.program.partition)
    if isinstance(clock, SyncedClock):
        clock.bias = (1 + layout.index(federate)) * cfg.clock_sync_test_offset_ns  # LF's test-offset
    coord = FederateCoordinator(sched.program, layout, cfg, clock)
    sched.coordinator = coord
    if reaction_nice or reaction_sched != "normal":
        from .priority import yield_reactions

        coord.on_joined.append(lambda: yield_reactions(reaction_nice, reaction_sched))
    coord.install(sched)
    if on_scheduler is not None:
        on_scheduler(sched)
    status = None
    if metrics_port is not None:
        status = StatusServer(
            metrics_port,
            [SchedulerCollector(lambda: env.scheduler, {"federate": federate}), _FederateCollector(coord)],
            lambda: _federate_status(federate, sched),
            host=metrics_addr,
        )
    error: BaseException | None = None
    try:
        return env.run()
    except BaseException as e:
        error = e
        raise
    finally:
        coord.finish(sched, error)
        if status is not None:
            status.close()


def _federate_status(federate: str, sched: Scheduler) -> dict[str, Any]:
    """A federate's ``/status``: its tag and counts, and its program's progress once reported."""
    out: dict[str, Any] = {"federate": federate, "tag": list(sched.current_tag), "start_time": sched.start_time,
                           "tags": sched.tags_processed, "reactions": sched.reactions_executed}
    progress = sched.progress.json()
    if progress is not None:
        out["progress"] = progress
    return out


class _FederateCollector:
    def __init__(self, coord: FederateCoordinator) -> None:
        self.coord = coord

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Any:
        from prometheus_client.core import CounterMetricFamily

        c = self.coord
        labels = ["federate"]
        for name, doc, v in (
            ("reactorfed_federate_messages_sent", "Data messages sent to peers", c.messages_sent),
            ("reactorfed_federate_bytes_sent", "Payload bytes sent to peers", c.bytes_sent),
            ("reactorfed_federate_messages_received", "Data messages received from peers", c.messages_received),
            ("reactorfed_federate_rejected", "Messages dropped as malformed or unauthenticated", c.rejected_messages),
            ("reactorfed_federate_peer_grants", "Tag grants taken from upstream peers' promises", c.local_grants),
            ("reactorfed_federate_lead_waits", "Waits at the edge of the lead window", c.lead_waits),
            ("reactorfed_federate_shm_payloads", "Payloads sent through shared memory", c.shm_messages),
            ("reactorfed_federate_flow_waits", "Waits for a downstream peer to process what it was sent",
             c.flow_waits),
        ):
            m = CounterMetricFamily(name, doc, labels=labels)
            m.add_metric([c.name], v)
            yield m
