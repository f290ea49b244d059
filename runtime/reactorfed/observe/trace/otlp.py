"""A process's trace records as OpenTelemetry spans, exported over OTLP (HTTP) with the
standard SDK (the ``otlp`` extra): a span per reaction, a producer span per message sent
and a consumer span per message received, a zero-length span per other record; each with
the tag as attributes (``reactorfed.time.tag.time``, ``reactorfed.time.tag.microstep``, the tag's
time elapsed since the first tag seen: ``reactorfed.time.tag.elapsed``), the reaction, the
federate, the host and the pid. Spans are batched and exported by the SDK's own thread;
an endpoint that is down or refuses is said once in the log, and the program goes on.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from typing import Any

from ...time.clock import Clock
from . import records as R

__all__ = ["OtlpSink"]

log = logging.getLogger("reactorfed.observe.trace")


class OtlpSink:
    """Turns batches of records (:class:`.recorder.Recorder`'s) into spans for
    ``endpoint`` (an OTLP/HTTP traces URL, e.g. ``http://collector:4318/v1/traces``)."""

    def __init__(self, endpoint: str, process: str, clock: Clock, role: str = "federate") -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import (
                BatchSpanProcessor,
                SpanExporter,
                SpanExportResult,
            )
            from opentelemetry.trace import SpanKind
        except ImportError as e:
            raise RuntimeError("--otlp-endpoint needs the OpenTelemetry SDK: pip install 'reactorfed[otlp]'") from e

        said: list[bool] = [False]
        #: after a failure, batches are dropped (counted) for this long before trying again,
        #: so that an endpoint that is down costs neither retries nor a slow exit
        backoff_ns = 30_000_000_000
        down_until: list[int] = [0]
        dropped: list[int] = [0]
        self._dropped = dropped

        class _Once(SpanExporter):
            """The SDK's exporter, saying once that the endpoint could not be reached."""

            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def export(self, spans: Sequence[Any]) -> Any:
                if clock.now() < down_until[0]:
                    dropped[0] += len(spans)
                    return SpanExportResult.FAILURE
                try:
                    result = self.inner.export(spans)
                except Exception as e:
                    result, why = SpanExportResult.FAILURE, repr(e)
                else:
                    why = "it refused them" if result != SpanExportResult.SUCCESS else ""
                if why:
                    dropped[0] += len(spans)
                    down_until[0] = clock.now() + backoff_ns
                    if not said[0]:
                        said[0] = True
                        log.warning("could not export trace spans to %s (%s); the program goes on, and the "
                                    "spans it cannot send are counted", endpoint, why)
                return result

            def shutdown(self) -> None:
                self.inner.shutdown()

            def force_flush(self, timeout_millis: int = 30000) -> bool:
                return bool(self.inner.force_flush(timeout_millis))

        # The SDK's own exporter logs every failure: one line from us is enough.
        logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter").setLevel(logging.CRITICAL)
        self._kinds = {R.SEND: SpanKind.PRODUCER, R.RECV: SpanKind.CONSUMER}
        self._internal = SpanKind.INTERNAL
        host = socket.gethostname()
        resource = Resource.create({"service.name": "reactorfed", "service.instance.id": f"{process}@{host}",
                                    "reactorfed.federate": process, "reactorfed.role": role,
                                    "host.name": host, "process.pid": os.getpid()})
        self._provider = TracerProvider(resource=resource)
        self._provider.add_span_processor(BatchSpanProcessor(_Once(OTLPSpanExporter(endpoint=endpoint, timeout=2))))
        self._tracer = self._provider.get_tracer("reactorfed")
        self._process = process
        self._open: dict[int, list[Sequence[Any]]] = {}  # thread -> reaction starts
        self._first_tag: int | None = None
        self.spans = 0

    def _attrs(self, rec: Sequence[Any], threads: dict[int, str]) -> dict[str, Any]:
        if self._first_tag is None:
            self._first_tag = rec[2]
        return {"reactorfed.time.tag.time": rec[2], "reactorfed.time.tag.microstep": rec[3],
                "reactorfed.time.tag.elapsed": rec[2] - self._first_tag, "reactorfed.federate": self._process,
                "thread.name": threads.get(rec[4], str(rec[4]))}

    def export(self, batch: Sequence[Sequence[Any]], threads: dict[int, str]) -> None:
        """Spans for a batch of records (called from the recorder's writer thread)."""
        tracer = self._tracer
        for rec in batch:
            kind = rec[0]
            if kind in (R.HEADER, R.TRAILER):
                continue
            if kind == R.REACTION_START:
                self._open.setdefault(rec[4], []).append(rec)
                continue
            if kind == R.REACTION_END:
                stack = self._open.get(rec[4])
                start = stack.pop() if stack else None
                if start is None:
                    continue
                attrs = {**self._attrs(start, threads), "reactorfed.model.reaction": rec[5], "reactorfed.level": rec[6]}
                span = tracer.start_span(rec[5], start_time=start[1], attributes=attrs, kind=self._internal)
                span.end(end_time=rec[1])
            else:
                fields = dict(zip(R.FIELDS.get(kind, ()), rec[5:], strict=False))
                attrs = {**self._attrs(rec, threads),
                         **{f"reactorfed.{k}": v for k, v in fields.items() if isinstance(v, (int, float, str, bool))}}
                name = R.KIND_NAMES.get(kind, str(kind))
                span = tracer.start_span(name, start_time=rec[1], attributes=attrs,
                                         kind=self._kinds.get(kind, self._internal))
                span.end(end_time=rec[1])
            self.spans += 1

    @property
    def dropped(self) -> int:
        """Spans the endpoint did not take."""
        return self._dropped[0]

    def close(self) -> None:
        self._provider.force_flush(2_000)  # (an endpoint that is down must not hold the exit up)
        self._provider.shutdown()
        if self.dropped:
            log.warning("%d trace spans could not be exported", self.dropped)
